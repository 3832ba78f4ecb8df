"""Which samplers an engine bench run compares, and how each is built for one ``evolve()`` run."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

import attrs

from ..._version import __version__
from ...errors import InvalidSamplerConfig
from ...policy import BUILTINS
from ...protocol import SOLVED, TaskSampler, short_repr
from ...registry import Registry
from ...spec import SamplerSpec, SpecLike, parse_spec
from ...wiring import wire
from ..core import (
    ENGINE_DIFFICULTY_WEIGHTED,
    LEARNER_CEILING,
    ORACLE,
    WIRED_SUFFIX,
    Registered,
    Role,
    bare_name,
    refuse_wired_label,
)
from .oracle import EngineOracle
from .run import Wiring
from .workloads import Built

__all__ = [
    "ENGINE_DIFFICULTY_WEIGHTED",
    "LEARNER_CEILING",
    "ORACLE",
    "QUICK_SPECS",
    "WIRED",
    "EngineEntrant",
    "default_engine_specs",
    "engine_lineup",
    "registered_spec",
]

#: The quick bench's samplers besides round-robin: fixable-first (which the lineup runs alone
#: and wired), informative-band and the engine's own DifficultyWeighted.
QUICK_SPECS: tuple[SpecLike, ...] = (
    "fixable-first",
    "informative-band",
    ENGINE_DIFFICULTY_WEIGHTED,
)

#: The distribution whose samplers the default lineup runs, and which holds the ceilings.
_BUILT_IN = "agentdescent-sampling"
#: The distribution that holds the engine, and its own DifficultyWeighted.
_ENGINE = "agentdescent"
#: A valid sampler name that stands in for :data:`ENGINE_DIFFICULTY_WEIGHTED`, whose dot
#: parse_spec refuses, while parse_spec reads the parameters given with it.
_STAND_IN = "engine-difficulty-weighted"


@attrs.frozen
class EngineEntrant:
    """One sampler in an engine bench run.

    Pass your own through ``EngineBenchConfig(extra=[...])`` to bench a sampler that is
    not registered (an experiment), or one that needs wiring into ``evolve()``.

    Args:
        label: the name reports show; unique in a run.
        make: ``make(built)`` returns a new sampler for one run, given the seeded
            workload (``built.pass_threshold`` is the threshold the engine uses).
        role: ``baseline`` (round-robin), ``ceiling`` (the oracle) or ``sampler``.
        wiring: ``wiring(sampler, built, options)`` returns extra ``evolve()`` keyword
            arguments for the run (``on_round``, ``propose``, ``policies``, ...;
            see :data:`~agentdescent_sampling.bench.engine.run.Wiring`), if any.
        distribution: the distribution the sampler comes from, if known, for the report.
        version: that distribution's version, if known.
    """

    label: str
    make: Callable[[Built], TaskSampler] = attrs.field(eq=False)
    role: Role = "sampler"
    wiring: Wiring | None = attrs.field(default=None, eq=False)
    distribution: str | None = None
    version: str | None = None


def _wired(sampler: TaskSampler, built: Built, options: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's evidence, through :func:`~agentdescent_sampling.wire`."""
    return wire(sampler, **options)  # the run's options: wire() reads some of them


#: The wired entrants, declared here and only here: for a registered sampler that has every
#: method named, one more entrant, labelled with the suffix, runs with that wiring.
WIRED: tuple[tuple[str, tuple[str, ...], Wiring], ...] = ((WIRED_SUFFIX, ("evidence",), _wired),)


def default_engine_specs(registry: Registry) -> list[SpecLike]:
    """Every built-in sampler that runs at its defaults, then the engine's DifficultyWeighted.

    Round-robin and the oracle are not listed: :func:`engine_lineup` always adds them. No
    plugin is imported: built-ins are looked up as ``create()`` looks them up.
    """
    specs: list[SpecLike] = []
    for builtin in BUILTINS:
        if builtin.name == "round-robin" or registry.policy.disabled_builtin(builtin):
            continue
        record = registry.get(builtin.name)
        if not any(p.required for p in record.signature.parameters):
            specs.append(record.name)
    specs.append(ENGINE_DIFFICULTY_WEIGHTED)
    return specs


def engine_lineup(
    specs: Iterable[SpecLike],
    registry: Registry,
    extra: Iterable[EngineEntrant] = (),
    *,
    ceilings: bool = True,
) -> list[EngineEntrant]:
    """Round-robin (the baseline) first, then ``specs`` and ``extra``, then the two ceilings
    (the learner ceiling and the oracle) unless ``ceilings`` is false.

    A spec is anything ``create()`` accepts, or one of the bench's own names:
    :data:`ENGINE_DIFFICULTY_WEIGHTED` (with parameters, as a registered sampler takes
    them) and :data:`ORACLE`. A sampler that takes ``pass_threshold`` and ``seed`` gets the
    run's when the spec leaves them out. Each spec is built once here, so a typo fails
    before the run starts. Each entrant carries the distribution it comes from, and its
    version; an ``extra`` one, what it was given.

    Raises:
        SamplerError: a spec is malformed, names no installed sampler, or its
            parameters are rejected (the registry's own errors, unchanged).
        BenchError: two entrants share a label.
    """
    from ...errors import BenchError

    baseline = registry.get("round-robin")
    entrants: list[EngineEntrant] = [
        EngineEntrant(
            "round-robin",
            _RoundRobin(registry),
            "baseline",
            distribution=baseline.distribution,
            version=baseline.version,
        )
    ]
    settings: list[object] = []  # compared by ==, so 3 is 3.0
    for given in specs:
        if bare_name(given) in (ORACLE, LEARNER_CEILING, "round-robin"):
            continue  # always present, in their fixed places
        refuse_wired_label(given, engine=True)
        resolved = _resolve(given, registry)
        alike: object = resolved[0].label  # the engine's DifficultyWeighted: its spec as given
        if isinstance(resolved[0].make, _ForBuilt):
            alike = resolved[0].make.registered.settings
        if alike in settings:  # given twice, in the same words or not
            continue
        settings.append(alike)
        for entrant in resolved:
            if all(existing.label != entrant.label for existing in entrants):
                entrants.append(entrant)
    for entrant in extra:
        if any(existing.label == entrant.label for existing in entrants):
            raise BenchError(
                f"two samplers are labelled {entrant.label!r}; give the extra entrant "
                f"another label, for example {entrant.label + '-2'!r}"
            )
        entrants.append(entrant)
    if ceilings:
        makers: dict[str, Callable[[Built], TaskSampler]] = {
            LEARNER_CEILING: _informed_learner,
            ORACLE: EngineOracle,
        }
        entrants += [
            EngineEntrant(label, make, "ceiling", distribution=_BUILT_IN, version=__version__)
            for label, make in makers.items()
        ]
    return entrants


def _informed_learner(built: Built) -> TaskSampler:
    from .ceiling import InformedLearner, MakeUp

    return InformedLearner(pass_threshold=built.pass_threshold, make_up=MakeUp.of(built))


def _resolve(given: SpecLike, registry: Registry) -> list[EngineEntrant]:
    """The entrant for ``given``, then one per :data:`WIRED` wiring the sampler can take."""
    engine = _engine_spec(given)
    if engine is not None:
        return [
            EngineEntrant(
                str(engine),
                _EngineDifficultyWeighted(dict(engine.params)),
                distribution=_ENGINE,
                version=_version(_ENGINE),
            )
        ]
    registered = Registered.resolve(given, registry)  # fails here, before the run
    build = _ForBuilt(registered)
    sample = build.registered.create(0, SOLVED)
    info = registry.get(registered.spec.name, provider=registered.spec.provider)
    alone = EngineEntrant(
        registered.label, build, distribution=info.distribution, version=info.version
    )
    entrants = [alone]
    for suffix, needs, wiring in WIRED:
        if all(callable(getattr(sample, method, None)) for method in needs):
            entrants.append(attrs.evolve(alone, label=alone.label + suffix, wiring=wiring))
    return entrants


def _engine_spec(given: SpecLike) -> SamplerSpec | None:
    """``given`` as a spec of the engine's DifficultyWeighted, its parameters checked against
    the class's, or ``None`` if it names another sampler.

    Raises:
        InvalidSamplerConfig: the parameters are malformed, not the class's, or not numbers.
    """
    name: object
    if isinstance(given, str):
        name, colon, params = given.strip().partition(":")
        stand_in: SpecLike = f"{_STAND_IN}{colon}{params}"
    elif isinstance(given, Mapping):
        name, stand_in = given.get("name"), {**given, "name": _STAND_IN}
    elif isinstance(given, SamplerSpec):
        name, stand_in = given.name, attrs.evolve(given, name=_STAND_IN)
    else:
        return None  # Registered.resolve refuses it, saying what a spec is
    if not isinstance(name, str):
        return None
    if name.strip() != ENGINE_DIFFICULTY_WEIGHTED:
        engine, dot, _ = name.strip().partition(".")
        if dot and engine.lower() == _ENGINE:  # a registered name has no dot: a misspelling
            raise InvalidSamplerConfig(
                f"{short_repr(given)}: the engine's own sampler the bench runs is "
                f"{ENGINE_DIFFICULTY_WEIGHTED}, spelled so, as in "
                f"'{ENGINE_DIFFICULTY_WEIGHTED}:c=0.4'; a registered sampler's name has no dot "
                f"(run 'agentdescent-sampling list' to see them)"
            )
        return None
    try:
        spec = parse_spec(stand_in)
    except InvalidSamplerConfig as error:
        # parse_spec's message quotes the spec it read: put the name back that was given
        # (where a quoted spec starts, so a parameter that happens to be called so is kept).
        raise InvalidSamplerConfig(
            str(error).replace(f"'{_STAND_IN}", f"'{ENGINE_DIFFICULTY_WEIGHTED}")
        ) from None
    from agentdescent.sampling import DifficultyWeighted

    takes = list(inspect.signature(DifficultyWeighted).parameters)
    form = f"as in '{ENGINE_DIFFICULTY_WEIGHTED}:c=0.4'"
    if spec.provider is not None:
        raise InvalidSamplerConfig(
            f"{short_repr(given)}: {ENGINE_DIFFICULTY_WEIGHTED} is the engine's own sampler, "
            f"not a registered one, so it has no provider; drop 'provider'"
        )
    for key, value in spec.params.items():
        if key not in takes:
            raise InvalidSamplerConfig(
                f"{short_repr(given)}: {ENGINE_DIFFICULTY_WEIGHTED} takes no parameter "
                f"{key!r}; expected one of {', '.join(takes)}, {form}"
            )
        # Every parameter of the class is a number, which it takes unchecked: the ranges
        # are what the doc gives them (c >= 0; pass_threshold in (0, 1]; prior in [0, 1]).
        low, high, closed_low = _ENGINE_RANGES.get(key, (-math.inf, math.inf, True))
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (
            number
            and math.isfinite(value)
            and (low <= value if closed_low else low < value)
            and value <= high
        ):
            raise InvalidSamplerConfig(
                f"{short_repr(given)}: {ENGINE_DIFFICULTY_WEIGHTED}'s {key} is "
                f"{short_repr(value)}; expected a number{_ENGINE_RANGE_WORDS.get(key, '')}, {form}"
            )
    return attrs.evolve(spec, name=ENGINE_DIFFICULTY_WEIGHTED)


#: The engine's DifficultyWeighted's parameters: (low, high, whether low is allowed).
_ENGINE_RANGES = {"c": (0.0, math.inf, True), "pass_threshold": (0.0, 1.0, False),
                  "prior": (0.0, 1.0, True)}  # fmt: skip
_ENGINE_RANGE_WORDS = {"c": " >= 0", "pass_threshold": " in (0, 1]", "prior": " in [0, 1]"}


def _version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or ``None`` if it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def registered_spec(entrant: EngineEntrant) -> SamplerSpec | None:
    """The registered spec ``entrant`` builds its sampler from (a wired entrant's too), or
    ``None`` for an entrant that is not a registered sampler (round-robin is)."""
    return entrant.make.registered.spec if isinstance(entrant.make, _ForBuilt) else None


@attrs.frozen
class _ForBuilt:
    """Builds a registered sampler for one engine run, given the seeded workload."""

    registered: Registered

    def __call__(self, built: Built) -> TaskSampler:
        return self.registered.create(built.seed, built.pass_threshold)


@attrs.frozen
class _RoundRobin:
    """The baseline, built from the registry like any other sampler."""

    registry: Registry

    def __call__(self, built: Built) -> TaskSampler:
        return self.registry.create("round-robin")


@attrs.frozen
class _EngineDifficultyWeighted:
    """Builds the engine's DifficultyWeighted for one run, with the workload's pass threshold
    unless ``params`` sets one."""

    params: Mapping[str, float]

    def __call__(self, built: Built) -> TaskSampler:
        from agentdescent.sampling import DifficultyWeighted

        params = {"pass_threshold": built.pass_threshold, **self.params}
        sampler: TaskSampler = DifficultyWeighted(**params)
        return sampler
