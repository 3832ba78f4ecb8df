"""What a bench run reports for one sampler on one workload, computed from its rollouts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate

import attrs

from .core import CurvePoint, Role, t95
from .driver import Rollout

__all__ = [
    "Latency",
    "SamplerResult",
    "Share",
    "checkpoints",
    "share_across_seeds",
    "summarise",
]


@attrs.frozen
class Share:
    """The share of rollouts that landed on informative tasks, across seeds.

    Args:
        mean: the mean over seeds.
        low: lower end of the 95% confidence interval of the mean (Student t,
            clipped to [0, 1]).
        high: upper end of that interval.
        p10: 10th percentile of the per-seed shares.
        p50: the median per-seed share.
        p90: 90th percentile of the per-seed shares.
    """

    mean: float
    low: float
    high: float
    p10: float
    p50: float
    p90: float


@attrs.frozen
class Latency:
    """How long a sampler method took, over every call in the run, in microseconds."""

    p50_us: float
    p99_us: float


@attrs.frozen
class SamplerResult:
    """Everything the bench reports for one sampler on one workload.

    Args:
        label: the sampler's spec string, or ``oracle``.
        role: ``baseline`` (round-robin), ``ceiling`` (the oracle) or ``sampler``.
        share: the informative share across seeds.
        ratio_to_round_robin: mean share over round-robin's mean share in the same
            run; ``None`` when round-robin's share is zero.
        duplicate_rate: the fraction of rollouts picked while another rollout of
            the same task was in flight.
        pick_latency: ``pick`` call durations.
        record_latency: ``record`` call durations.
        curve: the share against the budget spent, for plots.
        seeds: how many seeds ran.
        rollouts: how many rollouts ran, over all seeds.
    """

    label: str
    role: Role
    share: Share
    ratio_to_round_robin: float | None
    duplicate_rate: float
    pick_latency: Latency
    record_latency: Latency
    curve: tuple[CurvePoint, ...]
    seeds: int
    rollouts: int


def checkpoints(budget: int, points: int = 20) -> tuple[int, ...]:
    """Up to ``points`` evenly spaced budgets from ``budget / points`` to ``budget``."""
    return tuple(sorted({max(1, round(budget * step / points)) for step in range(1, points + 1)}))


def share_across_seeds(shares: Sequence[float]) -> Share:
    """Summarise per-seed shares: mean, 95% interval of the mean, p10, p50, p90.

    With a single seed the interval collapses onto the mean.
    """
    ordered = sorted(shares)
    mean, low, high = _mean_interval(shares)
    return Share(
        mean, low, high, _quantile(ordered, 0.1), _quantile(ordered, 0.5), _quantile(ordered, 0.9)
    )


def summarise(
    label: str,
    role: Role,
    traces: Sequence[Sequence[Rollout]],
) -> SamplerResult:
    """Reduce one sampler's runs, one trace per seed, to a :class:`SamplerResult`.

    Args:
        label: the sampler's label.
        role: its role in the run.
        traces: the rollouts of each seed, as :func:`~agentdescent_sampling.bench.drive`
            returns them; every trace has the same length, the budget.

    The ratio to round-robin needs the other samplers' results, so it is left
    ``None`` here for the caller to fill in.
    """
    # informative[s][n] counts the informative rollouts among seed s's first n + 1.
    informative = [list(accumulate(rollout.informative for rollout in trace)) for trace in traces]
    share = share_across_seeds([counts[-1] / len(counts) for counts in informative])
    curve = tuple(
        CurvePoint(spent, *_mean_interval([counts[spent - 1] / spent for counts in informative]))
        for spent in checkpoints(len(traces[0]))
    )
    rollouts = [rollout for trace in traces for rollout in trace]
    return SamplerResult(
        label=label,
        role=role,
        share=share,
        ratio_to_round_robin=None,
        duplicate_rate=sum(rollout.duplicate for rollout in rollouts) / len(rollouts),
        pick_latency=_latency([rollout.pick_ns for rollout in rollouts]),
        record_latency=_latency([rollout.record_ns for rollout in rollouts]),
        curve=curve,
        seeds=len(traces),
        rollouts=len(rollouts),
    )


def _mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    count = len(values)
    mean = math.fsum(values) / count
    if count < 2:
        return mean, mean, mean
    variance = math.fsum((value - mean) ** 2 for value in values) / (count - 1)
    half = t95(count - 1) * math.sqrt(variance / count)
    # A share lies in [0, 1]; the t interval does not know that near the ends.
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default method)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _latency(durations_ns: list[int]) -> Latency:
    ordered = sorted(durations_ns)
    return Latency(_quantile(ordered, 0.5) / 1000, _quantile(ordered, 0.99) / 1000)
