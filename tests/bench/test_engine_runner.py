"""``run_engine_bench`` when a sampler's run raises or the run is interrupted: what is still
reported, what the failure says, and how it says to rerun it."""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import attrs
import pytest

from agentdescent_sampling import Registry, TaskSampler, __version__, create
from agentdescent_sampling import registry as registry_module
from agentdescent_sampling.bench.engine import (
    ENGINE_JSON_SCHEMA,
    ENGINE_WORKLOADS,
    Built,
    EngineBenchConfig,
    EngineEntrant,
    engine_to_json,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine import lineup as engine_lineup
from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import BenchError

pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")

#: The lessons workload cut to two rounds: a run takes a fraction of a second.
SHORT = attrs.evolve(ENGINE_WORKLOADS["lessons"], rounds=2)


class Broken:
    """A sampler whose every pick fails."""

    name = "broken"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        raise RuntimeError("no pick today")

    def record(self, task_id: str, score: float) -> None:
        return None


class BrokenEvidence:
    """Round-robin's picks, with an ``evidence`` method that fails: it fails only when wired."""

    name = "broken-evidence"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[round_index % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        return None

    def evidence(self, task_id: str, gain: float, committed: bool) -> None:
        raise RuntimeError("no evidence today")


def _broken_on(seed: int) -> Callable[[Built], TaskSampler]:
    def make(built: Built) -> TaskSampler:
        return Broken() if built.seed == seed else create("round-robin")

    return make


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the pool forks its workers"
)
def test_a_worker_killed_from_outside_ends_the_bench_naming_its_run_and_how_to_rerun_it() -> None:
    def killed(built: Built) -> TaskSampler:
        os._exit(9)  # as the system's out-of-memory killer ends a process, without a word

    config = EngineBenchConfig(
        workloads=[SHORT], samplers=[], extra=[EngineEntrant("mine", killed)], seeds=1,
        processes=2, ceilings=False,
    )  # fmt: skip
    with pytest.raises(BenchError) as raised:
        run_engine_bench(config)
    message = str(raised.value)
    assert message.startswith(
        "a worker process was ended from outside (killed, or by the system when memory ran "
        "out), so the bench stopped; it was running one of: "
    )
    assert "sampler 'mine' on engine workload lessons, seed 0" in message


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "pooled"])
def test_a_failing_sampler_is_left_out_and_every_other_sampler_is_still_reported(
    processes: int, schema_errors: Callable[[Any, Mapping[str, Any]], list[str]]
) -> None:
    config = EngineBenchConfig(
        workloads=[SHORT],
        samplers=["informative-band"],
        extra=[EngineEntrant("flaky", _broken_on(1))],
        seeds=3,
        processes=processes,
        ceilings=False,
    )
    result = run_engine_bench(config)
    assert [sampler.label for sampler in result.workloads[0].samplers] == [
        "round-robin",
        "informative-band",
    ]
    assert all(sampler.seeds == 3 for sampler in result.workloads[0].samplers)
    [failure] = result.failures
    assert (failure.label, failure.workload, failure.seed) == ("flaky", "lessons", 1)
    # The failure itself is worded as the error that used to end the bench.
    # With the line of the sampler's own code it raised at, through the engine's frames: the
    # rerun command it gives printed the same line, and the traceback was kept unshown.
    line = 1 + inspect.getsourcelines(Broken.pick)[1]
    assert failure.message.startswith(
        f"sampler 'flaky' failed on engine workload lessons, seed 1: RuntimeError: no pick today "
        f"(at {__file__}:{line}); "
    )
    assert failure.traceback.startswith("Traceback (most recent call last):")
    assert failure.traceback.rstrip().endswith("RuntimeError: no pick today")
    text = format_engine_report(result)
    assert (
        f"\nLeft out of the tables above, with all its runs, for a run that raised:\n"
        f"  {failure.message}\n" in text
    )
    assert not any(line.startswith("flaky ") for line in text.splitlines())
    document = json.loads(json.dumps(engine_to_json(result)))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    assert document["config"]["samplers"] == ["round-robin", "informative-band"]
    assert document["failures"] == [
        {"label": "flaky", "workload": "lessons", "seed": 1, "message": failure.message}
    ]


class ChoosesFromNothing:
    """A sampler whose pick raises inside the standard library's ``random``, and whose copy
    raises when ``copy.deepcopy`` calls it."""

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return random.choice([])  # an IndexError in random.py, not here

    def record(self, task_id: str, score: float) -> None:
        return None

    def __deepcopy__(self, memo: dict[int, Any]) -> ChoosesFromNothing:
        raise TypeError("no copies")


def test_a_failure_names_the_samplers_line_through_the_standard_librarys_frames() -> None:
    # Reached from this package through copy.deepcopy, the sampler's line was not found.
    from agentdescent_sampling.bench.core import sampler_line
    from agentdescent_sampling.served import ServedSampler

    served = ServedSampler(ChoosesFromNothing(), name="nothing")  # this package's frame first
    with pytest.raises(IndexError) as picked:
        served.pick(["a"], 0)
    with pytest.raises(TypeError) as copied:
        copy.deepcopy(served)  # served's __deepcopy__, then copy's, then the sampler's
    for error, method in ((picked, "pick"), (copied, "__deepcopy__")):
        line = 1 + inspect.getsourcelines(getattr(ChoosesFromNothing, method))[1]
        assert sampler_line(error.value) == f" (at {__file__}:{line})"


def test_a_failed_samplers_later_runs_are_not_started() -> None:
    seeds: list[int] = []

    def make(built: Built) -> TaskSampler:
        seeds.append(built.seed)
        return Broken()

    config = EngineBenchConfig(
        workloads=[SHORT, SHORT], samplers=[], extra=[EngineEntrant("mine", make)], seeds=4,
        processes=1, ceilings=False,
    )  # fmt: skip
    result = run_engine_bench(config)
    assert seeds == [0]
    assert [(f.label, f.seed) for f in result.failures] == [("mine", 0)]
    assert [sampler.label for sampler in result.workloads[1].samplers] == ["round-robin"]


def test_a_failing_round_robin_still_ends_the_bench_as_nothing_compares_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine_lineup._RoundRobin, "__call__", lambda self, built: Broken())
    config = EngineBenchConfig(workloads=["lessons"], samplers=[], seeds=2, processes=1)
    with pytest.raises(BenchError) as failed:
        run_engine_bench(config)
    line = 1 + inspect.getsourcelines(Broken.pick)[1]
    assert str(failed.value) == (
        "sampler 'round-robin' failed on engine workload lessons, seed 0: RuntimeError: no pick "
        f"today (at {__file__}:{line}); rerun it alone with: agentdescent-sampling bench "
        "--engine --sampler 'round-robin' --workload lessons --first-seed 0 --seeds 1"
    )


def test_the_rerun_hint_for_an_entrant_of_your_own_is_a_python_call_that_reruns_it() -> None:
    mine = EngineEntrant("mine", lambda built: Broken())
    config = EngineBenchConfig(
        workloads=["lessons"], samplers=["informative-band"], extra=[mine], seeds=1,
        first_seed=3, processes=1, ceilings=False,
    )  # fmt: skip
    [failure] = run_engine_bench(config).failures
    call = (
        "run_engine_bench(EngineBenchConfig(samplers=[], extra=[...], workloads=['lessons'], "
        "first_seed=3, seeds=1, ceilings=False))"
    )
    line = 1 + inspect.getsourcelines(Broken.pick)[1]
    assert failure.message == (
        "sampler 'mine' failed on engine workload lessons, seed 3: RuntimeError: no pick today "
        f"(at {__file__}:{line}); it is not a registered sampler, so rerun it alone from Python, "
        f"with your EngineEntrant 'mine' as extra: {call}"
    )
    # The call, given the entrant, reruns that one run.
    names = {"run_engine_bench": run_engine_bench, "EngineBenchConfig": EngineBenchConfig}
    again = eval(call.replace("[...]", "[mine]"), {**names, "mine": mine})
    assert [(f.label, f.seed, f.message) for f in again.failures] == [("mine", 3, failure.message)]


def test_the_rerun_hint_on_a_workload_of_your_own_carries_the_options_that_ran() -> None:
    mine = EngineEntrant("mine", lambda built: Broken())
    config = EngineBenchConfig(
        workloads=[SHORT], samplers=[], extra=[mine], seeds=1, processes=1, ceilings=False,
        reflector="silent", latency=0.001,
    )  # fmt: skip
    [failure] = run_engine_bench(config).failures
    assert failure.message.endswith(
        "it is not a registered sampler, so rerun it alone from Python, with your EngineEntrant "
        "'mine' as extra and the workload 'lessons' as you gave it: "
        "run_engine_bench(EngineBenchConfig(samplers=[], extra=[...], workloads=[...], "
        "first_seed=0, seeds=1, ceilings=False, reflector='silent', latency=0.001))"
    )


@pytest.mark.parametrize(
    ("name", "factory", "label"),
    [("broken", Broken, "broken"),
     # The wired entrant runs with its sampler alone, whose spec --sampler takes.
     ("broken-evidence", BrokenEvidence, "broken-evidence + wired")],
    ids=["registered", "wired"],
)  # fmt: skip
@pytest.mark.filterwarnings("ignore:evolve\\(\\) stopped early:RuntimeWarning")
def test_the_rerun_hint_for_a_registered_sampler_names_a_spec_the_command_line_takes(
    name: str, factory: type, label: str
) -> None:
    registry = Registry(disable=(), only=(), strict=False)
    registry.register(factory, name)
    config = EngineBenchConfig(
        workloads=["lessons"], samplers=[name], seeds=1, processes=1, ceilings=False
    )
    [failure] = run_engine_bench(config, registry=registry).failures
    assert failure.label == label
    assert failure.message.startswith(f"sampler {label!r} failed on engine workload lessons, ")
    assert failure.message.endswith(
        f"; rerun it alone with: agentdescent-sampling bench --engine --sampler '{name}' "
        f"--workload lessons --first-seed 0 --seeds 1"
    )


def test_the_rerun_hint_for_a_sampler_from_a_named_provider_gives_the_mapping_form(
    plugin: Callable[[str, Mapping[str, str]], tuple[Registry, types.ModuleType]],
) -> None:
    source = textwrap.dedent(
        """
        class Broken:
            name = "broken"

            def pick(self, keys, round_index):
                raise RuntimeError("no pick today")

            def record(self, task_id, score):
                return None
        """
    )
    registry, module = plugin(source, {"broken": "Broken"})
    spec = {"name": "broken", "provider": module.__name__}
    config = EngineBenchConfig(
        workloads=["lessons"], samplers=[spec], seeds=1, processes=1, ceilings=False
    )
    [failure] = run_engine_bench(config, registry=registry).failures
    assert failure.label == f"broken ({module.__name__})"
    assert failure.message.endswith(
        f"""--sampler '{{"name": "broken", "provider": "{module.__name__}"}}' """
        f"--workload lessons --first-seed 0 --seeds 1"
    )


def test_the_json_names_the_distribution_and_version_each_sampler_came_from(
    plugin: Callable[[str, Mapping[str, str]], tuple[Registry, types.ModuleType]],
    schema_errors: Callable[[Any, Mapping[str, Any]], list[str]],
) -> None:
    source = textwrap.dedent(
        """
        class FirstKey:
            name = "first-key"

            def pick(self, keys, round_index):
                return keys[0]

            def record(self, task_id, score):
                return None
        """
    )
    registry, module = plugin(source, {"first-key": "FirstKey"})
    mine = EngineEntrant("mine", lambda built: create("round-robin"))
    broken = EngineEntrant("broken", lambda built: Broken(), distribution="mine", version="2")
    config = EngineBenchConfig(
        workloads=[SHORT],
        samplers=["first-key", "agentdescent.DifficultyWeighted:c=0.4"],
        extra=[mine, broken],
        seeds=1,
        processes=1,
    )
    document = json.loads(json.dumps(engine_to_json(run_engine_bench(config, registry=registry))))
    assert schema_errors(document, ENGINE_JSON_SCHEMA) == []
    engine = metadata.version("agentdescent")
    assert (document["engine"], document["agentdescent_sampling"]) == (engine, __version__)
    ours = ("agentdescent-sampling", __version__)
    # Every entrant, the one left out for a failed run too; an entrant of your own names its
    # distribution or not.
    assert [(row["label"], row["role"], row["distribution"], row["version"])
            for row in document["lineup"]] == [
        ("round-robin", "baseline", *ours),
        ("first-key", "sampler", module.__name__, "0.1"),
        ("agentdescent.DifficultyWeighted:c=0.4", "sampler", "agentdescent", engine),
        ("mine", "sampler", None, None),
        ("broken", "sampler", "mine", "2"),
        ("learner-ceiling", "ceiling", *ours),
        ("oracle", "ceiling", *ours),
    ]  # fmt: skip
    assert [failure["label"] for failure in document["failures"]] == ["broken"]


# Ctrl-C in a terminal sends SIGINT to every process of the foreground group: here a run's
# factory sends it, to the bench's own group, on seed 2 of 30.
_INTERRUPTED = textwrap.dedent(
    """
    import os, signal, sys

    import attrs

    # As in an interactive shell, even where this test runs in the background (a shell with no
    # job control starts background jobs with SIGINT ignored, and Python keeps that).
    signal.signal(signal.SIGINT, signal.default_int_handler)

    from agentdescent_sampling import create
    from agentdescent_sampling.bench.engine import (
        ENGINE_WORKLOADS, EngineBenchConfig, EngineEntrant, run_engine_bench,
    )

    def make(built):
        with open(sys.argv[1], "a") as started:
            started.write(f"{built.seed}\\n")
        if built.seed == 2:
            os.killpg(os.getpgrp(), signal.SIGINT)
        return create("round-robin")

    short = attrs.evolve(ENGINE_WORKLOADS["lessons"], rounds=2)
    run_engine_bench(EngineBenchConfig(
        workloads=[short], samplers=[], extra=[EngineEntrant("mine", make)], seeds=30,
        processes=2, ceilings=False,
    ))
    """
)


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods() or not hasattr(os, "killpg"),
    reason="the runs go one after another in this process without fork",
)
def test_an_interrupt_ends_the_bench_without_starting_the_runs_still_queued(
    tmp_path: Path,
) -> None:
    started = tmp_path / "started"
    finished = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED, str(started)],
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,  # its own process group, which the interrupt goes to
        check=False,
    )
    # Ended by the interrupt, as a shell expects (exit status 130), with this process's
    # traceback alone: no worker process printed one of its own.
    assert finished.returncode == -signal.SIGINT, finished.stderr
    assert finished.stderr.count("Traceback") == 1, finished.stderr
    assert "Process ForkProcess" not in finished.stderr
    assert finished.stderr.rstrip().endswith("KeyboardInterrupt")
    # No run was started after it but the one in flight on the other worker.
    seeds = [int(line) for line in started.read_text().split()]
    assert max(seeds) <= 3, seeds


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the pool forks its workers"
)
def _holds_a_run(scratch: Path) -> bool:
    """Whether a directory made in ``scratch`` holds anything yet. What is there comes and
    goes as it is looked at, and may be a file (it failed the test under load, as
    NotADirectoryError)."""
    for made in scratch.iterdir():
        with contextlib.suppress(OSError):
            if any(made.iterdir()):
                return True
    return False


def test_a_sigterm_ends_the_bench_command_as_ctrl_c_does_leaving_no_worker_or_scratch(
    tmp_path: Path,
) -> None:
    # A SIGTERM (kill, timeout, a cancelled CI job) ended the command at once: its workers
    # ran on, holding its output open, and its scratch directory stayed.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = [sys.executable, "-m", "agentdescent_sampling", "bench", "--workload", "lessons",
               "--sampler", "difficulty-weighted", "--seeds", "60"]  # fmt: skip
    bench = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    try:
        # Until a run has begun in a worker (its files are in the bench's scratch directory):
        # a signal while the pool forks its workers lands in a fork handler, which drops it.
        for _ in range(1200):
            if _holds_a_run(scratch) or bench.poll() is not None:
                break
            time.sleep(0.05)
        bench.send_signal(signal.SIGTERM)
        _, err = bench.communicate(timeout=120)  # returns once every worker has let go
    finally:
        bench.kill()
    assert bench.returncode == 130, err
    assert err.rstrip().endswith("agentdescent-sampling: error: interrupted"), err
    assert list(scratch.iterdir()) == []


def test_the_command_reports_the_others_and_exits_1_when_a_sampler_failed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = Registry(only=[])
    registry.register(Broken, name="broken-at-once")
    monkeypatch.setattr(registry_module, "_default", registry)

    status = main(["bench", "--sampler", "broken-at-once", "--workload", "lessons", "--seeds", "1"])

    assert status == 1  # a script running the bench notices
    out = capsys.readouterr().out
    assert "Left out of the tables above, with all its runs, for a run that raised:" in out
    assert "sampler 'broken-at-once' failed on engine workload lessons, seed 0" in out


# Ctrl-C while the engine is inside evolve(): its scratch ledger, which it removes only when
# evolve() returns (or, when evolve() raises, at exit, which a forked worker never reaches).
_INTERRUPTED_IN_EVOLVE = textwrap.dedent(
    """
    import os, signal, sys, time

    import attrs

    signal.signal(signal.SIGINT, signal.default_int_handler)

    from agentdescent_sampling.bench.engine import (
        ENGINE_WORKLOADS, EngineBenchConfig, EngineEntrant, run_engine_bench,
    )

    class Interrupting:
        name = "interrupting"

        def __init__(self, seed):
            self.seed = seed

        def pick(self, keys, round_index):
            if self.seed == 2 and round_index == 3:
                os.killpg(os.getpgrp(), signal.SIGINT)
                time.sleep(10)  # the interrupt ends this run long before
            return keys[round_index % len(keys)]

        def record(self, task_id, score):
            return None

    short = attrs.evolve(ENGINE_WORKLOADS["lessons"], rounds=6)
    run_engine_bench(EngineBenchConfig(
        workloads=[short], samplers=[],
        extra=[EngineEntrant("mine", lambda built: Interrupting(built.seed))], seeds=30,
        processes=2, ceilings=False,
    ))
    """
)


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods() or not hasattr(os, "killpg"),
    reason="the runs go one after another in this process without fork",
)
def test_an_interrupt_inside_evolve_leaves_no_scratch_ledger_in_the_temporary_directory(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    finished = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IN_EVOLVE],
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,  # its own process group, which the interrupt goes to
        check=False,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert finished.returncode == -signal.SIGINT, finished.stderr
    assert finished.stderr.rstrip().endswith("KeyboardInterrupt")
    assert sorted(path.name for path in scratch.iterdir()) == []


def test_when_every_sampler_but_round_robin_failed_the_report_says_there_is_no_verdict() -> None:
    result = run_engine_bench(
        EngineBenchConfig(
            workloads=[SHORT],
            samplers=[],
            extra=[EngineEntrant("broken", lambda built: Broken())],
            seeds=1,
            processes=1,
            ceilings=False,
        )
    )
    text = format_engine_report(result)
    assert [failure.label for failure in result.failures] == ["broken"]
    assert "Verdict:" not in text
    assert text.endswith(
        "\n\nNo verdict: every sampler compared with round-robin was left out above."
    )
