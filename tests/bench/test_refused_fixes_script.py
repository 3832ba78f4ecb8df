"""benchmarks/refused_fixes.py: the gate's refusals of a real fix, and what rode beside it."""

from __future__ import annotations

from types import ModuleType

import pytest

from agentdescent_sampling.bench.engine.lineup import engine_lineup
from agentdescent_sampling.registry import default_registry

pytest.importorskip("agentdescent", reason="needs the engine extra")

SCRIPT = "refused_fixes"


def test_alone_s_fix_refused_beside_a_note_on_graded_seed_3_is_counted(
    benchmark_script: ModuleType,
) -> None:
    # The run BENCHMARKS.md traces: round-robin's fix of a k=3 lesson went in alone; alone's
    # rode beside a never-pass task's note, was refused, and the run ended a lesson short.
    entrants = {e.label: e for e in engine_lineup(["fixable-first"], default_registry())}
    alone = benchmark_script.counted(entrants["fixable-first"], "graded", 3, "llm-like")
    base = benchmark_script.counted(entrants["round-robin"], "graded", 3, "llm-like")
    assert alone["refused"] == alone["beside non-fix"] >= 1
    assert alone["2+ proposals"] >= alone["beside non-fix"]  # a note beside: two at least
    assert base["refused"] == 0
    assert 0 < alone["refused"] <= alone["fix rounds"]
    assert alone["final"] < base["final"]
    # And the run ends without it, where round-robin's has every one of the 8 lessons.
    assert (base["lost, found"], base["never found"]) == (0, 0)
    assert (alone["lost, found"], alone["never found"]) == (1, 0)


def test_the_final_reward_is_paired_with_round_robin_s_seed_by_seed(
    benchmark_script: ModuleType,
) -> None:
    every = {"round-robin": [0.5, 0.5, 0.7], "it": [0.5, 0.6, 0.6]}
    told = benchmark_script._versus(every["it"], every)
    assert told.startswith("+0.0000 ± ")
    assert told.endswith("(lower on 1, higher on 1)")


def test_the_null_controls_are_round_robin_in_other_orders(benchmark_script: ModuleType) -> None:
    shard = [f"task-{i}" for i in range(8)]
    on, backwards = (entrant.make(None) for entrant in benchmark_script.NULL_CONTROLS)
    picked_on = [on.pick(shard, r) for r in range(16)]
    picked_back = [backwards.pick(shard, r) for r in range(16)]
    assert picked_on[:3] == ["task-6", "task-7", "task-0"]
    assert picked_back[:3] == ["task-7", "task-6", "task-5"]
    assert sorted(picked_on[:8]) == sorted(picked_back[:8]) == shard  # each task once a cycle
    assert picked_on[8:] == picked_on[:8]
