"""Where a sampler's rollouts go before it reaches 75% (or ``--mark``) of the attainable gain.

Usage::

    python benchmarks/where_rollouts_go.py [--workload W] [--sampler NAME] [--seeds N]
        [--wired] [--async] [--reflector NAME]
        [--mark 0.75] [--first-seed 0]

Runs the engine bench's workload in the real ``evolve()`` (the ``engine`` extra) and sorts each
rollout before the run first reached 75% of the gain by what it was spent on: a solved or a
hopeless task seen for the first time, a hopeless task's later failures, a lesson's failures
(apart, those after the failure that made its rule: the rule was not yet merged, or was
refused), a pass that confirmed a fix (or a lucky one), a re-test of a solved task, a regression
victim. Prints the mean count per run of each. ``--wired`` hands the sampler the engine's
evidence (``wire()``), as the bench's ``+ wired`` rows do; ``--async`` runs
``evolve(asynchronous=True)``.
"""

from __future__ import annotations

import argparse
import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from agentdescent_sampling import (
    InvalidSamplerConfig,
    TaskSampler,
    create,
    wire,
)
from agentdescent_sampling.bench.engine.run import run_engine
from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS, REFLECTORS, Built


class Spy:
    """Passes everything to the sampler and keeps the outcomes in order."""

    def __init__(self, sampler: TaskSampler) -> None:
        self.sampler = sampler
        self.log: list[tuple[str, float]] = []

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return self.sampler.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        self.log.append((task_id, score))
        self.sampler.record(task_id, score)


def with_threshold(name: str, threshold: float) -> TaskSampler:
    """The named sampler with the workload's pass threshold, if it takes one."""
    try:
        return create({"name": name, "pass_threshold": threshold})
    except InvalidSamplerConfig:
        return create(name)


def spy_on(name: str, built: Built, spies: list[tuple[Spy, Built]]) -> TaskSampler:
    """A fresh sampler for one run, watched by a Spy kept in ``spies``."""
    spies.append((Spy(with_threshold(name, built.pass_threshold)), built))
    return spies[-1][0]


def kind_of_rollout(plan: object, passed: bool, seen: int, failed: int, found: int | None) -> str:
    """What one rollout was spent on, given the task's plan and its history: ``seen`` rollouts
    and ``failed`` failures before it, and ``found``, the failure (1 for the first) on which
    the reflector first proposed the task's rule, or None if it never did."""
    kind = plan.kind  # type: ignore[attr-defined]
    if kind == "always":
        return "solved, first look" if seen == 0 else "solved, re-test"
    if kind == "never":
        return "hopeless, first failure" if failed == 0 else "hopeless, later failure"
    if kind == "victim":
        return "victim, " + ("pass" if passed else "failure")
    if passed:
        return "lesson, pass (fix confirmed or lucky)"
    if found is not None and failed >= found:
        return "lesson, failure after the one that made its rule"
    return "lesson, failure"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="lessons", choices=sorted(ENGINE_WORKLOADS))
    parser.add_argument("--sampler", default="fixable-first")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--reflector", default=REFLECTORS[0], choices=REFLECTORS)
    parser.add_argument("--wired", action="store_true", help="hand it the engine's evidence")
    parser.add_argument(
        "--mark", type=float, default=0.75, help="the share of the gain to count up to"
    )
    parser.add_argument(
        "--async", dest="asynchronous", action="store_true", help="evolve(asynchronous=True)"
    )
    args = parser.parse_args()

    def wiring(spy: Any, built: Built, options: Mapping[str, Any]) -> dict[str, Any]:
        # spy: the Spy the run is handed; it records, and wire() tells the sampler inside it.
        return {**wire(spy.sampler, **options), "task_sampler": spy} if args.wired else {}

    workload = ENGINE_WORKLOADS[args.workload]
    totals: Counter[str] = Counter()
    reached = 0
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        spies: list[tuple[Spy, Built]] = []
        run = run_engine(
            workload,
            functools.partial(spy_on, args.sampler, spies=spies),
            seed,
            reflector=args.reflector,
            wiring=wiring,
            asynchronous=args.asynchronous,
        )
        spy, built = spies[0]
        until = run.rollouts_to(args.mark) or len(spy.log)
        reached += until
        seen: Counter[str] = Counter()
        failed: Counter[str] = Counter()
        for task_id, score in spy.log[:until]:
            passed = score >= built.pass_threshold
            plan = built.agent.by_id[task_id]
            found = built.agent.found.get(task_id)
            totals[kind_of_rollout(plan, passed, seen[task_id], failed[task_id], found)] += 1
            seen[task_id] += 1
            failed[task_id] += not passed
    label = args.sampler + (" + wired" if args.wired else "")
    label += ", asynchronous" if args.asynchronous else ""
    last = args.first_seed + args.seeds - 1
    print(f"{label} on {args.workload}, seeds {args.first_seed}-{last}: mean rollouts per run "
          f"before {args.mark:.0%} of the gain ({reached / args.seeds:.1f} in all)")  # fmt: skip
    for kind, count in sorted(totals.items()):
        print(f"  {kind:50s} {count / args.seeds:5.1f}")


if __name__ == "__main__":
    main()
