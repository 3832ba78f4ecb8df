"""Straightforward reference implementations of the built-ins' pick rules.

Each scores every key on every pick, exactly as the rule reads. They are the
baseline ``benchmarks/pick_cost.py`` times the built-ins against, and the oracle the
exactness tests compare the built-ins' grouped picks with: same picks, ties included.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..protocol import SOLVED, check_pick, check_task_id
from ..samplers.difficulty_weighted import _FLOOR
from ..samplers.fixable_first import FixableFirst, _Task
from ..samplers.informative_band import InformativeBand, _score

__all__ = [
    "ReferenceDifficultyWeighted",
    "ReferenceFixableFirst",
    "ReferenceInformativeBand",
    "ReferenceRoundRobin",
]


class ReferenceRoundRobin:
    """``keys[round_index % len(keys)]``, without round-robin's input checks."""

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[round_index % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        return None


class ReferenceDifficultyWeighted:
    """The doc's rule written the obvious way: ``max`` over a score of every key.

    With ``spread_in_flight``, keys picked and not yet recorded are left out while
    another key is free (without the built-in's expiry of picks never recorded).
    """

    def __init__(
        self, c: float = 0.2, pass_threshold: float = SOLVED, spread_in_flight: bool = False
    ) -> None:
        self.c = c
        self.pass_threshold = pass_threshold
        self.spread_in_flight = spread_in_flight
        self.stats: dict[str, tuple[int, int]] = {}
        self.in_flight: dict[str, int] = {}
        self.picks = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.picks += 1
        log_t = math.log(self.picks + 1)

        def score(key: str) -> float:
            passes, trials = self.stats.get(key, (0, 0))
            if trials == 0:
                return math.inf
            p = passes / trials
            return 4.0 * p * (1.0 - p) + _FLOOR + self.c * math.sqrt(log_t / trials)

        free = [key for key in keys if key not in self.in_flight]
        candidates = free if self.spread_in_flight and free else keys
        picked = max(candidates, key=score)  # max keeps the first of equal scores
        if self.spread_in_flight:
            self.in_flight[picked] = self.in_flight.get(picked, 0) + 1
        return picked

    def record(self, task_id: str, score: float) -> None:
        passes, trials = self.stats.get(task_id, (0, 0))
        self.stats[task_id] = (passes + (score >= self.pass_threshold), trials + 1)
        if self.in_flight.get(task_id, 0) > 1:
            self.in_flight[task_id] -= 1
        else:
            self.in_flight.pop(task_id, None)


class ReferenceInformativeBand(InformativeBand):
    """The same model, picking with a plain loop that scores every key."""

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        with self._lock:
            self._picks += 1
            self._refile_stale()
            weights, noises = self._weights(), self._noises()
            in_flight = self._pending.tasks(self._picks)
            free = [key for key in keys if key not in in_flight] or list(keys)
            scores = [_score(self._signature(key), weights, noises) for key in free]
            picked = free[scores.index(max(scores))]
            self._pending.add(picked, self._picks)
            return picked


class ReferenceFixableFirst(FixableFirst):
    """fixable-first as it picked before grouping: a loop that scores every key."""

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        keys, round_index = check_pick(keys, round_index)
        for key in keys:
            check_task_id(key)
        with self._lock:
            distinct = set(keys)
            waiting = self._waiting(len(distinct), distinct.__contains__)
            value = self._values()
            free = [key for key in keys if key not in waiting] or keys
            worth = {key: value.of(self._tasks.get(key)) for key in free}
            floor = self._band * max(worth.values())

            def least_recent(overdue: Callable[[_Task | None], int]) -> str:
                best, best_last = keys[0], None
                for key in free:
                    task = self._tasks.get(key)
                    last = -1 if task is None else task.last
                    eligible = worth[key] >= floor or last < overdue(task)
                    if eligible and (best_last is None or last < best_last):
                        best, best_last = key, last
                return best

            best = least_recent(self._overdue(len(distinct)))
            if self._retested(best, value, len(distinct)):
                best = least_recent(lambda task: self._picks + 1)
            self._picks += 1
            if best in self._tasks:
                self._tasks[best].last = self._picks
            self._pending.add(best, self._picks)
            return best
