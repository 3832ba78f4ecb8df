"""Reports: the doc's table shape in text, and JSON that validates against the documented schema."""

from __future__ import annotations

import json
import math
import re
import struct
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from agentdescent_sampling.bench import (
    JSON_SCHEMA,
    SCHEMA_ID,
    WORKLOADS,
    BenchConfig,
    BenchResult,
    format_report,
    plot_shares,
    run_bench,
    to_json,
)
from agentdescent_sampling.bench.core import CurvePoint, draw_panels
from agentdescent_sampling.bench.metrics import checkpoints, share_across_seeds
from agentdescent_sampling.errors import BenchError

SchemaErrors = Callable[[Any, Mapping[str, Any]], list[str]]


@pytest.fixture(scope="module")
def result() -> BenchResult:
    config = BenchConfig(
        samplers=["difficulty-weighted:c=1.4", "difficulty-weighted:c=0.2"],
        workloads=(WORKLOADS["stationary"], WORKLOADS["noisy"]),
        seeds=3,
    )
    return run_bench(config)


def test_json_validates_against_the_documented_schema(
    result: BenchResult, schema_errors: SchemaErrors
) -> None:
    document = json.loads(json.dumps(to_json(result), allow_nan=False))
    assert schema_errors(document, JSON_SCHEMA) == []
    assert document["schema"] == SCHEMA_ID


def test_the_schema_check_catches_a_document_that_drifts(
    result: BenchResult, schema_errors: SchemaErrors
) -> None:
    document = to_json(result)
    document["workloads"][0]["samplers"][0]["share"]["mean"] = 1.5
    del document["config"]["budget"]
    document["extra"] = True
    assert schema_errors(document, JSON_SCHEMA) == [
        "$: unexpected 'extra'",
        "$.config: missing 'budget'",
        "$.workloads[0].samplers[0].share.mean: 1.5 > 1",
    ]


def test_json_carries_every_sampler_on_every_workload_with_the_run_config(
    result: BenchResult,
) -> None:
    document = to_json(result)
    assert document["config"]["samplers"] == [
        "difficulty-weighted:c=1.4",
        "difficulty-weighted:c=0.2",
        "round-robin",
        "oracle",
    ]
    assert [w["label"] for w in document["workloads"]] == [
        "stationary (clean)",
        "noisy (15% noise)",
    ]
    baseline = document["workloads"][1]["samplers"][2]
    assert (baseline["role"], baseline["ratio_to_round_robin"]) == ("baseline", 1.0)
    assert document["workloads"][0]["samplers"][0]["curve"][-1]["rollouts"] == 200


def test_the_report_names_the_seeds_and_the_tasks_a_run_used_so_it_can_be_rerun() -> None:
    config = BenchConfig(
        samplers=["round-robin"],
        workloads=(WORKLOADS["stationary"].with_tasks(24), WORKLOADS["drift"].with_tasks(30)),
        seeds=2,
        first_seed=7,
    )
    result = run_bench(config)
    text = format_report(result)
    assert "mean over 2 seeds (7-8)" in text.splitlines()[0]
    assert "\nstationary (clean), 24 tasks\n" in text
    assert "\ndrift (clean), 30 tasks\n" in text
    document = to_json(result)
    assert [workload["tasks"] for workload in document["workloads"]] == [24, 30]
    assert document["config"]["first_seed"] == 7
    one_seed = format_report(run_bench(attrs.evolve(config, seeds=1)))
    assert "mean over 1 seed (seed 7)" in one_seed.splitlines()[0]


def test_summary_has_a_row_per_sampler_and_a_column_per_workload(
    result: BenchResult,
) -> None:
    lines = format_report(result).splitlines()
    header = lines.index(next(line for line in lines if line.startswith("sampler")))
    assert lines[header].split() == ["sampler", "stationary", "noisy"]
    rows = [line.split() for line in lines[header + 1 : header + 5]]
    assert [row[0] for row in rows] == [
        "difficulty-weighted:c=1.4",
        "difficulty-weighted:c=0.2",
        "round-robin",
        "oracle",
    ]
    assert rows[2][-2:] == ["15.0%", "15.0%"]
    assert rows[3][-2:] == ["100.0%", "100.0%"]


def test_the_swept_samplers_default_setting_is_marked(result: BenchResult) -> None:
    report = format_report(result)
    assert "difficulty-weighted:c=0.2 *" in report  # c=0.2 is the default
    assert "difficulty-weighted:c=1.4 *" not in report
    assert "* the sampler's default setting" in report
    assert "round-robin *" not in report  # a sampler run once is not a sweep


def test_text_report_details_interval_percentiles_ratio_and_duplicates(
    result: BenchResult,
) -> None:
    lines = format_report(result).splitlines()
    header = next(line for line in lines if line.startswith("sampler") and "share" in line)
    assert re.split(r"\s{3,}", header) == [
        "sampler", "share", "95% interval", "p10", "p50", "p90", "vs RR", "dup",
    ]  # fmt: skip
    after = lines[lines.index(header) :]
    baseline = next(line for line in after if line.startswith("round-robin"))
    assert baseline.split() == [
        "round-robin", "15.0%", "15.0%-15.0%", "15.0%", "15.0%", "15.0%", "1.00x", "0.0%",
    ]  # fmt: skip


def test_one_seed_shows_no_interval_in_the_table_or_the_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One seed's "interval" is the mean at both ends: shown, it would read as certainty.
    config = BenchConfig(samplers=["informative-band"], workloads=(WORKLOADS["noisy"],), seeds=1)
    one = run_bench(config)
    lines = format_report(one).splitlines()
    assert "too few for a 95% interval, which takes 2 seeds: none is shown" in lines
    header = next(line for line in lines if line.startswith("sampler") and "share" in line)
    rows = lines[lines.index(header) + 1 : lines.index(header) + 4]
    assert [row.split()[2] for row in rows] == ["-", "-", "-"]
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    from agentdescent_sampling.bench import plot

    drawn: dict[str, Any] = {}
    draw = plot.draw_panels

    def finish(*args: Any) -> Path:
        drawn["title"] = args[4]
        return tmp_path / "shares.png"

    def draw_panels(*args: Any, **options: Any) -> Any:
        drawn["bands"] = options.get("bands", True)
        return draw(*args, **options)

    monkeypatch.setattr(plot, "draw_panels", draw_panels)
    monkeypatch.setattr(plot, "finish", finish)
    plot.plot_shares(one, tmp_path / "shares.png")
    assert drawn["bands"] is False
    assert "mean over 1 seed (too few for a 95% interval, which takes 2)" in drawn["title"]


def test_a_sampler_with_one_seed_in_a_run_of_more_says_why_its_row_shows_no_interval(
    result: BenchResult,
) -> None:
    # The heading says nothing of intervals for a run of 3 seeds: the row must say it.
    workload = result.workloads[0]
    alone = attrs.evolve(workload.samplers[0], seeds=1)
    mixed = attrs.evolve(result, workloads=(attrs.evolve(workload, samplers=(alone,
                         *workload.samplers[1:])),))  # fmt: skip
    lines = format_report(mixed).splitlines()
    assert not any("too few for a 95% interval" in line for line in lines)
    header = next(line for line in lines if line.startswith("sampler") and "share" in line)
    rows = [re.split(r"\s{2,}", row) for row in lines[lines.index(header) + 1 :][:2]]
    assert (rows[0][0], rows[0][2]) == ("difficulty-weighted:c=1.4", "- (1 seed)")
    assert re.fullmatch(r"\d+\.\d%-\d+\.\d%", rows[1][2])  # 3 seeds: an interval


def test_text_report_gives_pick_and_record_latency_per_workload(result: BenchResult) -> None:
    lines = format_report(result).splitlines()
    start = lines.index("Latency per call in microseconds, p50/p99")
    assert lines[start + 2].split() == ["stationary", "noisy"]
    assert lines[start + 3].split() == ["sampler", "pick", "record", "pick", "record"]
    baseline = next(line for line in lines[start:] if line.startswith("round-robin")).split()
    assert len(baseline) == 5
    assert all(re.fullmatch(r"\d+\.\d/\d+\.\d", cell) for cell in baseline[1:])


def test_the_default_run_reads_in_100_columns_with_nine_samplers_or_more() -> None:
    config = BenchConfig(
        samplers=[
            *(f"difficulty-weighted:c={c}" for c in (1.4, 0.7, 0.4, 0.2, 0.1)),
            "difficulty-weighted:spread_in_flight=true",
            "round-robin:spread_in_flight=true",
            "informative-band",
            "informative-band:window=9",
        ],
        workloads=(WORKLOADS["stationary"], WORKLOADS["noisy"], WORKLOADS["drift"]),
        seeds=1,
    )
    report = format_report(run_bench(config))
    assert max(map(len, report.splitlines())) <= 100
    # The longest label does not fit beside the numbers: it gets its own line.
    assert "\ndifficulty-weighted:spread_in_flight=true\n" in report


def test_share_summary_of_known_values() -> None:
    share = share_across_seeds([0.1, 0.2, 0.3, 0.4, 0.5])
    half = 2.776 * math.sqrt(0.025 / 5)  # t(0.975, 4 df) times the standard error
    assert share.mean == pytest.approx(0.3)
    assert share.low == pytest.approx(0.3 - half)
    assert share.high == pytest.approx(0.3 + half)
    assert (share.p10, share.p50, share.p90) == pytest.approx((0.14, 0.3, 0.46))


def test_a_single_seed_interval_collapses_onto_the_mean() -> None:
    share = share_across_seeds([0.25])
    assert (share.low, share.mean, share.high) == (0.25, 0.25, 0.25)


def test_the_curve_runs_to_the_full_budget_and_ends_at_the_overall_share(
    result: BenchResult,
) -> None:
    assert checkpoints(200) == tuple(range(10, 201, 10))
    assert checkpoints(7) == (1, 2, 3, 4, 5, 6, 7)
    for sampler in result.workloads[0].samplers:
        assert sampler.curve[-1].mean == pytest.approx(sampler.share.mean)


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_plot_writes_a_png_a_person_can_read(result: BenchResult, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    written = plot_shares(result, tmp_path / "shares.png")
    width, height = _png_size(written)
    assert width > 800
    assert height > 400
    assert written.stat().st_size > 30_000  # curves, bands, labels and a legend, not a blank


def test_plot_shares_writes_a_png_whatever_the_path_ends_in(
    result: BenchResult, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    assert "It is written as a PNG" in (plot_shares.__doc__ or "")
    written = plot_shares(result, tmp_path / "shares.pdf")
    assert written == tmp_path / "shares.pdf.png"
    _png_size(written)


def test_plotting_without_matplotlib_names_the_extra_to_install(
    result: BenchResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [name for name in sys.modules if name.startswith("matplotlib")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(BenchError, match=r"install '\.\[plot\]' in a clone .*, or matplotlib"):
        plot_shares(result, tmp_path / "shares.png")
    assert not (tmp_path / "shares.png").exists()


def test_two_ceilings_in_one_panel_are_drawn_apart() -> None:
    points = [CurvePoint(0, 0.0, 0.0, 0.0), CurvePoint(10, 0.5, 0.4, 0.6)]
    curves = [
        ("round-robin", "baseline", points),
        ("learner-ceiling", "ceiling", points),
        ("oracle", "ceiling", points),
    ]
    _, axes, _ = draw_panels([("lessons", curves)], (4.0, 3.0), "rollouts", (0.0, 1.0))
    styles = {line.get_label(): (line.get_color(), line.get_linestyle()) for line in axes[0].lines}
    assert styles == {
        "round-robin": ("grey", "-"),
        "learner-ceiling": ("black", "--"),
        "oracle": ("black", ":"),
    }


def test_samplers_past_the_palette_are_drawn_in_another_line_style() -> None:
    # The curricula lineup's 13 samplers shared colours past the ninth, alike in every way.
    points = [CurvePoint(0, 0.0, 0.0, 0.0), CurvePoint(10, 0.5, 0.4, 0.6)]
    curves = [(f"sampler-{n}", "sampler", points) for n in range(20)]
    _, axes, _ = draw_panels([("lessons", curves)], (4.0, 3.0), "rollouts", (0.0, 1.0))
    drawn = [(line.get_color(), line.get_linestyle()) for line in axes[0].lines]
    assert len(drawn) == 20
    assert len(set(drawn)) == 20


@pytest.mark.parametrize(
    ("params", "told"),
    [({"first_seed": -1}, "BenchConfig(first_seed=-1): expected a whole number from 0 to "
      "9,007,199,254,740,893; the last seed, first_seed + seeds - 1, is at most 2**53"),
     ({"first_seed": 2**53 - 50}, "expected a whole number from 0 to 9,007,199,254,740,893")],
    ids=["negative", "last-seed-past-2-53"],
)  # fmt: skip
def test_a_first_seed_whose_run_would_seed_a_sampler_out_of_range_is_refused(
    params: dict[str, int], told: str
) -> None:
    # Accepted, it had every seeded sampler fail each run: seed -1 and seeds past 2**53 are
    # no sampler's seed.
    with pytest.raises(ValueError, match=re.escape(told)):
        BenchConfig(**params)
