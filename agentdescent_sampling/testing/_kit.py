"""The kit's entry points: :func:`check_sampler` runs the checks in turn, and
:func:`check_installed` runs it on every installed sampler, as ``check --all`` does."""

from __future__ import annotations

import functools
import shlex
from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard

import attrs

from .._display import escaped_name, safe_repr, shown
from ..errors import InvalidSamplerConfig
from ..loading import PluginInterrupt, describe
from ..params import signature_of
from ..protocol import check_name, method_problem
from ..records import PluginFailure, SamplerInfo
from ..registry import Registry, available, default_registry, wrong_parameters
from ..spec import SamplerSpec, SpecLike, parse_spec
from ._calls import _building, _signature
from ._contract import (
    _check_empty_shard,
    _check_keys_unchanged,
    _check_name,
    _check_pick_and_record,
    _check_pick_returns_a_member,
    _check_protocol,
    _check_record_outside_the_shard,
    _check_seeds,
    _claimed_builtin,
)
from ._notes import _notes
from ._report import _NOT_APPLICABLE, Check, ConformanceReport, Factory, Finding, Violation, _Fault
from ._scores import _check_bad_scores
from ._settings import _check_seconds
from ._state import _check_instances_apart, _check_state
from ._threads import _NOT_COUNTED, _check_stats, _check_threads
from ._time import _bounded, _finishes, _in_thread


@attrs.frozen
class InstalledCheck:
    """What ``check --all`` found for one installed sampler, or for one plugin failure."""

    #: ``checking NAME (...)`` for a sampler checked, else ``NAME: not checked: why``.
    heading: str
    report: ConformanceReport | None = None
    #: Whether it makes ``check --all`` fail: a violation, or a plugin that failed or conflicts.
    failed: bool = False


def check_installed() -> Iterator[InstalledCheck]:
    """Check every installed sampler at its defaults, one at a time, as ``check --all`` does.

    A sampler with a required parameter is skipped, saying how to check it; a name two
    distributions provide, and a plugin that failed to load, are not checked and count as
    failed; a disabled plugin is left out.
    """
    for record in available():
        if isinstance(record, PluginFailure):
            if record.status in ("failed", "conflict"):
                yield InstalledCheck(f"{record.title}: not checked: {shown(record.message)}",
                                     failed=True)  # fmt: skip
            continue
        required = record.signature.required
        if record.status != "ok":
            yield InstalledCheck(
                f"{record.name} ({shown(record.distribution)}): not checked: more than one "
                f"distribution provides it; uninstall one, or check this one with "
                f"'agentdescent-sampling check {record.name} --provider "
                f"{shown(shlex.quote(record.distribution))}'",
                failed=True,
            )
        elif required:
            yield InstalledCheck(
                f"{record.name}: not checked: it needs {', '.join(map(repr, required))}; "
                f"check it with 'agentdescent-sampling check {record.name}:{required[0]}=...'"
            )
        else:
            heading = checking(record, SamplerSpec(record.name))
            try:
                report = check_sampler(record.name)
            except PluginInterrupt:  # its plugin's, named already
                raise
            except KeyboardInterrupt as interrupt:  # the user's, or the sampler's own
                raise PluginInterrupt(
                    f"while checking {record.name} ({escaped_name(record.distribution)} "
                    f"{record.version}); if no one pressed Ctrl-C, the sampler raised "
                    f"KeyboardInterrupt itself"
                ) from interrupt
            except InvalidSamplerConfig as error:  # its own defaults are refused
                yield InstalledCheck(f"{heading}\n{record.name}: not checked: {error}", failed=True)
                continue
            yield InstalledCheck(heading, report, not report.ok)


def checking(info: SamplerInfo, spec: SamplerSpec) -> str:
    """``checking name (distribution version) with c=0.1, prior=0.5 (default), ...``."""
    given = dict(spec.params)
    parts = [f"{key}={safe_repr(value)}" for key, value in given.items()]
    parts += [
        f"{parameter}" + " (default)"
        for parameter in info.signature.parameters
        if parameter.name not in given and not parameter.required
    ]
    with_ = f" with {', '.join(parts)}" if parts else " (no parameters)"
    return "checking " + shown(f"{info.name} ({info.distribution} {info.version}){with_}", 200)


def check_sampler(
    factory_or_name: Factory | SpecLike, /, *, registry: Registry | None = None, **params: Any
) -> ConformanceReport:
    """Run the sampler contract against a factory, or an installed sampler's name or spec.

    Each check builds fresh instances with ``params``, the sampler's own parameters
    (``check_sampler(MySampler, seed=1)`` builds ``MySampler(seed=1)``). A sampler taking
    a ``seed`` is also checked for identical picks under identical seeds, and one with
    ``state_dict()`` and ``load_state_dict()`` for a state that survives JSON and restores
    it. ``stats()``, when a sampler has it and it returns ``{task_id: (passes, trials)}``
    counting every record, is used to check that concurrent records are not lost; one that
    raises is a violation (of the ``stats`` check). A score ``record()`` refuses must change
    nothing the sampler shows: its ``stats()``, its ``state_dict()``, the picks that follow.
    A call that raises is reported with its arguments and the line of the sampler's code it
    raised at; one fault (a non-member picked, the same exception from the same line) is
    reported by the first check that finds it only.

    A sampler that declares ``thread_safe = False`` is checked under threads as it is
    served: wrapped in :func:`~agentdescent_sampling.plugin.synchronized`, as ``create()`` wraps it.

    Args:
        factory_or_name: a sampler class or factory, or anything ``create()`` accepts: a
            name or spec string, a mapping (``{"name": "dup", "provider": "dist"}``) or a
            :class:`~agentdescent_sampling.SamplerSpec`, built through the registry (so a
            name two distributions provide is checked from its ``provider``).
        registry: the registry for names; the default one if omitted.
        params: the sampler's parameters, passed to every instance the checks build;
            give only those its constructor or factory takes. For a name or spec they
            are added to the spec's own, and win over them.

    Returns:
        A report listing every violation, not just the first.

    Raises:
        TypeError: ``factory_or_name`` is a sampler instance (the kit needs a fresh one
            for each check: pass its class, or a function that builds one) or not callable.
        UnknownSamplerError: an unknown name.
        SamplerConflictError: two distributions provide the name and the spec gives no
            ``provider``.
        PluginLoadError: the plugin that provides the name failed to load.
        InvalidSamplerConfig: a bad parameter for a name or spec, or one a class or
            factory refuses by its signature (unknown, or required and missing): the
            caller's config, not the sampler's contract.
    """
    factory, label, takes_seed, builtin = _resolve(factory_or_name, registry, params)
    if _is_spec(factory_or_name):
        try:
            built, stuck = _finishes(lambda: factory(**params))
        except InvalidSamplerConfig as error:
            if wrong_parameters(label, _signature(factory), params) is None:
                raise  # a value refused, chained to what refused it, as create() chains it
            # create()'s words name the parameter, the valid ones and the closest match: the
            # factory's TypeError beneath them would only repeat them, in a second traceback.
            raise error from None
        except Exception:  # noqa: BLE001  # the sampler's own failure: the checks report it
            built = True
        if not built:
            hang = Violation(
                "build",
                f"building it did not finish within {_check_seconds():g} s: stuck{stuck or ''} "
                f"(a deadlock, an endless loop or a wait with no end in its constructor?); no "
                f"check was run",
            )
            return ConformanceReport(label, ("build",), (hang,))
    else:
        _refuse_wrong_parameters(factory, label, params)
    findings: list[Finding] = []
    ran: list[str] = []
    reported: set[str] = set()  # the faults earlier checks reported
    checks = [check for check in _CHECKS if takes_seed or check is not _check_seeds]
    for check in checks:
        name = check.__name__.removeprefix("_check_").replace("_", "-")
        found, finished = _bounded(name, functools.partial(_listed, check, factory, params))
        found = _unrepeated(found, reported)
        findings.extend(found)
        if _NOT_APPLICABLE not in found:
            ran.append(name)
        violations = [each for each in found if isinstance(each, Violation)]
        # A check that hangs, or a gate's violation: every later check would fail the same way.
        if not finished or (check in _GATES and violations):
            return _report(label, ran, findings)
    # A built-in's records under threads are this package's own tests' business, not its user's.
    notes, _ = _bounded("notes", lambda: [] if builtin else list(_notes(factory, params, label)))
    return _report(label, ran, findings + notes)


def _report(label: str, ran: list[str], findings: list[Finding]) -> ConformanceReport:
    violations = tuple(each for each in findings if isinstance(each, Violation))
    notes = [each for each in findings if isinstance(each, str)]
    if any(violation.check == "instances-apart" for violation in violations):
        # Records of other instances in its stats() are why it does not count this one's.
        notes = [note for note in notes if not note.startswith(_NOT_COUNTED)]
    return ConformanceReport(label, tuple(ran), violations, tuple(notes))


def _unrepeated(found: list[Finding], reported: set[str]) -> list[Finding]:
    """``found``, one check's findings, without the violations of a fault in ``reported``
    (those earlier checks reported), each :class:`_Fault` unwrapped; adds its faults to
    ``reported``. Within one check, each stands: its violations differ in what it gave."""
    kept: list[Finding] = []
    faults: set[str] = set()
    for each in found:
        if isinstance(each, _Fault):
            if each.fault in reported:
                continue
            faults.add(each.fault)
            kept.append(each.violation)
        else:
            kept.append(each)
    reported |= faults
    return kept


def _is_spec(factory_or_name: object) -> TypeGuard[SpecLike]:
    """Whether ``factory_or_name`` names an installed sampler rather than being its factory."""
    return isinstance(factory_or_name, (str, SamplerSpec, Mapping))


def _refuse_wrong_parameters(factory: Factory, label: str, params: dict[str, Any]) -> None:
    """Raise :class:`InvalidSamplerConfig` if ``factory`` refuses ``params`` because its
    signature does not take them, or refuses a value given while it builds at its defaults,
    as ``create()`` does for a name. A ``TypeError`` or ``ValueError`` that neither explains is
    the sampler's own, and left for the checks to report."""
    wrong = wrong_parameters(label, signature_of(factory), params)
    if wrong is None and not params:
        return
    outcome, _ = _in_thread("build", lambda: factory(**params))
    if wrong is not None and outcome and isinstance(outcome[0], TypeError):
        name = getattr(factory, "__name__", "")
        called = f"{name}(...)" if isinstance(name, str) and name.isidentifier() else "it"
        raise InvalidSamplerConfig(
            f"{wrong}. check_sampler()'s keyword arguments are the sampler's parameters, "
            f"passed to {called}: give each one it requires and none it does not take"
        ) from None  # the message says all the TypeError did, naming the parameter meant
    if wrong is None and outcome and isinstance(outcome[0], (TypeError, ValueError)):
        # A value refused, as create() tells it: the config's, if the defaults build.
        at_defaults, _ = _in_thread("build", factory)
        if at_defaults and not isinstance(at_defaults[0], BaseException):
            raise InvalidSamplerConfig(
                f"{label}: {_building(factory, params)} refused a value given: "
                f"{describe(outcome[0])}; check_sampler()'s keyword arguments are the "
                f"sampler's parameters, and it builds at its defaults"
            ) from outcome[0]


def _listed(check: Check, factory: Factory, params: dict[str, Any]) -> list[Finding]:
    return list(check(factory, params))


def _resolve(
    factory_or_name: Factory | SpecLike, registry: Registry | None, params: dict[str, Any]
) -> tuple[Factory, str, bool, bool]:
    """The factory to check, its label, whether it takes a seed, and whether it is a built-in."""
    if _is_spec(factory_or_name):
        spec = parse_spec(factory_or_name)
        chosen = registry or default_registry()
        info = chosen.get(spec.name, provider=spec.provider)
        params.update({**spec.params, **params})

        def build(**given: Any) -> Any:
            return chosen.create(SamplerSpec(info.name, given, info.distribution))

        # A class answers to its own name, which the pytest fixture checks; a preset (a
        # factory that is not a class) to the name it is registered under, as served.
        # By type(): isinstance would read a __class__ the factory may define.
        build.own_name = issubclass(type(info.factory), type)  # type: ignore[attr-defined]  # a function attribute
        build.selected = info.name  # type: ignore[attr-defined]  # for the report's words
        build.signature = info.signature  # type: ignore[attr-defined]  # its own: **given hides it

        parameters = {parameter.name for parameter in info.signature.parameters}
        return build, info.name, "seed" in parameters, info.form == "built-in"
    if not callable(factory_or_name):
        kind = type(factory_or_name).__name__
        hint = (
            f"it is a {kind} instance, and each check needs a fresh one: pass the class "
            f"(check_sampler({kind})) or a function that builds one (check_sampler(lambda: "
            f"{kind}(...)))"
            if method_problem(factory_or_name) is None
            else f"got {kind} {safe_repr(factory_or_name)}"
        )
        raise TypeError(f"check_sampler() takes a sampler class, factory or name; {hint}")
    parameters = {parameter.name for parameter in signature_of(factory_or_name).parameters}
    return factory_or_name, _label(factory_or_name), "seed" in parameters, False


def _label(factory: object) -> str:
    """What a report calls ``factory``: its ``name`` if that is a valid sampler name, else
    the class's qualified name (``MySampler``), else the function's name."""
    name = getattr(factory, "name", None)
    if isinstance(name, str):
        try:
            checked = check_name(name)
        except ValueError:
            pass
        else:  # a built-in's name on another class would pass that class off as the built-in
            if _claimed_builtin(checked, factory) is None:
                return checked
    attribute = "__qualname__" if isinstance(factory, type) else "__name__"
    found = getattr(factory, attribute, None)
    return found if isinstance(found, str) else safe_repr(factory)


_CHECKS: tuple[Check, ...] = (
    _check_protocol,
    _check_pick_and_record,
    _check_name,
    _check_pick_returns_a_member,
    _check_keys_unchanged,
    _check_empty_shard,
    _check_record_outside_the_shard,
    _check_bad_scores,
    _check_seeds,
    _check_state,
    _check_stats,
    _check_instances_apart,
    _check_threads,
)

#: The checks whose violation means no later check could run.
_GATES = (_check_protocol, _check_pick_and_record)
