"""A floor under any sampler's rollouts where rules come at a random failure, told the make-up only.

Usage::

    python benchmarks/makeup_bound.py [--seeds 30] [--first-seed 0] [--workload W ...]
        [--reveal F ...] [--fraction 0.75]

``benchmarks/random_count_bound.py`` tells its model each task's kind at its first look, and
rules nothing out. A sampler is not told which failing task is hopeless: it must tell a
hopeless task from a lesson whose rule is slow in coming by failing it again. This model is told
what a sampler could learn at best, and no more than that where it matters:

- **the make-up**: how many tasks are hopeless, always-pass, and lessons of each ``k`` (and which
  kinds of lesson break a passing task), but not which task is which;
- **each fix at once**, with its lesson's kind, counting at once (no gate, round, shard or pick in
  flight), and **where each break is** (a broken victim's patch costs one rollout, and a victim
  not yet looked at when it breaks is patched by its first look);
- **a flaky lesson's kind at its first look**: its lucky passes (and, in the engine, a
  self-verify re-run that passes by luck) would tell it from a hopeless task;
- **a failing task's kind at its ``F``-th failure** (``--reveal``, default 3): without
  it the state would be unbounded. Each ``F`` gives a floor; a larger one is told less and
  gives a higher (tighter) floor.

Rules come as ``llm-like-random``'s do: on each failure of an unfixed lesson with chance ``1/k``,
whatever came before. A flaky lesson's lucky pass never wastes a rollout; ``graded`` is counted
in rules. Before its first look a task is as likely as another to be any of those left: the
floor is for a sampler that reads nothing from task ids, as the built-ins do (the bench's ids
name each task's kind). After ``f`` failures without a rule, a lesson of ``k`` is
``(1 - 1/k) ** f`` as likely as a hopeless task to have given them, so the chance that a failing
task is each kind is a sum over the ways of labelling the failing tasks that agree with the
counts. Dynamic programming over those counts (tasks not looked at, failing tasks by failures
taken, kinds found, victims waiting for a patch) gives the fewest expected rollouts until the
held-out units behind 75% (``--fraction``) of the gain are in, as in ``random_count_bound``.

Told more and held to less, no such sampler needs fewer rollouts in expectation than the floor
for any ``F`` (on a given set of seeds, a lucky one can). Round-robin's mean (in the real
``evolve()``, ``llm-like-random``) over the floor bounds the ratio of means such a sampler can
reach in expectation. Needs the ``engine`` extra for round-robin's
runs. A floor takes seconds to minutes, but ``concurrent``'s (48 tasks) takes about 25 minutes
and 12.5 GB at ``F`` = 3; ``sparse``'s state (240 tasks) is too large and is skipped.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache, partial
from pathlib import Path
from typing import NamedTuple

from agentdescent_sampling.bench.engine import ENGINE_WORKLOADS
from agentdescent_sampling.bench.engine.workloads import EngineWorkload, _plan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import random_count_bound  # after the path
from benchmarks.random_count_bound import FRACTION, round_robin_rollouts

#: What a lesson is: the failures its rule takes on average (``k``), the held-out units its
#: victim's patch restores (0: its rule breaks nothing), and whether it passes by luck.
Kind = tuple[int, int, bool]

#: Workloads whose state is too large for this script.
TOO_LARGE = frozenset({"sparse"})


class MakeUp(NamedTuple):
    """One seed's train tasks as this floor is told them."""

    lessons: tuple[tuple[Kind, int], ...]  # each kind of lesson and how many there are
    hopeless: int
    passing: int  # always-pass tasks and victims not yet broken: they pass at their first look
    goal: int  # held-out units behind 75% (or the fraction asked) of the gain

    @classmethod
    def of(cls, workload: EngineWorkload, seed: int, fraction: float = FRACTION) -> MakeUp:
        train, _ = _plan(workload, seed)
        kinds = Counter(
            (
                plan.failures_needed,
                workload.victim_weight if plan.breaks else 0,
                plan.luck > 0 and plan.failures_needed > 1,  # k = 1: known at its first failure
            )
            for plan in train
            if plan.kind == "lesson"
        )
        told = random_count_bound.MakeUp.of(workload, seed, fraction)
        return cls(tuple(sorted(kinds.items())), workload.never, told.passing, told.goal)


def _compositions(total: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every way to share ``total`` among ``len(caps)`` parts, each at most its cap."""
    if not caps:
        if total == 0:
            yield ()
        return
    for first in range(min(total, caps[0]) + 1):
        for rest in _compositions(total - first, caps[1:]):
            yield (first, *rest)


def floor(make_up: MakeUp, reveal: int) -> float:
    """The fewest expected rollouts to ``make_up.goal`` held-out units, told what the module
    docstring says, each failing task's kind at its ``reveal``-th failure."""
    kinds = [kind for kind, _ in make_up.lessons]
    counts = [n for _, n in make_up.lessons]
    # Kinds a failing task may be: hopeless (index 0), then each lesson kind that can fail
    # without its rule (k > 1). A lesson of k = 1 finds its rule at its first failure, and a
    # flaky lesson is told at its first look (its lucky passes would tell it apart).
    slow = [i for i, (k, _, flaky) in enumerate(kinds) if k > 1 and not flaky]
    patch = max((weight for _, weight, _ in kinds), default=0)
    breakers = [kind[1] > 0 for kind in kinds]

    def likelihood(j: int, f: int) -> float:
        """How likely ``f`` failures without a rule are, for the ``j``-th failing kind."""
        return 1.0 if j == 0 else (1 - 1 / kinds[slow[j - 1]][0]) ** f

    def bump(values: tuple[int, ...], at: int, by: int) -> tuple[int, ...]:
        return (*values[:at], values[at] + by, *values[at + 1 :])

    @cache
    def terms(
        f: int, size: int, caps: tuple[int, ...]
    ) -> tuple[tuple[tuple[int, ...], float], ...]:
        """Each labelling of ``size`` tasks with ``f`` failures by kind, with its weight: the
        ways to choose which tasks are which, times how likely each is to have failed so."""
        out = []
        for x in _compositions(size, caps):
            ways = math.factorial(size)
            weight = 1.0
            for j, n in enumerate(x):
                ways //= math.factorial(n)
                weight *= likelihood(j, f) ** n
            if weight > 0:
                out.append((x, ways * weight))
        return tuple(out)

    def convolve(
        total: dict[tuple[int, ...], float], f: int, size: int, caps: tuple[int, ...]
    ) -> dict[tuple[int, ...], float]:
        out: dict[tuple[int, ...], float] = {}
        for t, w in total.items():
            room = tuple(c - n for c, n in zip(caps, t, strict=True))
            for x, v in terms(f, size, room):
                key = tuple(a + b for a, b in zip(t, x, strict=True))
                out[key] = out.get(key, 0.0) + w * v
        return out

    @cache
    def chances(
        failing: tuple[int, ...], left: tuple[int, ...]
    ) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
        """The chance that an untried task, and a task of each failing class, is each kind:
        untried over (hopeless, slow kinds...); failing classes likewise."""
        caps = (left[0], *(left[1 + i] for i in slow))
        zero = (0,) * len(caps)

        def spread(skip: int) -> dict[tuple[int, ...], float]:
            total = {zero: 1.0}
            for g, size in enumerate(failing):
                if g != skip and size:
                    total = convolve(total, g + 1, size, caps)
            return total

        def rest(t: tuple[int, ...]) -> float:
            """1 / the product of factorials of the untried tasks' kind counts."""
            return 1.0 / math.prod(math.factorial(c - n) for c, n in zip(caps, t, strict=True))

        everything = spread(-1)
        norm = sum(w * rest(t) for t, w in everything.items())
        untried = tuple(
            sum(w * rest(t) * (caps[j] - t[j]) for t, w in everything.items()) / norm
            for j in range(len(caps))
        )  # expected untried tasks of each failing kind
        per_class = []
        for g, size in enumerate(failing):
            if not size:
                per_class.append((0.0,) * len(caps))
                continue
            others = spread(g)
            share = [0.0] * len(caps)
            for t, w in others.items():
                room = tuple(c - n for c, n in zip(caps, t, strict=True))
                for x, v in terms(g + 1, size, room):
                    r = w * v * rest(tuple(a + b for a, b in zip(t, x, strict=True)))
                    for j, n in enumerate(x):
                        share[j] += r * n
            per_class.append(tuple(s / norm / size for s in share))
        return untried, tuple(per_class)

    @cache
    def value(
        failing: tuple[int, ...],
        left: tuple[int, ...],
        passing: int,
        known: tuple[int, ...],
        waiting: int,
    ) -> float:
        """Expected rollouts to the goal: failing tasks by failures taken (1..reveal-1); kinds
        not yet found, hopeless first, then each lesson kind; passing tasks not looked at; found
        lessons not yet fixed, by kind; victims waiting for a patch."""
        fixed = [n - lft - kn for n, lft, kn in zip(counts, left[1:], known, strict=True)]
        held = sum(n * (1 + kind[1]) for n, kind in zip(fixed, kinds, strict=True))
        if held - waiting * patch >= make_up.goal:
            return 0.0
        # Passing tasks that may be the victim of the next breaker fixed; the victims of those
        # fixed are known. A victim not yet looked at leaves the untried tasks when it breaks:
        # its first look is its patch.
        suspects = make_up.passing - sum(n for n, b in zip(fixed, breakers, strict=True) if b)

        def fix(
            i: int, failing: tuple[int, ...], left: tuple[int, ...], known: tuple[int, ...]
        ) -> float:
            if not breakers[i]:
                return value(failing, left, passing, known, waiting)
            looked = value(failing, left, passing, known, waiting + 1)
            if not passing:
                return looked
            unseen = value(failing, left, passing - 1, known, waiting + 1)
            return (passing * unseen + (suspects - passing) * looked) / suspects

        best = math.inf
        if waiting:
            best = 1 + value(failing, left, passing, known, waiting - 1)
        for i, n in enumerate(known):  # a found lesson: retried until its rule comes
            if n:
                best = min(best, kinds[i][0] + fix(i, failing, left, bump(known, i, -1)))
        untried_kinds, per_class = chances(failing, left)
        untried = passing + sum(left) - sum(failing)
        if untried:
            expected = 1.0
            if passing:
                expected += passing / untried * value(failing, left, passing - 1, known, waiting)
            share = untried_kinds[0] / untried
            if share:
                expected += share * value(bump(failing, 0, 1), left, passing, known, waiting)
            for i, (k, _, flaky) in enumerate(kinds):
                if k == 1 or flaky:
                    share = left[1 + i] / untried
                    if share:
                        rest = bump(left, 1 + i, -1)
                        expected += share * fix(i, failing, rest, known) / k
                        if k > 1:  # told at its first look
                            found = value(failing, rest, passing, bump(known, i, 1), waiting)
                            expected += share * found * (1 - 1 / k)
                    continue
                share = untried_kinds[1 + slow.index(i)] / untried
                if share:
                    expected += share * (
                        fix(i, failing, bump(left, 1 + i, -1), known) / k
                        + value(bump(failing, 0, 1), left, passing, known, waiting) * (1 - 1 / k)
                    )
            best = min(best, expected)
        for g, size in enumerate(failing):
            if not size:
                continue
            less = bump(failing, g, -1)
            on = bump(less, g + 1, 1) if g + 1 < len(failing) else less
            shares = per_class[g]
            expected = 1.0
            if shares[0]:  # hopeless: fails again, and at the reveal-th failure it is told
                gone = bump(left, 0, -1) if on is less else left
                expected += shares[0] * value(on, gone, passing, known, waiting)
            for j, i in enumerate(slow, start=1):
                if not shares[j]:
                    continue
                k = kinds[i][0]
                if on is less:
                    told = (bump(left, 1 + i, -1), bump(known, i, 1))
                    later = value(on, told[0], passing, told[1], waiting)
                else:
                    later = value(on, left, passing, known, waiting)
                expected += shares[j] * (
                    fix(i, less, bump(left, 1 + i, -1), known) / k + later * (1 - 1 / k)
                )
            best = min(best, expected)
        return best

    start = (0,) * (reveal - 1)
    limit = sys.getrecursionlimit()  # each rollout recurses once: raised for this call only
    total = make_up.hopeless + make_up.passing + sum(counts)
    sys.setrecursionlimit(max(limit, 20 * total * reveal + 1000))
    try:
        return value(start, (make_up.hopeless, *counts), make_up.passing, (0,) * len(kinds), 0)
    finally:
        sys.setrecursionlimit(limit)
        value.cache_clear()
        chances.cache_clear()
        terms.cache_clear()


def _floor_job(job: tuple[MakeUp, int]) -> float:
    return floor(*job)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    names = [name for name in ENGINE_WORKLOADS if name not in TOO_LARGE]
    parser.add_argument("--workload", action="append", choices=names)
    parser.add_argument("--reveal", action="append", type=int, help="default: 3")
    parser.add_argument("--fraction", type=float, default=FRACTION, help="of the gain")
    args = parser.parse_args(argv)
    if not 0 < args.fraction <= 1:
        parser.error(f"--fraction must be above 0 and at most 1 (0.75 is 75%), not {args.fraction}")
    for f in args.reveal or ():
        if f < 2:
            parser.error(f"--reveal must be 2 or more, not {f}: a kind told at the first failure "
                         "is the floor of benchmarks/random_count_bound.py")  # fmt: skip
    names = args.workload or names
    reveals = sorted(set(args.reveal or (3,)))
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    make_ups = {
        (n, s): MakeUp.of(ENGINE_WORKLOADS[n], s, args.fraction) for n in names for s in seeds
    }
    jobs = sorted({(m, f) for m in make_ups.values() for f in reveals}, key=lambda j: -sum(
        (j[0].hopeless, j[0].passing, *(n for _, n in j[0].lessons))))  # fmt: skip
    runs = [(n, s, "llm-like-random") for n in names for s in seeds]
    with ProcessPoolExecutor() as pool:
        floors = dict(zip(jobs, pool.map(_floor_job, jobs), strict=True))
        reached = partial(round_robin_rollouts, fraction=args.fraction)
        measured = dict(zip(runs, pool.map(reached, runs, chunksize=4), strict=True))
    print(
        f"Rollouts to {args.fraction:.0%} of the gain where a rule comes at a random failure "
        f"(llm-like-random), seeds {seeds[0]}-{seeds[-1]}: the floor told the make-up, each fix "
        "at once and a failing task's kind at its F-th failure (see the docstring), round-robin's "
        "mean in the engine, and round-robin's mean over the floor's, the most the ratio of "
        "means of a sampler that reads nothing from task ids can be in expectation."
    )
    header = "".join(f"{f'F={f}':>9}{'ratio':>8}" for f in reveals)
    print(f"\n{'workload':<22}{'round-robin':>12}{header}")
    for name in names:
        rr = statistics.fmean(measured[(name, s, "llm-like-random")] for s in seeds)
        cells = ""
        for f in reveals:
            mean = statistics.fmean(floors[(make_ups[(name, s)], f)] for s in seeds)
            cells += f"{mean:>9.2f}{rr / mean:>7.2f}x"
        print(f"{name:<22}{rr:>12.2f}{cells}")


if __name__ == "__main__":
    main()
