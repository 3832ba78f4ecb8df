"""benchmarks/async_fix_bound.py: the bound holds a task from the failure that made its fix."""

from __future__ import annotations

from types import ModuleType
from types import SimpleNamespace as Plan
from typing import Any

SCRIPT = "async_fix_bound"


def _sampler(script: ModuleType) -> object:
    plans = {
        "two": Plan(rule="[rule 2]", failures_needed=2),
        "other": Plan(rule=None, failures_needed=1),
    }
    return script.ToldFix(Plan(pass_threshold=0.999, agent=Plan(by_id=plans)))


def test_a_task_waits_from_the_failure_that_made_its_fix_until_its_card_is_gated(
    benchmark_script: ModuleType,
) -> None:
    sampler: Any = _sampler(benchmark_script)
    keys = ["two", "other"]
    for task_id, failures in (("other", 3), ("two", 2)):  # "two" is now worth far more
        for _ in range(failures):
            sampler.record(task_id, 0.0)
    assert sampler.held == {"two"}
    assert sampler.pick(keys, 1) == "other"
    sampler.record("other", 0.0)
    sampler.evidence("two", 0.0, False)  # its card: a note, refused
    assert sampler.held == set()
    assert sampler.pick(keys, 2) == "two"


def test_a_discarded_card_releases_its_task(benchmark_script: ModuleType) -> None:
    sampler: Any = _sampler(benchmark_script)
    sampler.held.add("two")
    sampler.settle(Plan(trajectory_refs=[Plan(id="two")]))
    assert sampler.held == set()
