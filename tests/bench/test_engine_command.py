"""``agentdescent-sampling bench`` and ``bench --engine``: options wired to the artifact bench,
bad input named."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling.bench.command import bench_command
from agentdescent_sampling.bench.engine import (
    ENGINE_JSON_SCHEMA,
    ENGINE_WORKLOADS,
    EngineBenchConfig,
    build,
)
from agentdescent_sampling.bench.engine.lineup import engine_lineup
from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import BenchError
from agentdescent_sampling.registry import default_registry
from agentdescent_sampling.spec import SamplerSpec

Args = Callable[..., argparse.Namespace]


def test_json_and_plot_of_a_small_engine_run(
    bench_args: Args,
    capsys: pytest.CaptureFixture[str],
    schema_errors: Callable[[Any, Mapping[str, Any]], list[str]],
    tmp_path: Path,
) -> None:
    pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    plot = tmp_path / "gain.png"
    argv = ("--engine", "--workload", "lessons", "--seeds", "2", "--first-seed", "5",
            "--sampler", "informative-band", "--json", "--plot", str(plot),
            "--reflector", "silent", "--plot-x", "calls")  # fmt: skip
    assert bench_command(bench_args(*argv)) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    assert document["config"] == {
        "samplers": ["round-robin", "informative-band", "learner-ceiling", "oracle"],
        "workloads": ["lessons"],
        "seeds": 2,
        "first_seed": 5,
        "reflector": "silent",
        "asynchronous": False,
        "latency": 0.0,
    }
    assert document["workloads"][0]["samplers"][1]["seeds"] == 2
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert f"wrote {plot}" in err


def test_the_engines_difficulty_weighted_takes_parameters_as_a_registered_sampler_does(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")
    argv = ("--engine", "--workload", "lessons", "--seeds", "1",
            "--sampler", "agentdescent.DifficultyWeighted:c=0.4",
            "--sampler", '{"name": "agentdescent.DifficultyWeighted", "prior": 0.3}',
            "--json")  # fmt: skip
    assert bench_command(bench_args(*argv)) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["config"]["samplers"] == [
        "round-robin",
        "agentdescent.DifficultyWeighted:c=0.4",
        "agentdescent.DifficultyWeighted:prior=0.3",
        "learner-ceiling",
        "oracle",
    ]
    # The parameters reach the sampler, beside the workload's pass threshold.
    given = ["agentdescent.DifficultyWeighted:c=0.4"]
    [_, entrant] = engine_lineup(given, default_registry(), ceilings=False)
    sampler: Any = entrant.make(build(ENGINE_WORKLOADS["graded"], 0))
    assert (sampler.c, sampler.pass_threshold, sampler.prior) == (0.4, 0.8, 0.5)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("agentdescent.DifficultyWeighted:x=1", "'agentdescent.DifficultyWeighted:x=1': "
         "agentdescent.DifficultyWeighted takes no parameter 'x'; expected one of c, "
         "pass_threshold, prior, as in 'agentdescent.DifficultyWeighted:c=0.4'"),
        ("agentdescent.DifficultyWeighted:c=high", "'agentdescent.DifficultyWeighted:c=high': "
         "agentdescent.DifficultyWeighted's c is 'high'; expected a number >= 0, as in "
         "'agentdescent.DifficultyWeighted:c=0.4'"),
        ("agentdescent.DifficultyWeighted:c=1,c=2", "parameter 'c' is given twice in "
         "'agentdescent.DifficultyWeighted:c=1,c=2'"),
        ('{"name": "agentdescent.DifficultyWeighted", "provider": "agentdescent"}',
         "agentdescent.DifficultyWeighted is the engine's own sampler, not a registered one, "
         "so it has no provider; drop 'provider'"),
        ("agentdescent.DifficultyWeighted:pass_threshold=5", "agentdescent.DifficultyWeighted's "
         "pass_threshold is 5; expected a number in (0, 1]"),
        ("agentdescent.DifficultyWeighted:c=-1", "agentdescent.DifficultyWeighted's c is -1; "
         "expected a number >= 0"),
    ],
    ids=["unknown", "not-a-number", "twice", "provider", "threshold-out-of-range", "c-below-0"],
)  # fmt: skip
def test_a_bad_parameter_of_the_engines_difficulty_weighted_is_named_with_what_it_takes(
    capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")
    argv = ["bench", "--engine", "--sampler", value, "--workload", "lessons", "--seeds", "1"]
    assert main(argv) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert message in err
    assert "engine-difficulty-weighted" not in err  # the stand-in the parameters are read under


@pytest.mark.parametrize(
    "value",
    ["agentdescent.difficultyweighted", "agentdescent.DifficultyWieghted:c=0.4",
     '{"name": "Agentdescent.DifficultyWeighted", "c": 0.4}'],
)  # fmt: skip
def test_a_misspelled_engine_sampler_is_named_with_the_spelling_the_bench_takes(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")
    argv = ["bench", "--sampler", value, "--workload", "lessons", "--seeds", "1"]
    assert main(argv) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "the engine's own sampler the bench runs is agentdescent.DifficultyWeighted" in err
    assert "'agentdescent.DifficultyWeighted:c=0.4'" in err
    assert "never imports code" not in err  # the registry's word on a config's name


def test_fixable_first_runs_alone_and_wired_to_the_engines_evidence(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")
    argv = ("--engine", "--workload", "lessons", "--seeds", "1", "--sampler", "fixable-first",
            "--json")  # fmt: skip
    assert bench_command(bench_args(*argv)) == 0
    document = json.loads(capsys.readouterr().out)
    labels = ["fixable-first", "fixable-first + wired"]
    assert document["config"]["samplers"] == ["round-robin", *labels, "learner-ceiling", "oracle"]
    rows = {row["label"]: row for row in document["workloads"][0]["samplers"]}
    # Told which fixes passed their re-run and landed, it spends no rollout confirming them:
    # on seed 0 it reaches 75% of the gain sooner than from outcomes alone.
    at_75 = {label: rows[label]["reach"][1]["median_rollouts"] for label in labels}
    assert at_75["fixable-first + wired"] < at_75["fixable-first"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--engine", "--budget", "50"], "--budget is an option of the share measure"),
        (["--budget", "50"], "--budget is an option of the share measure; the artifact bench's"),
        (["--shared-shard"], "--shared-shard is an option of the share measure"),
        (["--engine", "--workload", "noisy"], "--workload noisy is a workload of the share "
         "measure; run agentdescent-sampling bench share --workload noisy, or choose from "
         "lessons, sparse, flaky, regressions"),
        (["share", "--workload", "sparse"], "--workload sparse is a workload of the artifact "
         "bench; drop 'share'"),
        (["share", "--reflector", "silent"], "--reflector silent applies to the artifact bench, "
         "not to 'bench share'"),
        (["share", "--plot-x", "calls"], "--plot-x calls applies to the artifact bench"),
        (["share", "--engine"], "--engine applies to the artifact bench"),
        (["share", "--latency", "0.01"], "--latency 0.01 applies to the artifact bench"),
    ],
)  # fmt: skip
def test_options_of_the_other_bench_are_refused_with_the_fix(
    bench_args: Args, argv: list[str], message: str
) -> None:
    with pytest.raises(BenchError, match=message):
        bench_command(bench_args(*argv))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--plot-x", "calls"], "--plot-x calls sets the plot's axis, and no plot was asked "
         "for: add --plot FILE.png, or drop --plot-x"),
        (["--sampler", "oracle"], "--sampler oracle runs only in the full bench, which adds it "
         "unasked: add --engine, or drop --sampler oracle"),
        (["--sampler", "learner-ceiling", "--sampler", "fixable-first"], "--sampler "
         "learner-ceiling runs only in the full bench"),
        (["--sampler", "round-robin"], "round-robin is the baseline every run compares with, "
         "and is always run; name another sampler to compare"),
        (["--sampler", '{"name": "oracle"}'], "--sampler oracle runs only in the full bench"),
        (["--sampler", '{"name": "learner-ceiling"}'], "--sampler learner-ceiling runs only in "
         "the full bench"),
        (["--sampler", '{"name": "round-robin"}'], "round-robin is the baseline every run "
         "compares with"),
    ],
    ids=["plot-x-without-plot", "oracle-quick", "ceiling-quick", "round-robin-alone",
         "oracle-json", "ceiling-json", "round-robin-json"],
)  # fmt: skip
def test_a_quick_bench_that_would_drop_what_was_asked_is_refused_before_it_runs(
    bench_args: Args, argv: list[str], message: str
) -> None:
    with pytest.raises(BenchError, match=re.escape(message)):
        bench_command(bench_args(*argv))


@pytest.mark.parametrize(
    ("spec", "message"),
    [("RoundRobin", "round-robin is the baseline every run compares with"),
     ("ROUND_ROBIN", "round-robin is the baseline every run compares with"),
     ('{"name": "round_robin"}', "round-robin is the baseline every run compares with"),
     ("Oracle", "--sampler oracle runs only in the full bench"),
     ("LEARNER_CEILING", "--sampler learner-ceiling runs only in the full bench")],
)  # fmt: skip
def test_round_robin_or_a_ceiling_spelled_as_the_registry_reads_names_is_refused_as_itself(
    bench_args: Args, spec: str, message: str
) -> None:
    # The registry reads RoundRobin and ROUND_ROBIN as round-robin: the quick bench would
    # run round-robin alone, with nothing to compare and no verdict.
    with pytest.raises(BenchError, match=re.escape(message)):
        bench_command(bench_args("--sampler", spec))


def test_the_ceilings_in_another_spelling_take_their_fixed_places() -> None:
    given = ["ORACLE", {"name": "Learner_Ceiling"}, "RoundRobin"]
    labels = [entrant.label for entrant in engine_lineup(given, default_registry())]
    assert labels == ["round-robin", "learner-ceiling", "oracle"]


def test_the_benchs_own_names_in_json_or_spec_form_take_their_fixed_places() -> None:
    given = [{"name": "oracle"}, {"name": "round-robin"}, SamplerSpec("learner-ceiling")]
    labels = [entrant.label for entrant in engine_lineup(given, default_registry())]
    assert labels == ["round-robin", "learner-ceiling", "oracle"]


def test_an_unknown_workload_lists_the_engine_ones_too(
    bench_args: Args, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        bench_args("--engine", "--workload", "lesons")
    assert "expected one of lessons, sparse, flaky, regressions" in capsys.readouterr().err


# Runs the CLI in a fresh interpreter where importing agentdescent fails, as it does
# when the engine extra is not installed, without uninstalling anything.
_WITHOUT_ENGINE = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    class HideEngine(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "agentdescent" or name.startswith("agentdescent."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, HideEngine())
    from agentdescent_sampling.cli import main
    sys.exit(main(["bench"]))
    """
)


def test_without_the_engine_bench_says_in_one_line_how_to_install_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ENGINE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("agentdescent-sampling: error: the artifact bench runs agentdescent's")
    assert (
        'from a clone, python -m pip install ".[engine]"; or python -m pip install '
        "agentdescent==0.7.0" in line
    )
    assert line.endswith("'bench share' needs no engine")


@pytest.fixture
def configs(monkeypatch: pytest.MonkeyPatch) -> list[EngineBenchConfig]:
    """The configs the command hands the artifact bench, which stops there."""
    import agentdescent_sampling.bench.engine.command as command

    handed: list[EngineBenchConfig] = []

    def capture(config: EngineBenchConfig, **options: Any) -> None:
        handed.append(config)
        raise BenchError("captured")

    monkeypatch.setattr(command, "run_engine_bench", capture)
    return handed


def test_bench_with_no_arguments_runs_the_quick_artifact_bench(
    bench_args: Args, configs: list[EngineBenchConfig]
) -> None:
    for argv in ([], ["--engine"]):
        with pytest.raises(BenchError, match="captured"):
            bench_command(bench_args(*argv))
    quick, full = configs
    assert quick == EngineBenchConfig.quick()
    assert [w.name for w in quick.workloads] == ["lessons", "regressions-held-out", "graded"]
    assert (quick.seeds, quick.ceilings) == (6, False)
    assert full == EngineBenchConfig()
    entrants = engine_lineup(quick.samplers or (), default_registry(), ceilings=False)
    assert [entrant.label for entrant in entrants] == [
        "round-robin",
        "fixable-first",
        "fixable-first + wired",
        "informative-band",
        "agentdescent.DifficultyWeighted",
    ]


def test_reflector_async_and_latency_reach_the_artifact_bench_config(
    bench_args: Args, configs: list[EngineBenchConfig]
) -> None:
    for argv in (["--engine"], ["--reflector", "llm-like-wrong", "--asynchronous", "--latency",
                                "0.01"]):  # fmt: skip
        with pytest.raises(BenchError, match="captured"):
            bench_command(bench_args(*argv))
    assert [(c.reflector, c.asynchronous, c.latency, c.seeds) for c in configs] == [
        ("llm-like", False, None, 30),
        ("llm-like-wrong", True, 0.01, 6),
    ]


def test_the_sampler_option_says_which_entrants_the_bench_adds_to_those_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    helped = " ".join(capsys.readouterr().out.split())
    assert "the learner ceiling and the oracle with --engine" in helped
    assert "runs twice: alone, and as '<spec> + wired'" in helped
