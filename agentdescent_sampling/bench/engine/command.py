"""``agentdescent-sampling bench`` and ``bench --engine``: the parsed options handed to the
artifact bench, quick or full."""

from __future__ import annotations

import argparse
import json
import sys

from ...errors import BenchError
from ...spec import SpecLike
from .plot import plot_gains
from .report import engine_to_json, format_engine_report
from .runner import QUICK_WORKLOADS, EngineBenchConfig, run_engine_bench
from .workloads import ENGINE_WORKLOADS, REFLECTORS

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
    quick one (:meth:`EngineBenchConfig.quick`). Options given override either.

    Raises:
        BenchError: an option of the share measure was given, agentdescent is not
            installed, or a sampler failed during a run.
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
    names = list(dict.fromkeys(args.workload or (ENGINE_WORKLOADS if args.engine
                                                 else QUICK_WORKLOADS)))  # fmt: skip
    simulated = [name for name in names if name not in ENGINE_WORKLOADS]
    if simulated:
        raise BenchError(
            f"--workload {simulated[0]} is a workload of the share measure; run "
            f"agentdescent-sampling bench share --workload {simulated[0]}, or choose from "
            f"{', '.join(ENGINE_WORKLOADS)}"
        )
    options = {
        "workloads": names,
        "first_seed": args.first_seed,
        "reflector": args.reflector or REFLECTORS[0],
        "asynchronous": args.asynchronous,
    }
    if samplers:
        options["samplers"] = samplers
    if args.seeds:
        options["seeds"] = args.seeds
    config = EngineBenchConfig(**options) if args.engine else EngineBenchConfig.quick(**options)
    result = run_engine_bench(config, progress=sys.stderr)
    if args.json:
        print(json.dumps(engine_to_json(result), indent=2))
    else:
        print(format_engine_report(result))
        if not args.engine:
            print(
                "The full artifact bench, every workload and built-in over 30 seeds:\n"
                "  agentdescent-sampling bench --engine\n"
                "The share of rollouts on informative tasks, which needs no engine:\n"
                "  agentdescent-sampling bench share"
            )
    if args.plot is not None:
        written = plot_gains(result, args.plot, args.plot_x or "rollouts")
        print(f"wrote {written}", file=sys.stderr)
    return 0
