"""benchmarks/where_rollouts_go.py: what each rollout before 75% of the gain was spent on."""

from __future__ import annotations

from types import ModuleType
from types import SimpleNamespace as Plan

SCRIPT = "where_rollouts_go"


def test_a_lesson_s_failures_after_the_one_that_made_its_rule_are_counted_apart(
    benchmark_script: ModuleType,
) -> None:
    kind = benchmark_script.kind_of_rollout
    lesson = Plan(kind="lesson")
    assert kind(lesson, False, 0, 0, 2) == "lesson, failure"
    assert kind(lesson, False, 1, 1, 2) == "lesson, failure"  # its second: this one made the rule
    assert kind(lesson, False, 2, 2, 2) == "lesson, failure after the one that made its rule"
    assert kind(lesson, True, 2, 2, 2) == "lesson, pass (fix confirmed or lucky)"
    assert kind(lesson, False, 5, 5, None) == "lesson, failure"  # its rule never came


def test_the_failure_that_made_a_rule_is_the_one_the_reflector_found_it_on() -> None:
    from agentdescent_sampling.bench.engine import ENGINE_WORKLOADS, build

    built = build(ENGINE_WORKLOADS["lessons"], 0, "llm-like-random")
    plan = next(
        p for p in built.agent.by_id.values() if p.kind == "lesson" and p.failures_needed == 3
    )
    task = Plan(id=plan.id)
    found = []
    for failure in range(1, 40):
        if built.agent.propose("", task, "", 0.0) == plan.rule:
            found.append(failure)
    assert found
    assert built.agent.found == {plan.id: found[0]}


def test_solved_and_hopeless_tasks_are_told_apart_by_their_history(
    benchmark_script: ModuleType,
) -> None:
    kind = benchmark_script.kind_of_rollout
    assert kind(Plan(kind="always"), True, 0, 0, None) == "solved, first look"
    assert kind(Plan(kind="always"), True, 3, 0, None) == "solved, re-test"
    assert kind(Plan(kind="never"), False, 0, 0, None) == "hopeless, first failure"
    assert kind(Plan(kind="never"), False, 1, 1, None) == "hopeless, later failure"
