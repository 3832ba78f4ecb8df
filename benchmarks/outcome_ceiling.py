"""The outcome-only ceiling on ``lessons`` and ``graded``: the optimal planner, run in the engine.

Usage::

    python benchmarks/outcome_ceiling.py [--seeds 30] [--first-seed 0] [--workload W ...]

What any learner could reach from outcomes alone, computed instead of estimated. On a workload
whose outcomes are deterministic (no flaky lessons, no regressions), a learner that knows the
make-up but not which task is which knows, at any moment, only counts: tasks not yet tried, tasks
that have failed once or twice and never passed, solved tasks found, and rules found by the
failures they took. Tasks with the same history are exchangeable, so every labelling of the tasks
that agrees with those counts is equally likely. Dynamic programming over the counts gives the
policy with the fewest expected rollouts until the rules behind 75% of the gain are committed, in
the engine's round structure: two split shards, one rollout on each per round, the workers in
order (``max_concurrency=1``), and the shards' order swapped every round.

The planner is told more than a sampler is, so what it reaches bounds every sampler from above:

- the make-up: how many tasks are solved or hopeless, and how many lessons take 1, 2 or 3
  failures;
- which failure yielded a rule, at once. A sampler learns that from a pass on a re-test, or,
  given ``on_round``, from the round's commit count when only one failure could have made it.

The planner then runs as a sampler inside the real ``evolve()``, in the engine bench beside
round-robin and fixable-first (the 75% column is what it plans for; after that it plans for
every rule). On ``graded`` it counts rules, while the gain of a rule varies a little with its
task's score band, so there it is optimal for the count, not exactly for the 75% mark. Needs the
``engine`` extra; the tables take about a minute to compute, then the runs as usual.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from functools import cache
from math import comb, factorial

from agentdescent_sampling.bench.engine import (
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS, Built, EngineWorkload

#: A shard's state: (untried, failed once, failed twice), none of them passed or fixed.
Shard = tuple[int, int, int]
#: What the whole run has shown: (hopeless found, rules found after 1, 2, 3 failures, solved).
Found = tuple[int, int, int, int, int]
#: The planner may try an untried task ("u"), retry one that failed once or twice, or, with
#: nothing of those left in its shard, spend the rollout where it teaches nothing ("idle").
ACTIONS = ("u", "f1", "f2")


def _ways(n: int, *parts: int) -> int:
    """Multinomial: ways to label ``n`` tasks with ``parts`` of each kind and the rest hopeless."""
    if min(parts, default=0) < 0 or sum(parts) > n:
        return 0
    ways = factorial(n) // factorial(n - sum(parts))
    for part in parts:
        ways //= factorial(part)
    return ways


class Planner:
    """The optimal policy for one make-up, by dynamic programming over exchangeable counts.

    Args:
        lessons: lessons by the failures their rule takes: (1, 2, 3).
        solved: tasks that always pass.
        hopeless: tasks that never pass.
        goal: rules to find.
    """

    def __init__(
        self, lessons: tuple[int, int, int], solved: int, hopeless: int, goal: int
    ) -> None:
        self.lessons, self.solved, self.hopeless, self.goal = lessons, solved, hopeless, goal
        self._chances = cache(self._chances_uncached)
        self.round = cache(self._round)
        self._second = cache(self._second_uncached)

    def _chances_uncached(
        self, untried: int, once: int, twice: int, found: Found
    ) -> tuple[float, float, float, float]:
        """P(an untried task is a 1-failure lesson), P(it is solved), P(a task that failed once
        is a 2-failure lesson), P(a task that failed twice is a 3-failure lesson)."""
        hopeless_found, *rules, solved_found = found
        left = [n - r for n, r in zip(self.lessons, rules, strict=True)]
        solved_left = self.solved - solved_found
        hopeless_left = self.hopeless - hopeless_found
        total = 0
        sums = [0.0, 0.0, 0.0, 0.0]
        for threes_twice in range(min(twice, left[2]) + 1):
            for twos_once in range(min(once, left[1]) + 1):
                for threes_once in range(min(once - twos_once, left[2] - threes_twice) + 1):
                    untried_parts = (
                        left[0],
                        solved_left,
                        left[1] - twos_once,
                        left[2] - threes_twice - threes_once,
                    )
                    hopeless_untried = untried - sum(untried_parts)
                    if hopeless_untried < 0 or hopeless_left != (
                        twice - threes_twice + once - twos_once - threes_once + hopeless_untried
                    ):
                        continue
                    ways = (
                        comb(twice, threes_twice)
                        * _ways(once, twos_once, threes_once)
                        * _ways(untried, *untried_parts)
                    )
                    total += ways
                    if untried:
                        sums[0] += ways * left[0] / untried
                        sums[1] += ways * solved_left / untried
                    if once:
                        sums[2] += ways * twos_once / once
                    if twice:
                        sums[3] += ways * threes_twice / twice
        if not total:
            raise ValueError(f"no labelling fits {(untried, once, twice, found)}")
        return (sums[0] / total, sums[1] / total, sums[2] / total, sums[3] / total)

    def outcomes(
        self, shard: Shard, other: Shard, found: Found, action: str
    ) -> list[tuple[float, Shard, Found]]:
        """What one rollout on ``shard`` can lead to, with its chance."""
        untried, once, twice = shard
        hopeless_found, ones, twos, threes, solved_found = found
        pooled = (untried + other[0], once + other[1], twice + other[2])
        p_one, p_solved, p_two, p_three = self._chances(*pooled, found)
        if action == "u":
            rest = (untried - 1, once, twice)
            branches = [
                (p_one, rest, (hopeless_found, ones + 1, twos, threes, solved_found)),
                (p_solved, rest, (hopeless_found, ones, twos, threes, solved_found + 1)),
                (1 - p_one - p_solved, (untried - 1, once + 1, twice), found),
            ]
        elif action == "f1":
            branches = [
                (p_two, (untried, once - 1, twice), (hopeless_found, ones, twos + 1, threes,
                                                      solved_found)),
                (1 - p_two, (untried, once - 1, twice + 1), found),
            ]  # fmt: skip
        elif action == "f2":
            rest = (untried, once, twice - 1)
            branches = [
                (p_three, rest, (hopeless_found, ones, twos, threes + 1, solved_found)),
                (1 - p_three, rest, (hopeless_found + 1, ones, twos, threes, solved_found)),
            ]
        else:
            branches = [(1.0, shard, found)]
        return [branch for branch in branches if branch[0] > 1e-12]

    def _done(self, found: Found) -> bool:
        return sum(found[1:4]) >= self.goal

    def actions(self, shard: Shard) -> list[str]:
        """The actions open to a shard."""
        return [action for action, n in zip(ACTIONS, shard, strict=True) if n] or ["idle"]

    def _round(self, first: Shard, second: Shard, found: Found) -> float:
        """Expected rollouts to the goal from the start of a round; ``first`` rolls out first."""
        return 2 + min(self._first_value(first, second, found, a) for a in self.actions(first))

    def _first_value(self, first: Shard, second: Shard, found: Found, action: str) -> float:
        return sum(
            p * self._second(after, second, seen)
            for p, after, seen in self.outcomes(first, second, found, action)
        )

    def _second_uncached(self, first: Shard, second: Shard, found: Found) -> float:
        return min(self._second_value(first, second, found, a) for a in self.actions(second))

    def _second_value(self, first: Shard, second: Shard, found: Found, action: str) -> float:
        # The round ends after the second rollout; next round the shards swap order.
        return sum(
            p * (0.0 if self._done(seen) else self.round(after, first, seen))
            for p, after, seen in self.outcomes(second, first, found, action)
        )

    def choose(self, mine: Shard, other: Shard, found: Found, *, first: bool) -> str:
        """The best action for the shard about to roll out."""
        if first:
            return min(self.actions(mine), key=lambda a: self._first_value(mine, other, found, a))
        return min(self.actions(mine), key=lambda a: self._second_value(other, mine, found, a))


def planner_for(workload: EngineWorkload, goal: int) -> Planner:
    """The planner for ``workload``'s make-up; refuses one it does not model."""
    fits = (
        not workload.flaky
        and not workload.regressions
        and workload.workers == 2
        and workload.max_concurrency == 1
        and not workload.shared_shard
        and set(workload.failures_needed) <= {1, 2, 3}
    )
    if not fits:
        raise SystemExit(
            f"{workload.name}: the planner models two split shards, one worker at a time, "
            f"no luck and no regressions, and rules after 1 to 3 failures; try lessons or graded"
        )
    ks = [workload.failures_needed[i % len(workload.failures_needed)]
          for i in range(workload.lessons)]  # fmt: skip
    counts = (ks.count(1), ks.count(2), ks.count(3))
    return Planner(counts, workload.always, workload.never, goal)


def goal_of(workload: EngineWorkload) -> int:
    """Rules behind 75% of the gain, each lesson's held-out twin weighing the same."""
    return math.ceil(0.75 * workload.lessons - 1e-9)


class PlannerSampler:
    """The planner as a sampler: told each task's kind, it knows when a failure yields a rule.

    It aims at :func:`goal_of` rules, then at every rule.
    """

    def __init__(self, built: Built, planners: Sequence[Planner]) -> None:
        self._plans = built.agent.by_id
        self._train = [task.id for task in built.tasks if task.id.endswith("-train")]
        self._state: dict[str, str | int] = dict.fromkeys(self._train, "u")
        self._found = [0, 0, 0, 0, 0]
        self._planners = planners
        self._picks: dict[int, int] = {}
        self._threshold = built.pass_threshold

    def _shard(self, keys: Sequence[str]) -> Shard:
        states = [self._state[key] for key in keys]
        return (states.count("u"), states.count(1), states.count(2))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The planner's action for this shard, on the first task it applies to."""
        first = self._picks.get(round_index, 0) == 0
        self._picks[round_index] = self._picks.get(round_index, 0) + 1
        f = self._found
        found: Found = (f[0], f[1], f[2], f[3], f[4])
        planner = next((p for p in self._planners if sum(found[1:4]) < p.goal), None)
        if planner is None:
            return keys[0]
        mine = set(keys)
        other = self._shard([key for key in self._train if key not in mine])
        action = planner.choose(self._shard(keys), other, found, first=first)
        wanted = {"u": "u", "f1": 1, "f2": 2}.get(action)
        return next((key for key in keys if self._state[key] == wanted), keys[0])

    def record(self, task_id: str, score: float) -> None:
        """Move the task's count on; a failure that yields a rule counts as a rule found."""
        state = self._state[task_id]
        if state == "done":
            return
        if score >= self._threshold:
            self._found[4] += state == "u"  # a first look that passes: always solved
            self._state[task_id] = "done"
            return
        fails = 1 if state == "u" else int(state) + 1
        plan = self._plans[task_id]
        if plan.kind == "lesson" and fails == plan.failures_needed:
            self._found[fails] += 1
            self._state[task_id] = "done"
        elif fails >= 3:
            self._found[0] += 1
            self._state[task_id] = "done"
        else:
            self._state[task_id] = fails


def entrant(workload: EngineWorkload) -> EngineEntrant:
    """The planner's engine bench entrant for ``workload``, its tables computed now."""
    planners = [planner_for(workload, goal_of(workload)), planner_for(workload, workload.lessons)]
    half = (workload.lessons + workload.always + workload.never) // 2
    for planner in planners:  # fill the tables before the bench forks its workers
        expected = planner.round((half, 0, 0), (half, 0, 0), (0, 0, 0, 0, 0))
        print(f"{workload.name}: {expected:.2f} expected rollouts to {planner.goal} rules",
              file=sys.stderr)  # fmt: skip

    def make(built: Built) -> PlannerSampler:
        return PlannerSampler(built, planners)

    return EngineEntrant("outcome-planner", make, "ceiling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workload", action="append", choices=["lessons", "graded"])
    args = parser.parse_args()
    for name in args.workload or ["lessons", "graded"]:
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
