"""What ``evolve(max_tokens=...)`` changes, with a budget a run never comes near.

Usage::

    python benchmarks/token_budget.py [--workload W ...] [--seeds N] [--reflector R]

Runs engine bench workloads (by default ``lessons``, ``graded`` and ``regressions``) in the real
``evolve()`` (the ``engine`` extra), paired by seed with round-robin as ``bench --engine`` pairs
them, with fixable-first alone and wired (no budget), and three runs under
``max_tokens=10**12``, which the simulated agent (it reports no tokens) never spends:

- ``round-robin + max_tokens``: what the budget alone costs;
- ``fixable-first + wired + max_tokens``: ``wire(sampler, max_tokens=...)``, which tells a card's
  0.0 as a failed re-run while the rounds' spend shows the engine made every re-run;
- ``... (no gain told)``: the same with every 0.0 told as no gain, as ``wire()`` told it under a
  budget before it read the rounds' spend.

agentdescent 0.7.0's budget governor switches the fusion tournament on whenever it can afford it
(``BudgetGovernor.allow_fusion_tournament()`` is true below 75% of the budget), though
``AggregatorConfig.fusion_tournament`` is off by default: the tournament's extra held-out
measurements are what a budget costs here.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from agentdescent_sampling import create, wire
from agentdescent_sampling.bench.engine import (
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS, REFLECTORS, Built

#: A token budget no bench run comes near.
BUDGET = 10**12


def _fixable_first(built: Built) -> Any:
    return create(f"fixable-first:pass_threshold={built.pass_threshold}")


def _budget_alone(sampler: Any, built: Built, options: Mapping[str, Any]) -> dict[str, Any]:
    return {"max_tokens": BUDGET}


def _wired(no_gain: bool) -> Any:
    def wiring(sampler: Any, built: Built, options: Mapping[str, Any]) -> dict[str, Any]:
        wired = wire(sampler, **options, max_tokens=BUDGET)
        if no_gain:  # every 0.0 told without a gain: what the tap did before reading the spend
            tap = wired["policies"].acceptance.tap
            tap.self_verify, tap._limit = None, None
        return wired

    return wiring


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", action="append", choices=sorted(ENGINE_WORKLOADS))
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--reflector", choices=REFLECTORS, default="llm-like")
    args = parser.parse_args()
    extra = [
        EngineEntrant("round-robin + max_tokens", lambda built: create("round-robin"),
                      wiring=_budget_alone),
        EngineEntrant("fixable-first + wired + max_tokens", _fixable_first, wiring=_wired(False)),
        EngineEntrant("... (no gain told)", _fixable_first, wiring=_wired(True)),
    ]  # fmt: skip
    config = EngineBenchConfig(
        samplers=["fixable-first"],
        extra=extra,
        workloads=args.workload or ["lessons", "graded", "regressions"],
        seeds=args.seeds,
        reflector=args.reflector,
        ceilings=False,
    )
    print(format_engine_report(run_engine_bench(config)))


if __name__ == "__main__":
    main()
