"""Failure-aware: Opik's GEPA v2 FailureAwareBatchSampler (comet-ml/opik PR #5547), per pick."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    Pending,
    check_pick,
    check_score,
    check_state,
    is_count,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    LazyHeap,
    Shard,
    ShardCache,
    check_picks_and_entries,
    check_seed,
    load_entries,
    order_key,
    state_head,
)

__all__ = ["FailureAware"]

_STATE_VERSION = 1

_Entry = tuple[int, int, int]  # (pick number of the latest pick, seeded order, position)


@attrs.define
class _Task:
    last: int = 0  # the pick number of the task's latest pick; 0: never picked
    passed: bool | None = None  # its latest outcome; None: none recorded yet
    passes: int = 0
    trials: int = 0


class _SidedShard(Shard):
    """A shard's untried, failing and passing tasks, each side least recently picked first."""

    def __init__(self, keys: list[str], entry: Callable[[str, int], _Entry],
                 side: Callable[[str], bool | None]) -> None:  # fmt: skip
        super().__init__(keys)

        def on(wanted: bool | None) -> LazyHeap[_Entry]:
            return LazyHeap[_Entry](
                lambda: [entry(key, i) for key, i in self.position.items() if side(key) is wanted]
            )

        self.untried = on(None)
        self.failing = on(False)
        self.passing = on(True)


@attrs.define(eq=False)
class FailureAware:
    """Opik's failure-aware sampling: failing and passing tasks half and half.

    The GEPA v2 optimizer of Opik (comet-ml/opik PR #5547, ``FailureAwareBatchSampler``
    in ``apps/opik-optimizer/src/opik_optimizer_framework/optimizers/gepa_v2/
    failure_aware_sampler.py``) splits each reflection minibatch about 50/50 between
    items whose mean assertion score in the latest full evaluation was below its
    ``failure_threshold`` of 1.0 (minibatch results never update it) and the rest: the
    failures are what reflection learns from, and the passes stop it from over-correcting
    and breaking behaviour that works. This rule does the same, one pick at a time:

    - A task never tried goes first, in a seeded order, so every task has an outcome.
    - Then an even round picks a task whose latest rollout failed (or has not come
      back) and an odd round one whose latest rollout passed, so each worker spends
      half its picks on each side; when one side of the shard is empty, the other.
    - Within a side, the least recently picked task goes first.

    Departs from Opik: it orders the failing items worst score first and draws the
    passing ones at random, refilling each minibatch from scratch. A pick is one
    rollout here, and worst-first would hand the same lowest-scoring task, often a
    hopeless one, every other pick, so both sides rotate, least recently picked
    first. Here a task's latest rollout judges it, against ``pass_threshold`` (0.999 by
    default, Opik's 1.0 in effect); later revisions of Opik's file changed the split, PR
    #5547's is the half and half. The halves alternate by ``round_index``, which
    ``evolve()`` passes per round (per worker on the asynchronous path), so a restarted
    run, or workers picking in one round, keep the same rhythm: with two or more workers
    a round is all failing or all passing, where Opik's minibatch mixes them.

    A task in flight is passed over on its side while another task can be taken,
    so concurrent workers spread. Picks cost O(log keys). One lock guards ``pick``
    and ``record``; ``state_dict()`` saves everything a pick depends on. The order of
    untried tasks, and of ties, is a seeded hash, so there is no generator state.

    Args:
        pass_threshold: the score at which a rollout counts as a pass. Keep it
            equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's default.
        seed: seeds the order of untried tasks; the same seed and calls give the
            same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``pass_threshold`` is outside (0, 1].
    """

    name: ClassVar[str] = "failure-aware"

    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _tasks: dict[str, _Task] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _shards: ShardCache[_SidedShard] = attrs.field(init=False, repr=False)
    _in_flight: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._shards = ShardCache(lambda keys: _SidedShard(keys, self._entry, self._side))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return an untried task, else a failing one in even rounds and a passing one in odd."""
        keys, round_index = check_pick(keys, round_index)
        parity = round_index % 2
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            sides = [(shard.failing, False), (shard.passing, True)]
            if parity:
                sides.reverse()
            entry = self._first(shard, shard.untried, None, None)
            for spread in (now, None):  # first a task not in flight, else any
                for heap, passing in sides:
                    entry = entry or self._first(shard, heap, passing, spread)
            assert entry is not None  # for mypy: every key has a current entry on one side
            picked = shard.keys[entry[2]]
            task = self._tasks.setdefault(picked, _Task())
            task.last = now
            self._push(picked)
            self._in_flight.add(picked, now)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Note whether ``task_id``'s latest rollout passed, which decides its side."""
        value = check_score(task_id, score)
        passed = value >= self.pass_threshold
        with self._lock:
            before = self._side(task_id)
            task = self._tasks.setdefault(task_id, _Task())
            task.passed = passed
            task.passes += passed
            task.trials += 1
            if passed is not before:
                self._push(task_id)
            self._in_flight.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}`` for the tasks with a record."""
        with self._lock:
            return {key: (t.passes, t.trials) for key, t in self._tasks.items() if t.trials}

    def failing(self, task_id: str) -> bool:
        """Whether ``task_id`` is on the failing side: its latest rollout failed or is out."""
        with self._lock:
            return self._side(task_id) is False

    def _side(self, task_id: str) -> bool | None:
        """None for an untried task, else whether its latest recorded rollout passed."""
        task = self._tasks.get(task_id)
        return None if task is None else bool(task.passed)

    def _entry(self, task_id: str, index: int) -> _Entry:
        task = self._tasks.get(task_id)
        return (0 if task is None else task.last, order_key(self.seed, 0, task_id), index)

    def _first(
        self, shard: _SidedShard, heap: LazyHeap[_Entry], side: bool | None, now: int | None
    ) -> _Entry | None:
        """The first current entry of ``heap``; with ``now``, the first not in flight then."""

        def current(entry: _Entry) -> bool:
            return self._current(shard, entry, side)

        def free(entry: _Entry) -> bool:
            return now is None or not self._in_flight.holds(shard.keys[entry[2]], now)

        return heap.first(current, free)

    def _current(self, shard: _SidedShard, entry: _Entry, side: bool | None) -> bool:
        key = shard.keys[entry[2]]
        return self._side(key) is side and self._entry(key, entry[2])[0] == entry[0]

    def _push(self, task_id: str) -> None:
        """Queue ``task_id``'s current entry on its side of every shard that holds it."""
        side = self._side(task_id)
        for shard, index in self._shards.holding(task_id):
            (shard.passing if side else shard.failing).push(self._entry(task_id, index))

    def state_dict(self) -> dict[str, Any]:
        """Everything a pick depends on, JSON-ready. Picks still in flight are not saved:
        their rollouts do not survive a restart."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "tasks": {
                    key: [task.last, task.passed, task.passes, task.trials]
                    for key, task in self._tasks.items()
                },
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with other parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        picks, entries = check_picks_and_entries(self.name, state, "tasks")

        def valid(entry: Any) -> bool:
            return (
                isinstance(entry, list)
                and len(entry) == 4
                and is_count(entry[0])
                and entry[0] <= picks
                and all(map(is_count, entry[2:]))
                and entry[2] <= entry[3]
                and (entry[1] is None if entry[3] == 0 else isinstance(entry[1], bool))
            )

        tasks = load_entries(
            self.name,
            entries,
            valid,
            lambda entry: _Task(*entry),
            "[last pick, latest outcome (true, false, or null before any), passes, trials] "
            "with passes <= trials",
        )
        with self._lock:
            self._tasks = tasks
            self._picks = picks
            self._in_flight = Pending()
            self._shards.clear()

    def _params(self) -> dict[str, Any]:
        return {"pass_threshold": self.pass_threshold, "seed": self.seed}
