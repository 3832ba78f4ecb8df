"""Learnability: GEPA's LearnabilityBatchSampler (gepa-ai/gepa PR #338), one rollout at a time."""

from __future__ import annotations

import bisect
import heapq
import random
import threading
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    Pending,
    check_pick,
    check_score,
    check_state,
    is_count,
    is_real,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    LazyHeap,
    Shard,
    ShardCache,
    check_picks_and_entries,
    check_seed,
    draw_free,
    load_entries,
    order_key,
    restore_rng,
    rng_state,
    state_head,
    whole,
)

__all__ = ["Learnability"]

_STATE_VERSION = 1
#: What GEPA adds to each weight: 0.01 against the highest variance's 1, so a task with no
#: variance keeps about 1% of the top weight.
_FLOOR = 0.01
#: The scores a task needs before its variance counts: GEPA's ``min_candidates``.
_MIN_SCORES = 3
#: Draws tried before a pick falls back to any task of the shard not in flight.
_TRIES = 8


def variance(scores: Collection[float]) -> float:
    """The population variance of ``scores`` (0 with fewer than two), as GEPA computes it."""
    if len(scores) < 2:
        return 0.0
    mean = sum(scores) / len(scores)
    return sum((score - mean) ** 2 for score in scores) / len(scores)


def _spread(window: Collection[float]) -> float:
    """The variance a task is weighted by: 0 until it has :data:`_MIN_SCORES` scores."""
    return variance(window) if len(window) >= _MIN_SCORES else 0.0


_Entry = tuple[int, int, int]  # (records, seeded order within that epoch, position)


@attrs.define
class _Task:
    passes: int = 0
    trials: int = 0
    window: deque[float] = attrs.field(factory=deque)


class _LearnShard(Shard):
    """A shard's untried tasks in seeded order, its tried ones grouped by variance, and the
    tried ones in epoch order (fewest records first, then a seeded order for each epoch).

    Every group and the list of distinct variances are kept sorted, so that a draw
    depends on the statistics alone, never on the order in which they changed: a
    resumed run picks as an uninterrupted one does.
    """

    def __init__(
        self,
        keys: list[str],
        tasks: Mapping[str, _Task],
        seed: int,
        entry: Callable[[str, int], _Entry],
    ) -> None:
        super().__init__(keys)
        self.untried: list[tuple[int, int]] = []
        self.value: dict[int, float] = {}
        self.members: dict[float, list[int]] = {}
        self.levels: list[float] = []
        for key, index in self.position.items():
            task = tasks.get(key)
            if task is None:
                self.untried.append((order_key(seed, 0, key), index))
            else:
                self.add(index, _spread(task.window))
        heapq.heapify(self.untried)
        self.epochs = LazyHeap[_Entry](
            lambda: [entry(key, i) for key, i in self.position.items() if key in tasks]
        )

    def add(self, index: int, value: float) -> None:
        group = self.members.get(value)
        if group is None:
            group = self.members[value] = []
            bisect.insort(self.levels, value)
        bisect.insort(group, index)
        self.value[index] = value

    def move(self, index: int, value: float) -> None:
        old = self.value.get(index)
        if old == value:
            return
        if old is not None:
            group = self.members[old]
            del group[bisect.bisect_left(group, index)]
            if not group:
                del self.members[old]
                del self.levels[bisect.bisect_left(self.levels, old)]
        self.add(index, value)

    def draw(self, rng: random.Random) -> int:
        """A tried task's position, drawn with weight ``variance / highest + 0.01``."""
        top = self.levels[-1]
        weights = [
            (value / top + _FLOOR if top > 0 else 1.0) * len(self.members[value])
            for value in self.levels
        ]
        target = rng.random() * sum(weights)
        at = len(weights) - 1
        for level, weight in enumerate(weights):
            if target < weight:
                at = level
                break
            target -= weight
        group = self.members[self.levels[at]]
        return group[rng.randrange(len(group))]


@attrs.define(eq=False)
class Learnability:
    """GEPA's learnability sampling: the tasks whose scores vary most, across artifact versions.

    GEPA's ``LearnabilityBatchSampler`` (gepa-ai/gepa PR #338, open when this was
    written, ``src/gepa/strategies/learnability_sampler.py``) weights each training example
    by the variance of its validation subscores (``state.prog_candidate_val_subscores``),
    one per candidate in the pool, once 3 candidates (``min_candidates``) have scored it:
    where candidates disagree, a better prompt can make a difference; where all pass or
    all fail alike, reflection learns little. It draws a minibatch without replacement in
    proportion to ``variance / highest variance + 0.01`` (its default temperature, 1), so
    an example with no variance keeps about 1% of the top weight, and takes shuffled
    epochs while no example varies (or fewer than a minibatch's examples qualify). This
    rule does the same, one pick at a time:

    - A task never tried goes first, in a seeded order, so every task gets a score.
    - Then each tried task of the shard is drawn with weight
      ``variance / highest variance in the shard + 0.01``; while every variance is 0,
      the tried tasks are taken in epochs instead, each epoch in a new seeded order
      (the task with the fewest records first), as GEPA's ``EpochShuffledBatchSampler``.

    Departs from GEPA: a sampler sees ``record(task_id, score)`` and no candidate,
    so the scores across artifact versions are the task's last ``window`` scores.
    Each was taken under the artifact of its time, and the artifact changes when a
    round commits, so a task whose last scores differ is one on which recent
    versions disagreed, or a flaky one: rollout noise counts here as GEPA counts
    an evaluator's. A task with fewer than 3 scores has variance 0, as an example
    fewer than 3 candidates scored has none in GEPA. A pick here is one rollout, so
    a task that just varied can be drawn again at once, where GEPA draws a minibatch
    without replacement, and it stops drawing once ``window`` equal scores have
    pushed the varying ones out. For 0/1 scores the variance is ``p(1 - p)`` of the window's
    pass rate, as in SFL; graded scores vary inside a band too, and count. The
    ``window`` of 4 is ours, GEPA keeping every candidate's score: a task that
    flipped stops drawing picks after three equal scores. A longer window measured
    worse (``window=1000``, nearest to every score: 0.68x round-robin's rollouts to 90%
    of the gain against 0.91x, BENCHMARKS.md).

    A task in flight is not drawn again while another task can be, so concurrent
    workers spread. Picks cost O(distinct variances in the shard), a few for 0/1
    scores. One lock guards ``pick`` and ``record``; ``state_dict()`` saves every
    window and the generator.

    Args:
        window: how many of each task's latest scores its variance is taken over,
            the artifact versions it has seen recently.
        pass_threshold: the score at which a rollout counts as a pass in ``stats()``.
            Keep it equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's
            default.
        seed: seeds the order of untried tasks and the draws; the same seed and
            calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``window`` is below 3 or ``pass_threshold`` outside (0, 1].
    """

    name: ClassVar[str] = "learnability"

    window: int = attrs.field(default=4, validator=whole(_MIN_SCORES, 4))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _tasks: dict[str, _Task] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _rng: random.Random = attrs.field(init=False, repr=False)
    _shards: ShardCache[_LearnShard] = attrs.field(init=False, repr=False)
    _in_flight: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._shards = ShardCache(
            lambda keys: _LearnShard(keys, self._tasks, self.seed, self._entry)
        )

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return an untried task while the shard has one, else one drawn by learnability."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            while shard.untried and shard.keys[shard.untried[0][1]] in self._tasks:
                heapq.heappop(shard.untried)  # tried since the shard was built
            picked = shard.keys[shard.untried[0][1]] if shard.untried else self._draw(shard, now)
            self._tried(picked)
            self._in_flight.add(picked, now)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Add the score to ``task_id``'s window and regroup it by the window's variance."""
        value = check_score(task_id, score)
        with self._lock:
            task = self._tried(task_id)
            task.passes += value >= self.pass_threshold
            task.trials += 1
            task.window.append(value)
            if len(task.window) > self.window:
                task.window.popleft()
            spread = _spread(task.window)
            for shard, index in self._shards.holding(task_id):
                shard.move(index, spread)
                shard.epochs.push(self._entry(task_id, index))
            self._in_flight.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}`` for the tasks with a record."""
        with self._lock:
            return {key: (t.passes, t.trials) for key, t in self._tasks.items() if t.trials}

    def learnability(self, task_id: str) -> float:
        """The variance of ``task_id``'s last ``window`` scores (0 before three)."""
        with self._lock:
            task = self._tasks.get(task_id)
            return _spread(task.window) if task is not None else 0.0

    def _tried(self, task_id: str) -> _Task:
        """``task_id``'s statistics; a task seen for the first time joins the groups at 0
        and its first epoch."""
        task = self._tasks.get(task_id)
        if task is None:
            task = self._tasks[task_id] = _Task()
            for shard, index in self._shards.holding(task_id):
                shard.move(index, 0.0)
                shard.epochs.push(self._entry(task_id, index))
        return task

    def _entry(self, task_id: str, index: int) -> _Entry:
        """``task_id``'s place in the epoch of its record count."""
        records = self._tasks[task_id].trials
        return (records, order_key(self.seed, records, task_id), index)

    def _draw(self, shard: _LearnShard, now: int) -> str:
        if shard.levels[-1] == 0:  # nothing varies: the next task of the epoch
            entry = shard.epochs.first(
                lambda e: self._tasks[shard.keys[e[2]]].trials == e[0],
                lambda e: not self._in_flight.holds(shard.keys[e[2]], now),
            )
            if entry is not None:
                return shard.keys[entry[2]]
            return draw_free(shard.keys, self._rng, self._in_flight, now)
        for _ in range(_TRIES):
            key = shard.keys[shard.draw(self._rng)]
            if not self._in_flight.holds(key, now):
                return key
        return draw_free(shard.keys, self._rng, self._in_flight, now)

    def state_dict(self) -> dict[str, Any]:
        """Every window and count and the generator, JSON-ready. Picks still in flight are
        not saved: their rollouts do not survive a restart."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "rng": rng_state(self._rng),
                "tasks": {
                    key: [task.passes, task.trials, list(task.window)]
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
        rng = restore_rng(self.name, state.get("rng"))
        picks, entries = check_picks_and_entries(self.name, state, "tasks")

        def valid(entry: Any) -> bool:
            return (
                isinstance(entry, list)
                and len(entry) == 3
                and is_count(entry[0])
                and is_count(entry[1])
                and entry[0] <= entry[1]
                and isinstance(entry[2], list)
                and len(entry[2]) <= min(self.window, entry[1])
                and all(is_real(score) and 0 <= score <= 1 for score in entry[2])
            )

        tasks = load_entries(
            self.name,
            entries,
            valid,
            lambda entry: _Task(entry[0], entry[1], deque(float(s) for s in entry[2])),
            f"[passes, trials, up to {self.window} latest scores in [0, 1]] with passes <= trials",
        )
        with self._lock:
            self._tasks = tasks
            self._picks = picks
            self._rng = rng
            self._in_flight = Pending()
            self._shards.clear()

    def _params(self) -> dict[str, Any]:
        return {"window": self.window, "pass_threshold": self.pass_threshold, "seed": self.seed}
