"""A bound on the regressions workloads for a sampler told each fix: the planner, in the engine.

Usage::

    python benchmarks/regressions_bound.py [--seeds 30] [--first-seed 0] [--workload W ...]

What a wired sampler could reach at best on ``regressions`` and ``regressions-held-out``. Wired,
a sampler learns each fix at once from its self-verify verdict. What it must find by rolling
tasks out is which passing task a committed rule broke: nothing else says so, since a breaker's
held-out twin outweighs its victim's by exactly one task, as any rule moves the sum.

:class:`BreakPlanner` is ``outcome_ceiling.Planner`` (the make-up and each fix told at once),
told more: when a round commits a rule that breaks a task, which task it broke, so that the
victim's patch costs one rollout in a later round. Victims are not in its pool of untried tasks,
so it never spends a first look on one. Each rule is a breaker with the chance the breakers not
yet found have among the lessons not yet found. It plans over both shards as one pool, freer
than a sampler held to its shard. The goal counts held-out units: a rule is one (a breaker's
twin outweighs its victim's by one), a patch ``victim_weight`` more; 75% of the gain is 9 of 11
units on ``regressions`` and 11 of 14 on ``regressions-held-out``.

Told more, and free of shards, its table's expected rollouts are a floor under any wired
sampler's. In the engine each worker takes the best action its own shard offers; that run is
the figure to compare with the bench's rows, as for ``outcome_ceiling.py``. Needs the
``engine`` extra.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import ClassVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentdescent_sampling.bench.engine import (  # noqa: E402  # after the path
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine.workloads import (  # noqa: E402
    ENGINE_WORKLOADS,
    Built,
    EngineWorkload,
)
from benchmarks.outcome_ceiling import (  # noqa: E402
    Found,
    Planner,
    PlannerSampler,
    Shard,
    lessons_by_failures,
    three_quarters,
)

#: Workloads with passing tasks that break.
WORKLOADS = ("regressions", "regressions-held-out")


class BreakPlanner(Planner):
    """:class:`Planner` with breakers and victims, told which task each commit broke, and free
    to spend either rollout of a round on any task.

    The pool is ``(untried, failed once, failed twice, broken victims)`` over both shards: this
    planner is not held to a shard, which only helps it, and keeps the tables small. ``found``
    is ``Planner``'s five counts, then breakers found this round (their victims break when the
    round commits) and victims patched. Its table is :meth:`value` (``Planner.round`` plans for
    two shards and raises here).

    Args:
        lessons, solved, hopeless: the make-up without the victims, as for :class:`Planner`.
        goal: held-out units to reach.
        breakers: lessons whose rule breaks a victim.
        weight: held-out units a patch adds (the workload's ``victim_weight``).
    """

    def __init__(
        self,
        lessons: tuple[int, int, int],
        solved: int,
        hopeless: int,
        goal: int,
        breakers: int,
        weight: int,
    ) -> None:
        super().__init__(lessons, solved, hopeless, goal)
        self.breakers, self.weight = breakers, weight
        self.value = cache(self._value)
        self._after_first = cache(self._after_first_uncached)

    def outcomes(self, shard: Shard, other: Shard, found: Found, action: str) -> list:
        """What one rollout from the pool ``shard`` can lead to; "v" patches a broken victim
        (``other`` is ignored: the pool is both shards)."""
        *counts, broken = shard
        new, patched = found[5:]
        if action == "v":
            return [(1.0, (*counts, broken - 1), (*found[:5], new, patched + 1))]
        base = found[:5]
        rules = sum(base[1:4])
        branches = []
        for p, after, seen in super().outcomes(shard[:3], (0, 0, 0), base, action):
            after = (*after, broken)
            if sum(seen[1:4]) == rules:
                branches.append((p, after, (*seen, new, patched)))
                continue
            chance = (self.breakers - new - patched - broken) / (sum(self.lessons) - rules)
            branches += [
                (p * chance, after, (*seen, new + 1, patched)),
                (p * (1 - chance), after, (*seen, new, patched)),
            ]
        return [branch for branch in branches if branch[0] > 1e-12]

    def done(self, found: Found) -> bool:
        """Whether the rules and patches found reach the goal, in held-out units."""
        return sum(found[1:4]) + self.weight * found[6] >= self.goal

    def actions(self, shard: Shard) -> list[str]:
        """:class:`Planner`'s actions, and "v" while ``shard`` holds a broken victim."""
        moves = super().actions(shard[:3])
        if not shard[3]:
            return moves
        return [move for move in moves if move != "idle"] + ["v"]

    def _value(self, pool: Shard, found: Found) -> float:
        """Expected rollouts to the goal from the start of a round."""
        return 2 + min(self._after_first(pool, found, a) for a in self.actions(pool))

    def _after_first_uncached(self, pool: Shard, found: Found, action: str) -> float:
        return sum(
            p * min(self._after_second(after, seen, a) for a in self.actions(after))
            for p, after, seen in self.outcomes(pool, pool, found, action)
        )

    def _after_second(self, pool: Shard, found: Found, action: str) -> float:
        """The rest of the run after the round's second rollout by ``action``: the round
        commits, and this round's breakers break their victims."""
        total = 0.0
        for p, after, seen in self.outcomes(pool, pool, found, action):
            if not self.done(seen):
                total += p * self.value(*self.commit(after, seen))
        return total

    @staticmethod
    def commit(pool: Shard, found: Found) -> tuple[Shard, Found]:
        """The pool and counts after a round's commit: its breakers' victims are broken."""
        return (*pool[:3], pool[3] + found[5]), (*found[:5], 0, found[6])

    def _round(self, first: Shard, second: Shard, found: Found) -> float:
        raise NotImplementedError("BreakPlanner plans over one pool: its table is value()")

    def choose(
        self, mine: Shard, other: Shard, found: Found, *, first: bool, first_failed: bool = False
    ) -> str:
        """The best action open to the shard ``mine``, valued over the pool of both."""
        pool = tuple(a + b for a, b in zip(mine, other, strict=True))
        if first:
            return min(self.actions(mine), key=lambda a: self._after_first(pool, found, a))
        return min(self.actions(mine), key=lambda a: self._after_second(pool, found, a))


class BreakSampler(PlannerSampler):
    """The :class:`BreakPlanner` as a sampler, told each task's kind and what each rule breaks.

    It counts a rule when the failure that makes it comes, takes a breaker's victim to be broken
    from the next round on, and never looks at a victim before that. A victim that passes when
    taken to be broken (the gate refused its breaker) is left out again; its breaker then counts
    as found but in none of the breaker counts, and if it is committed later its victim is not
    watched. No run of the published seeds ended below the attainable reward.
    """

    WANTED: ClassVar[dict[str, str | int]] = {**PlannerSampler.WANTED, "v": "broken"}

    def __init__(self, built: Built, planners: Sequence[Planner]) -> None:
        super().__init__(built, planners)
        self._victim_of = {
            task_id: f"{self._plans[task_id].breaks}-train"
            for task_id in self._train
            if self._plans[task_id].breaks
        }
        for victim in self._victim_of.values():
            self._state[victim] = "intact"
        self._found += [0, 0]  # breakers found this round, victims patched
        self._round_index = -1

    def _shard(self, keys: Sequence[str]) -> Shard:
        broken = [self._state[key] for key in keys].count("broken")
        return (*super()._shard(keys), broken)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """At a round's first pick, the last round's breakers have broken their victims."""
        if round_index != self._round_index:
            self._round_index = round_index
            self._found[5] = 0
            for task_id, state in self._state.items():
                if state == "breaking":
                    self._state[task_id] = "broken"
        return super().pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        """A broken victim's failure is its patch; a breaker's rule marks its victim to break
        when the round commits; the rest as for :class:`PlannerSampler`."""
        state = self._state[task_id]
        if state in ("intact", "breaking"):
            return
        if state == "broken":
            passed = score >= self._threshold
            self._state[task_id] = "intact" if passed else "done"
            self._found[6] += not passed
            return
        rules = sum(self._found[1:4])
        super().record(task_id, score)
        if sum(self._found[1:4]) > rules and task_id in self._victim_of:
            self._found[5] += 1
            self._state[self._victim_of[task_id]] = "breaking"


def planners_for(workload: EngineWorkload) -> list[BreakPlanner]:
    """Planners for 75% of the gain, then for all of it, for ``workload``'s make-up."""
    if workload.name not in WORKLOADS:
        raise SystemExit(f"{workload.name}: the bound models {' and '.join(WORKLOADS)}")
    make_up = (lessons_by_failures(workload), workload.always, workload.never)
    units = workload.lessons + workload.regressions * workload.victim_weight
    return [
        BreakPlanner(*make_up, goal, workload.regressions, workload.victim_weight)
        for goal in (three_quarters(units), units)
    ]


def start_pool(workload: EngineWorkload) -> Shard:
    """The pool at the start of a run: every task untried but the victims, none broken."""
    return (workload.lessons + workload.always + workload.never, 0, 0, 0)


def entrant(workload: EngineWorkload) -> EngineEntrant:
    """The engine bench entrant of the planner for ``workload``, its tables computed now."""
    planners = planners_for(workload)
    pool = start_pool(workload)
    for planner in planners:  # fill the tables before the bench forks its workers
        expected = planner.value(pool, (0, 0, 0, 0, 0, 0, 0))
        print(f"{workload.name}: {BreakPlanner.__name__} expects {expected:.2f} rollouts to "
              f"{planner.goal} units", file=sys.stderr)  # fmt: skip

    def make(built: Built) -> BreakSampler:
        return BreakSampler(built, planners)

    return EngineEntrant("break-planner", make, "ceiling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workload", action="append", choices=WORKLOADS)
    args = parser.parse_args()
    for name in args.workload or WORKLOADS:
        workload = ENGINE_WORKLOADS[name]
        config = EngineBenchConfig(
            workloads=[workload],
            samplers=["fixable-first"],
            extra=[entrant(workload)],
            seeds=args.seeds,
            first_seed=args.first_seed,
        )
        print(format_engine_report(run_engine_bench(config)))


if __name__ == "__main__":
    main()
