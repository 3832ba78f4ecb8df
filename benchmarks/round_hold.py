"""Whether a task that failed should wait for its round's end, with an agent that takes time.

Usage::

    python benchmarks/round_hold.py [--seeds 30] [--latency 0.002] [--max-concurrency N]
        [--reflector NAME] [--workload W ...]

On the synchronous path the engine merges a round's proposals at its end. Wired
``fixable-first`` passes over a task that failed earlier in the round while another task is
free (its re-run would test the artifact that just failed it); ``no-hold + wired`` is the same
sampler without that rule, passing over the tasks in flight only. Both run in the engine bench
beside round-robin on ``concurrent-shared`` (four workers on one shared shard) by default, but
with every call of the simulated agent taking ``--latency`` seconds, as a model's calls do: the
bench's own synchronous agent answers at once, so a round's "four in flight" units run nearly
one after another. ``--max-concurrency`` sets how many of a round's units run at once (1: one
at a time). Needs the ``engine`` extra.
"""

from __future__ import annotations

import argparse
from typing import Any

import attrs

from agentdescent_sampling import FixableFirst
from agentdescent_sampling.bench.engine import (
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine.lineup import WIRED
from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS, REFLECTORS, Built


@attrs.define(eq=False)
class NoHold(FixableFirst):
    """fixable-first that passes over the tasks in flight only, as before the rule."""

    def _waiting(self, size: int, in_shard: Any) -> set[str]:
        return self._pending.tasks(self._picks + 1)


def config(args: argparse.Namespace) -> EngineBenchConfig:
    """The bench run the arguments ask for."""
    workloads = [ENGINE_WORKLOADS[name] for name in args.workload]
    if args.max_concurrency:
        workloads = [attrs.evolve(w, max_concurrency=args.max_concurrency) for w in workloads]

    def make(built: Built) -> NoHold:
        return NoHold(pass_threshold=built.pass_threshold)

    return EngineBenchConfig(
        workloads=workloads,
        samplers=["fixable-first"],
        seeds=args.seeds,
        reflector=args.reflector,
        latency=args.latency,
        ceilings=False,
        extra=[EngineEntrant("no-hold + wired", make, wiring=WIRED[0][2])],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--latency", type=float, default=0.002, help="seconds per agent call")
    parser.add_argument("--max-concurrency", type=int, default=0, help="0: the workload's")
    parser.add_argument("--reflector", default=REFLECTORS[0], choices=REFLECTORS)
    parser.add_argument("--workload", action="append", choices=sorted(ENGINE_WORKLOADS))
    args = parser.parse_args()
    args.workload = args.workload or ["concurrent-shared"]
    print(format_engine_report(run_engine_bench(config(args))))


if __name__ == "__main__":
    main()
