"""Which samplers an engine bench run compares, and how each is built for one ``evolve()`` run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ...protocol import SOLVED, TaskSampler
from ...registry import Registry, SamplerInfo
from ...spec import SamplerSpec, SpecLike
from ...wiring import wire
from ..core import Registered, Role
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

#: The bench's name for the engine's own ``agentdescent.sampling.DifficultyWeighted``.
#: A registered sampler name cannot contain a dot, so no plugin can take it.
ENGINE_DIFFICULTY_WEIGHTED = "agentdescent.DifficultyWeighted"
#: The ceiling: :class:`~agentdescent_sampling.bench.engine.oracle.EngineOracle`.
ORACLE = "oracle"
#: What outcome-only learning can reach: :class:`~agentdescent_sampling.bench.engine.ceiling.
#: InformedLearner`, told the workload's make-up.
LEARNER_CEILING = "learner-ceiling"

#: The quick bench's samplers besides round-robin: fixable-first (which the lineup runs alone
#: and wired), informative-band and the engine's own DifficultyWeighted.
QUICK_SPECS: tuple[SpecLike, ...] = (
    "fixable-first",
    "informative-band",
    ENGINE_DIFFICULTY_WEIGHTED,
)

#: The distribution whose samplers the default lineup runs.
_BUILT_IN = "agentdescent-sampling"


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
    """

    label: str
    make: Callable[[Built], TaskSampler] = attrs.field(eq=False)
    role: Role = "sampler"
    wiring: Wiring | None = attrs.field(default=None, eq=False)


def _wired(sampler: TaskSampler, built: Built, options: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's evidence, through :func:`~agentdescent_sampling.wire`."""
    return wire(sampler, asynchronous=options.get("asynchronous", False))


#: The wired entrants, declared here and only here: for a registered sampler that has every
#: method named, one more entrant, labelled with the suffix, runs with that wiring.
WIRED: tuple[tuple[str, tuple[str, ...], Wiring], ...] = ((" + wired", ("evidence",), _wired),)


def default_engine_specs(registry: Registry) -> list[SpecLike]:
    """Every built-in sampler that runs at its defaults, then the engine's DifficultyWeighted.

    Round-robin and the oracle are not listed: :func:`engine_lineup` always adds them.
    """
    specs: list[SpecLike] = []
    for record in registry.available():
        if (
            isinstance(record, SamplerInfo)
            and record.distribution == _BUILT_IN
            and record.status == "ok"
            and record.name != "round-robin"
            and not any(p.required for p in record.signature.parameters)
        ):
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
    :data:`ENGINE_DIFFICULTY_WEIGHTED` and :data:`ORACLE`. A sampler that takes
    ``pass_threshold`` and ``seed`` gets the run's when the spec leaves them out. Each
    spec is built once here, so a typo fails before the run starts.

    Raises:
        SamplerError: a spec is malformed, names no installed sampler, or its
            parameters are rejected (the registry's own errors, unchanged).
        BenchError: two entrants share a label.
    """
    from ...errors import BenchError

    entrants: list[EngineEntrant] = [
        EngineEntrant("round-robin", _RoundRobin(registry), "baseline")
    ]
    for given in specs:
        if given in (ORACLE, LEARNER_CEILING, "round-robin"):
            continue  # always present, in their fixed places
        for entrant in _resolve(given, registry):
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
        entrants.append(EngineEntrant(LEARNER_CEILING, _informed_learner, "ceiling"))
        entrants.append(EngineEntrant(ORACLE, EngineOracle, "ceiling"))
    return entrants


def _informed_learner(built: Built) -> TaskSampler:
    from .ceiling import InformedLearner, MakeUp

    return InformedLearner(pass_threshold=built.pass_threshold, make_up=MakeUp.of(built))


def _resolve(given: SpecLike, registry: Registry) -> list[EngineEntrant]:
    """The entrant for ``given``, then one per :data:`WIRED` wiring the sampler can take."""
    if given == ENGINE_DIFFICULTY_WEIGHTED:
        return [EngineEntrant(ENGINE_DIFFICULTY_WEIGHTED, _engine_difficulty_weighted)]
    registered = Registered.resolve(given, registry)  # fails here, before the run
    build = _ForBuilt(registered)
    sample = build.registered.create(0, SOLVED)
    entrants = [EngineEntrant(registered.label, build)]
    for suffix, needs, wiring in WIRED:
        if all(callable(getattr(sample, method, None)) for method in needs):
            entrants.append(EngineEntrant(registered.label + suffix, build, wiring=wiring))
    return entrants


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


def _engine_difficulty_weighted(built: Built) -> TaskSampler:
    from agentdescent.sampling import DifficultyWeighted

    sampler: TaskSampler = DifficultyWeighted(pass_threshold=built.pass_threshold)
    return sampler
