"""The learner ceiling: fixable-first's rule, told the workload's make-up instead of learning it.

The oracle knows which task is which, which no sampler can. A learner that sees only outcomes
cannot tell a task that needs two failures from a hopeless one before it has failed twice, nor a
lucky pass from a fix before it fails again. :class:`InformedLearner` is that learner at its
best as far as this bench can build one: it picks by fixable-first's rule, but every population
estimate the rule would have to learn (how many failures a fix takes, how many tasks are
hopeless, how often a first rollout fails, how lucky flaky tasks are, how often passing tasks
break) is given to it exactly, from the workload's plan. It still sees each task only through
its outcomes. It is an estimate of what outcome-only learning can reach, not a proven optimum.

How a fix arrives is part of the make-up: on a task's k-th failure, or, with the
``llm-like-random`` and ``llm-like-all`` reflectors, on each failure with chance 1/k. The
learner is told which, so its hazards are those of the run's own reflector.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

import attrs

from ...samplers.fixable_first import _HORIZON, FixableFirst, _Values
from .workloads import Built

__all__ = ["InformedLearner", "MakeUp"]


@attrs.frozen
class MakeUp:
    """The counts a learner would have to estimate, read from a seeded workload's plan.

    Attributes:
        failures_needed: lesson tasks by the failures their fix takes (victims' patches too).
        hopeless: never-pass train tasks.
        solved: always-pass train tasks.
        flaky: lessons that pass by luck while unfixed.
        luck: the chance such a lesson passes by luck.
        victims: passing tasks that a commit can break.
        at_random: a fix comes on each failure with chance 1/k (``llm-like-random``,
            ``llm-like-all``), not on the k-th failure.
    """

    failures_needed: Counter[int]
    hopeless: int
    solved: int
    flaky: int
    luck: float
    victims: int
    at_random: bool = False

    @classmethod
    def of(cls, built: Built) -> MakeUp:
        """Read the make-up of ``built``'s train tasks."""
        plans = [plan for plan in built.agent.by_id.values() if plan.id.endswith("-train")]
        kinds = Counter(plan.kind for plan in plans)
        lucky = [plan.luck for plan in plans if plan.luck]
        return cls(
            Counter(plan.failures_needed for plan in plans if plan.kind in ("lesson", "victim")),
            kinds["never"],
            kinds["always"],
            len(lucky),
            lucky[0] if lucky else 0.5,
            kinds["victim"],
            built.agent.at_random,
        )


@attrs.define(eq=False)
class InformedLearner(FixableFirst):
    """fixable-first with the workload's make-up in place of its learned estimates."""

    make_up: MakeUp = attrs.field(kw_only=True)
    #: Its values are exact, so it picks the best, not within fixable-first's band.
    _band: ClassVar[float] = 1.0
    #: Its published figures were measured before fixable-first's re-test cap.
    _cap_retests: ClassVar[bool] = False

    def _values(self) -> _Values:
        return _InformedValues(self, self.make_up)


class _InformedValues(_Values):
    def __init__(self, sampler: FixableFirst, make_up: MakeUp) -> None:
        super().__init__(sampler)
        k = make_up.failures_needed
        lessons = sum(k.values()) - make_up.victims
        top = max(k, default=0) + _HORIZON + 1
        self._at_random = make_up.at_random
        # A task that has only failed is hopeless or a lesson not yet fixed: its j-th failure
        # yields the fix with the chance of the lessons still unfixed after j - 1 failures.
        self._hazard = [0.0] + [
            self._fixes_at(k, j - 1) / (make_up.hopeless + self._unfixed(k, j - 1) or 1)
            for j in range(1, top + 1)
        ]
        self._known = k
        tasks = make_up.hopeless + make_up.solved + lessons + make_up.victims
        steady = lessons - make_up.flaky
        self._first_fail = (make_up.hopeless + steady + make_up.flaky * (1 - make_up.luck)) / tasks
        self._flip_luck = make_up.flaky / max(1, lessons)
        passers = make_up.solved + make_up.victims + make_up.flaky * make_up.luck
        breaking = make_up.flaky * make_up.luck * (1 - make_up.luck) + 0.5 * make_up.victims
        self._pass_breaks = breaking / passers if passers else 0.0
        self._luck = make_up.luck
        self._index = {}

    def _unfixed(self, k: Counter[int], fails: int) -> float:
        """How many fixable tasks are expected to be unfixed after ``fails`` failures."""
        if self._at_random:
            return sum(n * (1 - 1 / m) ** fails for m, n in k.items())
        return sum(n for m, n in k.items() if m > fails)

    def _fixes_at(self, k: Counter[int], fails: int) -> float:
        """How many of those are expected to be fixed by their next failure."""
        if self._at_random:
            return sum(n * (1 - 1 / m) ** fails / m for m, n in k.items())
        return k[fails + 1]

    def _fixable(self, fails: int) -> float:
        later = self._unfixed(self._known, fails)
        return self._fixes_at(self._known, fails) / later if later else 0.0
