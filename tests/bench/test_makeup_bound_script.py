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

HOPELESS, PASSING, VICTIM = "hopeless", "passing", "victim"

#: A lesson as the tests write it: (k, the weight its victim's patch restores) or, for a
#: lesson that passes by luck, (k, weight, True).
Lessons = dict[tuple[int, ...], int]


@pytest.fixture(scope="module")
def bound(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


def kinds(lessons: Lessons) -> list[tuple[tuple[int, int, bool], int]]:
    return sorted(((k, w, bool(rest)), n) for (k, w, *rest), n in lessons.items())


def make_up(bound: ModuleType, lessons: Lessons, hopeless: int, passing: int, goal: int) -> object:
    """``passing`` counts the victims, as the script's make-up does."""
    return bound.MakeUp(tuple(kinds(lessons)), hopeless, passing, goal)


def by_task(lessons: Lessons, hopeless: int, passing: int, goal: int, reveal: int) -> float:
    """The same floor, planned over each task's own history and every labelling of the tasks:
    no counts, no exchangeability, nothing shared with the script. At most one lesson breaks a
    passing task (its victim, one of the ``passing``): with one, which victim is whose is plain."""
    labelled = kinds(lessons)
    breakers = sum(n for (_, weight, _), n in labelled if weight)
    assert breakers <= 1
    labels: list[Hashable] = [HOPELESS] * hopeless + [PASSING] * (passing - breakers)
    labels += [VICTIM] * breakers
    for kind, n in labelled:
        labels += [kind] * n
    labellings = list(dict.fromkeys(itertools.permutations(labels)))
    patch = max((weight for (_, weight, _), _ in labelled), default=0)

    def likely(label: Hashable, status: tuple[object, ...]) -> float:
        """How likely a task labelled so is to have shown what ``status`` says."""
        match status:
            case ("untried",):
                return 1.0
            case ("passed",):
                return float(label in (PASSING, VICTIM))
            case ("failed", n):
                if label == HOPELESS:
                    return 1.0
                if label in (PASSING, VICTIM) or label[2]:  # type: ignore[index]
                    return 0.0  # a flaky lesson is known from its first failure
                return (1 - 1 / label[0]) ** n  # type: ignore[index,operator]
            case ("fixed", kind) | ("known", kind):
                return float(label == kind)
            case ("hopeless",):
                return float(label == HOPELESS)
            case ("broken",) | ("patched",):
                return float(label == VICTIM)
        raise AssertionError(status)

    def outcomes(
        label: Hashable, status: tuple[object, ...]
    ) -> list[tuple[float, tuple[object, ...]]]:
        """What a rollout of a task labelled so, showing ``status``, leads to, and how likely."""
        if status == ("broken",):
            return [(1.0, ("patched",))]
        if label in (PASSING, VICTIM):
            return [(1.0, ("passed",))]
        failures = status[1] if status[0] == "failed" else 0
        if status[0] == "known" or (label != HOPELESS and label[2]):  # type: ignore[index]
            failed: tuple[object, ...] = ("known", label)  # a flaky lesson: told at once
        elif failures + 1 < reveal:
            failed = ("failed", failures + 1)
        else:
            failed = ("hopeless",) if label == HOPELESS else ("known", label)
        if label == HOPELESS:
            return [(1.0, failed)]
        k = label[0]  # type: ignore[index]
        return [(1 / k, ("fixed", label)), (1 - 1 / k, failed)]

    @cache
    def value(statuses: tuple[tuple[object, ...], ...]) -> float:
        held = sum(1 + s[1][1] for s in statuses if s[0] == "fixed")  # type: ignore[index]
        held -= patch * sum(s == ("broken",) for s in statuses)
        if held >= goal:
            return 0.0
        weights = [
            math.prod(likely(lab, s) for lab, s in zip(ls, statuses, strict=True))
            for ls in labellings
        ]
        total = sum(weights)
        best = math.inf
        for t, status in enumerate(statuses):
            if status[0] not in ("untried", "failed", "known", "broken"):
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
                    changed = [*statuses[:t], new, *statuses[t + 1 :]]
                    if new[0] == "fixed" and new[1][1]:  # type: ignore[index]
                        changed[labelling.index(VICTIM)] = ("broken",)  # told where it broke
                    expected += p * value(tuple(changed))
            best = min(best, expected / (1 - stay))
        return best

    return value((("untried",),) * len(labels))


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


def test_a_victim_not_yet_looked_at_is_patched_by_its_first_look(bound: ModuleType) -> None:
    # A lesson, a lesson whose rule breaks a passing task, and that task, each rule on the first
    # failure; the goal is all three units. Each lesson costs its look; the victim costs one
    # rollout if it is still untried when its lesson is fixed (its look is its patch), two if it
    # was looked at before (a pass, then the patch): as likely either way, 3 + 1/2.
    lessons = {(1, 0): 1, (1, 1): 1}
    assert bound.floor(make_up(bound, lessons, 0, 1, 3), 3) == pytest.approx(3.5)


def test_a_flaky_lesson_is_told_at_its_first_look(bound: ModuleType) -> None:
    # A lucky pass would tell a flaky lesson from a hopeless task, so the floor tells it at
    # once: a k=2 flaky lesson and a hopeless task cost 1 + 1/2 * 1/2 * 2 (the first look is
    # the lesson without its rule, then 2 expected) + 1/2 * 2 (the hopeless task, then 2).
    lessons = {(2, 0, True): 1}
    assert bound.floor(make_up(bound, lessons, 1, 0, 1), 3) == pytest.approx(2.5)
    assert bound.floor(make_up(bound, {(2, 0): 1}, 1, 0, 1), 3) > 2.5


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
        ({(2, 2): 1, (3, 0): 1}, 1, 1, 3, 3),
        ({(1, 1): 1, (1, 0): 1}, 0, 1, 3, 3),
        ({(1, 2): 1, (2, 0): 1}, 1, 2, 4, 3),
        ({(2, 0, True): 1, (3, 0): 1}, 2, 1, 1, 3),
        ({(3, 0, True): 1, (1, 0): 1}, 1, 1, 2, 4),
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
    assert sum(n for (_, weight, _), n in regressions.lessons if weight) == 3
    flaky = bound.MakeUp.of(ENGINE_WORKLOADS["flaky"], 0)
    # 4 of its 8 lessons pass by luck; one of seed 0's takes one failure, so is told by it.
    assert sum(n for _, n in flaky.lessons) == 8
    assert sum(n for (k, _, lucky), n in flaky.lessons if lucky and k > 1) == 3
    assert not any(lucky for (k, _, lucky), _ in flaky.lessons if k == 1)


def test_the_goal_follows_the_fraction_of_the_gain_asked(bound: ModuleType) -> None:
    from agentdescent_sampling.bench.engine import ENGINE_WORKLOADS

    # 6 lessons of one unit: 75% is 4.5 units, so 5; 90% is 5.4, so all 6.
    assert bound.MakeUp.of(ENGINE_WORKLOADS["lessons"], 0, 0.9).goal == 6
    assert bound.MakeUp.of(ENGINE_WORKLOADS["lessons"], 0).goal == 5


@pytest.mark.parametrize("args", [["--fraction", "0"], ["--fraction", "nan"], ["--reveal", "1"]])
def test_a_fraction_or_reveal_out_of_range_is_refused_before_any_run(
    bound: ModuleType, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bound.main(args)
    assert exit_info.value.code == 2
    assert args[1] in capsys.readouterr().err
