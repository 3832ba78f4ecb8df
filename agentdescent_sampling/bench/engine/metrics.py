"""What the engine bench reports for one sampler on one workload, paired by seed with round-robin.

Two measures of cost, each a first-class figure:

- **rollouts**: the rollouts the sampler handed out (``RoundInfo.rollouts``);
- **agent calls**: every call the engine made to the agent (``RoundInfo.calls``, cumulative
  after each round). In agentdescent 0.7.0 that counts each ``run`` and each ``propose``
  invocation: a rollout (one ``run``), the reflector's ``propose`` on each failure, the
  self-verify re-run of each proposal (one more ``run``, on by default), and the held-out
  measurement of every candidate that reaches the gate (one ``run`` per held-out task not
  already cached). A pass costs one call; a failure costs a rollout, a ``propose`` and a
  self-verify run, and, when its proposal reaches the gate, a share of a held-out
  measurement. Calls are what a user pays for.

How each figure is formed:

- **Cost to reach a fraction** (50%, 75%, 90%) of the attainable held-out gain: the
  rollouts (or calls) spent when the held-out reward, measured after each round, first
  reached ``start + fraction * (attainable - start)``. A run that never got there is
  *censored*: it counts as the budget (for calls, the most calls any run of this sampler
  or round-robin on the workload made), and ``not_reached`` says how many runs that was.
  The median is then still exact while fewer than half of the runs are censored;
  ``median_censored`` says when it is not (the true median is above the budget).
- **Ratio to round-robin**: for each seed, round-robin's cost over the sampler's (above 1
  means cheaper than round-robin), and the median of these per-seed ratios, with a 95%
  percentile-bootstrap interval (2,000 resamples of the seeds, a fixed bootstrap seed).
  Censoring at the budget makes a censored sampler look no worse than "reached at the
  end", so a ratio above 1 is never inflated by it. A cost counts as at least 1: only a
  run censored at a budget of 0 costs less (calls, when no run recorded a round), and two
  such runs cost as much as each other.
- **No rounds**: runs in which ``evolve()`` recorded no round (the asynchronous path records
  one only for a merger sweep that had proposals to merge). Such a run's held-out reward
  stays at the start, so it reaches no fraction, and its agent calls count as 0.
- **Area**: the mean fraction of the attainable gain the artifact held over the
  budget (the area under held-out reward against rollouts, scaled to 0-1).
- **Final**: the held-out reward after the last round.
- **At round-robin's calls**: the held-out reward after as many agent calls as round-robin
  made in its whole run on the same seed (a run that made fewer in all is taken at its
  end), as a paired difference from round-robin's final reward: the artifact each buys for
  the same money.
- **Useful**: the share of a run's rollouts that failed on a fixable task, the only
  ones the reflector learns from. **Taught**: distinct fixable tasks with a useful rollout.
- **Calls**: agent calls per run.

Means come with a Student-t 95% interval over seeds; differences from round-robin
(``*_vs_round_robin``) are the mean of per-seed differences, with its t interval.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from ..core import CurvePoint, Role, t95
from .run import EngineRun

__all__ = [
    "FEWEST_FOR_INTERVAL",
    "FRACTIONS",
    "MEASURES",
    "EngineSamplerResult",
    "Interval",
    "Measure",
    "Reach",
    "gain_at",
    "mean_interval",
    "median_ratio",
    "reward_at",
    "summarise_engine",
]

#: The fractions of the attainable gain whose cost the bench reports.
FRACTIONS = (0.5, 0.75, 0.9)
#: What a cost is counted in: rollouts handed out, or agent calls made.
Measure = Literal["rollouts", "calls"]
#: Both measures, rollouts first.
MEASURES: tuple[Measure, ...] = ("rollouts", "calls")
#: The fewest seeds (or paired runs, for the verdict) a 95% interval is shown for, in the
#: report and the plot. With fewer, the bootstrap interval of a median collapses onto the
#: few ratios there are, and a Student t interval runs past what the figure can be. The quick
#: bench runs 6.
FEWEST_FOR_INTERVAL = 6
_RESAMPLES = 2000
_BOOTSTRAP_SEED = 20260101
_CURVE_POINTS = 40


@attrs.frozen
class Interval:
    """A figure and its 95% interval."""

    value: float
    low: float
    high: float


@attrs.frozen
class Reach:
    """What it cost, in rollouts or in agent calls, to reach ``fraction`` of the gain.

    Args:
        fraction: the fraction of the gain.
        median: the median cost over seeds, counting a run that never got there as the
            budget.
        median_censored: at least half the runs never got there, so the true median
            is above the budget.
        not_reached: runs that never got there.
        ratio_to_round_robin: the median over seeds of round-robin's cost over this
            sampler's, with a bootstrap 95% interval; above 1 is cheaper.
        ratios: the per-seed ratios that median is taken over, in seed order.
        costs: the per-seed costs, in seed order, None where the run never got there.
        budget: where a run that never got there is censored (its sampler's budget).
    """

    fraction: float
    median: float
    median_censored: bool
    not_reached: int
    ratio_to_round_robin: Interval
    ratios: tuple[float, ...] = ()
    costs: tuple[int | None, ...] = ()
    budget: int = 0


@attrs.frozen
class EngineSamplerResult:
    """Everything the engine bench reports for one sampler on one workload.

    Args:
        label: the sampler's spec string, or the bench's name for it.
        role: ``baseline`` (round-robin), ``ceiling`` (the oracle) or ``sampler``.
        seeds: runs, one per seed.
        reach: rollouts to reach each of :data:`FRACTIONS` of the gain.
        calls_reach: agent calls to reach each of :data:`FRACTIONS` of the gain.
        area: the mean fraction of the attainable gain held over the budget.
        area_vs_round_robin: the paired difference of ``area`` from round-robin's.
        final: the held-out reward at the end.
        final_vs_round_robin: the paired difference of ``final`` from round-robin's.
        equal_calls_vs_round_robin: the held-out reward after as many agent calls as
            round-robin made in its run on the same seed (at its end, if it made fewer),
            as a paired difference from round-robin's ``final``.
        useful: the share of rollouts that failed on a fixable task.
        taught: distinct fixable tasks that got a useful rollout.
        fixable: fixable train tasks in the workload.
        calls: agent calls per run.
        curve: the fraction of the gain held against rollouts spent, for plots.
        call_curve: the fraction of the gain held against agent calls made, for plots.
        no_rounds: runs in which ``evolve()`` recorded no round: their held-out reward was
            never measured after the start, and their agent calls count as 0.
    """

    label: str
    role: Role
    seeds: int
    reach: tuple[Reach, ...]
    calls_reach: tuple[Reach, ...]
    area: Interval
    area_vs_round_robin: Interval
    final: Interval
    final_vs_round_robin: Interval
    equal_calls_vs_round_robin: Interval
    useful: Interval
    taught: Interval
    fixable: int
    calls: Interval
    curve: tuple[CurvePoint, ...]
    call_curve: tuple[CurvePoint, ...]
    no_rounds: int = 0

    def at(self, fraction: float, measure: Measure = "rollouts") -> Reach:
        """The :class:`Reach` for ``fraction``, in rollouts or in agent calls.

        Raises:
            KeyError: ``fraction`` is not one of :data:`FRACTIONS`.
        """
        for reach in self.reach if measure == "rollouts" else self.calls_reach:
            if math.isclose(reach.fraction, fraction):
                return reach
        raise KeyError(f"no figure for {fraction}; the bench reports {list(FRACTIONS)}")


def summarise_engine(
    label: str,
    role: Role,
    runs: Sequence[EngineRun],
    baseline: Sequence[EngineRun],
    budget: int,
) -> EngineSamplerResult:
    """Reduce one sampler's runs to an :class:`EngineSamplerResult`.

    Args:
        label: the sampler's label.
        role: its role in the run.
        runs: its runs, one per seed.
        baseline: round-robin's runs on the same seeds, in the same order.
        budget: rollouts per run, where a run that never reaches a fraction is censored.

    Raises:
        ValueError: the runs are not paired one for one with round-robin's, or ``budget``
            is not a whole number >= 1.
    """
    if len(runs) != len(baseline) or not runs:
        raise ValueError(
            f"{label}: {len(runs)} runs against round-robin's {len(baseline)}; "
            f"the comparison is paired by seed, so both need the same seeds (at least one)"
        )
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(
            f"{label}: budget={budget!r}; expected the rollouts each run was given, a whole "
            f"number >= 1 (a workload's budget is its rounds times its workers)"
        )
    call_budget = max(run.calls for run in (*runs, *baseline))
    areas = [run.area(budget) for run in runs]
    base_areas = [run.area(budget) for run in baseline]
    finals = [run.final for run in runs]
    base_finals = [run.final for run in baseline]
    return EngineSamplerResult(
        label=label,
        role=role,
        seeds=len(runs),
        reach=_reach(runs, baseline, "rollouts", budget),
        calls_reach=_reach(runs, baseline, "calls", call_budget),
        area=mean_interval(areas),
        area_vs_round_robin=mean_interval([a - b for a, b in zip(areas, base_areas, strict=True)]),
        final=mean_interval(finals),
        final_vs_round_robin=mean_interval(
            [a - b for a, b in zip(finals, base_finals, strict=True)]
        ),
        equal_calls_vs_round_robin=mean_interval(
            [
                reward_at(run, base.calls, "calls") - base.final
                for run, base in zip(runs, baseline, strict=True)
            ]
        ),
        useful=mean_interval([run.useful / run.rollouts if run.rollouts else 0.0 for run in runs]),
        taught=mean_interval([float(run.taught) for run in runs]),
        fixable=runs[0].fixable,
        calls=mean_interval([float(run.calls) for run in runs]),
        curve=_curve(runs, budget, "rollouts"),
        call_curve=_curve(runs, call_budget, "calls"),
        no_rounds=sum(not run.rounds for run in runs),
    )


def mean_interval(values: Sequence[float]) -> Interval:
    """The mean with its Student-t 95% interval; one value gives a zero-width interval."""
    count = len(values)
    mean = math.fsum(values) / count
    if count < 2:
        return Interval(mean, mean, mean)
    half = t95(count - 1) * statistics.stdev(values) / math.sqrt(count)
    return Interval(mean, mean - half, mean + half)


def median_ratio(ratios: Sequence[float]) -> Interval:
    """The median of per-seed ratios, with a 95% percentile-bootstrap interval.

    The resampling is seeded, so the same ratios always give the same interval.
    """
    median = statistics.median(ratios)
    if len(ratios) < 2:
        return Interval(median, median, median)
    rng = random.Random(_BOOTSTRAP_SEED)
    count = len(ratios)
    medians = sorted(statistics.median(rng.choices(ratios, k=count)) for _ in range(_RESAMPLES))
    return Interval(median, medians[int(0.025 * _RESAMPLES)], medians[int(0.975 * _RESAMPLES) - 1])


def gain_at(run: EngineRun, spent: int, measure: Measure = "rollouts") -> float:
    """The fraction of the attainable gain the artifact held after ``spent`` rollouts (or
    agent calls, with ``measure="calls"``)."""
    return run.gain(reward_at(run, spent, measure))


def reward_at(run: EngineRun, spent: int, measure: Measure = "rollouts") -> float:
    """The held-out reward of the artifact after ``spent`` rollouts (or agent calls, with
    ``measure="calls"``): that of the last round ended by then, the start's before any."""
    held = run.start
    for x, (_, reward) in zip(_spent(run, measure), run.curve, strict=True):
        if x > spent:
            break
        held = reward
    return held


def _spent(run: EngineRun, measure: Measure) -> Sequence[int]:
    """What the run had spent at each point of its curve, in ``measure``."""
    return [x for x, _ in run.curve] if measure == "rollouts" else run.call_curve


_COST_TO: dict[Measure, Callable[[EngineRun, float], int | None]] = {
    "rollouts": EngineRun.rollouts_to,
    "calls": EngineRun.calls_to,
}


def _reach(
    runs: Sequence[EngineRun], baseline: Sequence[EngineRun], measure: Measure, budget: int
) -> tuple[Reach, ...]:
    """The cost in ``measure`` to reach each of :data:`FRACTIONS`, censored at ``budget``."""
    cost_to = _COST_TO[measure]

    def cost(run: EngineRun, fraction: float) -> int | None:
        reached = cost_to(run, fraction)
        return None if reached is None else min(reached, budget)

    def censored(costs: Sequence[int | None]) -> list[int]:
        return [budget if each is None else each for each in costs]

    reach = []
    for fraction in FRACTIONS:
        raw = tuple(cost(run, fraction) for run in runs)
        costs = censored(raw)
        base = censored([cost(run, fraction) for run in baseline])
        missed = raw.count(None)
        ratios = tuple(paired_ratio(b, c) for b, c in zip(base, costs, strict=True))
        reach.append(
            Reach(
                fraction,
                statistics.median(costs),
                missed * 2 >= len(runs),
                missed,
                median_ratio(ratios),
                ratios,
                raw,
                budget,
            )
        )
    return tuple(reach)


def paired_ratio(theirs: float, mine: float) -> float:
    """Their cost over mine on one seed: above 1, mine was cheaper. At least 1 each: with no
    round recorded by any run, the calls budget is 0."""
    return max(theirs, 1) / max(mine, 1)


def _curve(runs: Sequence[EngineRun], budget: int, measure: Measure) -> tuple[CurvePoint, ...]:
    points = sorted({round(budget * step / _CURVE_POINTS) for step in range(_CURVE_POINTS + 1)})
    curve = []
    for spent in points:
        interval = mean_interval([gain_at(run, spent, measure) for run in runs])
        curve.append(CurvePoint(spent, interval.value, interval.low, interval.high))
    return tuple(curve)
