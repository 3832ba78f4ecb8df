"""benchmarks/outcome_ceiling.py: the planner's chances and values, checked by hand."""

from __future__ import annotations

from types import ModuleType

import pytest

SCRIPT = "outcome_ceiling"
START = (0, 0, 0, 0, 0)


@pytest.fixture(scope="module")
def ceiling(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


def test_untried_tasks_are_what_the_make_up_says_before_anything_is_seen(
    ceiling: ModuleType,
) -> None:
    planner = ceiling.Planner((2, 2, 2), solved=6, hopeless=6, goal=5)
    one, solved, _, _ = planner._chances(18, 0, 0, START)
    assert one == pytest.approx(2 / 18)
    assert solved == pytest.approx(6 / 18)


def test_a_task_that_failed_once_is_a_two_failure_lesson_in_proportion(
    ceiling: ModuleType,
) -> None:
    # One task failed once: it is one of 2 two-failure lessons, 2 three-failure lessons or
    # 6 hopeless tasks, all equally likely to have been the one tried.
    planner = ceiling.Planner((2, 2, 2), solved=6, hopeless=6, goal=5)
    _, _, two, _ = planner._chances(17, 1, 0, START)
    assert two == pytest.approx(2 / 10)


def test_the_expected_rollouts_of_a_three_task_run_are_eight_thirds(
    ceiling: ModuleType,
) -> None:
    # One lesson fixed by its first failure, two hopeless tasks; shards of 2 and 1. Round 1
    # tries one task of each shard and finds the lesson with chance 2/3 (2 rollouts); else
    # it is the untried task left, found in round 2 (4 rollouts): 2/3 * 2 + 1/3 * 4 = 8/3.
    planner = ceiling.Planner((1, 0, 0), solved=0, hopeless=2, goal=1)
    assert planner.round((2, 0, 0), (1, 0, 0), START) == pytest.approx(8 / 3)


def test_it_retries_a_failure_that_must_be_a_lesson_before_an_untried_task(
    ceiling: ModuleType,
) -> None:
    # Make-up: one two-failure lesson and solved tasks only. A task that failed is the lesson.
    planner = ceiling.Planner((0, 1, 0), solved=3, hopeless=0, goal=1)
    assert planner.choose((1, 1, 0), (2, 0, 0), START, first=True) == "f1"


def test_it_stops_retrying_a_task_no_lesson_left_could_explain(ceiling: ModuleType) -> None:
    # Both two-failure lessons are found, so a task that failed once is hopeless or a
    # three-failure lesson; with no three-failure lessons in the make-up, it is hopeless.
    planner = ceiling.Planner((1, 2, 0), solved=2, hopeless=2, goal=3)
    found = (0, 0, 2, 0, 0)
    assert planner._chances(4, 1, 0, found)[2] == 0
    assert planner.choose((2, 1, 0), (2, 0, 0), found, first=True) == "u"


def test_workloads_it_does_not_model_are_refused_by_name(ceiling: ModuleType) -> None:
    from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS

    with pytest.raises(SystemExit, match="flaky: the planner models"):
        ceiling.planner_for(ENGINE_WORKLOADS["flaky"], 6)
