"""benchmarks/random_count_bound.py: the floor's values, checked by hand."""

from __future__ import annotations

from types import ModuleType

import pytest

SCRIPT = "random_count_bound"


@pytest.fixture(scope="module")
def bound(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


def make_up(
    bound: ModuleType, lessons: dict[tuple[int, int], int], others: int, goal: int
) -> object:
    return bound.MakeUp(tuple(sorted(lessons.items())), others, goal)


@pytest.mark.parametrize("exact", [True, False])
def test_a_lesson_costs_its_k_failures_in_expectation_either_way(
    bound: ModuleType, exact: bool
) -> None:
    for k in (1, 2, 3, 5):
        assert bound.floor(make_up(bound, {(k, 0): 1}, 0, 1), exact) == pytest.approx(k)


def test_first_looks_are_spent_until_a_lesson_is_found(bound: ModuleType) -> None:
    # One lesson fixed by its first failure among three tasks: found on the 1st, 2nd or 3rd
    # look, each as likely.
    assert bound.floor(make_up(bound, {(1, 0): 1}, 2, 1), True) == pytest.approx(2)


def test_a_lesson_found_is_retried_before_another_task_is_looked_at(bound: ModuleType) -> None:
    # A k=2 lesson and a task with nothing to teach. The first look finds the lesson with
    # chance 1/2; at random counts its rule comes then with chance 1/2, else two more
    # rollouts expected (retried at once, not after a look at the other task, which would
    # cost 3): 1 + 1/2 * (1/2 * 2) + 1/2 * 2 = 2.5, the last term the lesson alone (1 + 1/2 * 2).
    assert bound.floor(make_up(bound, {(2, 0): 1}, 1, 1), False) == pytest.approx(2.5)
    # At exact counts its rule comes on the second failure: 1 + 1/2 * 1 + 1/2 * 2 = 2.5.
    assert bound.floor(make_up(bound, {(2, 0): 1}, 1, 1), True) == pytest.approx(2.5)


def test_a_breakers_victim_costs_one_rollout_for_its_weight_in_units(bound: ModuleType) -> None:
    # The breaker's rule nets one unit while its victim is broken; the patch brings back the
    # victim's weight (2): three units in two rollouts, one unit in one.
    assert bound.floor(make_up(bound, {(1, 2): 1}, 0, 3), True) == pytest.approx(2)
    assert bound.floor(make_up(bound, {(1, 2): 1}, 0, 1), True) == pytest.approx(1)


def test_the_goal_is_the_units_behind_three_quarters_of_the_gain(bound: ModuleType) -> None:
    from agentdescent_sampling.bench.engine import ENGINE_WORKLOADS

    goals = {
        name: bound.MakeUp.of(ENGINE_WORKLOADS[name], 0).goal
        for name in ("lessons", "regressions", "regressions-held-out", "graded")
    }
    # 4.5 of 6 rules; 8.25 of 8 rules and 3 patches; 10.5 of 8 rules and 3 patches of 2.
    assert goals == {"lessons": 5, "regressions": 9, "regressions-held-out": 11, "graded": 6}


def test_the_floor_leaves_the_recursion_limit_as_it_found_it(bound: ModuleType) -> None:
    # It recurses once per first look, deeper than the default limit on `sparse`; a limit left
    # raised would change what every later test in the process sees (a JSON nesting check).
    import sys

    before = sys.getrecursionlimit()
    # One lesson among 2,001 tasks: (2,001 + 1) / 2 looks expected.
    assert bound.floor(make_up(bound, {(1, 0): 1}, 2_000, 1), True) == pytest.approx(1_001)
    assert sys.getrecursionlimit() == before


@pytest.mark.parametrize("exact", [True, False])
def test_a_victim_not_yet_looked_at_is_patched_by_its_first_look(
    bound: ModuleType, exact: bool
) -> None:
    # A lesson, a lesson whose rule breaks a passing task, and that task, each rule on the first
    # failure; the goal is all three units. Each lesson costs its look; the victim costs one
    # rollout if it is still untried when its lesson is fixed (its look is its patch), two if it
    # was looked at before (a pass, then the patch): as likely either way, 3 + 1/2.
    told = bound.MakeUp((((1, 0), 1), ((1, 1), 1)), 1, 3, passing=1)
    assert bound.floor(told, exact) == pytest.approx(3.5)
