"""A bound on the regressions workloads for a sampler told each fix: the planner, in the engine.

Usage::

    python benchmarks/regressions_bound.py [--seeds 30] [--first-seed 0] [--workload W ...]
        [--planner {break-planner,search-planner} ...]

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
the figure to compare with the bench's rows, as for ``outcome_ceiling.py``.

:class:`SearchSampler` (``search-planner``) is told only what a wired sampler is, and the
make-up: it must find the victims by re-testing tasks that passed, and weighs each re-test
against the break planner's best action. A heuristic, it reaches what a searcher can; the
optimum for a searcher lies between the two. Needs the ``engine`` extra.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import cache
from math import comb
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

    def outcomes(
        self, shard: Shard, other: Shard, found: Found, action: str
    ) -> list[tuple[float, Shard, Found]]:
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


class SearchSampler(PlannerSampler):
    """A sampler told the make-up and each fix at once, as wired, that must search for victims.

    It is told nothing of which rules break a task, nor which task a commit broke, nor which
    tasks that pass are victims. What it knows is counts: of the lessons not yet shown to be
    breakers (by a patch), the rules committed, the rules found this round and the rest hold
    the breakers left in the proportions of a hypergeometric draw. Each way the breakers can
    lie is a state of the :class:`BreakPlanner`'s table (victims broken, breakers found this
    round), and an action is valued as the mean over them. Re-testing a task that passed is
    the table's patch ("v") with the chance that it is one of the broken victims, and an idle
    rollout otherwise: the broken victims are any of the tasks that pass, untried ones
    included, as likely as another, but a task seen passing after only some of the commits
    can be broken only by those. A re-test that fails is a patch, told at once as wired.

    Like the other planners' samplers it reads each task's kind to keep its counts, and so it
    knows one thing a sampler does not: that a broken victim failing at its first look made a
    patch, not a one-failure rule. A heuristic, not an optimum: what it reaches is what a
    searcher can, not what one must.
    """

    def __init__(self, built: Built, planners: Sequence[BreakPlanner]) -> None:
        super().__init__(built, planners)
        self._found += [0, 0]  # breakers found this round (never known here), victims patched
        self._seen: dict[str, int] = {}  # a task that passed -> rules committed at that pass
        self._patched: set[str] = set()
        self._commits = 0
        self._round_index = -1
        self._breakers = planners[0].breakers
        self._rules = sum(planners[0].lessons)
        self._solved = planners[0].solved

    def _placings(self) -> list[tuple[float, int, int]]:
        """Each way the breakers left can lie, with its chance: ``(chance, broken, new)``,
        broken among the committed rules not shown to be breakers, new among this round's."""
        patched = self._found[6]
        committed = self._commits - patched
        new = sum(self._found[1:4]) - self._commits
        rest = self._rules - patched - committed - new
        left = self._breakers - patched
        ways = comb(self._rules - patched, left)
        return [
            (comb(committed, k) * comb(new, j) * comb(rest, left - k - j) / ways, k, j)
            for k in range(min(committed, left) + 1)
            for j in range(min(new, left - k) + 1)
            if left - k - j <= rest
        ]

    def _broken_chance(self, task_id: str, broken: int) -> float:
        """The chance that ``task_id``, which passed, is one of ``broken`` victims now."""
        committed = self._commits - self._found[6]
        since = min(committed, self._commits - self._seen[task_id])
        if not broken or since <= 0:
            return 0.0
        return min(1.0, broken / max(1, self._solved - self._found[6]) * since / committed)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The planner's best action over the ways the breakers can lie, or a re-test of the
        task that passed likeliest to be broken, where that is worth more."""
        if round_index != self._round_index:
            self._round_index = round_index
            self._commits = sum(self._found[1:4])
        first = self._picks.get(round_index, 0) == 0
        self._picks[round_index] = self._picks.get(round_index, 0) + 1
        base: Found = tuple(self._found[:5])
        patched = self._found[6]
        planner = next((p for p in self._planners if not p.done((*base, 0, patched))), None)
        if planner is None:
            return keys[0]
        assert isinstance(planner, BreakPlanner)
        after = planner._after_first if first else planner._after_second
        pool = self._shard(self._train)
        placings = self._placings()

        def value(action: str, candidate: str | None = None) -> float:
            """The action's expected rollouts to the goal; with a ``candidate``, its re-test."""
            total = 0.0
            for p, broken, new in placings:
                state, found = (*pool, broken), (*base, new, patched)
                if candidate is None:
                    total += p * after(state, found, action)
                    continue
                hit = self._broken_chance(candidate, broken)
                total += p * (1 - hit) * after(state, found, "idle")
                if hit:
                    total += p * hit * after(state, found, "v")
            return total

        best = min(Planner.actions(planner, self._shard(keys)), key=value)
        wanted = self.WANTED.get(best)
        chosen = next((key for key in keys if self._state[key] == wanted), keys[0])
        candidates = [key for key in keys if key in self._seen and key not in self._patched]
        if not candidates:
            return chosen
        likeliest = min(candidates, key=self._seen.__getitem__)
        return likeliest if value("v", likeliest) < value(best) else chosen

    def record(self, task_id: str, score: float) -> None:
        """A pass makes a task a candidate, seen now; a candidate's failure is its patch (and
        a victim's first look that fails); the rest as for :class:`PlannerSampler`."""
        passed = score >= self._threshold
        victim = self._plans[task_id].kind == "victim"
        if task_id in self._seen or (self._state[task_id] == "u" and victim):
            if self._state[task_id] == "u":
                self._found[4] += 1  # a first look: passing, as the make-up counts it
                self._state[task_id] = "done"
            if passed:
                self._seen[task_id] = self._commits
            elif task_id not in self._patched:
                self._patched.add(task_id)
                self._seen.setdefault(task_id, self._commits)
                self._found[6] += 1
            return
        was = self._state[task_id]
        super().record(task_id, score)
        if was == "u" and passed:
            self._seen[task_id] = self._commits


def planners_for(workload: EngineWorkload, *, search: bool = False) -> list[BreakPlanner]:
    """Planners for 75% of the gain, then for all of it, for ``workload``'s make-up; for a
    searcher (``search``) the victims are among the tasks that pass, as it sees them."""
    if workload.name not in WORKLOADS:
        raise SystemExit(f"{workload.name}: the bound models {' and '.join(WORKLOADS)}")
    solved = workload.always + (workload.regressions if search else 0)
    make_up = (lessons_by_failures(workload), solved, workload.never)
    units = workload.lessons + workload.regressions * workload.victim_weight
    return [
        BreakPlanner(*make_up, goal, workload.regressions, workload.victim_weight)
        for goal in (three_quarters(units), units)
    ]


def start_pool(workload: EngineWorkload, *, search: bool = False) -> Shard:
    """The pool at the start of a run: every task untried, but the victims unless ``search``
    (the told planner never looks at one before it breaks), none broken."""
    victims = workload.regressions if search else 0
    return (workload.lessons + workload.always + workload.never + victims, 0, 0, 0)


#: Each entrant's name, and whether it searches for its victims.
PLANNERS = {"break-planner": False, "search-planner": True}


def entrant(workload: EngineWorkload, name: str = "break-planner") -> EngineEntrant:
    """The engine bench entrant ``name`` (:data:`PLANNERS`) for ``workload``, its tables
    computed now."""
    search = PLANNERS[name]
    planners = planners_for(workload, search=search)
    pool = start_pool(workload, search=search)
    for planner in planners:  # fill the tables before the bench forks its workers
        expected = planner.value(pool, (0, 0, 0, 0, 0, 0, 0))
        print(f"{workload.name}: {name}'s table expects {expected:.2f} rollouts to "
              f"{planner.goal} units", file=sys.stderr)  # fmt: skip
    kind = SearchSampler if search else BreakSampler

    def make(built: Built) -> PlannerSampler:
        return kind(built, planners)

    return EngineEntrant(name, make, "ceiling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workload", action="append", choices=WORKLOADS)
    parser.add_argument("--planner", action="append", choices=list(PLANNERS), help="default: both")
    args = parser.parse_args()
    for name in args.workload or WORKLOADS:
        workload = ENGINE_WORKLOADS[name]
        config = EngineBenchConfig(
            workloads=[workload],
            samplers=["fixable-first"],
            extra=[entrant(workload, planner) for planner in args.planner or PLANNERS],
            seeds=args.seeds,
            first_seed=args.first_seed,
        )
        print(format_engine_report(run_engine_bench(config)))


if __name__ == "__main__":
    main()
