"""The ``agentdescent-sampling bench`` subcommand: its arguments, and the call into the library."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import attrs

from .._display import shown
from .._files import checked_path, parse_bounded, reason_of, strict_json, user_path
from ..errors import BenchError
from ..protocol import short_repr
from ..registry import default_registry
from ..spec import SpecLike
from .core import require_matplotlib
from .driver import RolloutLoop
from .engine.metrics import MEASURES
from .engine.workloads import ENGINE_WORKLOADS, REFLECTOR_SUMMARIES, REFLECTORS
from .lineup import LINEUPS, lineup_specs
from .plot import plot_shares
from .report import format_report, to_json
from .runner import BenchConfig, run_bench
from .workloads import MAX_WORKERS, WORKLOADS, Drift, FromLog, Stationary, Workload, read_log

__all__ = ["add_bench_arguments", "bench_command"]

_CHOICES = (*WORKLOADS, "from-log")


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bench`` options to ``parser`` and make :func:`bench_command` its handler."""
    parser.description = (
        "Measure what a sampler buys. With no arguments: the quick artifact bench, the "
        "held-out reward each sampler buys in agentdescent's real evolve() (the engine "
        "extra), per rollout and per agent call, paired by seed with round-robin: "
        "round-robin, fixable-first alone and wired, informative-band and the engine's "
        "DifficultyWeighted on the lessons, regressions-held-out and graded workloads, "
        "6 seeds, ending in a one-line verdict. --engine runs the full artifact bench; "
        "--from-run RUN_DIR runs it on the make-up of your own agentdescent evolve run. "
        "'bench share' measures the share of rollouts that land on informative tasks "
        "instead, on simulated workloads through a rollout loop that calls samplers as the "
        "engine does, so it needs no engine: "
        "the c sweep of difficulty-weighted from agentdescent's task-sampling guide ('Task "
        "sampling - which rollout to spend', the agentdescent.sampling docs) against "
        "round-robin, on stationary and noisy, plus every other installed sampler; it takes "
        "seconds, --workload large minutes. BENCHMARKS.md in the source tree has measured runs."
    )
    parser.add_argument(
        "measure",
        nargs="?",
        choices=("share",),
        help="'share': measure the share of rollouts on informative tasks instead of the "
        "artifact; it cannot show what the engine commits",
    )
    parser.add_argument(
        "--engine",
        action="store_true",
        help="the full artifact bench: every engine workload in agentdescent's real evolve(), "
        "the held-out reward gained against rollouts and agent calls, paired by seed with "
        "round-robin "
        f"(workloads: {', '.join(ENGINE_WORKLOADS)}; default: all, 30 seeds, every built-in "
        "(fixable-first also wired to the engine's evidence), the engine's own "
        "DifficultyWeighted, the learner ceiling and the oracle, one process per CPU; "
        "BENCHMARKS.md gives its cost); needs the engine: from a clone, python -m pip install "
        "'.[engine]', or python -m pip install agentdescent==0.7.0",
    )
    parser.add_argument(
        "--sampler",
        action="append",
        metavar="SPEC",
        help="a sampler to compare: a name, 'name:key=value,...' or a JSON object (read "
        "as the mapping create() takes); repeatable. Round-robin is always added, the "
        "learner ceiling and the oracle with --engine, and the oracle with 'share'. In the "
        "artifact bench, a sampler that takes the engine's evidence (fixable-first) runs "
        "twice: alone, and as '<spec> + wired' to that evidence.",
    )
    parser.add_argument(
        "--lineup",
        choices=sorted(LINEUPS),
        help="a named lineup run beside any --sampler: 'curricula' is the built-ins and the "
        "nine published rules of agentdescent-sampling-curricula, each at its defaults",
    )
    parser.add_argument(
        "--workload",
        action="append",
        type=_workload_name,
        metavar="NAME",
        help=f"a workload to run on, repeatable: {', '.join(ENGINE_WORKLOADS)} "
        f"(default: lessons, regressions-held-out and graded; with --engine: all); with "
        f"'share': {', '.join(_CHOICES)} (default: stationary and noisy, or from-log when "
        f"--from-log is given)",
    )
    parser.add_argument(
        "--from-log",
        type=user_path,
        metavar="FILE",
        help="with 'share': a JSONL log of your own rollouts, a line such as "
        '{"task_id": "t1", "score": 0.0} each (optionally "round" and "pass_threshold"), to '
        "run as the from-log workload; it replays a stationary log, so it shows no fixes (for "
        "the artifact bench on your own run, --from-run)",
    )
    parser.add_argument(
        "--from-run",
        type=user_path,
        metavar="RUN_DIR",
        help="the artifact bench on the make-up of your own agentdescent evolve run: its "
        "directory in the run store (~/.agentdescent/runs/<run_id>), whose recorded rollouts "
        "show which tasks always passed, never passed, flipped after a commit (and after how "
        "many failures) or were mixed; it prints that make-up and what the records cannot "
        "tell, then benches the workload of that make-up and the run's rounds and workers "
        "(with --workload, beside those workloads)",
    )
    parser.add_argument("--budget", type=_whole("--budget", 200, 1_000_000), metavar="N",
                        help="with 'share': rollouts per run (default 200)")  # fmt: skip
    parser.add_argument("--seeds", type=_whole("--seeds", 6, 10_000), metavar="N",
                        help="seeds per sampler and workload (default 6; 30 with "
                        "--engine; 100 with 'share')")  # fmt: skip
    parser.add_argument("--first-seed", type=_whole("--first-seed", 0, 10**9, low=0), default=0,
                        metavar="N", help="the first seed (default 0)")  # fmt: skip
    parser.add_argument(
        "--noise",
        type=_from_0_to_1("a probability", "--noise 0.15"),
        metavar="P",
        help="with 'share': flip each observed reward with probability P, on every workload "
        "(default: the workload's own, 0.15 for noisy and 0 for the others)",
    )
    parser.add_argument("--tasks", type=_whole("--tasks", 10_000, 1_000_000), metavar="N",
                        help="with 'share': tasks per shard list, keeping the informative fraction "
                        "(default: the workload's own; large has 10,000)")  # fmt: skip
    parser.add_argument("--workers", type=_whole("--workers", 4, MAX_WORKERS), metavar="N",
                        help="with 'share': workers, each handed a shard (default 1)")  # fmt: skip
    parser.add_argument(
        "--max-concurrency",
        type=_whole("--max-concurrency", 4, MAX_WORKERS),
        metavar="N",
        help="with 'share': most rollouts in flight at once (default: 1 on the sync path, "
        "--workers on the async path, as the engine does)",
    )
    parser.add_argument(
        "--async",
        "--asynchronous",
        dest="asynchronous",
        action="store_true",
        help="drive the async_evolve() path: fixed shards, a per-worker round_index (with "
        "--engine: every sampler in evolve(asynchronous=True))",
    )
    parser.add_argument(
        "--reflector",
        choices=REFLECTORS,
        help="with the artifact bench, what the simulated agent proposes on a failure "
        f"(default {REFLECTORS[0]}): "
        + "; ".join(f"'{name}', {says}" for name, says in REFLECTOR_SUMMARIES.items()),
    )
    parser.add_argument(
        "--latency",
        type=_from_0_to_1("seconds per agent call", "--latency 0.002"),
        metavar="SECONDS",
        help="with the artifact bench, seconds each call of the simulated agent takes, "
        "without holding the interpreter, as a model's calls do (default: 0.002 with "
        "--async; none on the synchronous path, whose agent answers at once, so a round's "
        "units in flight run nearly one after another)",
    )
    parser.add_argument(
        "--shared-shard",
        action="store_true",
        help="with 'share': hand every worker the whole task list, so in-flight picks can collide",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--plot",
        type=user_path,
        metavar="FILE.png",
        help="also draw the held-out gain against rollouts (with 'share', the share against "
        "the budget) to FILE.png (needs the plot extra)",
    )
    parser.add_argument(
        "--plot-x",
        choices=MEASURES,
        help="with --plot on the artifact bench, what the x axis counts: 'rollouts' (the "
        "default) or 'calls', the agent calls the engine made",
    )
    parser.set_defaults(run=bench_command)


def bench_command(args: argparse.Namespace) -> int:
    """Run the bench the parsed ``args`` describe, print the report; return the exit status.

    Raises:
        SamplerError: bad input (an unknown sampler, an unreadable log, a missing
            plot extra), or a run of round-robin that failed (another sampler's failure
            leaves it out of the report, and the status is 1).
    """
    if args.plot is not None:
        require_matplotlib()
        _check_plot_path(args.plot)
    samplers: list[SpecLike] = (
        [*lineup_specs(args.lineup, default_registry())] if args.lineup else []
    )
    samplers += [_spec(value) for value in args.sampler or ()]
    if args.measure != "share":
        from .engine.command import engine_command  # the engine bench's own module

        return engine_command(args, samplers)
    if args.from_run is not None:
        raise BenchError(
            f"--from-run {str(args.from_run)!r} runs the artifact bench on your run's make-up; "
            f"the share measure reads your own rollouts from a JSONL log instead: drop 'share', "
            f"or give --from-log FILE"
        )
    given = [f"--{key.replace('_', '-')} {getattr(args, key)}" for key in
             ("reflector", "plot_x", "latency") if getattr(args, key) is not None
             ] + ["--engine"] * args.engine  # fmt: skip
    if given:
        raise BenchError(
            f"{given[0]} applies to the artifact bench, not to 'bench share', which has no "
            f"agent and counts no agent calls; drop 'share', or drop {given[0].split()[0]}"
        )
    config = BenchConfig(
        samplers=samplers or None,
        workloads=_workloads(args),
        loop=RolloutLoop(
            budget=args.budget or 200,
            n_workers=args.workers or 1,
            max_concurrency=args.max_concurrency,
            asynchronous=args.asynchronous,
            shared_shard=args.shared_shard,
        ),
        seeds=args.seeds or 100,
        first_seed=args.first_seed,
    )
    result = run_bench(config, progress=sys.stderr)
    print(json.dumps(to_json(result), indent=2) if args.json else format_report(result))
    if args.plot is not None:
        written = plot_shares(result, args.plot)
        print(f"wrote {shown(str(written), 4096)}", file=sys.stderr)
    return 1 if result.failures else 0  # the report says which sampler failed, and how


def _check_plot_path(plot: Path) -> None:
    """Refuse, before the bench runs, a ``--plot`` path the plot could not be written to."""
    named = short_repr(str(plot), 1000)
    try:  # what no file can be named, before a check below raises about it
        checked_path(plot)
    except ValueError as error:
        raise BenchError(f"--plot {named}: {error}") from None
    if plot.name in ("", ".", "..") or plot.is_dir():
        raise BenchError(
            f"--plot {named} is a directory; give a file in it, such as {str(plot / 'gains.png')!r}"
        )
    if plot.exists() and not plot.is_file():  # /dev/null: not to become /dev/null.png
        raise BenchError(
            f"--plot {named} is not a regular file (a pipe or a device); write the plot to a "
            f"file, such as 'gains.png'"
        )
    written = plot if plot.suffix else plot.with_suffix(".png")  # what the plot is saved as
    if written.is_dir():
        raise BenchError(
            f"--plot {named} is saved as {str(written)!r}, which is a directory; give another name"
        )
    if plot.suffix and plot.suffix.lower() != ".png":  # a bare name gets .png added
        raise BenchError(
            f"--plot {named}: the plot is a PNG image, not {plot.suffix}; give a name ending in "
            f".png, such as {str(plot.with_suffix('.png'))!r}"
        )
    if not plot.parent.is_dir():
        raise BenchError(
            f"--plot {named}: the directory {str(plot.parent)!r} does not exist; create it or "
            f"write the plot elsewhere"
        )
    if not os.access(plot.parent, os.W_OK | os.X_OK):
        raise BenchError(
            f"--plot {named}: the directory {str(plot.parent)!r} is not writable by this user; "
            f"write the plot elsewhere"
        )
    # The file itself, where a symlink points: the probe made there is removed, not the link.
    probe = Path(os.path.realpath(written))
    existed = probe.exists()
    if existed and not probe.is_file():  # a FIFO would block the probe until read
        raise BenchError(
            f"--plot {named}: {str(written)!r} is not a regular file (a pipe or a device); "
            f"write the plot to a file"
        )
    try:  # the directory may still refuse it: a read-only file, or a mount such as /proc
        with probe.open("ab"):
            pass
    except OSError as error:
        raise BenchError(
            f"--plot {named}: {str(written)!r} cannot be written ({reason_of(error)}); write "
            f"the plot elsewhere"
        ) from None
    if not existed:
        probe.unlink(missing_ok=True)


def _spec(value: str) -> SpecLike:
    """A JSON object is a mapping spec; anything else is a spec string for parse_spec."""
    if not value.lstrip().startswith("{"):
        return value
    try:
        mapping = parse_bounded(value, strict_json)
    except ValueError as error:
        raise BenchError(
            f"--sampler {short_repr(value)} starts like a JSON object but is not valid JSON "
            f"({error}); "
            f'write it as \'{{"name": "difficulty-weighted", "c": 0.1}}\' or as '
            f"'difficulty-weighted:c=0.1'"
        ) from None
    return mapping  # type: ignore[no-any-return]  # parse_spec checks the shape


def _workloads(args: argparse.Namespace) -> tuple[Workload, ...]:
    engine_only = sorted(set(args.workload or ()) - set(_CHOICES))
    if engine_only:
        raise BenchError(
            f"--workload {engine_only[0]} is a workload of the artifact bench; drop 'share' "
            f"to run it, or choose one of {', '.join(_CHOICES)}"
        )
    names: list[str] = args.workload or (["from-log"] if args.from_log else ["stationary", "noisy"])
    if args.from_log is not None and "from-log" not in names:
        names.append("from-log")
    chosen: list[Stationary | Drift | FromLog] = []
    for name in dict.fromkeys(names):
        if name == "from-log":
            if args.from_log is None:
                raise BenchError(
                    "--workload from-log needs the log: add --from-log FILE, a JSONL file with a "
                    'line such as {"task_id": "t1", "score": 0.0} per rollout'
                )
            chosen.append(read_log(args.from_log))
        else:
            preset = WORKLOADS[name]
            assert isinstance(preset, (Stationary, Drift))  # for mypy: the presets are
            chosen.append(preset)
    return tuple(_adjusted(workload, args) for workload in chosen)


def _adjusted(
    workload: Stationary | Drift | FromLog, args: argparse.Namespace
) -> Stationary | Drift | FromLog:
    if args.noise is not None:
        workload = attrs.evolve(workload, noise=args.noise)
    if args.tasks is not None:
        if isinstance(workload, FromLog):
            raise BenchError(
                f"--tasks {args.tasks}: the from-log workload's tasks come from the log; "
                f"--tasks applies to {', '.join(WORKLOADS)}"
            )
        workload = workload.with_tasks(args.tasks)
    return workload


def _workload_name(value: str) -> str:
    if value not in _CHOICES and value not in ENGINE_WORKLOADS:
        raise argparse.ArgumentTypeError(
            f"unknown workload {value!r}; expected one of {', '.join(ENGINE_WORKLOADS)} "
            f"(with 'share': {', '.join(_CHOICES)}), for example --workload lessons"
        )
    return value


def _whole(option: str, example: int, high: int, low: int = 1) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high``: the bounds keep a typo from running for
    hours or filling memory before anything is reported."""

    def parse(value: str) -> int:
        # ASCII digits only: int() takes "1_0", " 7 " and other scripts' digits too.
        number = int(value) if re.fullmatch(r"[0-9]{1,20}", value) else low - 1
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(
                f"expected a whole number from {low} to {high:,}, got {short_repr(value, 40)}; "
                f"for example {option} {example}"
            )
        return number

    return parse


def _from_0_to_1(expected: str, example: str) -> Callable[[str], float]:
    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0.0 <= number <= 1.0:  # NaN fails this comparison too
            raise argparse.ArgumentTypeError(
                f"expected {expected} from 0 to 1, got {short_repr(value, 40)}; for example "
                f"{example}"
            )
        return number

    return parse
