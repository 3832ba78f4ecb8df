"""The engine bench with a reflector that, once it has proposed a task's fix, proposes it again
on every later failure of that task.

Usage::

    python benchmarks/sticky_reflector.py [--seeds 30] [--first-seed 0]
        [--reflector llm-like-wrong] [--workload W ...]

The bench's reflectors find a task's fix on its ``k``-th failure (and every ``k``-th after),
or by chance ``1/k`` on each failure; once found, a fix the gate refused (fused with a wrong
rule, or a breaker whose victim cost what it gained) is found again only ``k`` failures later,
or by chance. A language model shown the same failure again most likely proposes the same rule
at once, as this reflector does. Once a task's fix is found, it writes no more notes or wrong
rules on that task's failures, so it is also wrong a little less often than the bench's own.
This runs round-robin, fixable-first alone and wired, and fixable-first wired before a refused
verified fix counted its task's failures afresh (``refused-as-notes + wired``, from
``regressions_variants.py``) with this reflector, and prints the bench's report. Needs the
``engine`` extra.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agentdescent_sampling.bench.engine import (
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine.workloads import SimulatedReflector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.regressions_variants import VARIANTS, _wired  # after the path

_finds = SimulatedReflector.finds


def _sticky_finds(self: SimulatedReflector, plan: Any, failed: int) -> bool:
    """A fix proposed once is proposed on every later failure of its task."""
    return plan.id in self.found or _finds(self, plan, failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--reflector", default="llm-like-wrong")
    parser.add_argument("--workload", action="append", help="default: every engine workload")
    args = parser.parse_args()
    label = "refused-as-notes + wired"
    make, _ = VARIANTS[label]
    config = EngineBenchConfig(
        **({"workloads": args.workload} if args.workload else {}),
        samplers=["fixable-first"],
        extra=[EngineEntrant(label, make, wiring=_wired)],
        seeds=args.seeds,
        first_seed=args.first_seed,
        reflector=args.reflector,
        ceilings=False,
    )
    # The bench forks its worker processes, so they inherit the sticky reflector.
    SimulatedReflector.finds = _sticky_finds  # type: ignore[method-assign]
    try:
        print(format_engine_report(run_engine_bench(config)))
    finally:
        SimulatedReflector.finds = _finds  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
