"""An exact argmax over a shard that costs O(groups) per pick instead of O(keys).

Samplers here score a task from a small discrete *signature* of its statistics
(``(passes, trials)`` for difficulty-weighted). Tasks with equal signatures score
equally, so the best task is the earliest key of the best-scoring signature group.
:class:`ShardIndex` keeps, per shard, a min-heap of key positions for each group and
moves a key between heaps when its signature changes; picks then touch each group
once. A shard is recognised by comparing it with a cached copy, which runs in C.

It returns exactly what the straightforward loop returns, ties included::

    best = max(keys, key=lambda k: score(signature(k)))   # max keeps the first of equals

Memory is what bounds the shard sizes this serves, so what all cached shards have in
common is stored once: each key's id and the signature it is filed under, and the int
objects that stand for positions. A shard of a million keys then costs about 22 bytes
a key (its copy of the keys, a 4-byte position per key id and its heaps), where a dict
per shard would cost over a hundred.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import Generic, Protocol, TypeVar

from ..protocol import check_task_id

__all__ = ["ShardIndex", "cached", "first_entry", "remember"]

S = TypeVar("S", bound=Hashable)


class _Keyed(Protocol):
    keys: list[str]


K = TypeVar("K", bound=_Keyed)

_CACHED_SHARDS = 8  # workers rotate through a few shards; keep an index for each


class _Keys(Generic[S]):
    """What the cached shards share: key -> id, id -> filed signature, and small ints."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.filed: list[S] = []
        # Positions and ids above 256 are separate int objects of 28 bytes each; taking
        # them all from this one list stores each number once, however many heaps hold it.
        self.ints: list[int] = []

    def grow_ints(self, size: int) -> None:
        if len(self.ints) < size:
            self.ints.extend(range(len(self.ints), size))


class _Shard(Generic[S]):
    """One shard: its keys, each key id's first position in it, and its groups' heaps."""

    def __init__(self, keys: list[str], shared: _Keys[S], signature: Callable[[str], S]) -> None:
        self.keys = keys
        self.shared = shared
        ids, filed, ints = shared.ids, shared.filed, shared.ints
        shared.grow_ints(len(keys))
        position = array("i", [-1]) * (len(filed) + len(keys))
        self.heaps: dict[S, list[int]] = {}
        self.size = 0
        for index, key in enumerate(keys):
            number = ids.get(key)
            if number is None:
                number = len(filed)
                if number == len(ints):
                    ints.append(number)
                number = ids[key] = ints[number]
                filed.append(signature(key))
            if position[number] < 0:  # later copies of a key can never win a tie
                position[number] = index
                self.heaps.setdefault(filed[number], []).append(ints[index])
                self.size += 1
        del position[len(filed) :]
        self.position = position
        # Positions were appended in increasing order, so every list is already a heap.
        self.entries = self.size

    def at(self, number: int) -> int:
        """The first position of key id ``number`` in this shard, or -1."""
        return self.position[number] if number < len(self.position) else -1

    def moved(self, number: int, signature: S) -> None:
        index = self.at(number)
        if index >= 0:
            heapq.heappush(self.heaps.setdefault(signature, []), self.shared.ints[index])
            self.entries += 1
            if self.entries > self.size + self.size // 4 + 64:
                self._compact()

    def _compact(self) -> None:
        """Drop the stale heap entries that moves leave behind, so memory stays O(keys)."""
        ids, filed, ints = self.shared.ids, self.shared.filed, self.shared.ints
        self.heaps = {}
        for index, key in enumerate(self.keys):
            number = ids[key]
            if self.position[number] == index:
                self.heaps.setdefault(filed[number], []).append(ints[index])
        self.entries = self.size

    def first(self, signature: S, skip: Collection[int]) -> int | None:
        """The smallest current position in the group, not in ``skip``."""
        ids, filed = self.shared.ids, self.shared.filed
        heap = self.heaps[signature]
        found = first_entry(
            heap,
            lambda index: filed[ids[self.keys[index]]] != signature,  # moved to another group
            skip.__contains__,
        )
        if not heap:
            del self.heaps[signature]
        return found


def cached(shards: list[K], keys: Sequence[str]) -> tuple[list[str], K | None]:
    """``keys`` as a list, and the shard of ``shards`` with exactly those keys, moved to the
    front (most recently used first), or ``None``.

    Raises:
        TypeError: no shard has those keys, and one is not a string; nothing has changed then.
    """
    # Comparing lists runs in C and stops at the first difference; when the engine
    # passes the same ids again it is mostly pointer comparisons. No hashing of the
    # whole shard, which would cost as much as a comparison on every pick.
    probe = keys if type(keys) is list else list(keys)
    for position, shard in enumerate(shards):
        if len(shard.keys) == len(probe) and shard.keys == probe:
            if position:
                shards.insert(0, shards.pop(position))
            return probe, shard
    # Checked before anything is stored: a shard with a non-string id leaves no trace.
    if set(map(type, probe)) != {str}:
        for key in probe:
            check_task_id(key)
    return probe, None


def first_entry(
    heap: list[int], stale: Callable[[int], bool], passed_over: Callable[[int], bool]
) -> int | None:
    """The least entry of ``heap`` that is neither stale nor passed over, or ``None``.

    Stale entries above it are dropped from the heap; those passed over stay.
    """
    held = []
    found = None
    while heap:
        entry = heap[0]
        if stale(entry):
            heapq.heappop(heap)
        elif passed_over(entry):
            held.append(heapq.heappop(heap))
        else:
            found = entry
            break
    for entry in held:
        heapq.heappush(heap, entry)
    return found


def remember(shards: list[K], shard: K) -> bool:
    """Put ``shard`` first in ``shards``; whether the least recently used was dropped."""
    shards.insert(0, shard)
    if len(shards) <= _CACHED_SHARDS:
        return False
    del shards[_CACHED_SHARDS:]
    return True


class ShardIndex(Generic[S]):
    """Exact ``argmax`` of a group score over a shard, ties to the earliest key.

    Args:
        signature: maps a task id to the hashable summary its score depends on.

    Call :meth:`moved` after a task's signature changes (after each record).
    Not thread-safe: the owning sampler holds its lock around every call.
    """

    def __init__(self, signature: Callable[[str], S]) -> None:
        self._signature = signature
        self._shared: _Keys[S] = _Keys()
        self._shards: list[_Shard[S]] = []  # most recently used first

    def shard(self, keys: Sequence[str]) -> _Shard[S]:
        """The index of shard ``keys``, built on first sight; keep it for :meth:`pick`.

        Raises:
            TypeError: a key is not a string; nothing has changed then.
        """
        probe, found = cached(self._shards, keys)
        if found is not None:
            return found
        shard = _Shard(list(probe), self._shared, self._signature)
        if remember(self._shards, shard):
            self._forget_unused_keys()
        return shard

    def pick(
        self,
        shard: _Shard[S],
        score: Callable[[S], float],
        exclude: Collection[str] = (),
    ) -> str:
        """Return the earliest key of ``shard``'s best-scoring group, skipping ``exclude``.

        If every key is excluded, the exclusion is ignored.
        """
        ids = self._shared.ids
        skip = {shard.at(ids[key]) for key in exclude if key in ids} - {-1}
        best: tuple[float, int] | None = None
        for signature in list(shard.heaps):
            index = shard.first(signature, skip)
            if index is None:
                continue
            candidate = (score(signature), -index)
            if best is None or candidate > best:
                best = candidate
        if best is None:
            return self.pick(shard, score)
        return shard.keys[-best[1]]

    def moved(self, key: str) -> None:
        """Re-file ``key`` in every cached shard after its signature changed."""
        number = self._shared.ids.get(key)
        if number is None:
            return  # in no cached shard; a shard built later files it afresh
        signature = self._signature(key)
        if self._shared.filed[number] != signature:
            self._shared.filed[number] = signature
            for shard in self._shards:
                shard.moved(number, signature)

    def _forget_unused_keys(self) -> None:
        """Once most known keys belong to no cached shard, rebuild the shared tables from
        the cached shards, so memory follows the cached shards, not every shard ever seen."""
        used = sum(shard.size for shard in self._shards)
        if len(self._shared.ids) <= 2 * used + 1024:
            return
        old, shared = self._shared, _Keys[S]()
        shared.grow_ints(max(used, *(len(shard.keys) for shard in self._shards)))
        for shard in self._shards:
            for key in shard.keys:
                if key not in shared.ids:
                    shared.ids[key] = shared.ints[len(shared.filed)]
                    shared.filed.append(old.filed[old.ids[key]])
        for shard in self._shards:
            position = array("i", [-1]) * len(shared.filed)
            for index, key in enumerate(shard.keys):
                if shard.position[old.ids[key]] == index:
                    position[shared.ids[key]] = index
            shard.position = position
            shard.shared = shared
        self._shared = shared
