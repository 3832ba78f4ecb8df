"""benchmarks/round_hold.py: its rows differ only by the rule, and it asks for an agent that
takes time (that the bench's agent then waits is pinned in test_engine_workloads.py)."""

from __future__ import annotations

import argparse
from types import ModuleType

import pytest

pytest.importorskip("agentdescent", reason="needs the engine extra")

SCRIPT = "round_hold"


def test_without_the_rule_a_failed_task_is_picked_again_in_its_round(
    benchmark_script: ModuleType,
) -> None:
    sampler = benchmark_script.NoHold(failure_cost=1)  # rollouts alone: "a" is worth most
    sampler.end_round(0)
    for passing in ("p0", "p1", "p2"):  # so an untried task is likely to pass, worth little
        sampler.pick([passing], 0)
        sampler.record(passing, 1.0)
    sampler.pick(["a"], 0)
    sampler.record("a", 0.0)
    assert sampler.pick(["a", "b"], 0) == "a"  # the shipped sampler would pick "b"


def test_its_config_asks_the_bench_for_the_latency_and_one_unit_at_a_time(
    benchmark_script: ModuleType,
) -> None:
    args = argparse.Namespace(
        seeds=1,
        reflector="llm-like",
        workload=["concurrent-shared"],
        max_concurrency=1,
        latency=0.001,
    )
    config = benchmark_script.config(args)
    assert [w.max_concurrency for w in config.workloads] == [1]
    labels = [entrant.label for entrant in config.extra]
    assert labels == ["no-hold + wired"]
    assert config.latency == 0.001
