"""The core the bench's two measures share: the share of informative rollouts
(:mod:`agentdescent_sampling.bench`) and the artifact (:mod:`agentdescent_sampling.bench.engine`).

Roles in a lineup, building a registered sampler for a run, the Student t interval, the
machine a run was on, JSON Schema pieces of the reports, and the plots' styles and panels.
Neither measure imports the other's private names: what both need is here.
"""

from __future__ import annotations

import math
import os
import platform
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

import attrs

from ..errors import BenchError, InvalidSamplerConfig
from ..policy import builtin_of, normalize
from ..protocol import MAX_COUNT, SOLVED, TaskSampler, short_repr
from ..registry import Registry
from ..spec import SamplerSpec, SpecLike, parse_spec
from ..validators import whole_number_in

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COUNT",
    "ENGINE_DIFFICULTY_WEIGHTED",
    "FAILURES",
    "LEARNER_CEILING",
    "NUMBER",
    "ORACLE",
    "WIRED_SUFFIX",
    "Curve",
    "CurvePoint",
    "Machine",
    "Registered",
    "Role",
    "RunFailure",
    "WithSamplers",
    "as_specs",
    "bare_name",
    "cpus",
    "draw_panels",
    "failures_json",
    "finish",
    "first_seed_in_range",
    "refuse_wired_label",
    "require_matplotlib",
    "result_json",
    "result_schema",
    "save_figure",
    "schema_object",
    "seed_range",
    "t95",
]

#: ``baseline`` is round-robin, ``ceiling`` an oracle, ``sampler`` everything else.
Role = Literal["baseline", "sampler", "ceiling"]

#: The bench's name for the engine's own ``agentdescent.sampling.DifficultyWeighted``, an
#: entrant of the artifact bench. A registered sampler name cannot contain a dot, so no
#: plugin can take it. It takes the class's parameters as a registered sampler does:
#: ``agentdescent.DifficultyWeighted:c=0.4``.
ENGINE_DIFFICULTY_WEIGHTED = "agentdescent.DifficultyWeighted"
#: The ceiling both measures add:
#: :class:`~agentdescent_sampling.bench.engine.oracle.EngineOracle` in the artifact bench,
#: :class:`~agentdescent_sampling.bench.oracle.Oracle` in the share measure.
ORACLE = "oracle"
#: What outcome-only learning can reach, in the artifact bench:
#: :class:`~agentdescent_sampling.bench.engine.ceiling.InformedLearner`, told the workload's
#: make-up.
LEARNER_CEILING = "learner-ceiling"


#: What the artifact bench appends to the label of a sampler it runs wired to the evidence.
WIRED_SUFFIX = " + wired"


def refuse_wired_label(given: object, *, engine: bool) -> None:
    """Refuse a report's wired row given back as a spec (``'fixable-first + wired'``),
    saying what to give instead.

    Raises:
        BenchError: ``given`` is a spec string ending in the wired suffix.
    """
    if not isinstance(given, str) or (found := re.search(r"\s*\+\s*wired\s*$", given)) is None:
        return
    base = given[: found.start()].strip()
    runs = (
        "the bench runs each sampler that takes the engine's evidence twice, alone and as "
        f"'<spec>{WIRED_SUFFIX}'"
        if engine
        else "the artifact bench (without 'share') runs each sampler that takes the engine's "
        "evidence alone and wired, and the share measure has no wiring"
    )
    raise BenchError(
        f"{short_repr(given)} is a row of the report, not a spec: {runs}; give {base!r}"
    )


def bare_name(given: object) -> str | None:
    """The name ``given`` is, if it gives a name and nothing else, or ``None``.

    ``"oracle"``, ``{"name": "oracle"}`` (a ``--sampler`` JSON object) and
    ``SamplerSpec("oracle")`` are all ``"oracle"``, so the bench's own names (round-robin,
    the ceilings) read alike in every form; a spec with parameters or a provider is ``None``.
    A name that selects a built-in or a ceiling in another spelling, as the registry reads
    names (``ROUND_ROBIN``, the alias ``RoundRobin``, ``Oracle``), is given as the bench
    spells it.
    """
    name: object = None
    if isinstance(given, str):
        name = given
    elif isinstance(given, SamplerSpec):
        name = given.name if not given.params and given.provider is None else None
    elif isinstance(given, Mapping) and list(given) == ["name"]:
        name = given["name"]
    if not isinstance(name, str) or ":" in name:
        return None
    key = normalize(name.strip())
    own = {normalize(each): each for each in (ORACLE, LEARNER_CEILING)}
    return own.get(key) or builtin_of(name.strip()) or name.strip()


# Two-sided 95% Student t critical values for 1..30 degrees of freedom; beyond 30
# the Cornish-Fisher expansion in t95 is accurate to three decimals.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95(df: int) -> float:
    """The two-sided 95% Student t critical value for ``df`` degrees of freedom."""
    if df <= len(_T95):
        return _T95[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def cpus() -> int:
    """The CPUs this process may run on (what ``nproc`` prints), not every CPU in the box."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@attrs.frozen
class Machine:
    """Where a run happened: enough to tell whether two timings compare."""

    python: str = attrs.field(factory=platform.python_version)
    implementation: str = attrs.field(factory=platform.python_implementation)
    cpus: int = attrs.field(factory=cpus)
    system: str = attrs.field(factory=platform.platform)


@attrs.frozen
class RunFailure:
    """A sampler left out of a bench run because one of its runs raised.

    Its runs on the other seeds and workloads are left out with it: compared only on the
    seeds it got through, it would be compared with round-robin on easier ground.

    Args:
        label: the sampler's label.
        workload: the name of the workload the run was on.
        seed: the run's seed.
        message: which sampler failed where, the exception, and how to rerun that run alone.
        traceback: the exception's traceback, as Python prints it.
    """

    label: str
    workload: str
    seed: int
    message: str
    traceback: str = attrs.field(default="", repr=False)

    @classmethod
    def of(
        cls, label: str, workload: str, seed: int, message: str, error: BaseException
    ) -> RunFailure:
        """The failure of a run that raised ``error``, with its traceback as Python prints it."""
        import traceback  # only when a run failed

        return cls(label, workload, seed, message, "".join(traceback.format_exception(error)))


#: The packages that call a sampler in a bench run: the engine, and this one.
_HOSTS = frozenset({"agentdescent", "agentdescent_sampling"})


def sampler_line(error: BaseException) -> str:
    """`` (at my_plugin/sampler.py:43)``: the innermost line of the sampler's own code that
    ``error`` came through, or ``""``. Its own code is the package the engine or this one
    called into, through the standard library's frames (a thread pool, ``copy``), that is
    neither; none of its code runs to tell."""
    from .._display import shown
    from ..loading import code_lines

    where, own, from_host = "", None, False
    for top, file, line in code_lines(error):
        if top in _HOSTS:
            from_host = True
        elif top not in sys.stdlib_module_names:  # the standard library's are passed through
            if from_host:
                own = top
            from_host = False
            if top == own and not file.startswith("<"):  # not code made at run time (attrs')
                where = f" (at {shown(file, 200)}:{line})"
    return where


@attrs.frozen
class Registered:
    """Builds a registered sampler for one run, filling in the run's seed and pass threshold
    where the sampler takes them and the spec leaves them out.

    Attributes:
        label: what reports call it: the canonical spec, and its provider if one was named.
        settings: the sampler, its provider and every parameter, given or at its default:
            alike for two specs that build alike (``difficulty-weighted:c=0.2`` and
            ``DifficultyWeighted``, ``failure_cost=3`` and its default ``3.0``), which a
            lineup runs once.
    """

    registry: Registry
    spec: SamplerSpec
    fills: tuple[str, ...]
    label: str
    settings: tuple[Any, ...]

    @classmethod
    def resolve(cls, given: SpecLike, registry: Registry) -> Registered:
        """Look ``given`` up and build it once, so that a bad spec fails before any run.

        Raises:
            SamplerError: the spec is malformed, names no installed sampler, or its
                parameters are rejected (the registry's own errors, unchanged).
        """
        spec = parse_spec(given)
        info = registry.get(spec.name, provider=spec.provider)
        canonical = attrs.evolve(spec, name=info.name)
        label = str(canonical) + (f" ({spec.provider})" if spec.provider else "")
        names = {parameter.name for parameter in info.signature.parameters}
        fills = tuple(n for n in ("seed", "pass_threshold") if n in names and n not in spec.params)
        defaults = {p.name: p.default for p in info.signature.parameters if not p.required}
        settings = (info.name, spec.provider, sorted({**defaults, **spec.params}.items()))
        registered = cls(registry, canonical, fills, label, settings)
        try:
            registered.create(0, SOLVED)
        except InvalidSamplerConfig:
            required = set(info.signature.required)
            if fills and not required & set(fills):
                # Refused as the user wrote it, its message quotes no parameter the bench
                # filled in: `c=-1`, not `pass_threshold=0.999,c=-1`.
                registry.create(canonical)
            raise
        return registered

    def create(self, seed: int, pass_threshold: float) -> TaskSampler:
        """A new sampler for a run with this seed and pass threshold."""
        supplied = {"seed": seed, "pass_threshold": pass_threshold}
        params = {**{name: supplied[name] for name in self.fills}, **self.spec.params}
        return self.registry.create(attrs.evolve(self.spec, params=params))


class _Labelled(Protocol):
    @property
    def label(self) -> str: ...


_Result = TypeVar("_Result", bound=_Labelled)


class WithSamplers(Generic[_Result]):
    """What a workload's result in either measure offers: its samplers' results, by label."""

    __slots__ = ()
    samplers: tuple[_Result, ...]

    def sampler(self, label: str) -> _Result:
        """The result of the sampler labelled ``label``.

        Raises:
            KeyError: no sampler in the run has that label; the message lists them.
        """
        for result in self.samplers:
            if result.label == label:
                return result
        raise KeyError(
            f"no sampler {label!r} in this run; it has {[r.label for r in self.samplers]}"
        )


def as_specs(value: Any, config: str) -> tuple[SpecLike, ...] | None:
    """``config``'s ``samplers`` field as a tuple of specs, or ``None`` (the default lineup).

    Raises:
        TypeError: ``value`` is one spec, not a sequence of them; the message shows the fix.
    """
    if value is None:
        return None
    if isinstance(value, (str, Mapping)):
        raise TypeError(
            f"{config}(samplers=...) takes a sequence of specs, got one spec {value!r}; "
            f"wrap it: samplers=[{value!r}]"
        )
    return tuple(value)


NUMBER: dict[str, Any] = {"type": "number"}
COUNT: dict[str, Any] = {"type": "integer", "minimum": 1}


def failures_json(failures: Iterable[RunFailure]) -> list[dict[str, Any]]:
    """``failures`` as a result document lists them, in the shape of :data:`FAILURES`."""
    return [
        {"label": each.label, "workload": each.workload, "seed": each.seed, "message": each.message}
        for each in failures
    ]


def schema_object(**properties: Any) -> dict[str, Any]:
    """A closed JSON object schema: exactly these properties, all required."""
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties),
        "additionalProperties": False,
    }


#: The schema of a result document's ``failures``: the samplers a failed run left out.
FAILURES: dict[str, Any] = {
    "type": "array",
    "items": schema_object(
        label={"type": "string"},
        workload={"type": "string"},
        seed={"type": "integer", "minimum": 0},
        message={"type": "string"},
    ),
}


def result_schema(
    title: str,
    schema_id: str,
    config: dict[str, Any],
    workload: dict[str, Any],
    sampler: dict[str, Any],
    **properties: Any,
) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a bench result document: its ``schema`` id, its
    ``config`` (the samplers and workloads, then ``config``'s keys), the ``machine``, the
    ``seconds`` it took, its ``workloads`` (each a ``name``, ``workload``'s keys and its
    ``samplers``, each a ``label``, a ``role`` and ``sampler``'s keys), and ``properties``."""
    samplers = {
        "type": "array",
        "items": schema_object(
            label={"type": "string"}, role={"enum": ["baseline", "sampler", "ceiling"]}, **sampler
        ),
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        **schema_object(
            schema={"const": schema_id},
            config=schema_object(
                samplers={"type": "array", "items": {"type": "string"}, "minItems": 1},
                workloads={"type": "array", "items": {"type": "string"}, "minItems": 1},
                **config,
            ),
            machine=schema_object(
                python={"type": "string"},
                implementation={"type": "string"},
                cpus=COUNT,
                system={"type": "string"},
            ),
            seconds={"type": "number", "minimum": 0},
            workloads={
                "type": "array",
                "items": schema_object(name={"type": "string"}, samplers=samplers, **workload),
            },
            **properties,
        ),
    }


def result_json(
    schema_id: str,
    result: _Run,
    config: dict[str, Any],
    workloads: list[dict[str, Any]],
    **properties: Any,
) -> dict[str, Any]:
    """A bench result document in the shape :func:`result_schema` describes."""
    machine = result.machine
    return {
        "schema": schema_id,
        "config": {
            "samplers": [sampler.label for sampler in result.workloads[0].samplers],
            "workloads": [workload.name for workload in result.workloads],
            **config,
        },
        "machine": {
            "python": machine.python,
            "implementation": machine.implementation,
            "cpus": machine.cpus,
            "system": machine.system,
        },
        "seconds": round(result.seconds, 3),
        "workloads": workloads,
        **properties,
    }


class _Workload(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def samplers(self) -> Sequence[_Labelled]: ...


class _Run(Protocol):
    @property
    def machine(self) -> Machine: ...

    @property
    def seconds(self) -> float: ...

    @property
    def workloads(self) -> Sequence[_Workload]: ...


# The package is not on PyPI yet: from a clone the extra is '.[plot]'; matplotlib is all it adds.
_EXTRA = "python -m pip install '.[plot]' in a clone of agentdescent-sampling, or matplotlib"
# matplotlib's tab10 without its grey, which is kept for round-robin alone.
_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf",
)  # fmt: skip
#: The samplers' line styles, a palette's worth each: the curricula lineup runs 13.
_SAMPLER_STYLES = ("-", "--", "-.")
#: The ceilings' line styles, in order: the learner ceiling and the oracle, say, apart.
_CEILING_STYLES = ("--", ":", "-.")


def require_matplotlib() -> None:
    """Check that plotting can work, before a long run rather than after it.

    Raises:
        BenchError: matplotlib is not installed; the message names the extra.
    """
    _figure_class()


@attrs.frozen
class CurvePoint:
    """A figure after ``spent`` rollouts (or agent calls): its mean over seeds and 95% interval."""

    spent: int
    mean: float
    low: float
    high: float


#: One sampler's curve in a panel: its label, its role and its points.
Curve = tuple[str, Role, Sequence[CurvePoint]]


def draw_panels(
    panels: Sequence[tuple[str, Sequence[Curve]]],
    size: tuple[float, float],
    xlabel: str,
    ylim: tuple[float, float],
    *,
    steps: bool = False,
    bands: bool = True,
) -> tuple[Figure, list[Axes], int]:
    """A figure of one titled panel per entry of ``panels``, at most four to a row, sharing
    the y axis; in each, every curve's mean and 95% band: round-robin grey, the ceilings
    black, dashed then dotted, the samplers in the palette. ``steps`` holds each value until
    the next point; ``bands=False`` draws the means alone (too few runs for an interval).

    Returns:
        The figure, its panels in reading order, and how many sit in a row.

    Raises:
        BenchError: matplotlib is not installed.
    """
    columns = min(len(panels), 4)
    rows = math.ceil(len(panels) / columns)
    width, height = size
    figure = _figure_class()(figsize=(width * columns, height * rows), layout="constrained")
    axes = list(figure.subplots(rows, columns, sharey=True, squeeze=False).flatten())
    for axis in axes[len(panels) :]:
        axis.set_visible(False)
    for axis, (title, curves) in zip(axes, panels, strict=False):
        others = ceilings = 0
        for label, role, points in curves:
            if role == "sampler":
                # Past the palette, the colours come round again in another line style.
                color = _PALETTE[others % len(_PALETTE)]
                linestyle = _SAMPLER_STYLES[others // len(_PALETTE) % len(_SAMPLER_STYLES)]
                others += 1
            elif role == "ceiling":
                color = "black"
                linestyle = _CEILING_STYLES[ceilings % len(_CEILING_STYLES)]
                ceilings += 1
            else:
                color, linestyle = "grey", "-"
            spent = [point.spent for point in points]
            (line,) = axis.plot(
                spent,
                [point.mean for point in points],
                label=label,
                color=color,
                linestyle=linestyle,
                linewidth=1.6,
                drawstyle="steps-post" if steps else "default",
            )
            if not bands:
                continue
            axis.fill_between(
                spent,
                [point.low for point in points],
                [point.high for point in points],
                color=line.get_color(),
                alpha=0.15 if steps else 0.18,
                linewidth=0,
                step="post" if steps else None,
            )
        axis.set_title(title)
        axis.set_xlabel(xlabel)
        axis.set_ylim(*ylim)
        axis.grid(alpha=0.3)
    return figure, axes[: len(panels)], columns


def finish(
    figure: Figure,
    axes: Sequence[Axes],
    columns: int,
    ylabel: str,
    title: str,
    path: str | PathLike[str],
) -> Path:
    """Label the first panel of each row, put the legend beside the panels, title the figure
    and write it to ``path``.

    Raises:
        BenchError: the file can't be written.
    """
    for axis in axes[::columns]:
        axis.set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    # Outside the panels, so no curve hides behind it; bbox_inches="tight" keeps it in.
    figure.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    figure.suptitle(title)
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
            f"cannot write the plot to {short_repr(str(target), 1000)}: {error}; pass a "
            f"writable path ending in .png"
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


def first_seed_in_range(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An attrs validator of a bench config's ``first_seed``: a whole number from 0, with its
    run's last seed, ``first_seed + seeds - 1``, at most 2**53, the most a sampler's seed is
    (:func:`~agentdescent_sampling.validators.seed_number`). Runs once ``seeds`` is set."""
    hint = "; the last seed, first_seed + seeds - 1, is at most 2**53; for example first_seed=0"
    whole_number_in(0, MAX_COUNT - instance.seeds + 1, hint=hint)(instance, attribute, value)


def seed_range(first: int, seeds: int) -> str:
    """The seeds a run used, as its report names them: ``0-29``, or ``seed 3`` for one
    (``3-3`` reads as a range of none)."""
    return f"seed {first}" if seeds == 1 else f"{first}-{first + seeds - 1}"
