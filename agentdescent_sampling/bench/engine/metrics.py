"""What the engine bench reports for one sampler on one workload, paired by seed with round-robin.

How each figure is formed:

- **Rollouts to reach a fraction** (50%, 75%, 90%) of the attainable held-out gain: the
  rollouts spent when the held-out reward, measured after each round, first reached
  ``start + fraction * (attainable - start)``. A run that never got there within its
  budget is *censored at the budget*: it counts as the budget, and ``not_reached`` says
  how many runs that was. The median is then still exact while fewer than half of the
  runs are censored; ``median_censored`` says when it is not (the true median is
  above the budget).
- **Ratio to round-robin**: for each seed, round-robin's rollouts over the sampler's
  (above 1 means fewer rollouts than round-robin), and the median of these per-seed
  ratios, with a 95% percentile-bootstrap interval (2,000 resamples of the seeds, a fixed
  bootstrap seed). Censoring at the budget makes a censored sampler look no worse than
  "reached at the last round", so a ratio above 1 is never inflated by it.
- **Area**: the mean fraction of the attainable gain the artifact held over the
  budget (the area under held-out reward against rollouts, scaled to 0-1).
- **Final**: the held-out reward after the last round.
- **Useful**: the share of a run's rollouts that failed on a fixable task, the only
  ones the reflector learns from. **Taught**: distinct fixable tasks with a useful rollout.
- **Calls**: agent calls the engine counted (rollouts, self-verification, held-out scoring).

Means come with a Student-t 95% interval over seeds; differences from round-robin
(``*_vs_round_robin``) are the mean of per-seed differences, with its t interval.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

import attrs

from ..metrics import Role, _t95
from .run import EngineRun

__all__ = [
    "FRACTIONS",
    "EngineSamplerResult",
    "GainPoint",
    "Interval",
    "Reach",
    "gain_at",
    "mean_interval",
    "median_ratio",
    "summarise_engine",
]

#: The fractions of the attainable gain whose cost in rollouts the bench reports.
FRACTIONS = (0.5, 0.75, 0.9)
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
    """What it cost to reach ``fraction`` of the attainable gain, across seeds.

    Args:
        fraction: the fraction of the gain.
        median: the median rollouts over seeds, counting a run that never got there
            as the budget.
        median_censored: at least half the runs never got there, so the true median
            is above the budget.
        not_reached: runs that never got there within the budget.
        ratio_to_round_robin: the median over seeds of round-robin's rollouts over this
            sampler's, with a bootstrap 95% interval; above 1 is fewer rollouts.
    """

    fraction: float
    median: float
    median_censored: bool
    not_reached: int
    ratio_to_round_robin: Interval


@attrs.frozen
class GainPoint:
    """The fraction of the attainable gain held after ``rollouts``: mean and 95% interval."""

    rollouts: int
    mean: float
    low: float
    high: float


@attrs.frozen
class EngineSamplerResult:
    """Everything the engine bench reports for one sampler on one workload.

    Args:
        label: the sampler's spec string, or the bench's name for it.
        role: ``baseline`` (round-robin), ``ceiling`` (the oracle) or ``sampler``.
        seeds: runs, one per seed.
        reach: rollouts to reach each of :data:`FRACTIONS` of the gain.
        area: the mean fraction of the attainable gain held over the budget.
        area_vs_round_robin: the paired difference of ``area`` from round-robin's.
        final: the held-out reward at the end.
        final_vs_round_robin: the paired difference of ``final`` from round-robin's.
        useful: the share of rollouts that failed on a fixable task.
        taught: distinct fixable tasks that got a useful rollout.
        fixable: fixable train tasks in the workload.
        calls: agent calls per run.
        curve: the fraction of the gain held against rollouts spent, for plots.
    """

    label: str
    role: Role
    seeds: int
    reach: tuple[Reach, ...]
    area: Interval
    area_vs_round_robin: Interval
    final: Interval
    final_vs_round_robin: Interval
    useful: Interval
    taught: Interval
    fixable: int
    calls: Interval
    curve: tuple[GainPoint, ...]

    def at(self, fraction: float) -> Reach:
        """The :class:`Reach` for ``fraction``.

        Raises:
            KeyError: ``fraction`` is not one of :data:`FRACTIONS`.
        """
        for reach in self.reach:
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
    """
    if len(runs) != len(baseline) or not runs:
        raise ValueError(
            f"{label}: {len(runs)} runs against round-robin's {len(baseline)}; "
            f"the comparison is paired by seed, so both need the same seeds (at least one)"
        )
    reach = []
    for fraction in FRACTIONS:
        costs = [_cost(run, fraction, budget) for run in runs]
        base = [_cost(run, fraction, budget) for run in baseline]
        missed = sum(run.rollouts_to(fraction) is None for run in runs)
        reach.append(
            Reach(
                fraction,
                statistics.median(costs),
                missed * 2 >= len(runs),
                missed,
                median_ratio([b / c for b, c in zip(base, costs, strict=True)]),
            )
        )
    areas = [run.area(budget) for run in runs]
    base_areas = [run.area(budget) for run in baseline]
    finals = [run.final for run in runs]
    base_finals = [run.final for run in baseline]
    return EngineSamplerResult(
        label=label,
        role=role,
        seeds=len(runs),
        reach=tuple(reach),
        area=mean_interval(areas),
        area_vs_round_robin=mean_interval([a - b for a, b in zip(areas, base_areas, strict=True)]),
        final=mean_interval(finals),
        final_vs_round_robin=mean_interval(
            [a - b for a, b in zip(finals, base_finals, strict=True)]
        ),
        useful=mean_interval([run.useful / run.rollouts if run.rollouts else 0.0 for run in runs]),
        taught=mean_interval([float(run.taught) for run in runs]),
        fixable=runs[0].fixable,
        calls=mean_interval([float(run.calls) for run in runs]),
        curve=_curve(runs, budget),
    )


def mean_interval(values: Sequence[float]) -> Interval:
    """The mean with its Student-t 95% interval; one value gives a zero-width interval."""
    count = len(values)
    mean = math.fsum(values) / count
    if count < 2:
        return Interval(mean, mean, mean)
    half = _t95(count - 1) * statistics.stdev(values) / math.sqrt(count)
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


def gain_at(run: EngineRun, rollouts: int) -> float:
    """The fraction of the attainable gain the artifact held after ``rollouts`` rollouts."""
    held = run.start
    for spent, reward in run.curve:
        if spent > rollouts:
            break
        held = reward
    return run.gain(held)


def _cost(run: EngineRun, fraction: float, budget: int) -> int:
    reached = run.rollouts_to(fraction)
    return budget if reached is None else min(reached, budget)


def _curve(runs: Sequence[EngineRun], budget: int) -> tuple[GainPoint, ...]:
    points = sorted({round(budget * step / _CURVE_POINTS) for step in range(_CURVE_POINTS + 1)})
    curve = []
    for spent in points:
        interval = mean_interval([gain_at(run, spent) for run in runs])
        curve.append(GainPoint(spent, interval.value, interval.low, interval.high))
    return tuple(curve)
