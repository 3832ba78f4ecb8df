"""The rollout loop, calling a sampler the way ``evolve()`` and ``async_evolve()`` do.

Both engine paths shard the task ids round-robin across ``n_workers`` and share
one sampler instance between the workers:

- **sync** (``evolve``): round ``r`` hands worker ``w`` shard ``(w + r) % n``, every
  worker picks once with ``round_index = r``, and the round ends when all its
  rollouts are recorded. Up to ``max_concurrency`` of them run at once.
- **async** (``async_evolve``): worker ``w`` keeps shard ``w`` and picks again as soon
  as its last rollout is recorded, with ``round_index`` counting its own picks.

Split shards are disjoint, so two in-flight picks can only collide when every
worker is handed the whole task list, as a ``PipelineParallel`` plan does
(``shared_shard``). The driver records every pick; agentdescent 0.7.0 runs
``PipelineParallel`` only with ``extra_artifacts`` and records only the picks of
workers on the primary artifact's stage, which the driver does not model. Its
``async_evolve`` always splits shards.

Concurrency is simulated rather than raced on real threads: each rollout takes an
exponentially distributed time drawn from the seed, and the sampler's calls are
made in the order those rollouts would start and finish. That gives the engine's
interleaving (several picks in flight before their scores come back, records in
completion order) while keeping every number reproducible per seed; racing
threads would make the share differ between two runs of the same seed, and
thread safety is what the conformance kit tests.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from time import perf_counter_ns
from typing import Any, NamedTuple

import attrs

from ..errors import BenchError
from ..protocol import TaskSampler, short_repr
from .workloads import Scenario, is_informative

__all__ = ["Rollout", "RolloutLoop", "drive"]


class Rollout(NamedTuple):
    """One rollout, as the driver saw it (a tuple, because a run makes many of them).

    Attributes:
        task_id: the task the sampler picked.
        true_p: the task's true pass probability when it was picked.
        informative: whether ``true_p`` lay in the informative band.
        duplicate: whether another rollout of the same task was in flight at the pick.
        score: the reward the sampler was told, observation noise included.
        worker: the worker that made the pick.
        round_index: the ``round_index`` the pick was given.
        pick_ns: how long ``pick`` took, in nanoseconds.
        record_ns: how long ``record`` took, in nanoseconds.
    """

    task_id: str
    true_p: float
    informative: bool
    duplicate: bool
    score: float
    worker: int
    round_index: int
    pick_ns: int
    record_ns: int


def _positive(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None and attribute.name == "max_concurrency":
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"RolloutLoop({attribute.name}={value!r}): expected a whole number >= 1")


@attrs.frozen
class RolloutLoop:
    """How the engine drives a sampler: the shards, the round indices, the budget, the overlap.

    Args:
        budget: how many rollouts the run makes in all.
        n_workers: how many workers, and so shards, the task ids are split into.
        max_concurrency: the most rollouts in flight at once, that is, picks made
            before their scores come back. ``None`` does what the engine does:
            ``1`` on the sync path (``evolve``'s default) and ``n_workers`` on the
            async path, where every worker always has a rollout running.
        asynchronous: drive the async path instead of the sync one.
        shared_shard: hand every worker the whole task list instead of a split
            shard, so that concurrent workers choose among the same tasks.
    """

    budget: int = attrs.field(default=200, validator=_positive)
    n_workers: int = attrs.field(default=1, validator=_positive)
    max_concurrency: int | None = attrs.field(default=None, validator=_positive)
    asynchronous: bool = False
    shared_shard: bool = False

    @property
    def in_flight(self) -> int:
        """The most rollouts that run at once under this loop."""
        if self.max_concurrency is not None:
            return self.max_concurrency
        return self.n_workers if self.asynchronous else 1


def drive(
    sampler: TaskSampler, scenario: Scenario, loop: RolloutLoop, seed: int
) -> tuple[Rollout, ...]:
    """Spend ``loop.budget`` rollouts of ``scenario`` on the tasks ``sampler`` picks.

    Outcomes and rollout durations come from generators seeded with ``seed``, so the
    same sampler, scenario, loop and seed always give the same rollouts.

    Returns:
        One :class:`Rollout` per pick, in the order the picks were made.

    Raises:
        BenchError: ``pick`` returned something that is not a key of the shard it
            was given. Whatever the sampler itself raises propagates unchanged.
    """
    run = _Run(sampler, scenario, loop, seed)
    if loop.asynchronous:
        run.asynchronous()
    else:
        run.synchronous()
    return tuple(run.rollouts)


# A Rollout's fields up to pick_ns: a plain tuple, since one is made per rollout.
_Pending = tuple[str, float, bool, bool, float, int, int, int]


class _Run:
    def __init__(
        self, sampler: TaskSampler, scenario: Scenario, loop: RolloutLoop, seed: int
    ) -> None:
        self.sampler = sampler
        self.scenario = scenario
        self.loop = loop
        keys, count = list(scenario.keys), loop.n_workers
        if loop.shared_shard:
            self.shards = [list(keys) for _ in range(count)]
        else:
            # The engine's shard_round_robin: task i goes to shard i % n_workers.
            self.shards = [keys[worker::count] for worker in range(count)]
        self.members = [frozenset(shard) for shard in self.shards]
        # Separate streams, so that timing draws never shift which outcomes a seed gets.
        self.outcomes = random.Random(f"outcomes:{seed}")
        self.durations = random.Random(f"durations:{seed}")
        self.clock = 0.0
        self.started = 0
        # (finish time, pick order, the rollout's fields but record_ns), earliest first.
        self.running: list[tuple[float, int, _Pending]] = []
        self.busy: dict[str, int] = {}
        # Filled in completion order, indexed by pick order.
        self.finished: list[Rollout | None] = [None] * loop.budget

    @property
    def rollouts(self) -> list[Rollout]:
        return [rollout for rollout in self.finished if rollout is not None]

    def synchronous(self) -> None:
        count = len(self.shards)
        # The engine's DataParallel plan: shards rotate so coverage moves each round,
        # and a worker handed an empty shard does nothing that round.
        plans = [
            [(w, (w + turn) % count) for w in range(count) if self.shards[(w + turn) % count]]
            for turn in range(count)
        ]
        round_index = 0
        while self.started < self.loop.budget:
            units = deque(plans[round_index % count])
            while len(units) > self.loop.budget - self.started:
                units.pop()
            while units or self.running:
                while units and len(self.running) < self.loop.in_flight:
                    worker, shard = units.popleft()
                    self.start(worker, shard, round_index)
                self.finish()
            round_index += 1

    def asynchronous(self) -> None:
        picks = [0] * self.loop.n_workers
        idle = deque(worker for worker, shard in enumerate(self.shards) if shard)
        while self.running or (idle and self.started < self.loop.budget):
            while idle and len(self.running) < self.loop.in_flight:
                if self.started >= self.loop.budget:
                    break
                worker = idle.popleft()
                self.start(worker, worker, picks[worker])
                picks[worker] += 1
            idle.append(self.finish())

    def start(self, worker: int, shard: int, round_index: int) -> None:
        keys = self.shards[shard]
        before = perf_counter_ns()
        task = self.sampler.pick(keys, round_index)
        pick_ns = perf_counter_ns() - before
        if not isinstance(task, str) or task not in self.members[shard]:
            name = getattr(self.sampler, "name", type(self.sampler).__name__)
            raise BenchError(
                f"sampler {name!r} picked {short_repr(task)}, which is not a task id in the "
                f"worker's shard of {len(keys)} (round_index={round_index}); pick() must "
                f"return one of the keys it is given"
            )
        progress = self.started / self.loop.budget
        true_p = self.scenario.true_p(task, progress)
        score = self.scenario.rollout(task, progress, self.outcomes)
        busy = self.busy.get(task, 0)
        self.busy[task] = busy + 1
        pending: _Pending = (
            task, true_p, is_informative(true_p), busy > 0, score, worker, round_index, pick_ns
        )  # fmt: skip
        finish_at = self.clock + self.durations.expovariate(1.0)
        heapq.heappush(self.running, (finish_at, self.started, pending))
        self.started += 1

    def finish(self) -> int:
        self.clock, sequence, done = heapq.heappop(self.running)
        task, score, worker = done[0], done[4], done[5]
        before = perf_counter_ns()
        self.sampler.record(task, score)
        record_ns = perf_counter_ns() - before
        self.busy[task] -= 1
        self.finished[sequence] = Rollout(*done, record_ns)
        return worker
