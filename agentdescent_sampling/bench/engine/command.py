"""``agentdescent-sampling bench`` and ``bench --engine``: the parsed options handed to the
artifact bench, quick or full."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import warnings

from ..._display import shown
from ...errors import BenchError
from ...registry import default_registry
from ...spec import SpecLike
from ..core import LEARNER_CEILING, ORACLE, bare_name
from .fromrun import format_make_up, read_run
from .lineup import engine_lineup
from .plot import plot_gains
from .report import engine_to_json, format_engine_report
from .runner import QUICK_WORKLOADS, EngineBenchConfig, run_engine_bench
from .workloads import ENGINE_WORKLOADS, REFLECTORS, EngineWorkload, check_path

__all__ = ["engine_command"]

#: Options of the share measure that mean nothing to the artifact bench.
_SIMULATED_ONLY = {
    "from_log": "--from-log",
    "budget": "--budget",
    "noise": "--noise",
    "tasks": "--tasks",
    "workers": "--workers",
    "max_concurrency": "--max-concurrency",
    "shared_shard": "--shared-shard",
}


def engine_command(args: argparse.Namespace, samplers: list[SpecLike]) -> int:
    """Run the artifact bench the parsed ``args`` describe and print the report.

    With ``--engine``, the full bench (:class:`EngineBenchConfig`'s defaults); without, the
    quick one (:meth:`EngineBenchConfig.quick`). Options given override either. With
    ``--from-run``, the run's make-up is printed first and benched as the ``from-run``
    workload (:mod:`~agentdescent_sampling.bench.engine.fromrun`), alone or beside the
    ``--workload`` ones, by ``evolve(asynchronous=True)`` if the run went that way.

    Returns:
        0, or 1 if a sampler failed during a run: the report says which, where, and how to
        rerun it.

    Raises:
        BenchError: an option of the share measure was given, or one the quick bench would
            drop, the ``--from-run`` directory is not a readable run or shows nothing to
            learn, agentdescent is not installed, or a run of round-robin failed.
        SamplerError: a sampler spec is bad.
    """
    given = [option for key, option in _SIMULATED_ONLY.items() if getattr(args, key) not in
             (None, False)]  # fmt: skip
    if given:
        raise BenchError(
            f"{given[0]} is an option of the share measure; the artifact bench's workloads fix "
            f"their own rollouts, workers and concurrency (see --workload): drop {given[0]}, or "
            f"run agentdescent-sampling bench share {given[0]} ..."
        )
    if args.plot_x is not None and args.plot is None:
        raise BenchError(
            f"--plot-x {args.plot_x} sets the plot's axis, and no plot was asked for: add "
            f"--plot FILE.png, or drop --plot-x"
        )
    names = [bare_name(given) for given in samplers]  # "oracle" and {"name": "oracle"} alike
    ceilings = [name for name in names if name in (ORACLE, LEARNER_CEILING)]
    if ceilings and not args.engine:
        raise BenchError(
            f"--sampler {ceilings[0]} runs only in the full bench, which adds it unasked: add "
            f"--engine, or drop --sampler {ceilings[0]}"
        )
    if samplers and not args.engine and all(name == "round-robin" for name in names):
        raise BenchError(
            "round-robin is the baseline every run compares with, and is always run; name "
            "another sampler to compare (for example --sampler fixable-first), or drop --sampler"
        )
    default = () if args.from_run else ENGINE_WORKLOADS if args.engine else QUICK_WORKLOADS
    names = list(dict.fromkeys(args.workload or default))
    simulated = [name for name in names if name not in ENGINE_WORKLOADS]
    if simulated:
        raise BenchError(
            f"--workload {simulated[0]} is a workload of the share measure; run "
            f"agentdescent-sampling bench share --workload {simulated[0]}, or choose from "
            f"{', '.join(ENGINE_WORKLOADS)}"
        )
    workloads: list[EngineWorkload | str] = []
    asynchronous = args.asynchronous
    run = None if args.from_run is None else read_run(args.from_run)
    made_up = None if run is None else run.workload()
    if run is not None and made_up is not None:
        workloads.append(made_up)
        # The run's own path: an asynchronous run is benched asynchronously, unasked.
        asynchronous = asynchronous or run.asynchronous
    reflector = args.reflector or REFLECTORS[0]
    try:
        check_path(reflector, asynchronous)
    except ValueError as error:
        if asynchronous == args.asynchronous:
            raise BenchError(str(error)) from None
        raise BenchError(
            f"the reflector {reflector!r} runs on the synchronous path only, and a --from-run "
            f"of an asynchronous run is benched asynchronously: choose another --reflector "
            f"(one of {', '.join(r for r in REFLECTORS if r != reflector)})"
        ) from None
    if samplers:  # a misspelt --sampler fails before the make-up is printed, not after
        engine_lineup(samplers, default_registry(), ceilings=False)
    if run is not None and made_up is not None:
        # Before the bench, which takes a while; beside the JSON document, which holds the
        # workload with the notes on its rounds, not this text.
        stream = sys.stderr if args.json else sys.stdout
        print(format_make_up(run, made_up) + "\n", file=stream, flush=True)
    options = {
        "workloads": [*workloads, *names],
        "first_seed": args.first_seed,
        "reflector": reflector,
        "asynchronous": asynchronous,
        "latency": args.latency,
    }
    if samplers:
        options["samplers"] = samplers
    if args.seeds:
        options["seeds"] = args.seeds
    config = EngineBenchConfig(**options) if args.engine else EngineBenchConfig.quick(**options)
    with warnings.catch_warnings():
        # A small run makes a small held-out set, which the make-up above already says;
        # the engine would say it again on every run.
        warnings.filterwarnings("ignore", "the held-out set has only", RuntimeWarning)
        result = run_engine_bench(config, progress=sys.stderr)
    if args.json:
        print(json.dumps(engine_to_json(result), indent=2))
    else:
        print(format_engine_report(result))
        if not args.engine:
            again = f" --from-run {shown(shlex.quote(str(args.from_run)))}" if args.from_run else ""
            what = "this run's make-up" if args.from_run else "every workload"
            print(
                f"The full artifact bench, {what} and every built-in over 30 seeds:\n"
                f"  agentdescent-sampling bench --engine{again}\n"
                "The share of rollouts on informative tasks, which needs no engine:\n"
                "  agentdescent-sampling bench share"
            )
    if args.plot is not None:
        written = plot_gains(result, args.plot, args.plot_x or "rollouts")
        print(f"wrote {shown(str(written), 4096)}", file=sys.stderr)
    return 1 if result.failures else 0  # the report says which sampler failed, and how
