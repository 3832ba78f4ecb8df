"""Plot the held-out gain against rollouts or agent calls, one panel per engine workload (needs
matplotlib)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from ..._display import plural
from ..core import draw_panels, finish
from .metrics import FEWEST_FOR_INTERVAL, Measure
from .runner import EngineBenchResult

__all__ = ["plot_gains"]


def plot_gains(
    result: EngineBenchResult, path: str | PathLike[str], x: Measure = "rollouts"
) -> Path:
    """Draw each sampler's held-out gain against the rollouts spent (or, with ``x="calls"``,
    the agent calls made), with 95% bands when there are seeds enough for an interval (6, as
    in the text report; with fewer, the means alone, and the title says why).

    The gain is the fraction of the attainable held-out gain the artifact held. One
    panel per workload; round-robin is grey, the learner ceiling dashed black and the
    oracle dotted black, as in the simulated bench's plot. It is written as a PNG, to ``path``
    if it ends in ``.png`` and to ``path`` + ``.png`` otherwise.

    Returns:
        The path written.

    Raises:
        BenchError: matplotlib is not installed, or the file can't be written.
    """
    panels = [
        (
            w.name,
            [(s.label, s.role, s.curve if x == "rollouts" else s.call_curve) for s in w.samplers],
        )
        for w in result.workloads
    ]
    seeds = result.config.seeds
    bands = seeds >= FEWEST_FOR_INTERVAL
    figure, axes, columns = draw_panels(
        panels,
        (4.6, 4.0),
        "rollouts spent" if x == "rollouts" else "agent calls made",
        (-0.03, 1.05),
        steps=True,
        bands=bands,
    )
    shown = (
        f"mean and 95% interval over {plural(seeds, 'seed')}"
        if bands
        else f"mean over {plural(seeds, 'seed')} (too few for a 95% interval, which takes "
        f"{FEWEST_FOR_INTERVAL})"
    )
    return finish(
        figure,
        axes,
        columns,
        "share of the attainable held-out gain",
        f"Held-out reward gain in evolve() against {'rollouts' if x == 'rollouts' else 'calls'}: "
        f"{shown}, reflector {result.config.reflector}",
        path,
    )
