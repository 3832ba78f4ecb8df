"""One run of the real ``evolve()`` on an engine workload, and what it measured."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ...protocol import TaskSampler, short_repr
from .workloads import ASYNC_LATENCY, REFLECTORS, Built, EngineWorkload, build, check_path

__all__ = ["EngineRun", "Wiring", "agent_latency", "run_engine"]

#: ``wiring(sampler, built, options)`` returns extra ``evolve()`` keyword arguments for one
#: run, such as ``on_round``, ``propose`` or ``policies``, given the workload's own
#: ``options`` (``asynchronous`` among them); the workload's reflector is
#: ``built.agent.propose``. A ``task_sampler`` among them replaces the sampler the engine is
#: handed (the bench still counts its rollouts).
Wiring = Callable[[TaskSampler, Built, Mapping[str, Any]], dict[str, Any]]

#: What :func:`run_engine` passes itself; a wiring that returns one of them is refused.
_RESERVED = frozenset({"tasks", "reward", "agent", "held_out_frac"})


def _next_round(agent: Any, on_round: Callable[[Any], None] | None) -> Callable[[Any], None]:
    """An ``on_round`` that tells ``agent`` a round has ended, then calls ``on_round``, if
    any."""

    def next_round(info: Any) -> None:
        agent.next_round()
        if on_round is not None:
            on_round(info)

    return next_round


class _Tally:
    """Wraps a sampler and counts each rollout; everything else reaches the sampler.

    It also keeps the first exception the sampler raised (or a ``ValueError`` for a pick
    outside the shard), and from then on picks the shard's first task itself: the
    synchronous engine counts a failing ``pick`` as a worker failure and carries on, so a
    broken sampler would otherwise pass for one that merely learned nothing, and on the
    asynchronous path the exception ends the worker's thread and the run waits out its time
    limit. :func:`run_engine` raises it after the run.
    """

    def __init__(self, sampler: TaskSampler, fixable: frozenset[str], threshold: float) -> None:
        self._sampler = sampler
        self._fixable = fixable
        self._threshold = threshold
        self._lock = threading.Lock()
        self.rollouts = 0
        self.useful = 0
        self.taught: set[str] = set()
        self.error: BaseException | None = None

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if self.error is None:
            try:
                picked = self._sampler.pick(keys, round_index)
            except KeyboardInterrupt:
                raise
            # Kept, and raised after the run; SystemExit too, which would end the bench, or
            # on the asynchronous path end the engine's worker thread and stall the run.
            except BaseException as error:  # noqa: BLE001
                self._keep(error)
            else:
                if picked in keys:
                    return picked
                # The asynchronous engine looks it up outside any try: it would end the thread.
                self._keep(
                    ValueError(f"pick() returned {short_repr(picked)}, not a task of the shard")
                )
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        with self._lock:
            self.rollouts += 1
            if task_id in self._fixable and score < self._threshold:
                self.useful += 1
                self.taught.add(task_id)
        if self.error is None:
            try:
                self._sampler.record(task_id, score)
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001  # kept, as pick()'s
                self._keep(error)

    def _keep(self, error: BaseException) -> None:
        with self._lock:
            self.error = self.error or error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sampler, name)


@attrs.frozen
class EngineRun:
    """What one ``evolve()`` run measured.

    Attributes:
        curve: ``(rollouts, held-out reward)`` after each round, starting at ``(0, start)``.
        call_curve: agent calls by the end of each round, cumulative (``RoundInfo.calls``),
            one per point of ``curve``, starting at 0.
        start: the held-out reward of the empty artifact.
        attainable: the held-out reward with every rule committed.
        useful: rollouts that failed on a fixable task, the only ones the reflector learns from.
        rollouts: rollouts recorded.
        taught: distinct fixable tasks that got at least one useful rollout.
        fixable: fixable train tasks in the workload, the most ``taught`` can reach.
        artifact: the final artifact's text (``evolve()``'s ``rendered``).
    """

    curve: tuple[tuple[int, float], ...]
    call_curve: tuple[int, ...] = attrs.field()
    start: float
    attainable: float = attrs.field()
    useful: int
    rollouts: int
    taught: int
    fixable: int = 0
    artifact: str = ""

    @call_curve.validator
    def _one_count_per_point(self, attribute: attrs.Attribute[Any], value: tuple[int, ...]) -> None:
        if len(value) != len(self.curve):
            raise ValueError(
                f"call_curve has {len(value)} counts for {len(self.curve)} points of curve; "
                f"give one cumulative call count per point, starting at 0"
            )

    @attainable.validator
    def _some_gain(self, attribute: attrs.Attribute[Any], value: float) -> None:
        # Every figure is a fraction of the gain from start to attainable.
        if not value > self.start:
            raise ValueError(
                f"EngineRun(start={self.start!r}, attainable={value!r}): no gain to measure; "
                f"the held-out reward with every rule committed must exceed the empty "
                f"artifact's, as it does on a workload with at least one lesson"
            )

    @property
    def rounds(self) -> int:
        """Rounds ``evolve()`` recorded: the points of ``curve`` after the start."""
        return len(self.curve) - 1

    @property
    def final(self) -> float:
        """The held-out reward at the end of the run."""
        return self.curve[-1][1]

    @property
    def calls(self) -> int:
        """Agent calls the whole run made."""
        return self.call_curve[-1]

    def gain(self, reward: float) -> float:
        """``reward`` as a fraction of the attainable gain."""
        return (reward - self.start) / (self.attainable - self.start)

    def rollouts_to(self, fraction: float) -> int | None:
        """Rollouts until the held-out reward first reached ``fraction`` of the gain, or None."""
        reached = self.reached(fraction)
        return None if reached is None else self.curve[reached][0]

    def calls_to(self, fraction: float) -> int | None:
        """Agent calls until the held-out reward first reached ``fraction`` of the gain, or None."""
        reached = self.reached(fraction)
        return None if reached is None else self.call_curve[reached]

    def reached(self, fraction: float) -> int | None:
        """The index, into ``curve`` and ``call_curve``, of the first point at or over
        ``fraction`` of the gain, or None if the run never got there."""
        for point, (_, reward) in enumerate(self.curve):
            if self.gain(reward) >= fraction - 1e-9:
                return point
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


def agent_latency(asynchronous: bool, latency: float | None = None) -> float:
    """The seconds each agent call takes: ``latency``, or when it is ``None`` the path's
    default, :data:`~agentdescent_sampling.bench.engine.workloads.ASYNC_LATENCY` on the
    asynchronous path and none on the synchronous one."""
    if latency is not None:
        return latency
    return ASYNC_LATENCY if asynchronous else 0.0


def run_engine(
    workload: EngineWorkload,
    make_sampler: Callable[[Built], TaskSampler],
    seed: int,
    *,
    reflector: str = REFLECTORS[0],
    wiring: Wiring | None = None,
    asynchronous: bool = False,
    latency: float | None = None,
) -> EngineRun:
    """Run ``evolve()`` once on a seeded instance of ``workload`` with a fresh sampler.

    Args:
        workload: the task set and run shape.
        make_sampler: builds the sampler for this run, given the seeded workload.
        seed: fixes the task order, ``k`` values and luck.
        reflector: what the agent proposes on a failure, one of
            :data:`~agentdescent_sampling.bench.engine.workloads.REFLECTORS`.
        wiring: given the sampler and the seeded workload, returns extra ``evolve()``
            keyword arguments (see :data:`Wiring`), merged over the workload's own.
        asynchronous: run ``evolve(asynchronous=True)``.
        latency: seconds each agent call takes; ``None`` for
            :data:`~agentdescent_sampling.bench.engine.workloads.ASYNC_LATENCY` on the
            asynchronous path and none on the synchronous one.

    Raises:
        Exception: the first exception the sampler raised, which the engine itself
            would only count as a failed worker.
        ValueError: ``reflector`` is unknown, or ``wiring`` returned an argument the bench
            passes itself.
        RuntimeError: ``evolve()`` reported an error of its own.
    """
    from agentdescent import evolve

    check_path(reflector, asynchronous)
    built = build(workload, seed, reflector, agent_latency(asynchronous, latency))
    sampler = make_sampler(built)
    options = workload.evolve_options(asynchronous)
    # Without the run's solved_threshold, which evolve() gets below: given it, wire() refuses
    # a sampler whose pass_threshold differs, and the bench measures the pair it was asked to.
    given = {key: value for key, value in options.items() if key != "solved_threshold"}
    wired = wiring(sampler, built, given) if wiring else {}
    reserved = sorted(_RESERVED & set(wired))
    if reserved:
        raise ValueError(
            f"the wiring returned {', '.join(reserved)}, which the bench passes evolve() itself; "
            f"return only extra keyword arguments such as on_round, propose or policies"
        )
    options.update(wired)
    if built.noisy_gate:
        built.agent.next_round()
        options["on_round"] = _next_round(built.agent, options.get("on_round"))
    tally = _Tally(options.pop("task_sampler", sampler), built.fixable, workload.solved_threshold)
    result = evolve(
        built.tasks,
        built.reward,
        agent=built.agent,
        task_sampler=tally,
        held_out_frac=built.held_out_frac,
        **options,
    )
    if tally.error is not None:
        raise tally.error
    if result.error is not None:
        raise RuntimeError(f"evolve() failed on {workload.name}, seed {seed}: {result.error}")
    rewards = [info.held_out_reward for info in result.history]
    if built.noisy_gate:
        # Round r's rollouts saw what round r - 1 committed; the last round's, the result.
        seen = built.agent.round_artifacts
        rewards = [built.held_out_of(text) for text in (*seen[1:], result.rendered)]
    rollouts = (info.rollouts for info in result.history)
    curve = ((0, built.start), *zip(rollouts, rewards, strict=True))
    calls = (0, *(info.calls for info in result.history))
    return EngineRun(
        curve, calls, built.start, built.attainable, tally.useful, tally.rollouts,
        len(tally.taught), len(built.fixable), result.rendered,
    )  # fmt: skip
