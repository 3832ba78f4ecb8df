"""benchmarks/departure_pairs.py: each pair reflector departs from llm-like in its two ways."""

from __future__ import annotations

from types import ModuleType

import pytest

from agentdescent_sampling.bench.engine import ENGINE_WORKLOADS, workloads

SCRIPT = "departure_pairs"

pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")


def test_each_pair_makes_the_reflector_depart_in_exactly_its_two_ways(
    benchmark_script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workloads, "REFLECTORS", workloads.REFLECTORS)
    monkeypatch.setattr(workloads, "_DEPARTURES", dict(workloads._DEPARTURES))
    benchmark_script.register_pairs()
    for name, departures in benchmark_script.PAIRS.items():
        agent = workloads.build(ENGINE_WORKLOADS["lessons"], 0, name).agent
        made = {"random": agent.at_random, "wrong": agent.writes_wrong_rules, "noisy": agent.slips}
        assert {way for way, on in made.items() if on} == departures
    assert set(benchmark_script.PAIRS) | {"llm-like-all"} <= set(
        benchmark_script.DEFAULT_REFLECTORS
    )


def test_a_ratio_is_round_robins_rollouts_over_the_wired_samplers_per_seed(
    benchmark_script: ModuleType,
) -> None:
    # On llm-like's lessons, seed 0, wired fixable-first reaches 75% of the gain sooner.
    [ratio] = benchmark_script.ratios("llm-like", ENGINE_WORKLOADS["lessons"], [0])
    assert ratio > 1.0
