"""benchmarks/round_hold.py: its rows differ only by the rule, and its agent takes time."""

from __future__ import annotations

import argparse
import time
from types import ModuleType

import pytest

from agentdescent_sampling.bench.engine import run_engine
from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS

pytest.importorskip("agentdescent", reason="needs the engine extra")

SCRIPT = "round_hold"


def test_without_the_rule_a_failed_task_is_picked_again_in_its_round(
    benchmark_script: ModuleType,
) -> None:
    sampler = benchmark_script.NoHold()
    sampler.end_round(0)
    sampler.pick(["a", "b"], 0)
    sampler.record("a", 0.0)
    assert sampler.pick(["a", "b"], 0) == "a"  # the shipped sampler would pick "b"


def test_its_runs_take_time_and_one_at_a_time_its_units_queue(
    benchmark_script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = argparse.Namespace(
        seeds=1, reflector="llm-like", workload=["concurrent-shared"], max_concurrency=1
    )
    config = benchmark_script.config(args)
    assert [w.max_concurrency for w in config.workloads] == [1]
    labels = [entrant.label for entrant in config.extra]
    assert labels == ["no-hold + wired"]
    monkeypatch.setattr(benchmark_script.engine_run, "build", benchmark_script.engine_run.build)
    benchmark_script.with_latency(0.001)
    workload = ENGINE_WORKLOADS["lessons"]
    started = time.perf_counter()
    run = run_engine(workload, config.extra[0].make, 0, wiring=config.extra[0].wiring)
    # 80 rollouts, each at least one agent call of 1 ms.
    assert time.perf_counter() - started >= 0.08
    assert run.rollouts_to(0.75)
