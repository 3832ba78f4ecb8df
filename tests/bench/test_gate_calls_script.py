"""benchmarks/gate_calls.py: a run's calls are its rollouts, its reflection and its gates."""

from __future__ import annotations

from types import ModuleType

import pytest

from agentdescent_sampling.bench.engine.lineup import engine_lineup
from agentdescent_sampling.registry import default_registry

pytest.importorskip("agentdescent", reason="needs the engine extra")

SCRIPT = "gate_calls"


@pytest.mark.parametrize("label", ["round-robin", "fixable-first + wired"])
def test_each_round_with_a_failure_costs_one_held_out_measurement(
    benchmark_script: ModuleType, label: str
) -> None:
    entrants = {e.label: e for e in engine_lineup(["fixable-first"], default_registry())}
    split = benchmark_script.split(entrants[label], "lessons", 0, "llm-like")
    assert split["rollouts"] + split["reflect"] + split["gate"] == split["calls"]
    assert 0 < split["gated"] <= split["rounds"]
    # lessons holds out 18 tasks; the first measurement scores the empty artifact too.
    assert split["gate"] == 18 * (split["gated"] + 1)


def test_a_sampler_s_table_row_divides_round_robin_s_means_by_its_own(
    benchmark_script: ModuleType,
) -> None:
    base = dict.fromkeys(benchmark_script.COLUMNS, 10.0)
    half = dict.fromkeys(benchmark_script.COLUMNS, 5.0)
    table = benchmark_script._table({"round-robin": base, "it": half})
    assert table.splitlines()[2].split()[-3:] == ["2.00x", "2.00x", "2.00x"]
