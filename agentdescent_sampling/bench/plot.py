"""Plot the share against the budget spent, one panel per workload (needs matplotlib)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from ..protocol import short_repr
from .errors import BenchError
from .runner import BenchResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_shares", "require_matplotlib"]

# The package is not on PyPI yet: from a clone the extra is '.[plot]'; matplotlib is all it adds.
_EXTRA = "python -m pip install '.[plot]' in a clone of agentdescent-sampling, or matplotlib"
# matplotlib's tab10 without its grey, which is kept for round-robin alone.
_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf",
)  # fmt: skip
_ROLE_STYLE = {"baseline": ("grey", "-"), "ceiling": ("black", "--")}


def require_matplotlib() -> None:
    """Check that plotting can work, before a long run rather than after it.

    Raises:
        BenchError: matplotlib is not installed; the message names the extra.
    """
    _figure_class()


def plot_shares(result: BenchResult, path: str | PathLike[str]) -> Path:
    """Draw each sampler's share against the rollouts spent, with 95% interval bands.

    One panel per workload; round-robin is drawn grey and the oracle dashed, so the
    floor and the ceiling read at a glance. The format follows the file extension.

    Returns:
        The path written.

    Raises:
        BenchError: matplotlib is not installed, or the file can't be written.
    """
    figure_class = _figure_class()
    panels = len(result.workloads)
    figure = figure_class(figsize=(5.5 * panels, 5.0), layout="constrained")
    axes = figure.subplots(1, panels, sharey=True, squeeze=False)[0]
    for axis, workload in zip(axes, result.workloads, strict=True):
        others = 0
        for sampler in workload.samplers:
            spent = [point.rollouts for point in sampler.curve]
            if sampler.role == "sampler":
                color, linestyle = _PALETTE[others % len(_PALETTE)], "-"
                others += 1
            else:
                color, linestyle = _ROLE_STYLE[sampler.role]
            (line,) = axis.plot(
                spent,
                [point.mean for point in sampler.curve],
                label=sampler.label,
                color=color,
                linestyle=linestyle,
                linewidth=1.6,
            )
            axis.fill_between(
                spent,
                [point.low for point in sampler.curve],
                [point.high for point in sampler.curve],
                color=line.get_color(),
                alpha=0.18,
                linewidth=0,
            )
        axis.set_title(workload.label)
        axis.set_xlabel("rollouts spent")
        axis.set_ylim(0.0, 1.03)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("share of rollouts on informative tasks")
    handles, labels = axes[0].get_legend_handles_labels()
    # Outside the panels, so no curve hides behind it; bbox_inches="tight" keeps it in.
    figure.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    config = result.config
    workers = config.loop.n_workers
    figure.suptitle(
        f"Share of rollouts on informative tasks against budget: mean and 95% interval "
        f"over {config.seeds} seeds, {workers} worker{'s' if workers > 1 else ''}"
    )
    return save_figure(figure, path)


def save_figure(figure: Figure, path: str | PathLike[str]) -> Path:
    """Write ``figure`` as a PNG to ``path``, or to ``path`` + ``.png`` if it ends otherwise;
    return the path written. A path that cannot be written is a BenchError."""
    target = Path(path)
    if target.suffix.lower() != ".png":
        target = target.with_name(target.name + ".png")
    try:
        figure.savefig(target, format="png", dpi=110, bbox_inches="tight")
    except (OSError, ValueError) as error:
        raise BenchError(
            f"cannot write the plot to {short_repr(str(target))}: {error}; pass a writable path "
            f"ending in .png"
        ) from error
    return target


def _figure_class() -> type[Figure]:
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise BenchError(
            f"plotting needs matplotlib, which is not installed ({error}); install the "
            f"plot extra: {_EXTRA}"
        ) from error
    return Figure
