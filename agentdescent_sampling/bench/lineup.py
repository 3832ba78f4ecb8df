"""Which samplers a bench run compares, and how each is built afresh for every seed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

import attrs

from ..errors import BenchError, InvalidSamplerConfig, UnknownSamplerError
from ..protocol import TaskSampler, short_repr
from ..registry import Registry, SamplerInfo
from ..spec import SamplerSpec, SpecLike
from .core import (
    ENGINE_DIFFICULTY_WEIGHTED,
    LEARNER_CEILING,
    ORACLE,
    Registered,
    Role,
    bare_name,
    refuse_wired_label,
)
from .oracle import Oracle
from .workloads import Scenario

__all__ = [
    "DEFAULT_SWEEP",
    "LINEUPS",
    "Entrant",
    "Skipped",
    "default_specs",
    "lineup",
    "lineup_specs",
]

#: The values of difficulty-weighted's ``c`` that the doc's table compares.
DEFAULT_SWEEP = (1.4, 0.7, 0.4, 0.2, 0.1)

#: Named lineups (``bench --lineup NAME``): the built-ins, then a plugin pack's samplers,
#: each at its defaults; and the distribution that provides the pack.
LINEUPS: Mapping[str, tuple[tuple[str, ...], str]] = MappingProxyType(
    {
        "curricula": (
            (
                "round-robin",
                "difficulty-weighted",
                "informative-band",
                "fixable-first",
                "plr",
                "sfl",
                "mopps",
                "tscl",
                "learning-progress",
                "speed",
                "dapo-filter",
                "learnability",
                "failure-aware",
            ),
            "agentdescent-sampling-curricula",
        ),
    }
)

#: Parameters the bench fills in from the run when a sampler takes them and the
#: spec leaves them out: the run's seed, and the workload's pass threshold (as
#: ``evolve(solved_threshold=...)`` and the sampler must agree).
_FROM_RUN = ("seed", "pass_threshold")


@attrs.frozen
class Entrant:
    """One sampler in a bench run: how reports name it, and how to build it for a run.

    Args:
        label: the name reports show: the spec string, or ``oracle``.
        role: ``baseline`` (round-robin), ``ceiling`` (the oracle) or ``sampler``.
        build: ``build(scenario, budget, seed)`` returns a new sampler for one run.
    """

    label: str
    role: Role
    build: Callable[[Scenario, int, int], TaskSampler] = attrs.field(repr=False, eq=False)


@attrs.frozen
class Skipped:
    """An installed sampler the default run left out, and why."""

    label: str
    reason: str


def default_specs(registry: Registry) -> tuple[list[SpecLike], list[Skipped]]:
    """The default comparison: the doc's ``c`` sweep, round-robin, then every other sampler.

    Every other installed sampler runs at its defaults. One that cannot (it has a
    required parameter, its name is provided twice, or it is the name of one of the
    bench's own entrants) is returned as skipped.
    """
    specs: list[SpecLike] = [SamplerSpec("difficulty-weighted", {"c": c}) for c in DEFAULT_SWEEP]
    specs.append(SamplerSpec("round-robin"))
    skipped = []
    for record in registry.available():
        if not isinstance(record, SamplerInfo) or record.name in (
            "difficulty-weighted",
            "round-robin",
        ):
            continue
        required = record.signature.required
        own = bare_name(record.name)
        if own in (ORACLE, LEARNER_CEILING):  # the bench would take it for its own
            skipped.append(
                Skipped(
                    f"{record.name} ({record.distribution})",
                    f"its name is the bench's own {own}'s; bench it with --sampler "
                    f'\'{{"name": "{record.name}", "provider": "{record.distribution}"}}\'',
                )
            )
        elif record.status != "ok":
            skipped.append(
                Skipped(
                    f"{record.name} ({record.distribution})",
                    f"{record.status}: more than one distribution provides it; bench it with "
                    f'--sampler \'{{"name": "{record.name}", "provider": ...}}\'',
                )
            )
        elif set(required) - set(_FROM_RUN):
            skipped.append(
                Skipped(
                    record.name,
                    f"needs {', '.join(map(repr, required))} set; bench it with "
                    f"--sampler '{record.name}:{required[0]}=...'",
                )
            )
        else:
            specs.append(SamplerSpec(record.name))
    return specs, skipped


def lineup_specs(name: str, registry: Registry | None = None) -> list[str]:
    """The spec strings of the lineup ``name``, for ``bench --lineup`` and the engine bench.

    Args:
        name: a key of :data:`LINEUPS`, such as ``"curricula"``.
        registry: when given, every sampler of the lineup must be installed in it.

    Raises:
        BenchError: ``name`` is no lineup, or a sampler of it is not installed (the
            message names the distribution to install).
    """
    if name not in LINEUPS:
        raise BenchError(
            f"no lineup named {name!r}; expected one of {', '.join(LINEUPS)}, "
            f"for example --lineup curricula"
        )
    specs, distribution = LINEUPS[name]
    missing = [spec for spec in specs if registry is not None and not _installed(registry, spec)]
    if missing:
        raise BenchError(
            f"the {name!r} lineup needs {', '.join(map(repr, missing))}, which are not "
            f"installed; install {distribution} (from a checkout: pip install "
            f"./plugins/{distribution})"
        )
    return list(specs)


def _installed(registry: Registry, name: str) -> bool:
    try:
        registry.get(name)
    except UnknownSamplerError:
        return False
    return True


def lineup(specs: Iterable[SpecLike], registry: Registry) -> list[Entrant]:
    """Resolve ``specs`` into entrants, with round-robin as baseline and the oracle last.

    Each spec is checked by building its sampler once, so that a typo fails before
    the run starts rather than after minutes of it. Round-robin is added when the
    specs leave it out, since every other sampler is reported as a ratio to it; the
    oracle always is, so a spec naming it (``"oracle"``, ``{"name": "oracle"}``) is
    passed over.

    Raises:
        SamplerError: a spec is malformed, names no installed sampler, or its
            parameters are rejected (the registry's own errors, unchanged).
        BenchError: a spec names an entrant of the artifact bench only (the learner
            ceiling, or the engine's own DifficultyWeighted); the message says what to
            give instead.
    """
    entrants: list[Entrant] = []
    settings: list[object] = []  # compared by ==, so 3 is 3.0
    for given in [*specs, "round-robin"]:
        if bare_name(given) == ORACLE:
            continue  # always added, last
        _refuse_artifact_only(given, registry)
        refuse_wired_label(given, engine=False)
        registered = Registered.resolve(given, registry)  # fails here, before the run
        if registered.settings in settings:  # given twice, in the same words or not
            continue
        settings.append(registered.settings)
        role: Role = "baseline" if registered.label == "round-robin" else "sampler"
        entrants.append(Entrant(registered.label, role, _ForScenario(registered)))
    entrants.append(Entrant(ORACLE, "ceiling", _oracle))
    return entrants


def _refuse_artifact_only(given: SpecLike, registry: Registry) -> None:
    """Refuse, saying what to give instead, an entrant only the artifact bench has.

    Raises:
        BenchError: ``given`` names the learner ceiling or the engine's DifficultyWeighted.
    """
    if bare_name(given) == LEARNER_CEILING:
        raise BenchError(
            f"{LEARNER_CEILING} is a ceiling of the artifact bench, which adds it with --engine; "
            f"the share measure's ceiling is the oracle, which it always runs: drop "
            f"{LEARNER_CEILING}, or drop 'share' to run the artifact bench"
        )
    name: object = given.name if isinstance(given, SamplerSpec) else None
    instead = "its name as 'difficulty-weighted'"
    if isinstance(given, str):
        name, _, params = given.strip().partition(":")
        instead = repr(f"difficulty-weighted:{params}" if params else "difficulty-weighted")
    elif isinstance(given, Mapping):
        name = given.get("name")
    if not isinstance(name, str) or name.strip() != ENGINE_DIFFICULTY_WEIGHTED:
        return
    if isinstance(given, str) and params:  # what it suggests must select a sampler too
        try:
            Registered.resolve(f"difficulty-weighted:{params}", registry)
        except InvalidSamplerConfig as error:
            instead = f"'difficulty-weighted' with the parameters it takes ({error})"
    raise BenchError(
        f"{short_repr(given)} names the engine's own DifficultyWeighted, an entrant of the "
        f"artifact bench only (agentdescent-sampling bench --sampler "
        f"{ENGINE_DIFFICULTY_WEIGHTED}); the share measure runs difficulty-weighted, this "
        f"package's DifficultyWeighted as the engine defines it (its c sweep by default), so "
        f"give {instead} instead, or drop 'share'"
    )


@attrs.frozen
class _ForScenario:
    """Builds a registered sampler for a simulated run."""

    registered: Registered

    def __call__(self, scenario: Scenario, budget: int, seed: int) -> TaskSampler:
        return self.registered.create(seed, scenario.pass_threshold)


def _oracle(scenario: Scenario, budget: int, seed: int) -> TaskSampler:
    return Oracle(scenario, budget)
