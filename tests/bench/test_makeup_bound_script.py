"""benchmarks/makeup_bound.py: the floor told the make-up only, checked by hand and against a
planner that tracks every task and every labelling of the tasks one by one."""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable
from functools import cache
from types import ModuleType

import pytest

SCRIPT = "makeup_bound"

HOPELESS, PASSING = "hopeless", "passing"


@pytest.fixture(scope="module")
def bound(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


def make_up(
    bound: ModuleType, lessons: dict[tuple[int, int], int], hopeless: int, passing: int, goal: int
) -> object:
    return bound.MakeUp(tuple(sorted(lessons.items())), hopeless, passing, goal)


def by_task(
    lessons: dict[tuple[int, int], int], hopeless: int, passing: int, goal: int, reveal: int
) -> float:
    """The same floor, planned over each task's own history and every labelling of the tasks:
    no counts, no exchangeability, nothing shared with the script."""
    labels: list[Hashable] = [HOPELESS] * hopeless + [PASSING] * passing
    for kind, n in lessons.items():
        labels += [kind] * n
    labellings = list(dict.fromkeys(itertools.permutations(labels)))
    patch = max((weight for _, weight in lessons), default=0)

    def likely(label: Hashable, status: tuple[object, ...]) -> float:
        """How likely a task labelled so is to have shown what ``status`` says."""
        match status:
            case ("untried",):
                return 1.0
            case ("passed",):
                return float(label == PASSING)
            case ("failed", n):
                if label == HOPELESS:
                    return 1.0
                if label == PASSING:
                    return 0.0
                return (1 - 1 / label[0]) ** n  # type: ignore[index,operator]
            case ("fixed", kind) | ("known", kind):
                return float(label == kind)
            case ("hopeless",):
                return float(label == HOPELESS)
        raise AssertionError(status)

    def after_failure(label: Hashable, n: int) -> tuple[object, ...]:
        if n < reveal:
            return ("failed", n)
        return ("hopeless",) if label == HOPELESS else ("known", label)

    def outcomes(
        label: Hashable, status: tuple[object, ...]
    ) -> list[tuple[float, tuple[object, ...]]]:
        """What a rollout of a task labelled so, showing ``status``, leads to, and how likely."""
        if label == PASSING:
            return [(1.0, ("passed",))]
        failures = status[1] if status[0] == "failed" else 0
        failed = ("known", label) if status[0] == "known" else after_failure(label, failures + 1)
        if label == HOPELESS:
            return [(1.0, failed)]
        k = label[0]  # type: ignore[index]
        return [(1 / k, ("fixed", label)), (1 - 1 / k, failed)]

    @cache
    def value(statuses: tuple[tuple[object, ...], ...], waiting: int) -> float:
        held = sum(1 + s[1][1] for s in statuses if s[0] == "fixed")  # type: ignore[index]
        if held - waiting * patch >= goal:
            return 0.0
        weights = [
            math.prod(likely(lab, s) for lab, s in zip(ls, statuses, strict=True))
            for ls in labellings
        ]
        total = sum(weights)
        best = 1 + value(statuses, waiting - 1) if waiting else math.inf
        for t, status in enumerate(statuses):
            if status[0] not in ("untried", "failed", "known"):
                continue
            stay, expected = 0.0, 1.0
            for labelling, weight in zip(labellings, weights, strict=True):
                for chance, new in outcomes(labelling[t], status):
                    p = weight / total * chance
                    if not p:
                        continue
                    if new == status:
                        stay += p
                        continue
                    fixed = new[0] == "fixed"
                    breaks = fixed and new[1][1] > 0  # type: ignore[index]
                    changed = (*statuses[:t], new, *statuses[t + 1 :])
                    expected += p * value(changed, waiting + breaks)
            best = min(best, expected / (1 - stay))
        return best

    return value((("untried",),) * len(labels), 0)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_a_lesson_alone_costs_its_k_failures_in_expectation(bound: ModuleType, k: int) -> None:
    assert bound.floor(make_up(bound, {(k, 0): 1}, 0, 0, 1), 3) == pytest.approx(k)


def test_a_failing_task_is_hopeless_where_no_slow_lesson_is_left(bound: ModuleType) -> None:
    # A k=1 lesson among a hopeless and a passing task: a failure without a rule can only be
    # the hopeless task's, so only first looks are spent: found on the 1st, 2nd or 3rd look.
    assert bound.floor(make_up(bound, {(1, 0): 1}, 1, 1, 1), 3) == pytest.approx(2)


def test_a_slow_lesson_and_a_hopeless_task_by_hand(bound: ModuleType) -> None:
    # A k=2 lesson and a hopeless task, each told at its 2nd failure. The first look fails
    # without a rule with chance 3/4, leaving a task failed once (the lesson with chance
    # (1/2 * 1/2) / (3/4) = 1/3) and one untried. Retrying the failed one: 1 + 1/3 * 1/2 * 2
    # (the lesson, told at its 2nd failure, 2 more) + 2/3 * 2 (hopeless: the other is the
    # lesson, 2 more) = 8/3. Looking at the other instead: 1 + 2/3 * V, V for two tasks failed
    # once, one of each: 1 + 1/2 * 1/2 * 2 + 1/2 * 2 = 5/2, so 8/3 as well.
    # In all: 1 + 3/4 * 8/3 = 3.
    assert bound.floor(make_up(bound, {(2, 0): 1}, 1, 0, 1), 2) == pytest.approx(3)


@pytest.mark.parametrize(
    ("lessons", "hopeless", "passing", "goal", "reveal"),
    [
        ({(2, 0): 1}, 1, 0, 1, 2),
        ({(2, 0): 1}, 1, 0, 1, 4),
        ({(2, 0): 1, (3, 0): 1}, 1, 1, 1, 3),
        ({(2, 0): 1, (3, 0): 1}, 1, 1, 2, 3),
        ({(1, 0): 1, (2, 0): 1}, 2, 0, 2, 3),
        ({(3, 0): 2}, 1, 0, 1, 3),
        ({(1, 0): 1, (2, 1): 1}, 1, 1, 3, 3),
        ({(2, 2): 1, (3, 0): 1}, 1, 0, 3, 3),
    ],
)
def test_the_floor_is_the_planners_over_every_labelling(
    bound: ModuleType,
    lessons: dict[tuple[int, int], int],
    hopeless: int,
    passing: int,
    goal: int,
    reveal: int,
) -> None:
    assert bound.floor(make_up(bound, lessons, hopeless, passing, goal), reveal) == pytest.approx(
        by_task(lessons, hopeless, passing, goal, reveal)
    )


def test_telling_the_kind_later_never_lowers_the_floor(bound: ModuleType) -> None:
    floors = [bound.floor(make_up(bound, {(1, 0): 1, (3, 0): 2}, 2, 1, 2), f) for f in range(2, 7)]
    assert floors == sorted(floors)
    assert floors[-1] > floors[0]


def test_it_is_above_the_floor_told_each_kind_at_its_first_look(bound: ModuleType) -> None:
    told_kinds = bound.random_count_bound
    lessons, hopeless, passing = {(1, 0): 1, (2, 0): 1, (3, 0): 1}, 2, 1
    told = told_kinds.floor(told_kinds.MakeUp(tuple(sorted(lessons.items())), 3, 2), False)
    assert bound.floor(make_up(bound, lessons, hopeless, passing, 2), 4) > told + 0.1


def test_victims_are_told_as_passing_tasks_and_never_pass_tasks_as_hopeless(
    bound: ModuleType,
) -> None:
    from agentdescent_sampling.bench.engine import ENGINE_WORKLOADS

    lessons = bound.MakeUp.of(ENGINE_WORKLOADS["lessons"], 0)
    assert (lessons.hopeless, lessons.passing, lessons.goal) == (6, 6, 5)
    regressions = bound.MakeUp.of(ENGINE_WORKLOADS["regressions"], 0)
    # 10 always-pass tasks and 3 victims pass at their first look; 8 never-pass are hopeless.
    assert (regressions.hopeless, regressions.passing) == (8, 13)
    assert sum(n for (_, weight), n in regressions.lessons if weight) == 3
