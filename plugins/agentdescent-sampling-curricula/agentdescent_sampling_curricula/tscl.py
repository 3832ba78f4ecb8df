"""TSCL: Teacher-Student Curriculum Learning, the Window algorithm (Matiisen et al., 2017)."""

from __future__ import annotations

import bisect
import heapq
import random
import threading
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import pairwise
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    Pending,
    StateError,
    check_pick,
    check_score,
    check_state,
    is_count,
    is_real,
    number_in,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    Shard,
    ShardCache,
    check_entries,
    check_seed,
    count_outcome,
    draw_free,
    load_counts,
    load_entries,
    restore_rng,
    rng_state,
    saved_counts,
    state_head,
    whole,
)

__all__ = ["TeacherStudentCurriculum"]

_STATE_VERSION = 2  # 2: each task's passes and trials, for stats()
#: The slope the paper's code gives a task with fewer than two scores: every task
#: is tried twice before slopes decide.
_UNKNOWN_SLOPE = 1.0
#: Random members tried before a group is scanned for one not in flight.
_TRIES = 8

_Window = deque[tuple[int, float]]


def abs_slope(window: Collection[tuple[int, float]]) -> float:
    """|slope| of the least-squares line through ``(time, score)``; 1 with fewer than 2."""
    if len(window) < 2:
        return _UNKNOWN_SLOPE
    mean_t = sum(t for t, _ in window) / len(window)
    mean_s = sum(s for _, s in window) / len(window)
    spread = sum((t - mean_t) ** 2 for t, _ in window)
    return abs(sum((t - mean_t) * (s - mean_s) for t, s in window) / spread)


class _Groups(Shard):
    """A shard's tasks grouped by value, with a lazy max-heap over the values.

    Every group is kept sorted, so that a draw from it depends on the slopes alone, never
    on the order in which they changed: a resumed run, whose shards are rebuilt from the
    windows, picks as an uninterrupted one does.
    """

    def __init__(self, keys: list[str], value_of: Callable[[str], float]) -> None:
        super().__init__(keys)
        self.value: dict[int, float] = {}
        self.members: dict[float, list[int]] = {}
        self.heap: list[float] = []
        for key, index in self.position.items():
            self._add(index, value_of(key))

    def _add(self, index: int, value: float) -> None:
        group = self.members.get(value)
        if group is None:
            group = self.members[value] = []
            heapq.heappush(self.heap, -value)
            if len(self.heap) > 2 * len(self.members) + 64:  # drop stale values
                self.heap = [-each for each in self.members]
                heapq.heapify(self.heap)
        self.value[index] = value
        bisect.insort(group, index)

    def move(self, index: int, value: float) -> None:
        old = self.value[index]
        if old == value:
            return
        group = self.members[old]
        del group[bisect.bisect_left(group, index)]
        if not group:
            del self.members[old]
        self._add(index, value)

    def best(self, rng: random.Random, busy: Collection[int]) -> int:
        """A uniformly random member of the highest group with a member not in ``busy``."""
        held: list[float] = []
        found = None
        while self.heap and found is None:
            group = self.members.get(-self.heap[0])
            if group is None or (held and -self.heap[0] == -held[-1]):
                heapq.heappop(self.heap)  # stale, or a duplicate of a value just held
                continue
            found = _free_member(group, rng, busy)
            if found is None:
                held.append(heapq.heappop(self.heap))
        for value in held:
            heapq.heappush(self.heap, value)
        if found is None:  # every task is in flight
            group = self.members[-self.heap[0]]
            found = group[rng.randrange(len(group))]
        return found


def _free_member(group: list[int], rng: random.Random, busy: Collection[int]) -> int | None:
    for _ in range(_TRIES):
        index = group[rng.randrange(len(group))]
        if index not in busy:
            return index
    free = [index for index in group if index not in busy]
    return free[rng.randrange(len(free))] if free else None


@attrs.define(eq=False)
class TeacherStudentCurriculum:
    """Teacher-Student Curriculum Learning, Window (Matiisen et al., 2017, arXiv:1707.00183).

    Each task keeps its last ``window`` scores with the time each was recorded; its
    learning progress is the slope of a least-squares line through them. A pick is
    epsilon-greedy on the absolute slope: with probability ``epsilon`` a uniformly
    random task, otherwise the task of highest ``|slope|``, ties broken at random.
    The absolute value follows the paper: a falling score (forgetting) needs
    practice as much as a rising one. A task with fewer than two scores has slope
    1, as in the paper's code (tambetm/TSCL), so every task is tried twice first.
    Defaults are the code's: window 10, epsilon 0.1.

    Departs from the paper: its tasks are a few subtasks, each scored every step;
    here a task gets a score only when it is picked, and time is the count of
    rollouts recorded, so slopes of rarely picked tasks are flatter.

    A task in flight is not picked again while another task of the same value
    (or, failing that, a lower one) is free, so concurrent workers spread. Picks
    cost O(log distinct values): tasks are grouped by value. One lock guards
    ``pick`` and ``record``; ``state_dict()`` saves every window, the generator, and
    each task's passes and trials, which ``stats()`` returns.

    Args:
        window: K, how many recent scores each task's slope is fitted to.
        epsilon: the probability of a uniformly random pick.
        pass_threshold: the score at which a rollout counts as a pass in ``stats()``.
            Keep it equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's
            default.
        seed: seeds the generator; the same seed and calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``window`` is below 2, or ``epsilon`` outside [0, 1], or
            ``pass_threshold`` outside (0, 1].
    """

    name: ClassVar[str] = "tscl"

    window: int = attrs.field(default=10, validator=whole(2, 10))
    epsilon: float = attrs.field(
        default=0.1, validator=number_in(0.0, 1.0, hint="; the paper's code uses 0.1")
    )
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _windows: dict[str, _Window] = attrs.field(init=False, factory=dict, repr=False)
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
    _records: int = attrs.field(init=False, default=0, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _rng: random.Random = attrs.field(init=False, repr=False)
    _shards: ShardCache[_Groups] = attrs.field(init=False, repr=False)
    _in_flight: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._shards = ShardCache(lambda keys: _Groups(keys, self._slope))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return a random task with probability ``epsilon``, else one of highest |slope|."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            if self._rng.random() < self.epsilon:
                picked = draw_free(shard.keys, self._rng, self._in_flight, now)
            else:
                busy = {
                    index
                    for key in self._in_flight.tasks(now)
                    if (index := shard.position.get(key)) is not None
                }
                picked = shard.keys[shard.best(self._rng, busy)]
            self._in_flight.add(picked, now)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Add the score to ``task_id``'s window and refit its slope."""
        value = check_score(task_id, score)
        with self._lock:
            self._records += 1
            window = self._windows.get(task_id)
            if window is None:
                window = self._windows[task_id] = deque(maxlen=self.window)
            window.append((self._records, value))
            slope = abs_slope(window)
            for shard, index in self._shards.holding(task_id):
                shard.move(index, slope)
            count_outcome(self._stats, task_id, value >= self.pass_threshold)
            self._in_flight.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``."""
        with self._lock:
            return dict(self._stats)

    def slope(self, task_id: str) -> float:
        """``task_id``'s current |slope| (1 with fewer than two scores)."""
        with self._lock:
            return self._slope(task_id)

    def _slope(self, task_id: str) -> float:
        window = self._windows.get(task_id)
        return abs_slope(window) if window is not None else _UNKNOWN_SLOPE

    def state_dict(self) -> dict[str, Any]:
        """Every window and the generator, JSON-ready. Picks still in flight are not saved:
        their rollouts do not survive a restart."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "records": self._records,
                "rng": rng_state(self._rng),
                "windows": {
                    key: [list(p) for p in window] for key, window in self._windows.items()
                },
                "stats": saved_counts(self._stats),
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with other parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        picks, records = state.get("picks"), state.get("records")
        rng = restore_rng(self.name, state.get("rng"))
        entries = check_entries(self.name, state.get("windows"), "windows")
        stats = load_counts(self.name, state)
        if not is_count(picks) or not is_count(records):
            raise StateError(f"{self.name}: state needs whole numbers 'picks' and 'records'")

        def valid(entry: Any) -> bool:
            return (
                isinstance(entry, list)
                and 0 < len(entry) <= self.window
                and all(
                    isinstance(point, list)
                    and len(point) == 2
                    and is_count(point[0])
                    and point[0] <= records
                    and is_real(point[1])
                    and 0 <= point[1] <= 1
                    for point in entry
                )
                # Two scores at one time have no slope: the fit would divide by zero.
                and all(earlier[0] < later[0] for earlier, later in pairwise(entry))
            )

        windows = load_entries(
            self.name,
            entries,
            valid,
            lambda entry: deque(((t, float(s)) for t, s in entry), maxlen=self.window),
            f"up to {self.window} [record number, score] pairs, the record numbers increasing",
            "window",
        )
        with self._lock:
            self._windows = windows
            self._stats = stats
            self._picks = picks
            self._records = records
            self._rng = rng
            self._in_flight = Pending()
            self._shards.clear()

    def _params(self) -> dict[str, float]:
        return {
            "window": self.window,
            "epsilon": self.epsilon,
            "pass_threshold": self.pass_threshold,
        }
