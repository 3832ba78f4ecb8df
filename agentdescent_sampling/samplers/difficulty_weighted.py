"""DifficultyWeighted: UCB over the learning signal 4p(1-p), as the engine defines it."""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Sequence
from typing import ClassVar

import attrs

from ..protocol import SOLVED, check_keys, check_score
from ..validators import number_in

__all__ = ["DifficultyWeighted"]


@attrs.define(eq=False)
class DifficultyWeighted:
    """Prefer tasks that still carry learning signal, with a small UCB exploration bonus.

    Each task keeps ``(passes, trials)``; a rollout passes when its score reaches
    ``pass_threshold``. ``pick`` returns the key with the highest

        min(1, 4p(1-p)) + c * sqrt(ln(t + 1) / trials)

    where ``p = passes / trials`` and ``t`` counts the picks made so far, this one
    included. The signal peaks at ``p = 0.5`` and vanishes for tasks that always
    or never pass. An untried task wins outright, so every task in a shard is
    tried once before any is repeated; ties go to the earliest key.

    One lock guards ``pick`` and ``record``: workers share one instance when
    ``evolve(max_concurrency > 1)``.

    Args:
        c: exploration constant. Lower focuses harder, higher explores more; the
            default 0.2 is the doc's measured choice.
        pass_threshold: the score at which a rollout counts as a pass. Keep it
            equal to ``evolve(solved_threshold=...)``; lower both for graded scorers.
        prior: the pass rate assumed for an untried task. The doc's rule lets an
            untried task win outright, so the prior never changes a pick; it is
            kept for parity with the engine's constructor.

    Raises:
        TypeError: a parameter is not a number.
        ValueError: ``c < 0``, ``pass_threshold`` outside (0, 1] or ``prior``
            outside [0, 1].
    """

    name: ClassVar[str] = "difficulty-weighted"

    c: float = attrs.field(default=0.2, validator=number_in(0.0, hint="; try 0.2"))
    pass_threshold: float = attrs.field(
        default=SOLVED,
        validator=number_in(0.0, 1.0, low_open=True, hint=f"; the engine's default is {SOLVED}"),
    )
    prior: float = attrs.field(default=0.5, validator=number_in(0.0, 1.0))
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return the key with the highest UCB score; the first untried key wins outright."""
        keys = check_keys(keys)
        operator.index(round_index)
        with self._lock:
            self._picks += 1
            log_t = math.log(self._picks + 1.0)
            best, best_score = keys[0], -math.inf
            for key in keys:
                passes, trials = self._stats.get(key, (0, 0))
                if trials == 0:
                    return key
                p = passes / trials
                score = min(1.0, 4.0 * p * (1.0 - p)) + self.c * math.sqrt(log_t / trials)
                if score > best_score:
                    best, best_score = key, score
            return best

    def record(self, task_id: str, score: float) -> None:
        """Count one trial of ``task_id``, and a pass if ``score >= pass_threshold``."""
        value = check_score(task_id, score)
        with self._lock:
            passes, trials = self._stats.get(task_id, (0, 0))
            self._stats[task_id] = (passes + (value >= self.pass_threshold), trials + 1)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``."""
        with self._lock:
            return dict(self._stats)
