"""benchmarks/random_workloads.py: drawn workloads run in the engine, and a loss is marked."""

from __future__ import annotations

import random
from collections import Counter
from types import ModuleType

import attrs
import pytest

from agentdescent_sampling.bench.engine import workloads
from agentdescent_sampling.bench.engine.metrics import EngineSamplerResult, Interval, Reach
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


def _set(
    result: EngineSamplerResult, ratios: dict[tuple[float, str], Interval], final: Interval
) -> EngineSamplerResult:
    """``result`` with round-robin's ratio over it at each of 75% and 90% of the gain, in
    rollouts and in calls, set from ``ratios`` (level where not given), and its final
    reward's difference from round-robin's set to ``final``."""
    level = Interval(1.0, 0.9, 1.1)

    def each(reaches: tuple[Reach, ...], measure: str) -> tuple[Reach, ...]:
        return tuple(
            attrs.evolve(r, ratio_to_round_robin=ratios.get((r.fraction, measure), level))
            for r in reaches
        )

    return attrs.evolve(
        result,
        reach=each(result.reach, "rollouts"),
        calls_reach=each(result.calls_reach, "calls"),
        final_vs_round_robin=final,
    )


EVEN = Interval(0.0, -0.01, 0.01)
LOWER = Interval(0.9, 0.8, 0.99)


@pytest.mark.parametrize("measure", ["rollouts", "calls"])
@pytest.mark.parametrize("fraction", [0.75, 0.9])
def test_each_ratio_wholly_below_one_is_a_loss_and_one_reaching_one_is_not(
    benchmark_script: ModuleType, result: EngineSamplerResult, fraction: float, measure: str
) -> None:
    text, loss = benchmark_script.line(_set(result, {(fraction, measure): LOWER}, EVEN))
    assert loss
    assert text.endswith("  LOSS")
    assert "0.90x [0.80-0.99]" in text
    edge = Interval(0.9, 0.8, 1.0)
    assert not benchmark_script.line(_set(result, {(fraction, measure): edge}, EVEN))[1]


def test_a_final_reward_wholly_below_round_robin_s_is_a_loss_and_one_reaching_it_is_not(
    benchmark_script: ModuleType, result: EngineSamplerResult
) -> None:
    text, loss = benchmark_script.line(_set(result, {}, Interval(-0.02, -0.03, -0.001)))
    assert loss
    assert "final -0.020 [-0.030, -0.001]" in text
    assert not benchmark_script.line(_set(result, {}, Interval(-0.02, -0.03, 0.0)))[1]
    text, loss = benchmark_script.line(_set(result, {}, EVEN))
    assert not loss
    assert f"not at 75%: {result.at(0.75).not_reached} of 2" in text


def test_only_runs_the_named_workloads_of_the_same_draw_changed_as_asked(
    benchmark_script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--workloads", "3", "--seeds", "2", "--draw-seed", "5", "--only", "2"]
    assert benchmark_script.main([*args, "--reflector", "silent", "--change", "workers=1"]) == 0
    out = capsys.readouterr().out.splitlines()
    workload, _ = benchmark_script.drawn(3, 5)[2]
    assert out[0] == f"random-2 (silent): {workload.summary}, changed: workers=1"
    assert [line.split()[0] for line in out[1:3]] == ["fixable-first"] * 2
    assert out[3].startswith("1 workloads run; ")


def test_the_two_draws_benchmarked_are_the_ones_the_script_makes(
    benchmark_script: ModuleType,
) -> None:
    # BENCHMARKS.md, "Workloads drawn at random": the reflectors drawn for draws 0 and 1.
    drawn = benchmark_script.drawn(40, 0) + benchmark_script.drawn(40, 1)
    assert Counter(reflector for _, reflector in drawn) == {
        "llm-like-all": 18, "llm-like": 14, "llm-like-random": 12, "llm-like-wrong": 11,
        "llm-like-noisy": 10, "llm-like-gate": 9, "silent": 6,
    }  # fmt: skip
    random_23 = benchmark_script.drawn(40, 0)[23][0]
    assert (random_23.lessons, random_23.always, random_23.never) == (6, 3, 3)
    assert (random_23.workers, random_23.shared_shard, random_23.rounds) == (2, True, 34)


def test_a_change_sets_the_field_it_names_and_says_so(benchmark_script: ModuleType) -> None:
    workload, _ = benchmark_script.drawn(1)[0]
    shared = benchmark_script.changed(workload, ["shared_shard=true", "failures_needed=[1,2]"])
    assert (shared.shared_shard, shared.failures_needed) == (True, (1, 2))
    assert shared.summary.endswith(", changed: shared_shard=true failures_needed=[1,2]")
    assert benchmark_script.changed(workload, []) is workload


@pytest.mark.parametrize(
    ("args", "told"),
    [
        (["--change", "colour=1"], "FIELD one of"),
        (["--change", "workers"], "FIELD one of"),
        (["--change", "shared_shard=False"], "read as JSON"),
        (["--change", "workers=0"], "workers"),
        (["--only", "3"], "--only 3: the draw holds random-0 to random-2"),
        (["--only", "-1"], "--only -1"),
        (["--workloads", "0"], "--workloads 0"),
        (["--seeds", "1"], "--seeds 1"),
        (["--reflector", "llm-like-gate", "--async"], "synchronous path only"),
    ],
)
def test_a_bad_argument_is_refused_before_any_run_naming_it(
    benchmark_script: ModuleType, capsys: pytest.CaptureFixture[str], args: list[str], told: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        benchmark_script.main(["--workloads", "3", *args] if "--workloads" not in args else args)
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert told in captured.err
    assert captured.out == ""


def test_register_hands_the_draw_to_scripts_that_take_a_workload_name(
    benchmark_script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workloads, "ENGINE_WORKLOADS", dict(workloads.ENGINE_WORKLOADS))
    monkeypatch.setattr(benchmark_script, "ENGINE_WORKLOADS", workloads.ENGINE_WORKLOADS)
    benchmark_script.register(24, draw_seed=0)
    assert workloads.ENGINE_WORKLOADS["random-23"] == benchmark_script.drawn(24)[23][0]
    assert "lessons" in workloads.ENGINE_WORKLOADS
