"""What knowing at once which failure made a fix could buy on the asynchronous path: a bound.

Usage::

    python benchmarks/async_fix_bound.py [--seeds 30] [--first-seed 0] [--workload W ...]

On ``evolve(asynchronous=True)`` a worker picks again as soon as its rollout returns, while the
card of its last failure still waits at the gate; wired ``fixable-first`` then re-runs a lesson
whose rule is already made and spends a proposal, a self-verify run and a gate measurement on
it. The ``told-fix`` entrant is ``fixable-first``, wired, also told from the workload's plan, at
the moment a task fails, whether that failure made its fix (which no sampler can know: the
engine reports a card only when the merger gates or discards it), and it passes over that task
until the card's gate decision (``evidence()``) or discard (``settle()``, which the engine calls
on a sampler that has it). Runs the engine bench on the asynchronous path beside round-robin and
``fixable-first`` alone and wired (the ``engine`` extra).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from agentdescent_sampling import FixableFirst
from agentdescent_sampling.bench.engine import (
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine.lineup import WIRED
from agentdescent_sampling.bench.engine.workloads import Built


class ToldFix(FixableFirst):
    """fixable-first, told which failure made its task's fix and holding it until its card is
    gated or discarded."""

    def __init__(self, built: Built) -> None:
        super().__init__(pass_threshold=built.pass_threshold)
        self.plan = built.agent.by_id
        self.held: set[str] = set()
        self.failures: dict[str, int] = {}

    def record(self, task_id: str, score: float) -> None:
        super().record(task_id, score)
        if score < self.pass_threshold:
            failed = self.failures[task_id] = self.failures.get(task_id, 0) + 1
            plan = self.plan[task_id]
            if plan.rule and failed % plan.failures_needed == 0:  # the reflector's rule
                self.held.add(task_id)

    def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
        super().evidence(task_id, gain, committed)
        self.held.discard(task_id)

    def settle(self, card: Any) -> None:
        """The engine discarded ``card``: its task waits for nothing now."""
        for task in card.trajectory_refs:
            self.held.discard(getattr(task, "id", task))

    def _waiting(self, size: int, in_shard: Callable[[str], bool]) -> set[str]:
        waiting = super()._waiting(size, in_shard)
        held = waiting | self.held
        return held if sum(map(in_shard, held)) < size else waiting


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workload", action="append")
    args = parser.parse_args()
    wiring = WIRED[0][2]
    config = EngineBenchConfig(
        workloads=args.workload or ["lessons", "regressions", "regressions-held-out"],
        samplers=["fixable-first"],
        extra=[EngineEntrant("told-fix + wired", ToldFix, wiring=wiring)],
        seeds=args.seeds,
        first_seed=args.first_seed,
        ceilings=False,
        asynchronous=True,
    )
    print(format_engine_report(run_engine_bench(config)))


if __name__ == "__main__":
    main()
