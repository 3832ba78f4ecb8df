"""One run of the real ``evolve()`` on an engine workload, and what it measured."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ...protocol import TaskSampler
from .workloads import Built, EngineWorkload, build

__all__ = ["EngineRun", "SharedShard", "run_engine"]


@attrs.frozen
class SharedShard:
    """A parallel strategy that hands every worker the whole train list (a shared shard)."""

    name: str = "shared"

    def plan(self, n_workers: int, round_index: int, keys: Sequence[str]) -> list[Any]:
        """One work unit per worker, each holding every key."""
        from agentdescent.parallel import WorkUnit

        return [WorkUnit(worker=i, keys=list(keys)) for i in range(n_workers)]


class _Tally:
    """Wraps a sampler and counts each rollout; everything else reaches the sampler.

    It also keeps the first exception the sampler raised: the engine counts a failing
    ``pick`` as a worker failure and carries on, so a broken sampler would otherwise
    pass for one that merely learned nothing.
    """

    def __init__(self, sampler: TaskSampler, fixable: frozenset[str], threshold: float) -> None:
        self._sampler = sampler
        self._fixable = fixable
        self._threshold = threshold
        self._lock = threading.Lock()
        self.rollouts = 0
        self.useful = 0
        self.taught: set[str] = set()
        self.error: Exception | None = None

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        try:
            return self._sampler.pick(keys, round_index)
        except Exception as error:
            self._keep(error)
            raise

    def record(self, task_id: str, score: float) -> None:
        with self._lock:
            self.rollouts += 1
            if task_id in self._fixable and score < self._threshold:
                self.useful += 1
                self.taught.add(task_id)
        try:
            self._sampler.record(task_id, score)
        except Exception as error:
            self._keep(error)
            raise

    def _keep(self, error: Exception) -> None:
        with self._lock:
            self.error = self.error or error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sampler, name)


@attrs.frozen
class EngineRun:
    """What one ``evolve()`` run measured.

    Attributes:
        curve: ``(rollouts, held-out reward)`` after each round, starting at ``(0, start)``.
        start: the held-out reward of the empty artifact.
        attainable: the held-out reward with every rule committed.
        useful: rollouts that failed on a fixable task, the only ones the reflector learns from.
        rollouts: rollouts recorded.
        taught: distinct fixable tasks that got at least one useful rollout.
        calls: agent calls the engine reports (rollouts, self-verify and held-out scoring).
        fixable: fixable train tasks in the workload, the most ``taught`` can reach.
    """

    curve: tuple[tuple[int, float], ...]
    start: float
    attainable: float
    useful: int
    rollouts: int
    taught: int
    calls: int
    fixable: int = 0

    @property
    def final(self) -> float:
        """The held-out reward at the end of the run."""
        return self.curve[-1][1]

    def gain(self, reward: float) -> float:
        """``reward`` as a fraction of the attainable gain."""
        return (reward - self.start) / (self.attainable - self.start)

    def rollouts_to(self, fraction: float) -> int | None:
        """Rollouts until the held-out reward first reached ``fraction`` of the gain, or None."""
        for rollouts, reward in self.curve:
            if self.gain(reward) >= fraction - 1e-9:
                return rollouts
        return None

    def area(self, budget: int) -> float:
        """Mean fraction of the attainable gain held over ``budget`` rollouts (0 to 1)."""
        total, (last_x, last_gain) = 0.0, (0, self.gain(self.start))
        for x, reward in self.curve[1:]:
            x = min(x, budget)
            total += (x - last_x) * last_gain
            last_x, last_gain = x, self.gain(reward)
        total += (budget - last_x) * last_gain
        return total / budget


def run_engine(
    workload: EngineWorkload,
    make_sampler: Callable[[Built], TaskSampler],
    seed: int,
    *,
    on_round: Callable[[TaskSampler], Callable[[Any], None] | None] | None = None,
    propose: Callable[[TaskSampler, Callable[..., Any]], Callable[..., Any]] | None = None,
) -> EngineRun:
    """Run ``evolve()`` once on a seeded instance of ``workload`` with a fresh sampler.

    Args:
        workload: the task set and run shape.
        make_sampler: builds the sampler for this run, given the seeded workload.
        seed: fixes the task order, ``k`` values and luck.
        on_round: given the sampler, returns the ``on_round`` callback to pass, if any.
        propose: given the sampler and the workload's reflector (``agent.propose``),
            returns the ``propose`` to pass in its place, if any.

    Raises:
        Exception: the first exception the sampler raised, which the engine itself
            would only count as a failed worker.
        RuntimeError: ``evolve()`` reported an error of its own.
    """
    from agentdescent import evolve

    built = build(workload, seed)
    sampler = make_sampler(built)
    tally = _Tally(sampler, built.fixable, workload.solved_threshold)
    options = workload.evolve_options()
    if workload.shared_shard:
        options["parallel"] = SharedShard()
    result = evolve(
        built.tasks,
        built.reward,
        agent=built.agent,
        task_sampler=tally,
        held_out_frac=built.held_out_frac,
        on_round=on_round(sampler) if on_round else None,
        propose=propose(sampler, built.agent.propose) if propose else None,
        **options,
    )
    if tally.error is not None:
        raise tally.error
    if result.error is not None:
        raise RuntimeError(f"evolve() failed on {workload.name}, seed {seed}: {result.error}")
    curve = ((0, built.start), *((info.rollouts, info.held_out_reward) for info in result.history))
    calls = result.history[-1].calls if result.history else 0
    return EngineRun(
        curve, built.start, built.attainable, tally.useful, tally.rollouts, len(tally.taught),
        calls, len(built.fixable),
    )  # fmt: skip
