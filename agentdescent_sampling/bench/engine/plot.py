"""Plot the held-out gain against rollouts or agent calls, one panel per engine workload (needs
matplotlib)."""

from __future__ import annotations

import math
from os import PathLike
from pathlib import Path

from ..plot import _PALETTE, _ROLE_STYLE, _figure_class, save_figure
from .metrics import Measure
from .runner import EngineBenchResult

__all__ = ["plot_gains"]


def plot_gains(
    result: EngineBenchResult, path: str | PathLike[str], x: Measure = "rollouts"
) -> Path:
    """Draw each sampler's held-out gain against the rollouts spent (or, with ``x="calls"``,
    the agent calls made), with 95% bands.

    The gain is the fraction of the attainable held-out gain the artifact held. One
    panel per workload; round-robin is grey and the oracle dashed black, as in the
    simulated bench's plot. The format follows the file extension.

    Returns:
        The path written.

    Raises:
        BenchError: matplotlib is not installed, or the file can't be written.
    """
    figure_class = _figure_class()
    panels = len(result.workloads)
    columns = min(panels, 4)
    rows = math.ceil(panels / columns)
    figure = figure_class(figsize=(4.6 * columns, 4.0 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, sharey=True, squeeze=False).flatten()
    for axis, workload in zip(axes, result.workloads, strict=False):
        others = 0
        for sampler in workload.samplers:
            if sampler.role == "sampler":
                color, linestyle = _PALETTE[others % len(_PALETTE)], "-"
                others += 1
            else:
                color, linestyle = _ROLE_STYLE[sampler.role]
            curve = sampler.curve if x == "rollouts" else sampler.call_curve
            spent = [point.spent for point in curve]
            (line,) = axis.plot(
                spent,
                [point.mean for point in curve],
                label=sampler.label,
                color=color,
                linestyle=linestyle,
                linewidth=1.6,
                drawstyle="steps-post",
            )
            axis.fill_between(
                spent,
                [point.low for point in curve],
                [point.high for point in curve],
                color=line.get_color(),
                alpha=0.15,
                linewidth=0,
                step="post",
            )
        axis.set_title(workload.name)
        axis.set_xlabel("rollouts spent" if x == "rollouts" else "agent calls made")
        axis.set_ylim(-0.03, 1.05)
        axis.grid(alpha=0.3)
    for axis in axes[panels:]:
        axis.set_visible(False)
    for axis in axes[::columns]:
        axis.set_ylabel("share of the attainable held-out gain")
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    figure.suptitle(
        f"Held-out reward gain in evolve() against {'rollouts' if x == 'rollouts' else 'calls'}: "
        f"mean and 95% interval over {result.config.seeds} seeds, "
        f"reflector {result.config.reflector}"
    )
    return save_figure(figure, path)
