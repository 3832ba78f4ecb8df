"""Plot the share against the budget spent, one panel per workload (needs matplotlib)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from .._display import plural
from .core import draw_panels, finish
from .runner import BenchResult

__all__ = ["plot_shares"]


def plot_shares(result: BenchResult, path: str | PathLike[str]) -> Path:
    """Draw each sampler's share against the rollouts spent, with 95% interval bands (with
    one seed, which gives no interval, the means alone, and the title says why).

    One panel per workload; round-robin is drawn grey and the oracle dashed, so the
    floor and the ceiling read at a glance. It is written as a PNG, to ``path`` if it ends
    in ``.png`` and to ``path`` + ``.png`` otherwise.

    Returns:
        The path written.

    Raises:
        BenchError: matplotlib is not installed, or the file can't be written.
    """
    seeds = result.config.seeds
    bands = seeds > 1  # one seed gives no interval: its ends would be the mean
    figure, axes, columns = draw_panels(
        [(w.label, [(s.label, s.role, s.curve) for s in w.samplers]) for w in result.workloads],
        (5.5, 5.0),
        "rollouts spent",
        (0.0, 1.03),
        bands=bands,
    )
    workers = result.config.loop.n_workers
    shown = (
        f"mean and 95% interval over {plural(seeds, 'seed')}"
        if bands
        else "mean over 1 seed (too few for a 95% interval, which takes 2)"
    )
    return finish(
        figure,
        axes,
        columns,
        "share of rollouts on informative tasks",
        f"Share of rollouts on informative tasks against budget: {shown}, "
        f"{plural(workers, 'worker')}",
        path,
    )
