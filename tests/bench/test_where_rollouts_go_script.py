"""benchmarks/where_rollouts_go.py: what each rollout before 75% of the gain was spent on."""

from __future__ import annotations

from types import ModuleType
from types import SimpleNamespace as Plan

SCRIPT = "where_rollouts_go"


def test_a_lesson_s_failures_after_the_one_that_made_its_rule_are_counted_apart(
    benchmark_script: ModuleType,
) -> None:
    kind = benchmark_script.kind_of_rollout
    lesson = Plan(kind="lesson", failures_needed=2)
    assert kind(lesson, False, 0, 0) == "lesson, failure"
    assert kind(lesson, False, 1, 1) == "lesson, failure"  # its second: this one makes the rule
    assert kind(lesson, False, 2, 2) == "lesson, failure after the one that made its rule"
    assert kind(lesson, True, 2, 2) == "lesson, pass (fix confirmed or lucky)"


def test_solved_and_hopeless_tasks_are_told_apart_by_their_history(
    benchmark_script: ModuleType,
) -> None:
    kind = benchmark_script.kind_of_rollout
    assert kind(Plan(kind="always"), True, 0, 0) == "solved, first look"
    assert kind(Plan(kind="always"), True, 3, 0) == "solved, re-test"
    assert kind(Plan(kind="never"), False, 0, 0) == "hopeless, first failure"
    assert kind(Plan(kind="never"), False, 1, 1) == "hopeless, later failure"
