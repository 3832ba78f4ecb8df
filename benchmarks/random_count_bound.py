"""A floor under any sampler's rollouts, with rules on the k-th failure or at a random one.

Usage::

    python benchmarks/random_count_bound.py [--seeds 30] [--first-seed 0] [--workload W ...]
        [--counts {exact,random} ...]

Issue #23's median targets were set with the ``llm-like`` reflector, whose rule for a lesson
comes on exactly its ``k``-th failure (``exact``). A real model's reflector is closer to
``llm-like-random``: a rule on each failure with chance ``1/k``, whatever came before
(``random``). Could arithmetic alone put a target out of reach there? This computes how few
rollouts a sampler could need to reach 75% of the attainable held-out gain on each engine
workload, in a model told more than any sampler is:

- **each task's kind at its first look**: a lesson, with its ``k`` and whether its rule breaks a
  passing task, or a task with nothing to teach (always-pass or hopeless); so no rollout after
  a task's first is spent on one with nothing to teach. Before its first look a task is as
  likely as another to be any of those left (a sampler that reads nothing from task names);
- **each fix at once**, counting at once: no gate, no round to wait for, no shard, no pick in
  flight; a flaky lesson's lucky pass never wastes a rollout;
- **where each break is**: a broken victim's patch costs one rollout (the patch comes on its
  first failure with either reflector), and a victim not yet looked at when it breaks is patched
  by its first look.

Dynamic programming over what it has found (tasks not yet looked at, by kind, exchangeable;
lessons found and not yet fixed, by ``k`` and, at exact counts, by the failures they have
taken; victims waiting for their patch) gives the fewest expected rollouts until the held-out
units behind 75% of the gain are in: a rule is one unit (a breaker's held-out twin outweighs its
victim's by one), a patch the victim's weight. At random counts a failed retry leaves the state
as it was, so the best action there is to retry the same lesson until its rule comes: ``k``
rollouts expected. ``graded`` is counted in rules, not in its score bands.

Told more and held to less, no sampler needs fewer rollouts in expectation. Round-robin's
mean over the floor bounds the ratio of means any sampler can reach; the median of per-seed
ratios (round-robin's rollouts on a seed, in the real ``evolve()``, over that seed's floor) is
shown beside it, on the bench's footing, though a sampler can beat a floor on a seed by luck.
Needs the ``engine`` extra for round-robin's runs; the floors take about a minute.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from typing import NamedTuple

from agentdescent_sampling import create
from agentdescent_sampling.bench.engine import ENGINE_WORKLOADS
from agentdescent_sampling.bench.engine.run import run_engine
from agentdescent_sampling.bench.engine.workloads import EngineWorkload, _plan

#: What a lesson is, for the floor: the failures its rule takes (``k``), and the held-out
#: units its victim's patch restores (0: its rule breaks nothing).
Kind = tuple[int, int]

FRACTION = 0.75


class MakeUp(NamedTuple):
    """One seed's train tasks as the floor sees them."""

    lessons: tuple[tuple[Kind, int], ...]  # each kind of lesson and how many there are
    others: int  # tasks with nothing to teach: always-pass (victims included) and hopeless
    goal: int  # held-out units behind 75% of the gain
    passing: int = 0  # of the others, always-pass tasks and victims (a victim may be any)

    @classmethod
    def of(cls, workload: EngineWorkload, seed: int, fraction: float = FRACTION) -> MakeUp:
        train, _ = _plan(workload, seed)
        kinds = Counter(
            (plan.failures_needed, workload.victim_weight if plan.breaks else 0)
            for plan in train
            if plan.kind == "lesson"
        )
        units = workload.lessons + workload.regressions * workload.victim_weight
        goal = math.ceil(fraction * units - 1e-9)
        others = len(train) - workload.lessons
        return cls(tuple(sorted(kinds.items())), others, goal, others - workload.never)


def floor(make_up: MakeUp, exact: bool) -> float:
    """The fewest expected rollouts to ``make_up.goal`` held-out units, told what the module
    docstring says, with rules on exactly the ``k``-th failure (``exact``) or at random."""
    kinds = [kind for kind, _ in make_up.lessons]
    # A found lesson's stage: its kind and, at exact counts, the failures it has taken; at
    # random counts every found lesson of a kind is alike (stage 1).
    stages = [
        (i, f) for i, (k, _) in enumerate(kinds) if k > 1 for f in range(1, k if exact else 2)
    ]
    index = {stage: s for s, stage in enumerate(stages)}
    patch = max((weight for _, weight in kinds), default=0)
    breakers = [weight > 0 for _, weight in kinds]

    def bump(counts: tuple[int, ...], at: int, by: int) -> tuple[int, ...]:
        return (*counts[:at], counts[at] + by, *counts[at + 1 :])

    @cache
    def value(
        untried: tuple[int, ...], rest: int, passing: int, found: tuple[int, ...], waiting: int
    ) -> float:
        """Expected rollouts to the goal from here: lessons not looked at (by kind), others
        not looked at (``passing`` of them always-pass), found lessons not yet fixed (by
        stage), victims waiting for a patch."""
        fixed = [n - u for (_, n), u in zip(make_up.lessons, untried, strict=True)]
        for (i, _), count in zip(stages, found, strict=True):
            fixed[i] -= count
        held = sum(n * (1 + kind[1]) for n, kind in zip(fixed, kinds, strict=True))
        held -= waiting * patch
        if held >= make_up.goal:
            return 0.0

        def done(untried: tuple[int, ...], found: tuple[int, ...], i: int) -> float:
            """The value once a lesson of kind ``i`` is fixed (its victim, if any, waits; a
            victim not yet looked at is patched by its first look, so it leaves the others)."""
            if not breakers[i]:
                return value(untried, rest, passing, found, waiting)
            looked = value(untried, rest, passing, found, waiting + 1)
            if not passing:
                return looked
            unseen = value(untried, rest - 1, passing - 1, found, waiting + 1)
            # The victims of the breakers fixed are known; the next may be any other passing task.
            suspects = make_up.passing - sum(n for n, b in zip(fixed, breakers, strict=True) if b)
            return (passing * unseen + (suspects - passing) * looked) / suspects

        best = math.inf
        if waiting:  # a victim's patch: one rollout
            best = 1 + value(untried, rest, passing, found, waiting - 1)
        for s, (i, f) in enumerate(stages):
            if not found[s]:
                continue
            k, less = kinds[i][0], bump(found, s, -1)
            if not exact:  # retried until its rule comes: k rollouts expected
                best = min(best, k + done(untried, less, i))
            elif f + 1 == k:
                best = min(best, 1 + done(untried, less, i))
            else:
                later = bump(less, index[(i, f + 1)], 1)
                best = min(best, 1 + value(untried, rest, passing, later, waiting))
        left = sum(untried) + rest
        if left:
            expected = 1.0
            if passing:
                expected += passing / left * value(untried, rest - 1, passing - 1, found, waiting)
            if rest > passing:
                expected += (
                    (rest - passing) / left * value(untried, rest - 1, passing, found, waiting)
                )
            for i, count in enumerate(untried):
                if not count:
                    continue
                k, fewer, share = kinds[i][0], bump(untried, i, -1), count / left
                if k == 1:
                    expected += share * done(fewer, found, i)
                    continue
                more = bump(found, index[(i, 1)], 1)
                if exact:
                    expected += share * value(fewer, rest, passing, more, waiting)
                else:  # the first failure finds the rule with chance 1/k
                    missed = value(fewer, rest, passing, more, waiting)
                    expected += share * (done(fewer, found, i) / k + missed * (k - 1) / k)
            best = min(best, expected)
        return best

    start = tuple(n for _, n in make_up.lessons)
    limit = sys.getrecursionlimit()  # each first look recurses once: raised for this call only
    sys.setrecursionlimit(max(limit, 8 * (make_up.others + 100)))
    try:
        return value(start, make_up.others, make_up.passing, (0,) * len(stages), 0)
    finally:
        sys.setrecursionlimit(limit)
        value.cache_clear()


#: Each floor's reflector: rules on exactly the k-th failure, or on each with chance 1/k.
COUNTS = {"exact": "llm-like", "random": "llm-like-random"}


def round_robin_rollouts(job: tuple[str, int, str], fraction: float = FRACTION) -> int:
    """Round-robin's rollouts to 75% (``fraction``) of the gain on one seed, in the real
    ``evolve()`` (the budget if it never got there, as the bench counts a censored run)."""
    name, seed, reflector = job
    workload = ENGINE_WORKLOADS[name]

    def make(built: object) -> object:
        return create("round-robin")

    run = run_engine(workload, make, seed, reflector=reflector)  # type: ignore[arg-type]
    reached = run.rollouts_to(fraction)
    return workload.budget if reached is None else min(reached, workload.budget)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workload", action="append", choices=list(ENGINE_WORKLOADS))
    parser.add_argument("--counts", action="append", choices=list(COUNTS), help="default: both")
    args = parser.parse_args(argv)
    names = args.workload or list(ENGINE_WORKLOADS)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    counts = args.counts or list(COUNTS)
    jobs = [(name, seed, COUNTS[c]) for c in counts for name in names for seed in seeds]
    with ProcessPoolExecutor() as pool:
        measured = dict(zip(jobs, pool.map(round_robin_rollouts, jobs, chunksize=4), strict=True))
    print(
        f"Rollouts to {FRACTION:.0%} of the gain, seeds {seeds[0]}-{seeds[-1]}: the floor (told "
        "each task's kind at its first look and each fix at once; see the docstring), "
        "round-robin's mean in the engine, and round-robin over the floor: the ratio of means "
        "and the median of per-seed ratios. No sampler's expected rollouts are below the floor."
    )
    floors: dict[tuple[MakeUp, bool], float] = {}
    for c in counts:
        exact = c == "exact"
        print(f"\nrules {'on the k-th failure' if exact else 'at a random failure'} "
              f"(reflector {COUNTS[c]})")  # fmt: skip
        print(f"{'workload':<22}{'floor':>8}{'round-robin':>13}{'ratio':>8}{'median':>8}")
        for name in names:
            workload = ENGINE_WORKLOADS[name]
            per_seed, rr = [], []
            for seed in seeds:
                make_up = MakeUp.of(workload, seed)
                if (make_up, exact) not in floors:
                    floors[(make_up, exact)] = floor(make_up, exact)
                per_seed.append(floors[(make_up, exact)])
                rr.append(measured[(name, seed, COUNTS[c])])
            mean_floor, mean_rr = statistics.fmean(per_seed), statistics.fmean(rr)
            median = statistics.median(r / f for r, f in zip(rr, per_seed, strict=True))
            print(f"{name:<22}{mean_floor:>8.2f}{mean_rr:>13.2f}{mean_rr / mean_floor:>7.2f}x"
                  f"{median:>7.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
