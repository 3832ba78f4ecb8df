"""The engine bench's figures, computed on hand-made curves whose answers are known."""

from __future__ import annotations

import json
import re
import statistics
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from agentdescent_sampling.bench.engine import (
    ENGINE_JSON_SCHEMA,
    ENGINE_SCHEMA_ID,
    ENGINE_WORKLOADS,
    EngineBenchConfig,
    EngineBenchResult,
    EngineEntrant,
    EngineRun,
    EngineWorkloadResult,
    engine_to_json,
    engine_verdict,
    format_engine_report,
    plot_gains,
)
from agentdescent_sampling.bench.engine.metrics import (
    gain_at,
    mean_interval,
    median_ratio,
    summarise_engine,
)

SchemaErrors = Callable[[Any, Mapping[str, Any]], list[str]]


def _run(
    *points: tuple[int, float],
    start: float = 0.2,
    attainable: float = 0.6,
    calls: tuple[int, ...] | None = None,
) -> EngineRun:
    """A run whose held-out reward was ``reward`` after ``rollouts``, from ``start``; it made
    ``calls`` agent calls by each point (twice the rollouts unless given)."""
    curve = ((0, start), *points)
    spent = calls if calls is not None else tuple(2 * rollouts for rollouts, _ in curve)
    return EngineRun(curve, spent, start, attainable, 5, 40, 2, 3)


def test_rollouts_to_is_the_first_round_at_or_over_the_fraction_of_the_gain() -> None:
    run = _run((10, 0.3), (20, 0.4), (30, 0.5), (40, 0.6))  # gains 0.25, 0.5, 0.75, 1
    assert run.rollouts_to(0.5) == 20
    assert run.rollouts_to(0.75) == 30
    assert run.rollouts_to(0.9) == 40
    assert run.rollouts_to(0.25) == 10
    assert [run.reached(f) for f in (0.0, 0.25, 0.75, 1.0)] == [0, 1, 3, 4]  # curve's points
    assert _run((10, 0.3)).reached(0.9) is None


def test_a_run_that_never_gets_there_has_no_rollouts_to() -> None:
    assert _run((20, 0.4), (40, 0.45)).rollouts_to(0.75) is None


def test_area_is_the_mean_gain_held_over_the_budget() -> None:
    # Gain 0 for 10 rollouts, 0.5 for 20, then 1.0 for the last 10: (0 + 10 + 10) / 40.
    run = _run((10, 0.4), (30, 0.6), (40, 0.6))
    assert run.area(40) == pytest.approx(0.5)
    assert gain_at(run, 9) == 0.0
    assert gain_at(run, 10) == pytest.approx(0.5)
    assert gain_at(run, 35) == pytest.approx(1.0)


def test_censored_runs_count_as_the_budget_and_are_reported() -> None:
    # Round-robin reaches 75% at 40 on every seed; the sampler at 20, 20, and never.
    baseline = [_run((40, 0.5))] * 3
    runs = [_run((20, 0.5)), _run((20, 0.5)), _run((40, 0.3))]
    result = summarise_engine("fast", "sampler", runs, baseline, budget=40)
    reach = result.at(0.75)
    assert reach.not_reached == 1
    assert reach.median == 20
    assert not reach.median_censored
    # Per-seed ratios 40/20, 40/20, 40/40 (the censored run counts as the budget).
    assert reach.ratio_to_round_robin.value == 2.0


def test_the_median_is_marked_censored_when_half_the_runs_never_get_there() -> None:
    baseline = [_run((40, 0.5))] * 2
    runs = [_run((20, 0.5)), _run((40, 0.3))]
    reach = summarise_engine("slow", "sampler", runs, baseline, budget=40).at(0.75)
    assert reach.median_censored
    assert reach.not_reached == 1


def test_the_ratio_interval_is_a_seeded_bootstrap_of_the_median() -> None:
    ratios = [0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 4.0, 6.0]
    interval = median_ratio(ratios)
    assert interval.value == statistics.median(ratios)
    assert interval.low < interval.value < interval.high
    assert min(ratios) <= interval.low
    assert interval.high <= max(ratios)
    assert median_ratio(ratios) == interval  # same ratios, same interval
    assert median_ratio([3.0, 3.0, 3.0]) == median_ratio([3.0])


def test_paired_differences_come_with_a_t_interval() -> None:
    interval = mean_interval([0.1, 0.2, 0.3])
    # mean 0.2, sd 0.1, t(2) = 4.303: half-width 4.303 * 0.1 / sqrt(3).
    assert interval.value == pytest.approx(0.2)
    assert interval.high - interval.value == pytest.approx(4.303 * 0.1 / 3**0.5)
    assert interval.low < 0.2 < interval.high


def test_final_and_area_are_paired_seed_by_seed_against_round_robin() -> None:
    baseline = [_run((40, 0.4)), _run((40, 0.6))]
    runs = [_run((40, 0.5)), _run((40, 0.6))]
    result = summarise_engine("s", "sampler", runs, baseline, budget=40)
    assert result.final.value == pytest.approx(0.55)
    assert result.final_vs_round_robin.value == pytest.approx(0.05)
    assert result.useful.value == pytest.approx(5 / 40)
    assert (result.taught.value, result.fixable, result.calls.value) == (2.0, 3, 80.0)


def test_at_round_robins_calls_each_seed_is_judged_by_the_artifact_it_held_after_those_calls() -> (
    None
):
    # Round-robin ends each seed at 0.6, having made 80 agent calls (twice its rollouts).
    baseline = [_run((20, 0.4), (40, 0.6)), _run((20, 0.5), (40, 0.6))]
    runs = [
        # Ends higher, but spent 150 calls: after 80 it held the 0.5 of its first round.
        _run((10, 0.5), (40, 0.7), calls=(0, 60, 150)),
        # Spent fewer calls in all (60): judged at its end.
        _run((20, 0.55), (40, 0.65), calls=(0, 30, 60)),
    ]
    result = summarise_engine("s", "sampler", runs, baseline, budget=40)
    assert result.final_vs_round_robin.value == pytest.approx(0.075)
    assert result.equal_calls_vs_round_robin.value == pytest.approx(((0.5 - 0.6) + 0.05) / 2)
    # Before its first round ended, a run holds the start's reward.
    late = [_run((40, 0.7), calls=(0, 200))] * 2
    assert summarise_engine(
        "s", "sampler", late, baseline, 40
    ).equal_calls_vs_round_robin.value == (pytest.approx(0.2 - 0.6))
    itself = summarise_engine("round-robin", "baseline", baseline, baseline, budget=40)
    assert itself.equal_calls_vs_round_robin == mean_interval([0.0, 0.0])


def test_unpaired_runs_are_refused() -> None:
    with pytest.raises(ValueError, match="paired by seed"):
        summarise_engine("s", "sampler", [_run((40, 0.6))], [], budget=40)


def _result(samplers: Sequence[tuple[str, list[EngineRun]]]) -> EngineBenchResult:
    workload = ENGINE_WORKLOADS["lessons"]
    baseline = samplers[0][1]
    summaries = tuple(
        summarise_engine(label, "baseline" if i == 0 else "sampler", runs, baseline, 40)
        for i, (label, runs) in enumerate(samplers)
    )
    return EngineBenchResult(
        EngineBenchConfig(workloads=["lessons"], seeds=len(baseline)),
        (EngineWorkloadResult(workload, 0.2, 0.6, summaries),),
        1.5,
        2,
        "0.7.0",
    )


@pytest.fixture
def result() -> EngineBenchResult:
    slow = [_run((20, 0.3), (40, 0.6)), _run((40, 0.6))]
    fast = [_run((10, 0.5), (40, 0.6)), _run((20, 0.6), (40, 0.6))]
    return _result([("round-robin", slow), ("fast-sampler", fast)])


@pytest.fixture
def six_seeds() -> EngineBenchResult:
    """The ``result`` fixture's two seeds three times over: the same figures, and enough seeds
    for 95% intervals."""
    slow = [_run((20, 0.3), (40, 0.6)), _run((40, 0.6))] * 3
    fast = [_run((10, 0.5), (40, 0.6)), _run((20, 0.6), (40, 0.6))] * 3
    return _result([("round-robin", slow), ("fast-sampler", fast)])


def test_json_validates_against_the_documented_schema(
    result: EngineBenchResult, schema_errors: SchemaErrors
) -> None:
    document = json.loads(json.dumps(engine_to_json(result)))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    assert document["schema"] == ENGINE_SCHEMA_ID
    reach = document["workloads"][0]["samplers"][1]["reach"]
    assert [entry["fraction"] for entry in reach] == [0.5, 0.75, 0.9]
    document["workloads"][0]["samplers"][1]["reach"][0]["not_reached"] = "none"
    assert schema_errors(document, ENGINE_JSON_SCHEMA) != []


def test_text_report_fits_100_columns_and_names_every_sampler(result: EngineBenchResult) -> None:
    text = format_engine_report(result)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "fast-sampler" in text
    # Rollouts to 75%: round-robin 40 and 40, the sampler 10 and 20: ratios 4 and 2.
    line = next(line for line in text.splitlines() if line.startswith("fast-sampler  "))
    assert "3.00x" in line


def test_plot_writes_a_png(result: EngineBenchResult, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    written = plot_gains(result, tmp_path / "gain.png")
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calls_to_is_the_call_count_of_the_first_round_at_or_over_the_fraction() -> None:
    run = _run((10, 0.3), (20, 0.5), (30, 0.6), calls=(0, 35, 90, 120))  # gains .25, .75, 1
    assert run.calls_to(0.75) == 90
    assert run.calls_to(0.9) == 120
    assert run.calls == 120
    assert _run((20, 0.4)).calls_to(0.75) is None


def test_a_call_curve_that_does_not_match_the_reward_curve_is_refused() -> None:
    with pytest.raises(ValueError, match="one cumulative call count per point"):
        _run((10, 0.3), calls=(0, 10, 20))


def test_calls_to_a_fraction_are_paired_with_round_robin_and_censored_at_the_most_calls() -> None:
    # Round-robin reaches 75% at 40 rollouts with 200 calls; the sampler at 20 rollouts but
    # with 160 calls, then 250 calls, and never (its run made 100 calls in all).
    baseline = [_run((40, 0.5), calls=(0, 200))] * 3
    runs = [
        _run((20, 0.5), calls=(0, 160)),
        _run((20, 0.5), calls=(0, 250)),
        _run((40, 0.3), calls=(0, 100)),
    ]
    result = summarise_engine("s", "sampler", runs, baseline, budget=40)
    rollouts, calls = result.at(0.75), result.at(0.75, "calls")
    assert rollouts.ratio_to_round_robin.value == 2.0  # 40/20, 40/20, 40/40
    # The censored run counts as 250 calls, the most any run made: ratios 1.25, 0.8, 0.8.
    assert calls.median == 250
    assert calls.not_reached == 1
    assert calls.ratio_to_round_robin.value == pytest.approx(0.8)
    assert gain_at(runs[0], 159, "calls") == 0.0
    assert gain_at(runs[0], 160, "calls") == pytest.approx(0.75)
    assert result.call_curve[-1].spent == 250


def test_text_and_json_show_rollouts_and_calls_at_75_and_90_percent(
    six_seeds: EngineBenchResult,
) -> None:
    result = six_seeds
    text = format_engine_report(result)
    rollouts = next(
        line
        for line in text.splitlines()
        if line.startswith("sampler  ") and "to 50/75/90%" in line
    )
    calls = next(
        line
        for line in text.splitlines()
        if line.startswith("sampler  ") and "calls to 50/75/90%" in line
    )
    for header in (rollouts, calls):
        assert header.endswith("RR/it 75% [95% CI]  RR/it 90% [95% CI]")
    # Calls are twice the rollouts here, so the ratios are the same: 3x at 75%, 1.5x at 90%.
    rows = [line for line in text.splitlines() if line.startswith("fast-sampler  ")]
    assert rows[0].endswith("3.00x [2.00-4.00]   1.50x [1.00-2.00]")
    assert rows[1] == "fast-sampler            30/30/60   3.00x [2.00-4.00]   1.50x [1.00-2.00]"
    document = engine_to_json(result)
    sampler = document["workloads"][0]["samplers"][1]
    assert [entry["fraction"] for entry in sampler["calls_reach"]] == [0.5, 0.75, 0.9]
    assert set(sampler["calls_reach"][1]) >= {"median_calls", "ratio_to_round_robin"}
    assert sampler["call_curve"][0] == {"calls": 0, "mean": 0.0, "ci95": [0.0, 0.0]}
    assert document["config"]["reflector"] == "llm-like"


def test_the_across_workloads_table_has_rollouts_and_calls_at_75_and_90_percent() -> None:
    slow = [_run((20, 0.3), (40, 0.6)), _run((40, 0.6))]
    fast = [_run((10, 0.5), (40, 0.6)), _run((20, 0.6), (40, 0.6))]
    single = _result([("round-robin", slow), ("fast-sampler", fast)])
    two = attrs.evolve(single, workloads=single.workloads * 2)
    text = format_engine_report(two)
    header = next(
        line for line in text.splitlines() if line.split()[:3] == ["sampler", "RR/it", "75%"]
    )
    assert header.split() == ["sampler", "RR/it", "75%", "90%", "calls", "75%", "90%", "final",
                              "lower", "on"]  # fmt: skip
    row = next(line for line in text.splitlines() if line.split()[:2] == ["fast-sampler", "3.00x"])
    # Rollouts to 75%: ratios 4 and 2; to 90%: 40/40 and 40/20; calls are twice the rollouts.
    assert row.split()[:5] == ["fast-sampler", "3.00x", "1.50x", "3.00x", "1.50x"]
    assert max(len(line) for line in text.splitlines()) <= 100


def test_json_holds_the_summary_across_workloads_the_text_prints(
    schema_errors: SchemaErrors,
) -> None:
    slow = [_run((20, 0.3), (40, 0.6)), _run((40, 0.6))]
    fast = [_run((10, 0.5), (40, 0.6)), _run((20, 0.6), (40, 0.6))]
    single = _result([("round-robin", slow), ("fast-sampler", fast)])
    assert engine_to_json(single)["across"] is None  # one workload: no summary, in text either

    two = attrs.evolve(single, workloads=single.workloads * 2)
    document = json.loads(json.dumps(engine_to_json(two)))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    baseline, sampler = document["across"]["samplers"]
    assert document["across"]["judged_by"] == "mean"  # two seeds: too few for an interval
    assert baseline["lowest"] is None
    # As the text's row: 3.00x and 1.50x in rollouts and in calls at 75% and 90%.
    assert sampler["medians"] == [
        {"fraction": 0.75, "rollouts": 3.0, "calls": 3.0},
        {"fraction": 0.9, "rollouts": 1.5, "calls": 1.5},
    ]
    assert sampler["lowest"]["rollouts"] == {"ratio": 3.0, "workload": "lessons"}
    assert sampler["final_lower_on"] == []
    assert sampler["equal_calls_lower_on"] == []


def test_plot_puts_calls_on_the_x_axis(result: EngineBenchResult, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    written = plot_gains(result, tmp_path / "calls.png", x="calls")
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_gains_writes_a_png_whatever_the_path_ends_in(
    result: EngineBenchResult, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    assert "It is written as a PNG" in (plot_gains.__doc__ or "")
    written = plot_gains(result, tmp_path / "gains.svg")
    assert written == tmp_path / "gains.svg.png"
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_verdict_over_one_seed_says_one_paired_run_not_runs() -> None:
    quick = [_run((20, 0.6), (40, 0.6))]
    stuck = [_run((20, 0.3), (40, 0.3))]
    verdict = engine_verdict(_result([("round-robin", quick), ("stuck", stuck)]))
    assert "in 1 of 1 run; counting" in verdict
    assert verdict.endswith("(1 paired run; too few for a 95% interval, which takes 6)")
    idle = _result([("round-robin", [_run()]), ("idle", [_run()])])
    text = " ".join(format_engine_report(idle).split())
    assert "No round was recorded in 1 of 1 run of round-robin, 1 of 1 run of idle:" in text


def test_a_one_seed_run_names_its_seed_rather_than_a_range_of_one(
    result: EngineBenchResult,
) -> None:
    quick = [_run((20, 0.6), (40, 0.6))]
    one = _result([("round-robin", quick), ("quick", quick)])
    later = attrs.evolve(one, config=attrs.evolve(one.config, first_seed=7))
    head = "Held-out reward bought in agentdescent 0.7.0's evolve(): "
    assert format_engine_report(one).startswith(f"{head}1 seed (seed 0), paired with")
    assert format_engine_report(later).startswith(f"{head}1 seed (seed 7), paired with")
    assert format_engine_report(result).startswith(f"{head}2 seeds (0-1), paired with")


def test_the_verdict_names_the_fastest_sampler_with_its_savings_in_rollouts_and_calls() -> None:
    # Two seeds three times over: six, enough for 95% intervals.
    slow = [_run((20, 0.3), (40, 0.6)), _run((40, 0.6))] * 3
    fast = [_run((10, 0.5), (40, 0.6)), _run((20, 0.6), (40, 0.6))] * 3
    # Fewer rollouts than round-robin but, at 200 calls, more calls: 80/200 on every seed.
    costly = [_run((10, 0.5), calls=(0, 200)), _run((20, 0.6), calls=(0, 200))] * 3
    single = _result([("round-robin", slow), ("fast", fast), ("costly", costly)])
    text = format_engine_report(single)
    assert text.endswith("\n".join(textwrap.wrap(engine_verdict(single), 100)))
    assert engine_verdict(single) == (
        "Verdict: fast reached 75% of the attainable held-out gain with 3.00x fewer rollouts "
        "(95% CI 2.00-4.00) and 3.00x fewer agent calls (95% CI 2.00-4.00) than round-robin "
        "(6 paired runs). Against costly, which saved the next most against round-robin, "
        "paired by seed: as many rollouts (95% CI 1.00-1.00) as costly and 7.50x fewer agent "
        "calls (95% CI 5.00-10.00) than costly"
    )
    without_fast = _result([("round-robin", slow), ("costly", costly)])
    assert "and 2.50x more agent calls (95% CI 2.50-2.50)" in engine_verdict(without_fast)
    # Pooled over workloads: two workloads of six seeds are twelve paired runs.
    two = attrs.evolve(single, workloads=single.workloads * 2)
    assert "than round-robin (12 paired runs). Against costly, which" in engine_verdict(two)


def test_the_verdict_pairs_the_best_with_the_next_best_seed_by_seed(
    schema_errors: SchemaErrors,
) -> None:
    # It compared each with round-robin alone and named one: a plugin's author read a win
    # over the built-ins into intervals that overlapped.
    slow = [_run((20, 0.3), (40, 0.6)), _run((40, 0.6))] * 3
    fast = [_run((10, 0.5), (40, 0.6)), _run((20, 0.6), (40, 0.6))] * 3  # 3x fewer than RR
    close = [_run((10, 0.5), (40, 0.6)), _run((24, 0.6), (40, 0.6))] * 3  # 1.2x more on one
    result = _result([("round-robin", slow), ("close", close), ("fast", fast)])

    verdict = engine_verdict(result)
    assert verdict.startswith("Verdict: fast reached")
    assert verdict.endswith(
        "Against close, which saved the next most against round-robin, paired by seed: 1.10x "
        "fewer rollouts (95% CI 1.00-1.20) and 1.10x fewer agent calls (95% CI 1.00-1.20) than "
        "close; 6 runs cannot tell the two apart in rollouts (more seeds narrow the interval)"
    )
    apart = _result([("round-robin", slow), ("fast", fast), ("slow", slow)])
    assert engine_verdict(apart).endswith(
        "Against slow, which saved the next most against round-robin, paired by seed: 3.00x "
        "fewer rollouts (95% CI 2.00-4.00) and 3.00x fewer agent calls (95% CI 2.00-4.00) than "
        "slow"
    )
    document = json.loads(json.dumps(engine_to_json(apart)))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    assert document["verdict"]["next"]["label"] == "slow"
    assert document["verdict"]["next"]["rollouts"] == {
        "ratio_to_next": {"median": 3.0, "ci95": [2.0, 4.0]},
        "bound": "exact",
    }


def test_the_verdict_pairs_two_samplers_costs_not_their_ratios_to_a_round_robin_that_missed() -> (
    None
):
    # Round-robin never reaches the mark, so each sampler's ratio to it is censored at that
    # sampler's own budget in calls (the most any of its runs or round-robin's made): their
    # quotient said "4.00x more agent calls" of two samplers that took 20 calls each.
    rr = [_run((20, 0.3), (40, 0.35), calls=(0, 40, 80))] * 6
    a = [_run((10, 0.6), (40, 0.6), calls=(0, 20, 100))] * 6  # 100 calls in all
    b = [_run((12, 0.6), (40, 0.6), calls=(0, 20, 400))] * 6  # 400 calls in all
    verdict = engine_verdict(_result([("round-robin", rr), ("a", a), ("b", b)]))
    assert verdict.endswith(
        "Against b, which saved the next most against round-robin, paired by seed: 1.20x fewer "
        "rollouts (95% CI 1.20-1.20) than b and as many agent calls (95% CI 1.00-1.00) as b"
    )


def test_the_verdict_says_a_sampler_that_never_reached_the_mark_did_not_reach_it() -> None:
    # Round-robin reaches 75% of the gain at 20 rollouts (40 calls); the sampler never does,
    # and counts as the budget: 40 rollouts, and 80 calls, the most any run made.
    quick = [_run((20, 0.6), (40, 0.6))] * 2
    stuck = [_run((20, 0.3), (40, 0.3))] * 2
    verdict = engine_verdict(_result([("round-robin", quick), ("stuck", stuck)]))
    assert verdict == (
        "Verdict: stuck did not reach 75% of the attainable held-out gain in 2 of 2 runs; "
        "counting each run that did not as the whole budget, it took at least 2.00x more "
        "rollouts and at least 2.00x more agent calls than round-robin (2 paired runs; too few "
        "for a 95% interval, which takes 6)"
    )


@pytest.mark.parametrize(
    ("missed_by", "expected"),
    [
        # The sampler's miss counts as 40 rollouts, fewer than it would have taken: its ratio
        # of 1 is too high, and so may the median be.
        ("sampler", "Verdict: fast did not reach 75% of the attainable held-out gain in 1 of 6 "
         "runs; counting each run that did not as the whole budget, it took at most 4.00x fewer "
         "rollouts (95% CI "),
        # Round-robin's miss counts as 40 rollouts, fewer than it would have taken: too low.
        ("round-robin", "Verdict: fast reached 75% of the attainable held-out gain with at "
         "least 4.00x fewer rollouts (95% CI 4.00-4.00) and at least 4.00x fewer agent calls "
         "(95% CI 4.00-4.00) than round-robin, counting the 1 of 6 runs in which round-robin "
         "did not as its whole budget (6 paired runs)"),
    ],
)  # fmt: skip
def test_a_ratio_counting_runs_that_never_got_there_is_worded_as_a_bound(
    missed_by: str, expected: str
) -> None:
    baseline = [_run((40, 0.6))] * 6
    fast = [_run((10, 0.6), (40, 0.6))] * 6
    never = [_run((10, 0.3), (40, 0.3))]
    if missed_by == "sampler":
        fast = never + fast[1:]
    else:
        baseline = never + baseline[1:]
    assert engine_verdict(_result([("round-robin", baseline), ("fast", fast)])).startswith(expected)


def test_a_tie_with_round_robin_is_worded_as_many_not_1_00x_fewer() -> None:
    baseline = [_run((20, 0.3), (40, 0.6))] * 2
    same = _result([("round-robin", baseline), ("same", baseline)])
    assert engine_verdict(same).startswith(
        "Verdict: same reached 75% of the attainable held-out gain with as many rollouts and as "
        "many agent calls as round-robin (2 paired runs"
    )
    # As many rollouts for half the calls.
    thrifty = [_run((20, 0.3), (40, 0.6), calls=(0, 20, 40))] * 2
    verdict = engine_verdict(_result([("round-robin", baseline), ("thrifty", thrifty)]))
    mixed = "with as many rollouts as round-robin and 2.00x fewer agent calls than round-robin ("
    assert mixed in verdict
    assert "1.00x" not in verdict


def test_with_fewer_than_6_seeds_no_interval_is_shown_and_the_report_says_why(
    result: EngineBenchResult,
) -> None:
    text = format_engine_report(result)
    why = "\nWith 2 seeds, too few for a 95% interval, none is shown in the tables; one takes 6 "
    assert why in text
    assert "95% CI" not in text
    assert "±" not in text
    rows = [line for line in text.splitlines() if line.startswith("fast-sampler  ")]
    assert rows[0].split()[-2:] == ["3.00x", "1.50x"]  # RR/it at 75% and 90%, no interval
    assert rows[1].split()[-2:] == ["3.00x", "1.50x"]
    # final, vs RR, at RR calls vs RR, area, vs RR
    assert rows[2].split()[1:6] == ["0.600", "+0.000", "+0.000", "0.531", "+0.469"]
    assert engine_verdict(result).endswith(
        "(2 paired runs; too few for a 95% interval, which takes 6)"
    )


def test_a_latency_asked_for_is_in_the_text_and_the_json(
    result: EngineBenchResult, schema_errors: SchemaErrors
) -> None:
    assert "agent call takes" not in format_engine_report(result)  # the path's default
    slow = attrs.evolve(result, config=attrs.evolve(result.config, latency=0.01))
    assert "\neach agent call takes 0.01 s\n" in format_engine_report(slow)
    document = json.loads(json.dumps(engine_to_json(slow)))
    assert document["config"]["latency"] == 0.01
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []


@pytest.mark.parametrize("latency", [-0.001, 1.5, float("nan"), float("inf"), True, "0.01"])
def test_a_latency_outside_0_to_1_seconds_is_refused_with_an_example(latency: object) -> None:
    expected = (r"EngineBenchConfig\(latency=.*\): expected seconds per agent call from 0 to 1, "
                r"or None .*; for example latency=0.002")  # fmt: skip
    with pytest.raises(ValueError, match=expected):
        EngineBenchConfig(latency=latency)  # type: ignore[arg-type]


def _broken(built: object) -> Any:
    raise AssertionError("never built: the config is refused first")


@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        ({"workloads": "lessons"}, TypeError, "EngineBenchConfig(workloads='lessons') takes a "
         "sequence of workloads, got one name; wrap it in a list: workloads=['lessons']"),
        ({"workloads": ENGINE_WORKLOADS["lessons"]}, TypeError, "EngineBenchConfig(workloads=<"
         "the workload 'lessons'>) takes a sequence of workloads, got one; wrap it in a list: "
         "workloads=[workload]"),
        ({"workloads": ["lessons", 3]}, TypeError, "EngineBenchConfig(workloads=[..., 3, ...]): "
         "a workload is an EngineWorkload or the name of one of lessons, sparse, "),
        ({"workloads": 3}, TypeError, "EngineBenchConfig(workloads=3): expected a list of engine "
         "workloads or their names, for example workloads=['lessons']"),
        ({"first_seed": -1}, ValueError, "EngineBenchConfig(first_seed=-1): expected a whole "
         "number from 0 to 9,007,199,254,740,963; the last seed, first_seed + seeds - 1, is at "
         "most 2**53; for example first_seed=0"),
        # Its last seed past 2**53, every seeded sampler refused every run of it.
        ({"first_seed": 2**53, "seeds": 2}, ValueError, "EngineBenchConfig(first_seed="
         "9007199254740992): expected a whole number from 0 to 9,007,199,254,740,991; the last "
         "seed"),
        ({"first_seed": "3"}, TypeError, "EngineBenchConfig(first_seed='3'): expected a whole "
         "number from 0 to 9,007,199,254,740,963, got str: write the number without quotes"),
        ({"first_seed": True}, TypeError, "EngineBenchConfig(first_seed=True): expected a "
         "whole number from 0"),
        ({"first_seed": 2.0}, TypeError, "EngineBenchConfig(first_seed=2.0): expected a whole "
         "number from 0"),
        ({"extra": [_broken]}, TypeError, "EngineBenchConfig(extra=[..., <function _broken at "),
        ({"extra": [_broken]}, TypeError, ">, ...]): each entrant is an EngineEntrant, not "
         "function; wrap a factory with its label: EngineEntrant('mine', factory)"),
        ({"extra": EngineEntrant("mine", _broken)}, TypeError, "EngineBenchConfig(extra="
         "EngineEntrant('mine', ...)) takes a sequence of entrants, got one; wrap it in a list: "
         "extra=[EngineEntrant('mine', ...)]"),
        ({"extra": ["fixable-first"]}, TypeError, "EngineBenchConfig(extra=[..., "
         "'fixable-first', ...]): each entrant is an EngineEntrant, not str; a registered "
         "sampler's spec goes in samplers=['fixable-first']"),
        ({"extra": "fixable-first"}, TypeError, "EngineBenchConfig(extra='fixable-first'): "
         "expected a list of EngineEntrant, for example extra=[EngineEntrant('mine', lambda "
         "built: Mine())]; a registered sampler's spec goes in samplers=[...]"),
    ],
)  # fmt: skip
def test_a_bad_config_value_is_named_when_the_config_is_made_with_what_to_try(
    given: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        EngineBenchConfig(**given)


def test_a_config_of_good_values_in_any_sequence_is_taken() -> None:
    mine = EngineEntrant("mine", _broken)
    config = EngineBenchConfig(workloads=iter(["lessons"]), extra=(mine,), first_seed=5)
    assert config.workloads == (ENGINE_WORKLOADS["lessons"],)
    assert config.extra == (mine,)
    assert config.first_seed == 5


def test_the_json_holds_the_verdict_the_text_ends_with_as_structured_data(
    six_seeds: EngineBenchResult, schema_errors: SchemaErrors
) -> None:
    document = json.loads(json.dumps(engine_to_json(six_seeds)))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    versus = {"ratio_to_round_robin": {"median": 3.0, "ci95": [2.0, 4.0]}, "bound": "exact"}
    assert document["verdict"] == {
        "label": "fast-sampler",
        "fraction": 0.75,
        "paired_runs": 6,
        "not_reached": 0,
        "round_robin_not_reached": 0,
        "rollouts": versus,
        "calls": versus,
        "next": None,  # it ran alone beside round-robin
        "text": engine_verdict(six_seeds),
    }
    alone = _result([("round-robin", [_run((40, 0.6))])])
    assert engine_to_json(alone)["verdict"] is None  # no sampler to judge, as in the text


@pytest.mark.parametrize(
    ("missed_by", "bound", "sampler_missed", "round_robin_missed"),
    [("sampler", "upper", 1, 0), ("round-robin", "lower", 0, 1), ("both", "neither", 1, 1)],
)
def test_the_json_verdict_says_which_way_a_ratio_counting_missed_runs_is_a_bound(
    missed_by: str, bound: str, sampler_missed: int, round_robin_missed: int
) -> None:
    never = _run((10, 0.3), (40, 0.3))
    baseline = [_run((40, 0.6))] * 6
    fast = [_run((10, 0.6), (40, 0.6))] * 6
    if missed_by != "round-robin":
        fast = [never, *fast[1:]]
    if missed_by != "sampler":
        baseline = [*baseline[:5], never]
    verdict = engine_to_json(_result([("round-robin", baseline), ("fast", fast)]))["verdict"]
    assert (verdict["rollouts"]["bound"], verdict["calls"]["bound"]) == (bound, bound)
    assert (verdict["not_reached"], verdict["round_robin_not_reached"]) == (
        sampler_missed,
        round_robin_missed,
    )


def test_the_json_records_the_latency_each_agent_call_took_the_paths_default_too(
    result: EngineBenchResult, schema_errors: SchemaErrors
) -> None:
    def ran(**config: Any) -> tuple[float, str]:
        changed = attrs.evolve(result, config=attrs.evolve(result.config, **config))
        document = json.loads(json.dumps(engine_to_json(changed)))
        assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
        return document["config"]["latency"], format_engine_report(changed)

    assert ran()[0] == 0.0  # the synchronous path's agent answers at once
    latency, text = ran(asynchronous=True)
    assert latency == 0.002
    assert "\neach agent call takes 0.002 s (the asynchronous path's default)\n" in text
    assert ran(asynchronous=True, latency=0.01)[0] == 0.01


def test_runs_in_which_evolve_recorded_no_round_are_reported_not_divided_by_zero(
    schema_errors: SchemaErrors,
) -> None:
    # The asynchronous path records a round only for a merger sweep that had proposals to
    # merge: a run can end with none, and when no run has one, every run counts 0 calls.
    empty = [_run(), _run()]
    result = _result([("round-robin", empty), ("idle", empty)])
    idle = result.workloads[0].sampler("idle")
    assert idle.no_rounds == 2
    assert [reach.not_reached for reach in idle.calls_reach] == [2, 2, 2]
    # Both censored at the same budget of 0 calls: as many as round-robin.
    assert idle.at(0.75, "calls").ratio_to_round_robin.value == 1.0
    text = " ".join(format_engine_report(result).split())
    assert (
        "No round was recorded in 2 of 2 runs of round-robin, 2 of 2 runs of idle: such a "
        "run's held-out reward stays at the start, so it reaches no share of the gain, and its "
        "agent calls count as 0"
    ) in text
    assert "Verdict: idle did not reach 75% of the attainable held-out gain in 2 of 2 runs" in text
    document = json.loads(json.dumps(engine_to_json(result)))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    assert [row["no_rounds"] for row in document["workloads"][0]["samplers"]] == [2, 2]


def test_a_run_that_reached_the_mark_at_no_cost_leaves_no_ratio_to_divide_by_zero() -> None:
    # A round that spent nothing and reached the whole gain: 0 rollouts and 0 calls.
    free = [_run((0, 0.6), (40, 0.6))] * 2
    paid = [_run((20, 0.6), (40, 0.6))] * 2  # 20 rollouts, 40 calls
    costly = _result([("round-robin", free), ("paid", paid)])
    assert costly.workloads[0].sampler("paid").at(0.75).ratio_to_round_robin.value == 1 / 20
    assert engine_verdict(costly).startswith(
        "Verdict: paid reached 75% of the attainable held-out gain with 20.00x more rollouts "
        "and 40.00x more agent calls than round-robin"
    )
    cheap = _result([("round-robin", paid), ("free", free)])
    assert cheap.workloads[0].sampler("free").at(0.75).ratio_to_round_robin.value == 20.0


def test_a_budget_of_no_rollouts_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=re.escape(
        "s: budget=0; expected the rollouts each run was given, a whole number >= 1"
    )):  # fmt: skip
        summarise_engine("s", "sampler", [_run((40, 0.6))], [_run((40, 0.6))], budget=0)
    for shape in ("rounds", "workers"):
        with pytest.raises(ValueError, match=rf"EngineWorkload\({shape}=0\): expected a whole "
                           rf"number from 1 to .*; for example {shape}="):  # fmt: skip
            attrs.evolve(ENGINE_WORKLOADS["lessons"], **{shape: 0})


def test_a_run_with_no_gain_to_measure_is_refused_naming_its_start_and_attainable() -> None:
    with pytest.raises(ValueError, match=re.escape(
        "EngineRun(start=0.5, attainable=0.5): no gain to measure; the held-out reward with "
        "every rule committed must exceed the empty artifact's"
    )):  # fmt: skip
        _run((40, 0.5), start=0.5, attainable=0.5)
    with pytest.raises(ValueError, match=r"EngineWorkload\(lessons=0\): expected a whole number "
                       r"from 1 to .*; a sampler buys only what lessons teach, for example "
                       r"lessons=6"):  # fmt: skip
        attrs.evolve(ENGINE_WORKLOADS["lessons"], lessons=0)


def test_with_too_few_seeds_for_an_interval_final_lower_on_says_it_judges_by_the_mean() -> None:
    # One seed on two workloads: the sampler ends 0.1 below round-robin on each. One run
    # gives no 95% interval, so the across table must not claim one.
    single = _result([("round-robin", [_run((40, 0.6))]), ("short", [_run((40, 0.5))])])
    text = " ".join(format_engine_report(attrs.evolve(single, workloads=single.workloads * 2))
                    .split())  # fmt: skip
    assert "its 95% interval below 0" not in text
    assert "round-robin's (its mean below 0: with too few seeds for a 95% interval" in text
    assert "short 1.00x 1.00x 1.00x 1.00x 2 of 2: lessons, lessons" in text
    # With six seeds the column is judged by the interval, and says so.
    six = _result([("round-robin", [_run((40, 0.6))] * 6), ("short", [_run((40, 0.5))] * 6)])
    text = " ".join(format_engine_report(attrs.evolve(six, workloads=six.workloads * 2)).split())
    assert "round-robin's (its 95% interval below 0); then" in text


def test_a_sampler_that_ends_higher_by_spending_more_calls_is_listed_lower_at_round_robins_calls(
    schema_errors: SchemaErrors,
) -> None:
    # Round-robin ends at 0.6 for 80 calls; the spender ends at 0.7, but held 0.4 at 80 calls.
    baseline = [_run((20, 0.5), (40, 0.6 + seed / 1000)) for seed in range(6)]
    spender = [_run((20, 0.4), (40, 0.7), calls=(0, 60 + seed, 300)) for seed in range(6)]
    single = _result([("round-robin", baseline), ("spender", spender)])
    two = attrs.evolve(single, workloads=single.workloads * 2)
    document = json.loads(json.dumps(engine_to_json(two)))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    _, sampler = document["across"]["samplers"]
    assert sampler["final_lower_on"] == []
    assert sampler["equal_calls_lower_on"] == ["lessons", "lessons"]
    workload = document["workloads"][0]["samplers"][1]
    assert workload["equal_calls_vs_round_robin"]["mean"] == pytest.approx(-0.2, abs=0.01)
    text = format_engine_report(two)
    header = next(line for line in text.splitlines() if line.split()[:2] == ["sampler", "at"])
    assert header.split() == ["sampler", "at", "RR", "calls", "lower", "on"]
    medians, _, spent = [line for line in text.splitlines() if line.startswith("spender  ")][-3:]
    assert medians.endswith("0 of 2")  # its final reward is higher
    assert spent.endswith("2 of 2: lessons, lessons")


def test_the_legend_explains_every_column_and_when_a_median_is_marked_censored(
    result: EngineBenchResult,
) -> None:
    text = " ".join(format_engine_report(result).split())
    assert "'>' when at least half missed" in text  # as metrics marks it: 1 of 2 is censored
    assert "'final': mean held-out reward after the last round" in text
    assert "'at RR calls': the held-out reward after as many agent calls as round-robin" in text
    assert "'calls': mean agent calls a run made" in text


def test_a_plot_of_too_few_seeds_for_an_interval_draws_no_band_and_says_why(
    result: EngineBenchResult,
    six_seeds: EngineBenchResult,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    from agentdescent_sampling.bench.engine import plot

    drawn: list[tuple[int, str]] = []
    finish = plot.finish

    def spy(figure: Any, axes: Any, columns: int, ylabel: str, title: str, path: Any) -> Path:
        drawn.append((sum(len(axis.collections) for axis in axes), title))
        return finish(figure, axes, columns, ylabel, title, path)

    monkeypatch.setattr(plot, "finish", spy)
    plot_gains(result, tmp_path / "two.png")
    plot_gains(six_seeds, tmp_path / "six.png")
    (two_bands, two_title), (six_bands, six_title) = drawn
    assert two_bands == 0
    assert "mean over 2 seeds (too few for a 95% interval, which takes 6)" in two_title
    assert six_bands == 2  # one band a sampler
    assert "mean and 95% interval over 6 seeds" in six_title


def test_every_line_fits_100_columns_with_the_engines_own_sampler_in_the_lineup() -> None:
    # The longest label the bench runs, and six seeds: every interval shown.
    runs = [_run((20, 0.5), (40, 0.6 + seed / 1000)) for seed in range(6)]
    labels = ["round-robin", "fixable-first + wired", "agentdescent.DifficultyWeighted"]
    single = _result([(label, runs) for label in labels])
    text = format_engine_report(attrs.evolve(single, workloads=single.workloads * 2))
    assert "agentdescent.DifficultyWeighted" in text
    assert [line for line in text.splitlines() if len(line) > 100] == []
