"""The bench subcommand: options wired to the library, and bad input named with a fix."""

from __future__ import annotations

import argparse
import io
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import SamplerError
from agentdescent_sampling.bench import JSON_SCHEMA, BenchResult, command
from agentdescent_sampling.bench.command import bench_command
from agentdescent_sampling.bench.progress import Progress
from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import BenchError

Args = Callable[..., argparse.Namespace]
SMALL = ("share", "--seeds", "2", "--budget", "40", "--sampler", "difficulty-weighted")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--budget", "lots"], "argument --budget: expected a whole number from 1 to 1,000,000, "
         "got 'lots'; for example --budget 200"),
        (["--seeds", "0"], "argument --seeds: expected a whole number from 1 to 10,000, got '0'"),
        # Not 100, the share measure's default: the full artifact bench over 100 seeds takes hours.
        (["--engine", "--seeds", "0"], "got '0'; for example --seeds 6\n"),
        (["--noise", "9" * 5000], "got '999999999999999999999999999999999999...; for example"),
        (["--latency", "9" * 5000], "got '999999999999999999999999999999999999...; for example"),
        (["--seeds", "100000000"], "argument --seeds: expected a whole number from 1 to 10,000, "
         "got '100000000'"),
        (["--tasks", "99999999999"], "argument --tasks: expected a whole number from 1 to "
         "1,000,000"),
        (["--workers", "-2"], "argument --workers: expected a whole number from 1 to 1,000, got "
         "'-2'"),
        (["--workers", "100000"], "from 1 to 1,000, got '100000'"),
        (["--seeds", "\u0663"], "got '\u0663'; for example --seeds"),  # an Arabic-Indic 3
        (["--budget", "1_0"], "got '1_0'; for example --budget 200"),
        (["--first-seed", " 7 "], "got ' 7 '; for example --first-seed"),
        (["--budget", "9" * 5000], "got '999999999999999999999999999999999999...; for example"),
        (["--noise", "1.5"], "argument --noise: expected a probability from 0 to 1, got '1.5'; "
         "for example --noise 0.15"),
        (["--noise", "nan"], "got 'nan'"),
        (["--latency", "2"], "argument --latency: expected seconds per agent call from 0 to 1, "
         "got '2'; for example --latency 0.002"),
        (["--latency", "-0.1"], "got '-0.1'"),
        (["--latency", "inf"], "got 'inf'"),
        (["--workload", "noisey"], "unknown workload 'noisey'; expected one of lessons, sparse, "
         "flaky, regressions, regressions-held-out, concurrent, concurrent-shared, graded, late "
         "(with 'share': stationary, noisy, drift, large, from-log)"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_naming_the_value_and_an_example(
    bench_args: Args, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        bench_args(*argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_json_prints_one_document_in_the_documented_shape(
    bench_args: Args,
    capsys: pytest.CaptureFixture[str],
    schema_errors: Callable[[Any, Mapping[str, Any]], list[str]],
) -> None:
    assert bench_command(bench_args(*SMALL, "--json", "--workload", "drift")) == 0
    document = json.loads(capsys.readouterr().out)
    assert schema_errors(document, JSON_SCHEMA) == []
    assert document["config"]["workloads"] == ["drift"]
    assert document["config"]["budget"] == 40


def test_options_reach_the_rollout_loop(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--json", "--workers", "3", "--async", "--shared-shard", "--max-concurrency", "2"]
    bench_command(bench_args(*SMALL, *argv))
    config = json.loads(capsys.readouterr().out)["config"]
    assert (config["n_workers"], config["in_flight"]) == (3, 2)
    assert (config["asynchronous"], config["shared_shard"]) == (True, True)


def test_noise_and_tasks_reshape_the_workload(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    bench_command(bench_args(*SMALL, "--json", "--noise", "0.3", "--tasks", "80"))
    workloads = json.loads(capsys.readouterr().out)["workloads"]
    assert [w["label"] for w in workloads] == ["stationary (30% noise)", "noisy (30% noise)"]
    round_robin = workloads[0]["samplers"][1]
    assert round_robin["share"]["mean"] == pytest.approx(12 / 80)


def test_the_default_text_output_is_the_docs_table(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    bench_command(bench_args(*SMALL))
    out = capsys.readouterr().out
    assert "stationary (clean)" in out
    assert "noisy (15% noise)" in out
    assert "it cannot show the artifact" in out
    assert "measure the artifact\nwith: agentdescent-sampling bench" in out


def test_from_log_runs_on_the_example_log(
    bench_args: Args, capsys: pytest.CaptureFixture[str], example_log: Path
) -> None:
    assert bench_command(bench_args(*SMALL, "--from-log", str(example_log))) == 0
    out = capsys.readouterr().out
    assert "from-log rollouts.jsonl" in out
    assert "stationary" not in out


def test_from_log_workload_without_a_file_says_how_to_give_one(bench_args: Args) -> None:
    with pytest.raises(BenchError, match="add --from-log FILE"):
        bench_command(bench_args(*SMALL, "--workload", "from-log"))


def test_tasks_does_not_apply_to_a_log(bench_args: Args, example_log: Path) -> None:
    with pytest.raises(BenchError, match="--tasks 80: the from-log workload's tasks come from"):
        bench_command(bench_args(*SMALL, "--from-log", str(example_log), "--tasks", "80"))


def test_a_sampler_may_be_given_as_a_json_object(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    bench_command(bench_args("share", "--seeds", "1", "--budget", "40", "--json", "--sampler",
                             '{"name": "difficulty-weighted", "c": 0.4}'))  # fmt: skip
    samplers = json.loads(capsys.readouterr().out)["config"]["samplers"]
    assert samplers[0] == "difficulty-weighted:c=0.4"


def test_the_oracle_named_in_any_form_is_the_one_share_always_runs(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    bench_command(bench_args("share", "--seeds", "1", "--budget", "40", "--json",
                             "--sampler", "oracle", "--sampler", '{"name": "oracle"}',
                             "--sampler", '{"name": "round-robin"}'))  # fmt: skip
    samplers = json.loads(capsys.readouterr().out)["config"]["samplers"]
    assert samplers == ["round-robin", "oracle"]


@pytest.mark.parametrize(
    ("spec", "told"),
    [("agentdescent.DifficultyWeighted", "give 'difficulty-weighted' instead, or drop 'share'"),
     ("agentdescent.DifficultyWeighted:c=0.4", "give 'difficulty-weighted:c=0.4' instead"),
     # never a spec that would be refused in turn
     ("agentdescent.DifficultyWeighted:cc=0.4", "give 'difficulty-weighted' with the parameters "
      "it takes (sampler 'difficulty-weighted': unknown parameter 'cc'. Did you mean 'c'?"),
     ('{"name": "agentdescent.DifficultyWeighted", "c": 0.4}',
      "give its name as 'difficulty-weighted' instead"),
     ("learner-ceiling", "learner-ceiling is a ceiling of the artifact bench, which adds it "
      "with --engine; the share measure's ceiling is the oracle"),
     ('{"name": "learner-ceiling"}', "learner-ceiling is a ceiling of the artifact bench")],
    ids=["engine-dw", "engine-dw-params", "engine-dw-bad-params", "engine-dw-json",
         "learner-ceiling", "ceiling-json"],
)  # fmt: skip
def test_share_refuses_an_artifact_bench_entrant_saying_what_to_give_instead(
    bench_args: Args, spec: str, told: str
) -> None:
    with pytest.raises(BenchError) as refused:
        bench_command(bench_args("share", "--seeds", "10000", "--sampler", spec))
    assert told in str(refused.value)


@pytest.mark.parametrize(
    ("command", "told"),
    [(("share",), "the artifact bench (without 'share') runs each sampler that takes the "
      "engine's evidence alone and wired, and the share measure has no wiring; give "
      "'fixable-first'"),
     ((), "the bench runs each sampler that takes the engine's evidence twice, alone and as "
      "'<spec> + wired'; give 'fixable-first'")],
    ids=["share", "artifact"],
)  # fmt: skip
def test_a_wired_row_of_the_report_given_back_as_a_sampler_is_told_the_spec_to_give(
    bench_args: Args, command: tuple[str, ...], told: str
) -> None:
    # It was told "invalid sampler name 'fixable-first + wired'", as if no such sampler were.
    with pytest.raises(BenchError) as refused:
        bench_command(
            bench_args(*command, "--seeds", "10000", "--sampler", "fixable-first + wired")
        )
    assert (
        str(refused.value) == f"'fixable-first + wired' is a row of the report, not a spec: {told}"
    )


@pytest.mark.parametrize(
    ("spec", "error"),
    [("{nope", "is not valid JSON"), ("difficulty-weighted:k=2", "unknown parameter 'k'")],
)
def test_a_bad_sampler_spec_is_refused_before_the_run(
    bench_args: Args, spec: str, error: str
) -> None:
    with pytest.raises(SamplerError, match=error):
        bench_command(bench_args("share", "--seeds", "10000", "--sampler", spec))


def test_plot_hands_the_result_to_the_plotter_and_says_where_it_wrote(
    bench_args: Args,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The drawing itself is tested in test_bench_report; this pins the wiring only.
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    drawn: list[tuple[BenchResult, Path]] = []

    def plot_shares(result: BenchResult, path: Path) -> Path:
        drawn.append((result, path))
        return path

    monkeypatch.setattr(command, "plot_shares", plot_shares)
    target = tmp_path / "shares.png"
    bench_command(bench_args(*SMALL, "--plot", str(target)))
    [(result, path)] = drawn
    assert path == target
    assert not target.exists()  # the check that it can be written left nothing behind
    assert result.config.seeds == 2
    assert f"wrote {target}" in capsys.readouterr().err


def test_checking_a_plot_path_that_is_a_dangling_symlink_keeps_the_symlink(
    tmp_path: Path,
) -> None:
    # The check's probe file is created where the link points; removing what it created
    # removed the user's link instead, and the plot replaced it with a file of its own.
    link, target = tmp_path / "latest.png", tmp_path / "runs" / "shares.png"
    target.parent.mkdir()
    link.symlink_to(target)

    command._check_plot_path(link)

    assert link.is_symlink()
    assert not target.exists()  # nor is the probe left where it points


@pytest.mark.parametrize(
    ("plot", "message"),
    [
        ("no/x.png", "the directory '.*no' does not exist"),
        (".", "is a directory; give a file in it, such as '.*gains.png'"),
        ("here", "is a directory"),
        ("x.pdf", r"the plot is a PNG image, not \.pdf; give a name ending in .png, such as "
         r"'.*x.png'"),
    ],
    ids=["missing-directory", "dot", "a-directory", "another-format"],
)  # fmt: skip
def test_a_plot_path_it_could_not_write_fails_before_the_run(
    bench_args: Args, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plot: str, message: str
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").mkdir()
    with pytest.raises(BenchError, match=message):  # 100,000 seeds would take minutes
        bench_command(bench_args("share", "--seeds", "10000", "--plot", plot))


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_plot_path_its_directory_refuses_fails_before_the_run(bench_args: Args) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    # /proc refuses a new file even to root, for whom its directory reads as writable.
    with pytest.raises(
        BenchError, match=r"--plot '/proc/x\.png'.*(cannot be written|not writable)"
    ):
        bench_command(bench_args(*SMALL, "--plot", "/proc/x.png"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_plot_path_that_is_a_named_pipe_is_refused_before_the_run_without_opening_it(
    bench_args: Args, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    pipe = tmp_path / "plot.png"
    os.mkfifo(pipe)  # opened for writing with no reader, it would wait forever
    # A reader, so that a check that opened the pipe would pass instead of hanging the test,
    # and the plot is drawn nowhere.
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    monkeypatch.setattr(command, "plot_shares", lambda result, path: path)
    try:
        with pytest.raises(BenchError, match=r"is not a regular file \(a pipe or a device\)"):
            bench_command(bench_args(*SMALL, "--plot", str(pipe)))
    finally:
        os.close(reader)


@pytest.mark.skipif(not os.path.exists(os.devnull), reason="needs a device file")
def test_a_plot_path_that_is_a_device_is_refused_not_written_beside_as_png(
    bench_args: Args, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    monkeypatch.setattr(command, "plot_shares", lambda result, path: path)
    with pytest.raises(BenchError, match=r"is not a regular file \(a pipe or a device\)"):
        bench_command(bench_args(*SMALL, "--plot", os.devnull))
    assert not os.path.exists(f"{os.devnull}.png")


def test_a_plot_name_whose_png_is_a_directory_fails_before_the_run(
    bench_args: Args, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gains.png").mkdir()  # --plot gains is saved as gains.png
    with pytest.raises(BenchError, match=r"is saved as 'gains\.png', which is a directory"):
        bench_command(bench_args("share", "--seeds", "10000", "--plot", "gains"))


def test_a_plot_name_longer_than_the_system_allows_is_refused_before_the_run_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    plot = tmp_path / ("a" * 300 + ".png")  # a name over NAME_MAX: is_dir() raises for it
    # 10,000 seeds would take minutes: the refusal comes before the run.
    assert main(["bench", "share", "--seeds", "10000", "--plot", str(plot)]) == 2
    err = capsys.readouterr().err
    assert f"--plot '{str(plot)[:30]}" in err
    assert "a... is 304 bytes, and file systems take at most 255; give a shorter path" in err


def test_an_empty_plot_path_is_a_usage_error(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        bench_args("share", "--plot", "")
    assert exited.value.code == 2
    assert (
        "argument --plot: an empty path; give the file or directory meant"
        in capsys.readouterr().err
    )


def test_a_plot_path_under_a_tilde_is_under_home(
    bench_args: Args, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert bench_args("share", "--plot", "~/gains.png").plot == tmp_path / "gains.png"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal_after_its_delay_and_erases_itself() -> None:
    stream = _Terminal()
    with Progress(4, stream, delay=0.0) as bar:
        bar.advance()
    assert "bench [" in stream.getvalue()
    assert "25%" in stream.getvalue()
    assert stream.getvalue().endswith("\r\033[K")


def test_progress_bar_stays_silent_off_a_terminal_and_during_short_runs() -> None:
    piped = io.StringIO()
    with Progress(4, piped, delay=0.0) as bar:
        bar.advance(4)
    terminal = _Terminal()
    with Progress(4, terminal, delay=60.0) as bar:
        bar.advance(4)
    assert piped.getvalue() == terminal.getvalue() == ""


@pytest.mark.parametrize("share", [["share"], []], ids=["share", "artifact"])
def test_a_refused_parameter_is_quoted_as_the_user_wrote_it_without_what_the_bench_fills_in(
    capsys: pytest.CaptureFixture[str], share: list[str]
) -> None:
    # The bench gives the sampler the run's pass threshold; the refusal is of c=-1 alone.
    assert main(["bench", *share, "--sampler", "difficulty-weighted:c=-1", "--seeds", "2"]) == 2
    err = capsys.readouterr().err
    assert "rejected 'difficulty-weighted:c=-1': 'DifficultyWeighted(c=-1): expected" in err
    assert "difficulty-weighted:pass_threshold" not in err
