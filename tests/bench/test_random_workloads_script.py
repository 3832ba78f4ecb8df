"""benchmarks/random_workloads.py: drawn workloads run in the engine, and a loss is marked."""

from __future__ import annotations

import random
from types import ModuleType

import attrs
import pytest

from agentdescent_sampling.bench.engine.metrics import EngineSamplerResult, Interval
from agentdescent_sampling.bench.engine.runner import EngineBenchConfig, run_engine_bench
from agentdescent_sampling.bench.engine.workloads import build

pytest.importorskip("agentdescent", reason="needs the engine extra")

SCRIPT = "random_workloads"


def test_a_draw_is_the_same_for_its_seed_and_every_drawn_workload_builds(
    benchmark_script: ModuleType,
) -> None:
    first = [benchmark_script.draw(random.Random(7), i) for i in range(3)]
    assert first == [benchmark_script.draw(random.Random(7), i) for i in range(3)]
    rng = random.Random(0)
    for index in range(200):
        workload = benchmark_script.draw(rng, index)
        build(workload, seed=index)  # refuses a make-up it cannot lay out
        train = workload.lessons + workload.regressions + workload.always + workload.never
        low, high = benchmark_script.BUDGET_PER_TASK
        least = 4 * workload.workers  # four rounds at the least
        assert workload.budget >= min(low * train, least) - workload.workers
        assert workload.budget <= max(high * train + workload.workers, least)
        assert workload.name == f"random-{index}"
        assert f"lessons={workload.lessons} " in workload.summary + " "


@pytest.fixture(scope="module")
def result(benchmark_script: ModuleType) -> EngineSamplerResult:
    workload = benchmark_script.draw(random.Random(0), 0)
    config = EngineBenchConfig(
        workloads=[workload], samplers=["fixable-first"], seeds=2, ceilings=False, processes=1
    )
    found = run_engine_bench(config).workloads[0].samplers
    return next(s for s in found if s.label == "fixable-first")


def _set(result: EngineSamplerResult, ratio: Interval, final: Interval) -> EngineSamplerResult:
    def each(reaches: tuple[object, ...]) -> tuple[object, ...]:
        return tuple(attrs.evolve(reach, ratio_to_round_robin=ratio) for reach in reaches)

    return attrs.evolve(
        result,
        reach=each(result.reach),
        calls_reach=each(result.calls_reach),
        final_vs_round_robin=final,
    )


def test_a_line_is_marked_a_loss_only_where_an_interval_lies_wholly_on_the_losing_side(
    benchmark_script: ModuleType, result: EngineSamplerResult
) -> None:
    even, lower = Interval(1.0, 0.9, 1.1), Interval(0.9, 0.8, 0.99)
    level, below = Interval(0.0, -0.01, 0.01), Interval(-0.02, -0.03, -0.001)
    assert not benchmark_script.line(_set(result, even, level))[1]
    for ratio, final in ((lower, level), (even, below)):
        text, loss = benchmark_script.line(_set(result, ratio, final))
        assert loss
        assert text.endswith("  LOSS")
    text, _ = benchmark_script.line(_set(result, lower, level))
    assert "rollouts 75% 0.90x [0.80-0.99]" in text
    assert f"not at 75%: {result.at(0.75).not_reached} of 2" in text


def test_only_runs_the_named_workloads_of_the_same_draw_changed_as_asked(
    benchmark_script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--workloads", "3", "--seeds", "1", "--draw-seed", "5", "--only", "2"]
    assert benchmark_script.main([*args, "--reflector", "silent", "--change", "workers=1"]) == 0
    out = capsys.readouterr().out
    workload, reflector = benchmark_script.drawn(3, 5, ["silent"])[2]
    assert reflector == "silent"
    summary = f"{workload.summary}, changed: workers=1"
    assert out.splitlines()[0] == f"random-2 (silent): {summary}"
    assert [line.split()[0] for line in out.splitlines()[1:3]] == ["fixable-first"] * 2
    assert "random-0" not in out
    assert "random-1" not in out


def test_a_change_sets_the_field_it_names_and_says_so(benchmark_script: ModuleType) -> None:
    workload, _ = benchmark_script.drawn(1)[0]
    shared = benchmark_script.changed(workload, ["shared_shard=true", "workers=4"])
    assert (shared.shared_shard, shared.workers) == (True, 4)
    assert shared.summary.endswith(", changed: shared_shard=true workers=4")
    assert benchmark_script.changed(workload, []) is workload
