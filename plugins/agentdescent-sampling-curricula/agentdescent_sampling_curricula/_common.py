"""What the rules share: seeds, generator state, state checks, shards, rollouts in flight, heaps."""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

from agentdescent_sampling.plugin import (
    Pending,
    StateError,
    check_task_ids,
    is_count,
    restore_rng,
    rng_state,
    seed_number,
    short_repr,
    whole_number_in,
)

__all__ = [
    "LazyHeap",
    "Shard",
    "ShardCache",
    "check_entries",
    "check_picks_and_entries",
    "check_seed",
    "count_outcome",
    "draw_free",
    "load_counts",
    "load_entries",
    "order_key",
    "restore_rng",
    "rng_state",
    "saved_counts",
    "state_head",
    "whole",
]

#: Workers rotate through a few shards; keep the structures of this many.
_CACHED_SHARDS = 8
#: Random draws tried before a rule scans for a task that is not in flight.
_TRIES = 8


#: The attrs validator of every rule's ``seed``: an int (not a bool).
check_seed = seed_number("; for example seed=0")


#: Every size a rule takes (a window, a buffer, a group) is at most this, as the built-in
#: ``informative-band``'s window is: a larger one would overflow or exhaust memory.
MAX_SIZE = 1_000_000


def whole(low: int, example: int) -> Any:
    """An attrs validator: a whole number in [``low``, :data:`MAX_SIZE`] (not a bool)."""
    return whole_number_in(low, MAX_SIZE, hint=f"; try {example}")


def order_key(seed: int, visits: int, task: str) -> int:
    """A task's seeded place in its ``visits``-th epoch: a shuffle without per-shard state."""
    # surrogatepass: an id decoded with os.fsdecode() may hold a lone surrogate, which
    # strict UTF-8 refuses; every other id encodes to the same bytes either way.
    text = f"{seed}:{visits}:{task}".encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(text, digest_size=8).digest()
    return int.from_bytes(digest, "big")


class Shard:
    """One shard's keys and each distinct key's first position."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.position: dict[str, int] = {}
        for index, key in enumerate(keys):
            self.position.setdefault(key, index)


S = TypeVar("S", bound=Shard)


class ShardCache(Generic[S]):
    """The structures of the shards seen recently, most recently used first.

    A shard is recognised by comparing it with a cached copy, which runs in C and
    costs mostly pointer comparisons when the engine passes the same ids again.
    """

    def __init__(self, build: Callable[[list[str]], S]) -> None:
        self._build = build
        self._shards: list[S] = []

    def get(self, keys: Sequence[str]) -> S:
        """The structure of ``keys``, built on first sight.

        Raises:
            TypeError: ``keys`` is new and holds a task id that is not a string; nothing
                has changed then.
        """
        probe = keys if type(keys) is list else list(keys)
        for position, shard in enumerate(self._shards):
            if len(shard.keys) == len(probe) and shard.keys == probe:
                if position:
                    self._shards.insert(0, self._shards.pop(position))
                return shard
        check_task_ids(probe)  # once per shard, as the built-ins do
        shard = self._build(list(probe))
        self._shards.insert(0, shard)
        del self._shards[_CACHED_SHARDS:]
        return shard

    def holding(self, task: str) -> Iterator[tuple[S, int]]:
        """Every cached shard that holds ``task``, with the task's position in it."""
        for shard in self._shards:
            index = shard.position.get(task)
            if index is not None:
                yield shard, index

    def clear(self) -> None:
        """Forget every shard (after the statistics were replaced)."""
        self._shards.clear()


def draw_free(keys: Sequence[str], rng: random.Random, in_flight: Pending, now: int) -> str:
    """A uniformly random key of ``keys`` with no rollout in flight, if there is one."""
    for _ in range(_TRIES):
        key = keys[rng.randrange(len(keys))]
        if not in_flight.holds(key, now):
            return key
    # Most keys are in flight (a small shard, many workers): scan from a random start.
    start = rng.randrange(len(keys))
    for step in range(len(keys)):
        key = keys[(start + step) % len(keys)]
        if not in_flight.holds(key, now):
            return key
    return keys[start]


E = TypeVar("E", bound=tuple[Any, ...])
T = TypeVar("T")


class LazyHeap(Generic[E]):
    """A min-heap whose stale entries are dropped when they reach the top.

    Entries are never updated in place: a changed item is pushed again, and
    ``valid`` tells a current entry from a stale one. The heap is rebuilt from
    ``current()`` when stale entries outnumber current ones, so memory stays bounded.
    """

    def __init__(self, current: Callable[[], list[E]]) -> None:
        self._current = current
        self._heap = current()
        heapq.heapify(self._heap)
        self._limit = 2 * len(self._heap) + 64

    def push(self, entry: E) -> None:
        """Add ``entry``; compact first if stale entries have piled up."""
        if len(self._heap) > self._limit:
            self._heap = self._current()
            heapq.heapify(self._heap)
            self._limit = 2 * len(self._heap) + 64
        heapq.heappush(self._heap, entry)

    def first(
        self, valid: Callable[[E], bool], free: Callable[[E], bool] | None = None
    ) -> E | None:
        """The smallest valid entry (left in place), or None.

        With ``free``, the smallest valid entry that is also free: the valid entries
        passed over (a task in flight, say) stay in the heap.
        """
        heap = self._heap
        passed: list[E] = []
        while heap and not (valid(heap[0]) and (free is None or free(heap[0]))):
            entry = heapq.heappop(heap)
            if free is not None and valid(entry):
                passed.append(entry)
        found = heap[0] if heap else None
        for entry in passed:
            heapq.heappush(heap, entry)
        return found


def check_entries(name: str, entries: object, what: str) -> Mapping[str, Any]:
    """``entries`` if it is a mapping from task ids, else raise :class:`StateError`."""
    if not isinstance(entries, Mapping) or not all(isinstance(key, str) for key in entries):
        raise StateError(f"{name}: state needs {what!r} as a mapping from task ids")
    return entries


def count_outcome(
    counts: dict[str, tuple[int, int]], task_id: str, passed: bool
) -> tuple[int, int]:
    """Add one trial of ``task_id`` to ``counts`` (``{task: (passes, trials)}``, what
    ``stats()`` returns), a pass if ``passed``; return its new counts."""
    passes, trials = counts.get(task_id, (0, 0))
    counts[task_id] = updated = (passes + passed, trials + 1)
    return updated


def saved_counts(counts: Mapping[str, tuple[int, int]]) -> dict[str, list[int]]:
    """``counts`` as a state keeps them, JSON-ready: ``{task: [passes, trials]}``."""
    return {key: [passes, trials] for key, (passes, trials) in counts.items()}


def load_counts(name: str, state: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """The ``stats`` a state kept with :func:`saved_counts`, checked.

    Raises:
        StateError: ``stats`` is not a mapping from task ids, or an entry is not a
            ``[passes, trials]`` pair of whole numbers with ``passes <= trials``.
    """
    return load_entries(
        name,
        check_entries(name, state.get("stats"), "stats"),
        lambda e: isinstance(e, list) and len(e) == 2 and all(map(is_count, e)) and e[0] <= e[1],
        lambda e: (e[0], e[1]),
        "[passes, trials] with 0 <= passes <= trials",
        "statistics",
    )


def check_picks_and_entries(
    name: str, state: Mapping[str, Any], what: str
) -> tuple[int, Mapping[str, Any]]:
    """The state's whole number ``picks`` and its mapping ``what`` from task ids.

    Raises:
        StateError: ``what`` is not a mapping from task ids (checked first), or ``picks``
            is not a whole number.
    """
    picks = state.get("picks")
    entries = check_entries(name, state.get(what), what)
    if not is_count(picks):
        raise StateError(f"{name}: state needs a whole number 'picks'")
    return picks, entries


def load_entries(
    name: str,
    entries: Mapping[str, Any],
    valid: Callable[[Any], bool],
    build: Callable[[Any], T],
    expected: str,
    what: str = "entry",
) -> dict[str, T]:
    """``{task: build(entry)}`` for every entry of ``entries``, each checked by ``valid``.

    Raises:
        StateError: the first entry that ``valid`` refuses, named with ``what`` and the
            ``expected`` form.
    """
    loaded: dict[str, T] = {}
    for key, entry in entries.items():
        if not valid(entry):
            raise StateError(
                f"{name}: bad {what} for task {short_repr(key)}: {short_repr(entry)}; "
                f"expected {expected}"
            )
        loaded[key] = build(entry)
    return loaded


def state_head(name: str, version: int, params: Mapping[str, Any], picks: int) -> dict[str, Any]:
    """The first keys of a rule's ``state_dict()``: sampler, version, params and picks."""
    return {"sampler": name, "version": version, "params": params, "picks": picks}
