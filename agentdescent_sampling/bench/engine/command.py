"""``agentdescent-sampling bench --engine``: the parsed options handed to the engine bench."""

from __future__ import annotations

import argparse
import json
import sys

from ...spec import SpecLike
from ..errors import BenchError
from .plot import plot_gains
from .report import engine_to_json, format_engine_report
from .runner import EngineBenchConfig, run_engine_bench
from .workloads import ENGINE_WORKLOADS, REFLECTORS

__all__ = ["engine_command"]

#: Options of the simulated bench that mean nothing to the engine bench.
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
    """Run the engine bench the parsed ``args`` describe and print the report.

    Raises:
        BenchError: an option of the simulated bench was given, agentdescent is not
            installed, or a sampler failed during a run.
        SamplerError: a sampler spec is bad.
    """
    given = [option for key, option in _SIMULATED_ONLY.items() if getattr(args, key) not in
             (None, False)]  # fmt: skip
    if given:
        raise BenchError(
            f"{given[0]} does not apply with --engine: each engine workload fixes its own "
            f"rollouts, workers and concurrency (see --workload); drop {given[0]}, or drop "
            f"--engine to run the simulated bench"
        )
    names = list(dict.fromkeys(args.workload or ENGINE_WORKLOADS))
    simulated = [name for name in names if name not in ENGINE_WORKLOADS]
    if simulated:
        raise BenchError(
            f"--workload {simulated[0]} is a simulated workload; with --engine choose from "
            f"{', '.join(ENGINE_WORKLOADS)}, or drop --engine"
        )
    config = EngineBenchConfig(
        workloads=names,
        samplers=samplers or None,
        seeds=args.seeds or 30,
        first_seed=args.first_seed,
        reflector=args.reflector or REFLECTORS[0],
        asynchronous=args.asynchronous,
    )
    result = run_engine_bench(config, progress=sys.stderr)
    print(
        json.dumps(engine_to_json(result), indent=2) if args.json else format_engine_report(result)
    )
    if args.plot is not None:
        written = plot_gains(result, args.plot, args.plot_x or "rollouts")
        print(f"wrote {written}", file=sys.stderr)
    return 0
