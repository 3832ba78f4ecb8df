"""The conformance kit: check any sampler against the contract and report every violation.

>>> from agentdescent_sampling.testing import check_sampler
>>> check_sampler("round-robin").ok
True

In a plugin's own test suite, the ``sampler_conformance`` pytest fixture (from
:mod:`agentdescent_sampling.pytest_plugin`, registered through the ``pytest11`` entry
point) does the same in one line::

    def test_conforms(sampler_conformance):
        sampler_conformance(MySampler, seed=1)
"""

from __future__ import annotations

import copy
import functools
import inspect
import itertools
import json
import math
import operator
import re
import shlex
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any, TypeGuard

import attrs

from ._display import a_type, escaped_name, safe_repr, shown
from .errors import InvalidSamplerConfig, PluginLoadError, StateError
from .loading import PluginInterrupt, code_lines, describe, stack_lines
from .params import Parameter, Signature, signature_of
from .policy import RESERVED, builtin_of, normalize
from .protocol import (
    MAX_COUNT,
    _half_stateful,
    check_name,
    declares_thread_unsafe,
    is_count,
    is_stateful,
    method_problem,
    short_repr,
)
from .records import PluginFailure, SamplerInfo
from .registry import Registry, available, default_registry, wrong_parameters
from .served import ServedSampler, synchronized
from .spec import SamplerSpec, SpecLike, parse_spec
from .state import find_in_state

__all__ = [
    "ConformanceNote",
    "ConformanceReport",
    "InstalledCheck",
    "Violation",
    "check_installed",
    "check_sampler",
    "checking",
    "fast_thread_switching",
]

THREADS = 16
#: The longest one check may take before it is reported as a hang.
CHECK_SECONDS = 60.0
OPERATIONS_PER_THREAD = 1000
THREAD_ROUNDS = 4
#: The kit's shard; a tuple, so a sampler that reorders what it is given cannot change it.
_SHARD = tuple(f"task-{i}" for i in range(12))
_BAD_SCORES: tuple[tuple[object, type[Exception]], ...] = (
    (math.nan, ValueError),
    (math.inf, ValueError),
    (-0.5, ValueError),
    (1.5, ValueError),
    ("0.5", TypeError),
    (None, TypeError),
)


class ConformanceNote(UserWarning):
    """A note of the conformance kit, as the ``sampler_conformance`` fixture warns it: what a
    check could not observe, or advice, never a violation. ``-W error::...ConformanceNote``
    (or ``filterwarnings``) makes notes fail a test suite that wants none."""


@attrs.frozen
class Violation:
    """One broken rule: which check found it, and what exactly was wrong."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"[{self.check}] {shown(self.message, 1000)}"


@attrs.frozen
class ConformanceReport:
    """The outcome of :func:`check_sampler`: every check that ran, every violation found."""

    sampler: str
    checks: tuple[str, ...]
    violations: tuple[Violation, ...]
    #: What a check could not observe, such as lost records without ``stats()``.
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the sampler passed every check."""
        return not self.violations

    def __str__(self) -> str:
        if self.ok:
            lines = [
                f"{self.sampler}: all {len(self.checks)} checks passed ({', '.join(self.checks)})"
            ]
        else:
            lines = [f"{self.sampler}: {len(self.violations)} violation(s) of the sampler contract"]
            lines += [f"  - {violation}" for violation in self.violations]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


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


Factory = Callable[..., Any]


@attrs.frozen
class _NotApplicable:
    """What a check yields when it does not apply to the sampler (the state check of a
    sampler without state), or when it could observe nothing: the report leaves it out of
    the checks that ran."""


_NOT_APPLICABLE = _NotApplicable()


@attrs.frozen
class _Fault:
    """A violation with the fault it shows: ``"non-member"`` for a pick that returned a
    non-member, else what a call raised and where (:func:`_fault_of`). A check does not
    report again a fault that an earlier check reported: one bug, one violation."""

    violation: Violation
    fault: str


#: The fault of every pick that returned a non-member, whatever it returned.
_NON_MEMBER = "non-member"
#: The fault of a record() that counts a task outside the shard it last picked from other
#: than once: told by record-outside-the-shard, and by threads of a sampler served one call
#: at a time, whose threads record tasks of one another's shards.
_MISCOUNTS_OUTSIDE = "miscounts outside"
#: What a check yields: a violation (with its fault, or not), a note (a ``str``: what it
#: could not observe), or :data:`_NOT_APPLICABLE`.
Finding = Violation | _Fault | str | _NotApplicable
Check = Callable[[Factory, dict[str, Any]], Iterator[Finding]]


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
                f"building it did not finish within {CHECK_SECONDS:g} s: stuck{stuck or ''} "
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


def _fault_of(error: BaseException) -> str:
    """The fault ``error`` shows, whichever call raised it: ``raised Type: text (at
    plugin.py:12)``, as :func:`_failed_call` ends."""
    return f"raised {describe(error)}{_where(error)}"


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


def _finishes(build: Callable[[], object]) -> tuple[bool, str]:
    """Whether ``build()`` returns within :data:`CHECK_SECONDS`, run in a daemon thread as
    each check is (one that does not finish is left behind: it cannot keep the process
    alive), and if not, where it is stuck (:func:`_stuck_at`). What it raised is raised
    here, so that a bad parameter stays a config error.
    """
    outcome, stuck = _in_thread("build", build)
    if outcome and isinstance(outcome[0], BaseException):
        raise outcome[0]
    return bool(outcome), stuck


def _in_thread(
    name: str,
    function: Callable[[], Any],
    seconds: float | None = None,
    later: list[str] | None = None,
) -> tuple[list[Any], str]:
    """``[what function returned or raised]``, or ``[]`` if it ran past ``seconds``
    (:data:`CHECK_SECONDS` by default), with where the threads it started are stuck then
    (:func:`_stuck_at`). Given ``later``, a run past ``seconds`` is looked at once more,
    :data:`_LOOK_AGAIN` seconds on, and where it is then appended to ``later`` if it is in
    another call (:func:`_call_of`): a run still making calls is slow, not stuck."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(function())
        except BaseException as error:  # noqa: BLE001  # a sampler's failure, whatever it is
            outcome.append(error)

    label = f"conformance-{name}-{next(_RUNS)}"  # the threads it starts add to it
    worker = threading.Thread(target=run, name=label, daemon=True)
    worker.start()
    worker.join(CHECK_SECONDS if seconds is None else seconds)
    if outcome:
        return outcome, ""
    stuck = _stuck_at(label)
    if later is not None:
        worker.join(_LOOK_AGAIN)
        again = "" if outcome else _stuck_at(label)
        if _call_of(again) and _call_of(stuck) and _call_of(again) != _call_of(stuck):
            later.append(again)
    return outcome, stuck


def _call_of(stuck: str) -> str:
    """The call of where :func:`_stuck_at` found a run (`` in pick([...], 2)``), without
    its line, or ``""``: a loop that never ends moves from line to line within one call."""
    return stuck.rpartition(", at ")[0] if stuck.startswith(" in ") else ""


#: How long after a check's time is up the kit looks again at where it is, to tell a check
#: still making calls (another call, or the same with other arguments) from one stuck.
_LOOK_AGAIN = 1.0


def _stuck_at(label: str) -> str:
    """Where the threads of one run (named ``label``, or ``label-...``: a check an earlier
    run left behind may still start threads) are stuck in the sampler: a call of the sampler
    still running on one and the innermost line of its own code, `` in pick(['task-0', ...],
    2), at plugin.py:66``; else the innermost line of code outside this package on one (a
    constructor's), `` at plugin.py:12``; or ``""``. A thread in the sampler's own code is
    told before one waiting in this package's (for the lock of a sampler served to threads
    one at a time). It never raises: a report must not fail on the hang it reports."""
    found: dict[int, str] = {}  # by rank: 0 in the sampler's call, 1 a wrapper's, 2 a line
    try:
        names = {thread.ident: thread.name for thread in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            name = names.get(ident, "")
            if name != label and not name.startswith(f"{label}-"):
                continue
            stack = [each for each, _ in traceback.walk_stack(frame)][::-1]  # outermost first
            lines = stack_lines(frame)
            outside = [at for at, line in enumerate(lines) if line[0] not in _NOT_SAMPLER]
            calls = [at for at, each in enumerate(stack) if each.f_code.co_name in _CALLED]
            # The sampler's own call, not a wrapper's of this package (a sampler declared
            # thread_safe = False is served through one); a built-in's is this package's.
            own_calls = [at for at in calls if at in outside]
            if not (calls or outside):
                continue
            first = (own_calls or calls or outside)[0]
            own = lines[first][0]
            where = [(file, line) for top, file, line in lines[first:] if top == own]
            at = f" at {shown(where[-1][0], 200)}:{where[-1][1]}" if where else ""
            rank = 0 if own_calls else 1 if calls else 2
            if calls:
                call = stack[first]
                at = f" in {_call(call, _CALLED[call.f_code.co_name])},{at}"
            found.setdefault(rank, at)
    except Exception:  # noqa: BLE001  # the hang is reported with what was found, then
        pass
    return found[min(found)] if found else ""


def _bounded(name: str, check: Callable[[], list[Any]]) -> tuple[list[Any], bool]:
    """Run ``check`` in a daemon thread for at most :data:`CHECK_SECONDS`.

    Returns what it returned, or a violation for whatever it raised (``SystemExit``
    included: a sampler cannot end the check) or for not finishing, with whether it
    finished. Only ``KeyboardInterrupt`` propagates, since it is the user's.
    """
    later: list[str] = []
    outcome, stuck = _in_thread(name, check, later=later)
    if not outcome and later:
        return [
            Violation(
                name,
                f"did not finish within {CHECK_SECONDS:g} s, though it was not stuck: it was "
                f"still making calls:{stuck}; {_LOOK_AGAIN:g} s later,{later[0]}. The "
                f"sampler's calls are too slow for the checks (the threads check makes "
                f"{THREAD_ROUNDS * THREADS * OPERATIONS_PER_THREAD:,} picks and as many "
                f"records): time pick() and record() on a shard of {len(_SHARD)} tasks; the "
                f"remaining checks were not run",
            )
        ], False
    if not outcome:
        return [
            Violation(
                name,
                f"did not finish within {CHECK_SECONDS:g} s: stuck{stuck or ' in the sampler'} "
                f"(a deadlock, an endless loop or a wait with no end?); the remaining checks "
                f"were not run",
            )
        ], False
    result = outcome[0]
    if isinstance(result, KeyboardInterrupt):
        raise result
    if isinstance(result, BaseException):
        violation = Violation(name, _failed_call(result) or f"raised {describe(result)}")
        return [_Fault(violation, _fault_of(result))], True
    return result, True


#: The sampler's methods a failure is named by, with how many arguments the kit passes each.
_CALLED = {"pick": 2, "record": 2, "stats": 0}
#: The top-level name of this package's modules, whose lines are never the sampler's own.
_PACKAGE = __name__.partition(".")[0]
#: The packages on a kit thread's stack that are not the sampler's code.
_NOT_SAMPLER = (_PACKAGE, "threading")
#: Numbers each run of a check in a thread, whose name, and its threads', carry it.
_RUNS = itertools.count()


def _failed_call(error: BaseException) -> str | None:
    """``pick(['task-0', ...], 3) raised RuntimeError: boom (at plugin.py:12)``: the call of
    the sampler's ``pick()``, ``record()`` or ``stats()`` that ``error`` came out of, read
    from its traceback, or ``None`` if it came out of none (a constructor's)."""
    for frame, _ in traceback.walk_tb(error.__traceback__):
        arity = _CALLED.get(frame.f_code.co_name)
        if arity is not None:
            hint = _tuple_hint(frame, error) or _score_hint(frame)
            return f"{_call(frame, arity)} raised {describe(error)}{_where(error)}{hint}"
    return None


def _call(frame: FrameType, arity: int) -> str:
    """The call ``frame`` runs, as ``pick(['task-0', ...], 3)``: its first ``arity``
    arguments after ``self``, shortened, as they were when it raised."""
    shown_values = [
        _show(value) if type(value) in (list, tuple) else safe_repr(value, 80)
        for value in _arguments(frame)[:arity]
    ]
    return f"{frame.f_code.co_name}({', '.join(shown_values)})"


def _arguments(frame: FrameType) -> list[Any]:
    """The arguments of the call ``frame`` runs, after ``self``, as they were when it raised."""
    arguments = inspect.getargvalues(frame)
    values: list[Any] = [arguments.locals.get(name) for name in arguments.args]
    if arguments.args[:1] == ["self"]:
        values = values[1:]
    extra = arguments.locals.get(arguments.varargs) if arguments.varargs else None
    if type(extra) is tuple:  # pick(self, *args)
        values += extra
    return values


def _tuple_hint(frame: FrameType, error: BaseException) -> str:
    """Advice for a ``pick()`` that raised ``AttributeError`` or ``TypeError`` on a tuple
    shard, as one that calls ``keys.copy()`` or ``keys.sort()`` does; else ``""``."""
    if frame.f_code.co_name != "pick" or not isinstance(error, (AttributeError, TypeError)):
        return ""
    if type(next(iter(_arguments(frame)), None)) is not tuple:
        return ""
    return (
        "; keys may be any sequence of task ids, a tuple too, so read it without changing "
        "it, and copy it with list(keys) to sort or change the copy"
    )


def _score_hint(frame: FrameType) -> str:
    """Advice for a ``record()`` that raised on a score between 0 and 1, as one that takes
    pass and fail alone does; else ``""``."""
    if frame.f_code.co_name != "record":
        return ""
    score = next(iter(_arguments(frame)[1:]), None)
    if type(score) is not float or not 0.0 < score < 1.0:
        return ""
    return (
        f"; a score is any number in [0, 1], {score!r} too (a graded reward), and record() "
        f"must take each: a sampler that counts passes compares it with a pass_threshold"
    )


def _where(error: BaseException) -> str:
    """`` (at plugin.py:12)``: the innermost line of the sampler's own code that ``error``
    came through, or ``""``. Its own code is the package of the first frame the kit's call
    reached outside this one (the sampler's method): not this package's (a ``check_score()``
    that refused a score), the standard library's (a ``random.choice()`` of nothing) or
    another library's (an attrs validator) that the sampler called."""
    where, own = "", None
    for top, file, line in code_lines(error):
        if own is None and top != _PACKAGE:
            own = top
        if top == own and not file.startswith("<"):  # not code made at run time (attrs')
            where = f" (at {shown(file, 200)}:{line})"
    return where


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
        build.own_name = inspect.isclass(info.factory)  # type: ignore[attr-defined]  # a function attribute
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


def _check_protocol(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    try:
        sampler = factory(**params)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001  # the sampler's own failure, SystemExit too
        # The registry's PluginLoadError is chained to the plugin's own error, whose
        # traceback reaches the plugin's line.
        cause = error.__cause__ if isinstance(error, PluginLoadError) else None
        yield Violation(
            "protocol",
            f"building it, {_building(factory, params)}, raised {describe(error)}"
            f"{_where(cause or error)}; every other check builds one, so none ran",
        )
        return
    problem = method_problem(sampler)
    if problem is not None:
        yield Violation(
            "protocol",
            f"{type(sampler).__name__} is not a TaskSampler: {problem}. Every other check "
            f"calls pick(keys, round_index) and record(task_id, score), so none ran",
        )


def _building(factory: Factory, params: dict[str, Any]) -> str:
    """The call that builds a sampler, as a report shows it: ``MySampler(seed=1)``, or
    ``create('name')`` for a sampler checked by name."""
    given = ", ".join(f"{key}={safe_repr(value, 40)}" for key, value in params.items())
    selected = getattr(factory, "selected", None)
    if isinstance(selected, str):
        return f"create({selected!r})" if not given else f"create({selected!r}) with {given}"
    name = getattr(factory, "__name__", None)
    called = name if isinstance(name, str) and name.isidentifier() else "its factory"
    return f"{called}({given})"


_NONE_RAN = "every other check picks and records, so none ran"


def _check_pick_and_record(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    failed = _first_pick_and_record(factory(**params))
    if failed is None:
        return
    blamed = _blamed_parameter(factory, params)
    if blamed is not None:
        given = f"{blamed.name}={safe_repr(params[blamed.name], 40)}"
        failed += (
            f"; it was built with {given} without complaint, and at {blamed.name}'s default, "
            f"{safe_repr(blamed.default, 40)}, it picks and records. If {blamed.name} takes "
            f"that value, make pick() and record() work with it; if not, refuse it in "
            f"__init__ (an attrs validator, or a check that raises TypeError or ValueError), so "
            f"that create() names the parameter rather than a pick failing later"
        )
    yield Violation("pick-and-record", f"{failed}; {_NONE_RAN}")


def _first_pick_and_record(sampler: Any) -> str | None:
    """What ``sampler``'s first two picks, or the records of what they picked (a pass, then a
    failure), raised, as a report says it; ``None`` if each works."""
    for round_index, score in enumerate((1.0, 0.0)):
        call = f"pick({_show(list(_SHARD))}, {round_index})"
        try:
            picked = _member(sampler.pick(list(_SHARD), round_index), _SHARD)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001  # any, SystemExit too, is the violation
            return f"{call} raised {describe(error)}{_where(error)}"
        try:
            sampler.record(picked, score)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001  # any, SystemExit too, is the violation
            outcome = "a pass" if score else "a failure"
            return (
                f"record({picked!r}, {score}) after {call} raised {describe(error)}"
                f"{_where(error)}; record() must take {outcome} ({score})"
            )
    return None


def _blamed_parameter(factory: Factory, params: dict[str, Any]) -> Parameter | None:
    """The first of ``params`` that, left at its default, has the first pick and record
    work where with its value given they raise, again when it is given back: the value that
    breaks them, which the sampler took without complaint. ``None`` if no one parameter
    does, or if the tries outlast half of :data:`CHECK_SECONDS` between them (a try that
    hangs is left behind, and the failure is reported as it was)."""
    deadline = time.monotonic() + CHECK_SECONDS / 2

    def fails(given: dict[str, Any]) -> bool | None:
        """Whether the first pick and record fail when built with ``given``; ``None`` if
        building raised, or the try did not end by the deadline."""
        outcome, _ = _in_thread("blame", lambda: _first_pick_and_record(factory(**given)),
                                max(deadline - time.monotonic(), 0.0))  # fmt: skip
        if not outcome or isinstance(outcome[0], BaseException):
            if outcome and isinstance(outcome[0], KeyboardInterrupt):
                raise outcome[0]
            return None
        return outcome[0] is not None

    for parameter in _signature(factory).parameters:
        if parameter.name not in params or parameter.required:
            continue
        rest = {key: value for key, value in params.items() if key != parameter.name}
        if fails(rest) is False and fails(params) is True:
            return parameter
        if time.monotonic() >= deadline:
            break
    return None


def _not_a_str(picked: object) -> str:
    return "" if isinstance(picked, str) else f" ({a_type(picked)}, not a task id)"


def _member(picked: object, shard: Sequence[str]) -> str:
    """``picked`` if it is in ``shard``, else the shard's first task: the kit records only
    members, so that a bad pick is reported once, as itself, and not as ``record()``'s error."""
    return picked if isinstance(picked, str) and picked in shard else shard[0]


def _notes(factory: Factory, params: dict[str, Any], label: str) -> tuple[str, ...]:
    sampler = factory(**params)
    notes = []
    locked = declares_thread_unsafe(factory) or declares_thread_unsafe(sampler)
    locked = locked or (isinstance(sampler, ServedSampler) and sampler.lock is not None)
    unread = _without_stats(sampler, label, locked)
    if unread:
        notes.append(unread)
    loose = _unvalidated(factory, params)
    if loose:
        names = [parameter.name for parameter in loose]
        kinds = {"declared a number" if p.annotation else "defaulting to a number" for p in loose}
        numbers = kinds.pop() if len(kinds) == 1 else "declared a number or defaulting to one"
        notes.append(
            f"parameters: {', '.join(names)}, {numbers}, accepted the string "
            f"{_NOT_A_NUMBER!r}, so a config's typo ({label}:{names[0]}=abc) passes create() "
            f"and fails later, if at all. Validate numbers as they are set (an attrs validator "
            f"such as agentdescent_sampling.plugin.number_in, or in a plain __init__ a "
            f"check that raises TypeError or ValueError), so create() refuses a bad value "
            f"naming its parameter"
        )
    signature = _signature(factory)
    if signature.accepts_any and _takes_unknown_keyword(factory, params):
        named = {parameter.name for parameter in signature.parameters}
        swallowed = [key for key in params if key not in named]
        taken = (
            f"the parameter given here that it does not name, {swallowed[0]}="
            f"{safe_repr(params[swallowed[0]], 40)}, was taken silently, as a config's typo is"
            if swallowed
            else f"a config's misspelt parameter ({label}:x=1) is taken silently"
        )
        notes.append(
            f"parameters: {label} takes any keyword (**kwargs), so {taken}, and the sampler "
            f"runs without it. Name each parameter (an attrs class, or keyword arguments), so "
            f"that create() refuses an unknown one and suggests the closest"
        )
    flags = _unvalidated_flags(factory, params)
    if flags:
        listed = ", ".join(parameter.name for parameter in flags)
        notes.append(
            f"flags: {listed} accepted the string 'false', which an if reads as true, so a "
            f'config\'s quoted "false" ({label}:{flags[0].name}="false") turns it on. Validate '
            f"flags as they are set (an attrs validator such as "
            f"agentdescent_sampling.plugin.boolean(), or a check that raises TypeError)"
        )
    taken = _bad_scores_taken(sampler)  # looked at above, not yet called
    if taken:
        notes.append(
            f"bad scores: record() {taken}. The engine checks each reward before record(), so "
            f"no run is harmed, but another caller's bad score would skew the statistics "
            f"silently: agentdescent_sampling.plugin.check_score(task_id, score) refuses them "
            f"for you"
        )
    return tuple(notes)


#: A keyword no sampler names: what the kit gives a factory taking ``**kwargs``.
_UNKNOWN_KEYWORD = "agentdescent_kit_unknown_keyword"


def _takes_unknown_keyword(factory: Factory, params: dict[str, Any]) -> bool:
    """Whether ``factory`` builds a sampler given a keyword it cannot know: one that hands
    its ``**kwargs`` on to a class that names its parameters refuses it."""
    try:
        factory(**params, **{_UNKNOWN_KEYWORD: 1})
    except Exception:  # noqa: BLE001  # refused, as an unknown parameter should be
        return False
    return True


def _without_stats(sampler: Any, label: str, locked: bool) -> str:
    """The one note of a sampler without ``stats()``, saying what each check that reads it
    could not see: the threads check its lost records (unless it is ``locked``: served under
    a lock, it loses none), the instances check what it learned (unless ``state_dict()``
    shows that); or ``""``, if it has ``stats()`` or neither check needs it."""
    if callable(getattr(sampler, "stats", None)):
        return ""
    threads = not locked
    apart = not callable(getattr(sampler, "state_dict", None))
    lost = (
        f"lost records could not be observed, because {label} has no stats(); only exceptions "
        f"and non-members under {THREADS} threads were checked"
    )
    shared = (
        "whether records on one instance change what another learned (a class attribute or "
        "a mutable default argument shares it) could not be seen"
    )
    if threads and apart:
        return (
            f"threads and instances-apart: {lost}; and with no state_dict() either, {shared}. "
            f"Add stats() returning {_STATS_SHAPE}, which both checks read (declaring "
            f"thread_safe = False answers the threads check alone)"
        )
    if threads:
        return (
            f"threads: {lost}. Add stats() returning {_STATS_SHAPE}, or declare thread_safe = False"
        )
    if apart:
        return (
            f"instances-apart: not checked: {label} has neither state_dict() nor stats(), so "
            f"{shared}. Add stats() returning {_STATS_SHAPE}, which the threads check reads too"
        )
    return ""


#: What the kit sets a number parameter to, to see whether the factory validates it.
_NOT_A_NUMBER = "not-a-number"


def _unvalidated(factory: Factory, params: dict[str, Any]) -> list[Parameter]:
    """The number parameters that ``factory`` builds a sampler with when set to a string:
    those declared ``int`` or ``float`` (or either or None), and those declared nothing
    whose default is an ``int`` or a ``float``."""

    def number(parameter: Parameter) -> bool:
        undeclared = not parameter.annotation and type(parameter.default) in (int, float)
        return _declared_as(parameter.annotation, {"int", "float"}) or undeclared

    return _taking(factory, params, number, _NOT_A_NUMBER)


def _unvalidated_flags(factory: Factory, params: dict[str, Any]) -> list[Parameter]:
    """The flags, declared ``bool`` or declared nothing with a ``bool`` default, that
    ``factory`` builds a sampler with when set to the string ``'false'``, which is true."""

    def flag(parameter: Parameter) -> bool:
        undeclared = not parameter.annotation and type(parameter.default) is bool
        return _declared_as(parameter.annotation, {"bool"}) or undeclared

    return _taking(factory, params, flag, "false")


def _taking(
    factory: Factory, params: dict[str, Any], kind: Callable[[Parameter], bool], given: str
) -> list[Parameter]:
    """The parameters of ``kind`` that ``factory`` builds a sampler with when set to
    ``given``, a string of the wrong type."""
    loose = []
    for parameter in _signature(factory).parameters:
        if not kind(parameter):
            continue
        try:
            factory(**{**params, parameter.name: given})
        except Exception:  # noqa: BLE001  # refused, as it should be, whatever the type
            continue
        loose.append(parameter)
    return loose


def _signature(factory: Factory) -> Signature:
    """The parameters ``factory`` takes. A sampler checked by name is built through the
    registry, whose ``build(**given)`` hides the sampler's own: the registry's description
    of them is the one to read."""
    signature = getattr(factory, "signature", None)
    return signature if isinstance(signature, Signature) else signature_of(factory)


def _declared_as(annotation: str, kinds: set[str]) -> bool:
    """Whether ``annotation`` (as text) is one of ``kinds`` (``{"int", "float"}``), or a union
    of them, with or without ``None``: ``float | None``, ``Optional[int]``,
    ``typing.Union[int, float]``."""
    text = annotation.replace("typing.", "").replace(" ", "")
    for wrapper in ("Optional[", "Union["):
        if text.startswith(wrapper) and text.endswith("]"):
            text = text[len(wrapper) : -1].replace(",", "|")
    parts = set(text.split("|")) - {"None", "NoneType"}
    return bool(parts) and parts <= kinds


def _bad_scores_taken(sampler: Any) -> str:
    """How ``record()`` met the bad scores it did not refuse as :func:`check_score` does,
    or ``""``. Advice, not a violation: the contract is the engine's, which never passes one."""
    accepted, mistaken = [], []
    task = _SHARD[0]
    for round_index, (score, expected) in enumerate(_BAD_SCORES):
        # The task it picks: a sampler may refuse to record one it never handed out. A bad
        # score taken may break its next pick (a str among floats): then the last task again.
        with suppress(Exception):
            task = _member(sampler.pick(list(_SHARD), round_index), _SHARD)
        try:
            sampler.record(task, score)
        except expected:
            continue
        except Exception as error:  # noqa: BLE001  # the wrong exception is what is noted
            mistaken.append(f"raised {describe(error)} for {score!r}")
        else:
            accepted.append(repr(score))
    return "; ".join(([f"accepted {', '.join(accepted)}"] if accepted else []) + mistaken[:2])


def _check_name(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    # A class's own name, as the fixture reads it: the registry serves a class selected by
    # another name under that one, which would supply a missing or invalid name. A preset's
    # is the name it is registered under, which the registry serves it by.
    own = getattr(factory, "own_name", True)
    first, second = (
        each.wrapped if own and isinstance(each, ServedSampler) else each
        for each in (factory(**params), factory(**params))
    )
    name = getattr(first, "name", _MISSING)
    cls = type(first).__qualname__
    # Checked by the name its entry point gives it, that is the name to give the class.
    selected = getattr(factory, "selected", None)
    suggested = (
        selected
        if isinstance(selected, str) and normalize(selected) not in RESERVED
        else _suggested_name(type(first).__name__)
    )
    add = f"add name = {suggested!r} to the class (the name configs select it by)"
    if name is _MISSING:
        yield Violation("name", f"{cls} has no name attribute; {add}")
        return
    if not isinstance(name, str):
        yield Violation("name", f"{cls}'s name attribute is {safe_repr(name)}, not a string; {add}")
        return
    try:
        check_name(name)
    except ValueError as error:
        yield Violation("name", f"the sampler's name attribute is wrong: {error}")
        return
    builtin = _claimed_builtin(name, type(first))
    if builtin is not None:
        yield Violation(
            "name",
            f"{cls}'s name {name!r} selects the built-in {builtin}, and built-in names are "
            f"reserved: registered under it, the plugin is refused and a config naming it gets "
            f"the built-in, and under another name its samplers would still call themselves the "
            f"built-in; give the class its own (name = {_suffixed_name(suggested)!r})",
        )
        return
    first.pick(list(_SHARD), 0)
    first.record(_SHARD[0], 1.0)
    if getattr(first, "name", None) != name or getattr(second, "name", None) != name:
        yield Violation("name", f"name {name!r} is not stable across instances and calls")


_MISSING = object()


def _claimed_builtin(name: str, owner: object) -> str | None:
    """The built-in ``name`` selects, when ``owner`` (a class or a factory) is not this
    package's own: a name that would pass it off as the built-in."""
    if str(getattr(owner, "__module__", None)).partition(".")[0] == _PACKAGE:
        return None
    return builtin_of(name)


def _suffixed_name(name: str) -> str:
    """``name``, or ``my-<name>`` if it is a built-in's: a name the registry takes."""
    return name if normalize(name) not in RESERVED else check_name(f"my-{name}"[:64])


def _suggested_name(class_name: str) -> str:
    """A sampler name made of a class's name (``HardestFirst`` -> ``hardest-first``)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", class_name).lower().replace("_", "-")
    try:
        return check_name(words)
    except ValueError:
        return "my-sampler"


def _check_pick_returns_a_member(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    shards: list[Sequence[str]] = [list(_SHARD), tuple(_SHARD[:5]), ["only-task"], list(_ODD_IDS)]
    strays: list[tuple[Sequence[str], int, object]] = []  # the first non-member of each shard
    for shard in shards:
        sampler = factory(**params)
        for round_index in range(3 * len(shard)):
            # A copy for each call: a pick that mutates what it is given (the keys-unchanged
            # check reports that) must not have a member it took out called a non-member.
            picked = sampler.pick(list(shard) if isinstance(shard, list) else shard, round_index)
            if picked not in shard:
                strays.append((shard, round_index, picked))
                break
            sampler.record(picked, float(round_index % 2))
    if strays:  # one bug, whichever shards show it: one violation, naming each
        (shard, round_index, picked), *more = strays
        also = ", and ".join(f"pick({_show(s)}, {r}), returning {safe_repr(p)}" for s, r, p in more)
        violation = Violation(
            "pick-returns-a-member",
            f"pick({_show(shard)}, {round_index}) returned {safe_repr(picked)}"
            f"{_not_a_str(picked)}{_changed_key(picked, shard)}, which is not in the "
            f"{type(shard).__name__} it was given{f'; so did {also}' if also else ''}",
        )
        yield _Fault(violation, _NON_MEMBER)


#: Task ids as benchmarks name them, which a pick that changes a key (lower-cases it, strips
#: it) returns changed: the engine then looks up a task it does not have.
_ODD_IDS = ("HumanEval/0", "Dates-Train", "task 2", "t\u00e2che-3", "Q&A #4")


def _changed_key(picked: object, shard: Sequence[str]) -> str:
    """`` ('Dates-Train' changed: return a key as it is given)`` where ``picked`` is a member
    of ``shard`` lower-cased, stripped or both; else ``""``."""
    if not isinstance(picked, str):
        return ""
    same = next((key for key in shard if key.casefold().strip() == picked.casefold().strip()), None)
    if same is None:
        return ""
    return f" ({safe_repr(same)} changed: return a key as it is given, as the engine looks it up)"


#: The scores the keys-unchanged check records between its picks, in turn: passes, failures
#: and a partial score, so that a pick that changes its shard only once a task has some
#: outcome (one that drops solved tasks from it) does so under the check.
_MIXED_SCORES = (1.0, 0.0, 0.5, 0.0)


def _check_keys_unchanged(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    shard = list(_SHARD)
    last = ""
    for round_index in range(2 * len(shard)):
        picked = sampler.pick(shard, round_index)
        call = f"pick({_show(list(_SHARD))}, {round_index})"
        if shard != list(_SHARD):
            records = f"{round_index} record{'s' if round_index > 1 else ''}"
            after = f", made after {records} (the last {last})," if last else ""
            yield Violation(
                "keys-unchanged",
                f"{call}{after} mutated the shard it was given: {_change(list(_SHARD), shard)}; "
                f"copy it (sorted(keys), list(keys)) before reordering or removing",
            )
            return
        task, score = _member(picked, _SHARD), _MIXED_SCORES[round_index % len(_MIXED_SCORES)]
        sampler.record(task, score)
        last = f"record({task!r}, {score!r})"
        if shard != list(_SHARD):  # through the shard a pick kept
            yield Violation(
                "keys-unchanged",
                f"{last}, after {call}, mutated the shard that pick was given: "
                f"{_change(list(_SHARD), shard)}; keep a copy of the shard (list(keys)), not "
                f"the list evolve() passes",
            )
            return


def _change(before: Sequence[str], after: Sequence[str]) -> str:
    """What a pick did to the shard it was given, ``before`` it and ``after``: the keys it
    took out or put in, else the first position it reordered."""
    removed = [key for key in before if key not in after]
    added = [key for key in after if key not in before]
    if removed or added or len(before) != len(after):
        parts = [f"{len(before)} keys became {len(after)}"]
        for verb, keys in (("removed", removed), ("added", added)):
            if keys:
                parts.append(f"{verb} {_show(keys)}")
        return ", ".join(parts)
    index = next(i for i, (was, now) in enumerate(zip(before, after, strict=True)) if was != now)
    return (
        f"reordered it, keys[{index}] was {safe_repr(before[index])} and is now "
        f"{safe_repr(after[index])} ({_show(before)} became {_show(after)})"
    )


def _check_empty_shard(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    yield from _expect(
        lambda: sampler.pick([], 0), ValueError, "empty-shard", "pick([], 0)", "check_keys"
    )


def _check_record_outside_the_shard(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    counts, _ = _stats_counts(factory(**params))  # whether stats() counts every record
    sampler = factory(**params)
    sampler.pick(list(_SHARD[:3]), 0)
    outside = "a-task-from-another-shard"
    before = _counted(sampler) if counts else None
    try:
        sampler.record(outside, 0.5)
    except Exception as error:  # noqa: BLE001  # any exception is the violation
        violation = Violation(
            "record-outside-the-shard",
            f"record({outside!r}, 0.5) of a task outside the current shard raised "
            f"{describe(error)}{_where(error)}; shards rotate between rounds, so this must be "
            f"accepted",
        )
        yield _Fault(violation, _fault_of(error))  # raised on 0.5 anywhere: reported there
        return
    after = _counted(sampler) if counts else None
    if before is not None and after is not None and after != before + 1:
        counted = "was not counted" if after <= before else f"counted {after - before} times"
        violation = Violation(
            "record-outside-the-shard",
            f"record({outside!r}, 0.5) of a task outside the current shard {counted}: "
            f"stats() counts {after - before} trials more, not 1; shards rotate between "
            f"rounds, so count the score of every task recorded once, in the shard or not",
        )
        yield _Fault(violation, _MISCOUNTS_OUTSIDE)
    picked = sampler.pick(list(_SHARD[:3]), 1)
    if picked == outside:  # what it was told of, not in the shard: this check's own fault
        yield Violation(
            "record-outside-the-shard",
            f"after record({outside!r}, 0.5), pick({_show(list(_SHARD[:3]))}, 1) returned "
            f"{outside!r}, the task recorded, which is not in the shard it was given; pick "
            f"only from keys",
        )
    elif picked not in _SHARD[:3]:  # any non-member, which the members check may have seen
        violation = Violation(
            "record-outside-the-shard",
            f"after recording a task outside the shard, pick() returned {safe_repr(picked)}, "
            f"not a member",
        )
        yield _Fault(violation, _NON_MEMBER)


#: The picks and records the bad-scores check makes before each bad score, and after it.
_BAD_SCORE_ROUNDS = 12


def _check_bad_scores(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    """A score ``record()`` refuses changes nothing the sampler shows: its ``stats()``, its
    ``state_dict()``, or, where the same records give the same picks, the picks that follow.
    Scores it takes are the notes' business (advice: the engine never passes one)."""
    changes: list[tuple[object, str]] = []
    observed = False
    for score, _ in _BAD_SCORES:
        trio = [factory(**params) for _ in range(3)]  # one given the bad score, two twins
        try:
            task = _member(_set_up(trio), _SHARD)
        except Exception:  # noqa: BLE001  # the checks of picks and records report it
            yield _NOT_APPLICABLE
            return
        sampler = trio[0]
        before = _observed(sampler)
        try:
            sampler.record(task, score)
        except Exception as error:  # noqa: BLE001  # refused, as it should be, whatever the type
            refused = f"record({task!r}, {score!r}) raised {type(error).__name__}"
        else:
            continue  # taken: the notes say so
        changed = _changed(before, _observed(sampler))
        if not changed:
            try:
                after = [_scripted_picks(each, _BAD_SCORE_ROUNDS + 1, 2 * _BAD_SCORE_ROUNDS)
                         for each in trio]  # fmt: skip
            except Exception:  # noqa: BLE001  # the other checks report it
                after = [[], [], []]
            if after[1] == after[2] and after[1]:  # picks that can show a change
                observed = True
                if after[0] != after[1]:
                    changed = (
                        f"the picks that followed were {_show(after[0][:6])}, and "
                        f"{_show(after[1][:6])} on an instance that made the same picks and "
                        f"records without it"
                    )
        observed = observed or bool(before)
        if changed:
            changes.append((score, f"{refused}, yet {changed}"))
    if not observed:  # it took every bad score, or nothing it shows could tell
        yield _NOT_APPLICABLE
        return
    if changes:
        (_, first), more = changes[0], [safe_repr(score) for score, _ in changes[1:]]
        also = f"; so did {', '.join(more)}" if more else ""
        yield Violation(
            "bad-scores",
            f"after {_BAD_SCORE_ROUNDS} picks and records, {first}{also}. A score record() "
            f"refuses must change nothing: check it before any update "
            f"(agentdescent_sampling.plugin.check_score(task_id, score) returns it as a float, or "
            f"raises)",
        )


def _set_up(samplers: list[Any]) -> object:
    """Give each of ``samplers`` the same :data:`_BAD_SCORE_ROUNDS` picks and records, then
    one more pick, whose result for the first is returned."""
    for sampler in samplers:
        _scripted_picks(sampler, 0, _BAD_SCORE_ROUNDS)
    picks = [sampler.pick(list(_SHARD), _BAD_SCORE_ROUNDS) for sampler in samplers]  # each
    return picks[0]


@attrs.frozen
class _Raised:
    """What a method that raised, read by :func:`_observed`, shows: the exception, described."""

    error: str


def _observed(sampler: Any) -> dict[str, object]:
    """What ``sampler`` shows of what it learned: ``{"stats()": ..., "state_dict()": ...}``,
    each of the two it has that returns the same on two calls in a row (a clock in one could
    show no change), a copy; a :class:`_Raised` for one that raised."""
    shown_now: dict[str, object] = {}
    for method in ("stats", "state_dict"):
        read = getattr(sampler, method, None)
        if not callable(read):
            continue
        try:
            first = copy.deepcopy(read())
            steady = _difference(first, read()) == ""
        except Exception as error:  # noqa: BLE001  # shown as what it raised
            first, steady = _Raised(describe(error)), True
        if steady:
            shown_now[f"{method}()"] = first
    return shown_now


def _changed(before: dict[str, object], after: dict[str, object]) -> str:
    """What differs from ``before`` in ``after`` (each from :func:`_observed`), or ``""``."""
    for method, was in before.items():
        now = after.get(method)
        if isinstance(now, _Raised) and not isinstance(was, _Raised):
            return f"{method} raised {now.error} after it, and returned {safe_repr(was)} before"
        difference = _difference(was, now, method, ("before", "after"))
        if difference:
            return difference
    return ""


def _expect(
    call: Callable[[], object], expected: type[Exception], check: str, what: str, helper: str
) -> Iterator[Violation]:
    """Yield a violation unless ``call`` raises ``expected``."""
    try:
        result = call()
    except expected:
        return
    except Exception as error:  # noqa: BLE001  # the wrong exception is the violation
        outcome = f"raised {describe(error)}{_where(error)}"
    else:
        outcome = f"returned {safe_repr(result)}"
    yield Violation(
        check,
        f"{what} {outcome}; expected {expected.__name__} "
        f"(agentdescent_sampling.plugin.{helper} raises it for you)",
    )


def _check_seeds(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    for seed in (0, 12345):
        # Both built before either picks, and called in turn: a sampler that seeds the random
        # module in __init__ and draws from it then splits one stream between the two.
        twins = [factory(**{**params, "seed": seed}) for _ in range(2)]
        runs: list[list[str]] = [[], []]
        for round_index in range(_SCRIPTED):
            for twin, run in zip(twins, runs, strict=True):
                run += _scripted_picks(twin, round_index, round_index + 1)
        if runs[0] != runs[1]:
            # Shown from the first pick that differs: the first eight may agree.
            first = next(
                (i for i, (one, other) in enumerate(zip(*runs, strict=False)) if one != other),
                min(map(len, runs)),
            )
            shown_from = slice(first, first + 8)
            yield Violation(
                "seeds",
                f"two instances with seed={seed} picked differently, built together and called "
                f"in turn (a pick and a record each), from pick {first + 1} on: "
                f"{runs[0][shown_from]} vs {runs[1][shown_from]}; "
                f"draw randomness only from the instance's own generator, "
                f"self.rng = random.Random(seed), never from the random module's (random.seed() "
                f"in __init__ seeds one generator that every instance shares)",
            )


#: What the kit reads ``stats()`` as, in its messages.
_STATS_SHAPE = "{task_id: (passes, trials)}"
#: How many records the one-thread look at ``stats()`` makes before the threads check.
_STATS_PROBE = 24


def _served(factory: Factory, params: dict[str, Any]) -> Any:
    """A fresh sampler as the registry serves it: under a lock if it, or its factory,
    declares ``thread_safe = False``."""
    sampler = factory(**params)
    if declares_thread_unsafe(factory) or declares_thread_unsafe(sampler):
        return synchronized(sampler)
    return sampler


def _check_stats(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    """A ``stats()``, where there is one, works: on a fresh instance, and after a few picks
    and records. Its shape is the threads check's business (a note: it is optional)."""
    sampler = _served(factory, params)
    if not callable(getattr(sampler, "stats", None)):
        yield _NOT_APPLICABLE
        return
    _, found = _stats_counts(sampler)
    if isinstance(found, Violation):
        yield found


def _check_threads(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    counts, note = _stats_counts(_served(factory, params))
    if isinstance(note, str) and note:  # a stats() that raises is the stats check's
        yield note
    # A race in an unguarded read-modify-write shows up in most rounds, not all; a few
    # rounds make a miss vanishingly rare, and a correct sampler costs only the rounds.
    for _ in range(THREAD_ROUNDS):
        outcome = _threads_round(_served(factory, params), counts)
        if not outcome.violations and outcome.lost is None:
            continue
        alone, counted = _one_thread_run(_served(factory, params), counts)
        if alone is not None:  # not a race: the same calls fail on one thread
            violation = Violation(
                "threads",
                f"the calls the threads make raise on one thread too, first: "
                f"{_failed_call(alone) or describe(alone)}; fix that first (no lock would)",
            )
            yield _Fault(violation, _fault_of(alone))
            return
        yield from outcome.violations
        if outcome.lost is not None:
            made = THREADS * OPERATIONS_PER_THREAD
            if counted == made:
                yield outcome.lost
            else:  # it does not count every record, so nothing was shown to be lost
                after = f"after {made} records made one after another on one thread"
                read = "could not be read" if counted is None else f"counts {counted} trials"
                yield _not_counted(f"{read} {after}")
        return


def _stats_counts(sampler: Any) -> tuple[bool, Violation | str]:
    """Whether the threads check can count records with ``sampler.stats()``, and if it
    has one it cannot, a note saying why: only a ``{task_id: (passes, trials)}`` that
    counts each of a few records made on one thread can show records lost under threads.
    A ``stats()`` that raises, on a fresh instance or after those records, is a violation.
    """
    stats = getattr(sampler, "stats", None)
    if not callable(stats):
        return False, ""  # _notes says so, for samplers their user can change
    try:
        stats()
    except Exception as error:  # noqa: BLE001  # the violation
        return False, _stats_raised("on a fresh instance", error)
    try:
        for step in range(_STATS_PROBE):
            picked = sampler.pick(list(_SHARD), step)
            sampler.record(_member(picked, _SHARD), float(step % 2))
    except Exception:  # noqa: BLE001  # the threads rounds report it, and then stats() is moot
        return False, ""
    try:
        counted = _trials(stats())
    except Exception as error:  # noqa: BLE001  # the violation
        return False, _stats_raised(f"after {_STATS_PROBE} picks and records on one thread", error)
    if isinstance(counted, str):
        return False, _not_counted(counted)
    if counted != _STATS_PROBE:
        return False, _not_counted(
            f"counts {counted} trials after {_STATS_PROBE} records made on one thread"
        )
    return True, ""


def _stats_raised(when: str, error: BaseException) -> Violation:
    """The violation of a ``stats()`` that raised ``error`` ``when`` it was read."""
    return Violation(
        "stats",
        f"{when}, stats() raised {describe(error)}{_where(error)}; stats() is optional, but "
        f"one that is there must work: return {_STATS_SHAPE} from it (the author's guide, "
        f"'Statistics'), or remove it",
    )


def _counted(sampler: Any) -> int | None:
    """The trials ``sampler.stats()`` counts, or ``None`` if it raises or is no
    ``{task_id: (passes, trials)}`` (the stats and threads checks report that)."""
    try:
        counted = _trials(sampler.stats())
    except Exception:  # noqa: BLE001  # reported by the stats check
        return None
    return counted if isinstance(counted, int) else None


def _trials(stats: object) -> int | str:
    """The trials ``stats`` counts, if it is ``{task_id: (passes, trials)}`` (two whole
    numbers, ``0 <= passes <= trials``), else what is wrong with it, naming one entry."""
    if not isinstance(stats, Mapping):
        return f"returned {type(stats).__name__} {safe_repr(stats)}, not a dict"
    total = 0
    for task_id, counts in stats.items():
        entry = f"{safe_repr(task_id)}: {safe_repr(counts)}"
        if not isinstance(task_id, str):
            return f"returned an entry {entry} whose key is not a task id"
        if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence) or len(counts) != 2:
            return f"returned an entry {entry}, not a (passes, trials) pair"
        passes, trials = (_whole(count) for count in counts)
        if passes is None or trials is None or passes > trials:
            return (
                f"returned an entry {entry}: passes and trials must be whole numbers with "
                f"0 <= passes <= trials"
            )
        total += trials
    return total


def _whole(value: object) -> int | None:
    """``value`` as an ``int`` if it is a whole number >= 0 (not a bool), else ``None``."""
    if isinstance(value, bool):
        return None
    try:
        whole = operator.index(value)  # type: ignore[arg-type]  # refused below if not one
    except TypeError:
        return None
    return whole if whole >= 0 else None


#: How the note of a ``stats()`` the threads check cannot count records with begins.
_NOT_COUNTED = "threads: lost records could not be observed: stats() "


def _not_counted(problem: str) -> str:
    """The note of a ``stats()`` that the threads check cannot count records with."""
    return (
        f"{_NOT_COUNTED}{problem}, and the threads "
        f"check reads stats() as {_STATS_SHAPE} with whole numbers counting every record; "
        f"only exceptions and non-members under {THREADS} threads were checked. Return that "
        f"from stats() (the author's guide, 'Statistics'), or give the method another name"
    )


def _worker_calls(sampler: Any, worker: int, strays: list[str]) -> None:
    """The picks and records one of the threads check's workers makes, noting strays."""
    shard = list(_SHARD[worker % 3 :: 3])
    for step in range(OPERATIONS_PER_THREAD):
        # A copy for each call, as in the members check: a pick that mutates its shard is
        # the keys-unchanged check's to report, not a non-member here.
        picked = sampler.pick(list(shard), step)
        if picked not in shard:
            strays.append(safe_repr(picked))
        sampler.record(_member(picked, shard), float((worker + step) % 2))


def _one_thread_run(sampler: Any, counts: bool) -> tuple[Exception | None, int | None]:
    """What the threads' calls, made one after another on one thread, raise first, if
    any, and the trials ``stats()`` then counts (``None`` if it is not read or unreadable)."""
    try:
        for worker in range(THREADS):
            _worker_calls(sampler, worker, [])
    except Exception as error:  # noqa: BLE001  # reported as a violation
        return error, None
    if not counts:
        return None, None
    try:
        counted = _trials(sampler.stats())
    except Exception:  # noqa: BLE001  # then the lost records cannot be told
        return None, None
    return None, counted if isinstance(counted, int) else None


@attrs.frozen
class _Round:
    """What one round of the threads check found: its violations, and apart from them the
    lost-records one, which stands only if ``stats()`` counts every record on one thread."""

    violations: list[Violation | _Fault]
    lost: Violation | _Fault | None = None


def _threads_round(sampler: Any, counts: bool) -> _Round:
    errors: list[str] = []
    strays: list[str] = []
    barrier = threading.Barrier(THREADS)

    def work(worker: int) -> None:
        try:
            barrier.wait()
            _worker_calls(sampler, worker, strays)
        # Reported as a violation below; SystemExit included, which a thread would swallow.
        except BaseException as error:  # noqa: BLE001 - reported, as the comment above says
            errors.append(_failed_call(error) or describe(error))
            barrier.abort()  # the other threads must not wait for this one forever

    with fast_thread_switching():
        # Daemons: a sampler that deadlocks them must not keep the process from exiting.
        # Named after the check's own thread, so that a hang is looked for on them.
        label = threading.current_thread().name
        threads = [
            threading.Thread(target=work, args=(n,), name=f"{label}-{n}", daemon=True)
            for n in range(THREADS)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    violations: list[Violation | _Fault] = []
    lost: Violation | _Fault | None = None
    if errors:
        violations.append(
            Violation(
                "threads",
                f"{len(errors)} of {THREADS} threads raised while sharing one instance, first: "
                f"{errors[0]}; guard pick() and record() with a lock, or declare "
                f"thread_safe = False",
            )
        )
    if strays:  # the members check reports a pick that returns them on one thread too
        stray = Violation(
            "threads", f"under threads, pick() returned non-members: {', '.join(strays[:3])}"
        )
        violations.append(_Fault(stray, _NON_MEMBER))
    if counts and not errors:
        expected = THREADS * OPERATIONS_PER_THREAD
        try:
            counted = _trials(sampler.stats())
        except Exception as error:  # noqa: BLE001  # reported as a violation
            counted = f"raised {describe(error)}{_where(error)}"
        if isinstance(counted, str):
            violations.append(
                Violation(
                    "threads",
                    f"after {THREADS} threads shared one instance, stats() {counted}, though "
                    f"on one thread it returned {_STATS_SHAPE}; guard the statistics with a "
                    f"lock, or declare thread_safe = False",
                )
            )
        elif counted != expected:
            what = (
                f"{expected - counted} of {expected} concurrent records were lost (stats() "
                f"counts {counted} trials)"
                if counted < expected
                else f"stats() counts {counted} trials for {expected} concurrent records"
            )
            if isinstance(sampler, ServedSampler) and sampler.lock is not None:
                wrong = "drops records" if counted < expected else "counts some records twice"
                miscounted = Violation(
                    "threads",
                    f"{what}, though it was served one call at a time (thread_safe = False), "
                    f"so no race did it: record() {wrong} itself; the threads record tasks of "
                    f"one another's shards, so count every task recorded once, in the shard "
                    f"last picked from or not",
                )
                lost = _Fault(miscounted, _MISCOUNTS_OUTSIDE)
            else:
                lost = Violation(
                    "threads",
                    f"{what}; guard the statistics with a lock, or declare thread_safe = "
                    f"False to have the registry wrap the sampler",
                )
    try:
        sampler.record(_member(sampler.pick(list(_SHARD), 0), _SHARD), 1.0)
    except Exception as error:  # noqa: BLE001  # reported as a violation
        violations.append(
            Violation(
                "threads",
                f"the sampler is unusable after concurrent use: "
                f"{_failed_call(error) or type(error).__name__}",
            )
        )
    return _Round(violations, lost)


#: The picks and records made before a state is saved, and after, in the state check.
_STATE_ROUNDS = 30


def _check_state(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    """For a sampler with ``state_dict()`` and ``load_state_dict()``: the state is plain
    JSON, and a fresh instance given it saves the same state and picks as the original."""
    original = factory(**params)
    if not is_stateful(original):
        if (halves := _half_stateful(original)) is not None:
            half, other = halves
            yield (
                f"state: not checked: it has {half}() but no {other}(), so it is not Stateful "
                f"and its state can be neither saved nor restored (create(spec, state=...) and "
                f"save_state() refuse it); add {other}() or rename {half}()"
            )
        yield _NOT_APPLICABLE
        return
    twin = factory(**params)  # the same records as the original: does it pick as it does?
    history = f"{_STATE_ROUNDS} picks and records"
    for sampler in (original, twin):
        _scripted_picks(sampler, 0, _STATE_ROUNDS)
    try:
        saved = original.state_dict()
    except Exception as error:  # noqa: BLE001  # the violation
        yield Violation(
            "state", f"state_dict() after {history} raised {describe(error)}{_where(error)}"
        )
        return
    problem = _not_plain_json(saved)
    if problem:
        yield Violation(
            "state",
            f"state_dict() after {history} is not plain JSON: {problem}. It is saved as JSON "
            f"(save_state(), create(spec, state=...)) and loaded back from it: return dicts "
            f"with str keys, lists, str, finite numbers, bools and None",
        )
        return
    try:
        unsteady = _difference(saved, original.state_dict(), "state", _IN_A_ROW)
    except Exception as error:  # noqa: BLE001  # the violation
        yield Violation(
            "state", f"a second state_dict() in a row raised {describe(error)}{_where(error)}"
        )
        return
    if unsteady:
        yield _unsteady("state", "state_dict()", unsteady)
        return
    restored = factory(**params)
    given = f"the state_dict() of one that made {history}"
    try:
        restored.load_state_dict(json.loads(json.dumps(saved)))
    except Exception as error:  # noqa: BLE001  # the violation
        # Refused as not its own: its state_dict() lacks what its check_state() reads.
        own = (
            "; state_dict() must return what check_state() reads: 'sampler' (its name) and "
            "'version' beside the statistics"
            if isinstance(error, StateError)
            and isinstance(saved, dict)
            and not {"sampler", "version"} <= saved.keys()
            else ""
        )
        yield Violation(
            "state",
            f"load_state_dict(state) of a fresh instance, given {given} as JSON reads it "
            f"back, raised {describe(error)}{_where(error)}{own}",
        )
        return
    try:
        again = restored.state_dict()
    except Exception as error:  # noqa: BLE001  # the violation
        yield Violation(
            "state",
            f"state_dict() of a fresh instance that loaded {given} raised "
            f"{describe(error)}{_where(error)}",
        )
        return
    difference = _difference(saved, again)
    if difference:
        yield Violation(
            "state",
            f"a fresh instance given load_state_dict(state), the state_dict() of one that "
            f"made {history}, returns another state_dict(): {difference}. load_state_dict() "
            f"must restore everything state_dict() saves",
        )
        return
    picks, twins, resumed = (
        _scripted_picks(each, _STATE_ROUNDS, 2 * _STATE_ROUNDS)
        for each in (original, twin, restored)
    )
    if picks == twins and resumed != picks:  # the same records give the same picks, but not it
        yield Violation(
            "state",
            f"after load_state_dict(), the next picks differ from the original's: "
            f"{_show(resumed[:6])} vs {_show(picks[:6])}, though two instances that made the "
            f"same records pick alike; the state leaves out something pick() depends on "
            f"(a generator's state?)",
        )  # how it takes a damaged state is another fault, told too
    refused = _refuses_damage(factory, params, json.loads(json.dumps(saved)))
    if refused is not None:
        yield Violation("state", refused)


#: How many of a state's numbers :func:`_refuses_damage` replaces, one at a time.
_DAMAGED_NUMBERS = 8


def _refuses_damage(factory: Factory, params: dict[str, Any], saved: Any) -> str | None:
    """What is wrong with how ``load_state_dict()`` takes damaged copies of ``saved`` (a state
    that loads): a state that is not its own (not a mapping, another sampler's or version's)
    must raise :class:`StateError`, as :func:`check_state` does; one with a number turned into
    text may be taken only if the sampler still picks and records after it. ``None`` if all
    is well."""
    if not isinstance(saved, dict) or not {"sampler", "version"} <= saved.keys():
        return (
            f"state_dict() returns {short_repr(saved, 120)}, which holds no 'sampler' (its "
            f"name) and 'version' (its format) for check_state() to read, so a state of "
            f"another sampler, or of an older release, loads as if it were this one's; return "
            f"{{'sampler': self.name, 'version': 1, ...}} and start load_state_dict() with "
            f"check_state(state, self.name, 1)"
        )
    other = saved["sampler"] + "-other" if isinstance(saved["sampler"], str) else "other"
    version = saved["version"] + 1000 if is_count(saved["version"]) else 1000
    damage: list[tuple[str, Any, bool]] = [
        ("a list holding its state", [saved], False),
        (f"its state marked as sampler {other!r}'s", {**saved, "sampler": other}, False),
        (f"its state marked as version {version}", {**saved, "version": version}, False),
    ]
    for where in itertools.islice(_number_paths(saved), _DAMAGED_NUMBERS):
        damage.append((f"its state with {_path_text(where)} = 'oops'", _with(saved, where), True))
    for told, state, may_take in damage:
        sampler = factory(**params)
        try:
            sampler.load_state_dict(state)
        except StateError:
            continue
        except Exception as error:  # noqa: BLE001  # the violation
            return (
                f"load_state_dict() given {told} raised {describe(error)}{_where(error)}, not "
                f"StateError; start it with check_state() and raise StateError for a value it "
                f"cannot take (is_count, is_real and is_tally check numbers)"
            )
        if not may_take:
            return (
                f"load_state_dict() took {told}; start it with check_state(state, self.name, "
                f"VERSION), which raises StateError for a state that is not this sampler's"
            )
        try:
            _scripted_picks(sampler, 0, 4)
        except Exception as error:  # noqa: BLE001  # the violation
            return (
                f"load_state_dict() took {told}, and then {_failed_call(error) or describe(error)}"
                f"; check each value as it is loaded (is_count, is_real, is_tally) and raise "
                f"StateError, so a damaged file is refused when it is loaded, not a run later"
            )
    return None


def _number_paths(state: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The paths to the numbers in ``state`` (not bools), depth first, 'sampler' and
    'version' left out (checked on their own)."""
    if isinstance(state, dict):
        for key, value in state.items():
            if not (path == () and key in ("sampler", "version")):
                yield from _number_paths(value, (*path, key))
    elif isinstance(state, list):
        for index, value in enumerate(state):
            yield from _number_paths(value, (*path, index))
    elif isinstance(state, (int, float)) and not isinstance(state, bool):
        yield path


def _with(state: Any, path: tuple[str | int, ...]) -> Any:
    """A deep copy of ``state`` with the value at ``path`` replaced by ``'oops'``."""
    damaged = copy.deepcopy(state)
    holder = damaged
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = "oops"
    return damaged


def _path_text(path: tuple[str | int, ...]) -> str:
    """``state['trials']['a']`` for ``('trials', 'a')``."""
    return "state" + "".join(f"[{step!r}]" for step in path)


#: What :func:`_difference` calls two reads of one method, made one after the other.
_IN_A_ROW = ("on one call", "on the next")


def _unsteady(check: str, method: str, difference: str) -> Violation:
    """The violation of a ``method`` whose two calls in a row, with nothing between, differ."""
    return Violation(
        check,
        f"two calls of {method} in a row, with no pick or record between, returned different "
        f"values: {difference}. Return only what the sampler learned from its picks and records "
        f"(no clock, no count of its own calls, no random id), so that one that learned "
        f"nothing new reports the same",
    )


def _not_plain_json(state: object) -> str:
    """What in ``state`` would not come back as itself from JSON, by its path, or ``""``."""
    if not isinstance(state, dict):
        return f"it is {type(state).__name__} {safe_repr(state)}, not a dict"
    found = find_in_state(state, _json_problem)
    return "" if found is None else f"{shown(found[0], 200)} {found[1]}"


def _json_problem(value: object) -> str:
    """Why ``value`` itself would not come back from JSON as it is, or ``""``."""
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                return (
                    f"has the key {safe_repr(key)} ({a_type(key)}), which JSON turns into a string"
                )
        return ""
    if isinstance(value, (list, str, bool)) or value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return f"is {value!r}, which JSON cannot hold"
    if isinstance(value, int) and abs(value) > MAX_COUNT:
        return f"is {safe_repr(value)}, over the 2**53 a state file holds"
    if isinstance(value, (int, float)):
        return ""
    if isinstance(value, tuple):
        return (
            f"is a tuple, {safe_repr(value)}: JSON has no tuples, so a state saved and loaded "
            f"back gives load_state_dict() a list there, {safe_repr(list(value))}, not the "
            f"tuple: return a list"
        )
    return f"is {a_type(value)}, {safe_repr(value)}"


#: The longest list of plain values :func:`_difference` shows whole, as a ``(passes,
#: trials)`` pair is; of a longer one, or one holding lists or dicts, the first item that
#: differs.
_WHOLE_LIST = 8


def _difference(
    first: object,
    then: object,
    path: str = "state",
    sides: tuple[str, str] = ("when saved", "after loading"),
    depth: int = 0,
) -> str:
    """Where ``then`` first differs from ``first``, or ``""`` if they are equal; ``sides``
    say when each was read, in the message."""
    if first == then:
        return ""
    if isinstance(first, dict) and isinstance(then, dict) and depth < 20:
        for key in [*first, *(key for key in then if key not in first)]:
            if key not in then or key not in first:
                where = sides[0] if key in first else sides[1]
                return f"{shown(path, 200)}[{key!r}] is there only {where}"
            found = _difference(first[key], then[key], f"{path}[{key!r}]", sides, depth + 1)
            if found:
                return found
    if (
        isinstance(first, (list, tuple))
        and isinstance(then, (list, tuple))
        and len(first) == len(then)
        and (len(first) > _WHOLE_LIST or any(isinstance(item, (list, dict)) for item in first))
        and depth < 20
    ):  # a generator's 625 numbers, say
        for index, (was, now) in enumerate(zip(first, then, strict=True)):
            found = _difference(was, now, f"{path}[{index}]", sides, depth + 1)
            if found:
                return found
    return f"{shown(path, 200)} was {safe_repr(first)} {sides[0]}, {safe_repr(then)} {sides[1]}"


def _check_instances_apart(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    """Records made on one instance change nothing another instance reports (its
    ``state_dict()``, else its ``stats()``): no two instances share what they learn."""
    first, other = factory(**params), factory(**params)
    for method in ("state_dict", "stats"):
        report = getattr(other, method, None)
        if callable(report):
            break
    else:  # nothing to see another instance's learning by: a note says so (_without_stats)
        yield _NOT_APPLICABLE
        return
    try:
        before = copy.deepcopy(report())
        unsteady = _difference(before, report(), f"{method}()", _IN_A_ROW)
        _scripted_picks(first)
        after = report()
    except Exception:  # noqa: BLE001  # the checks of those calls report it
        yield _NOT_APPLICABLE  # it saw nothing, so it did not pass
        return
    if unsteady:  # it changes by itself, so no change another instance made can be told
        if method == "stats":  # optional, never read by the engine: a clock there is no fault
            yield (
                f"instances-apart: not checked: two calls of stats() in a row, with no pick or "
                f"record between, returned different values: {unsteady}; so whether records "
                f"on one instance change another could not be seen (a state_dict() is read "
                f"for that first)"
            )
            yield _NOT_APPLICABLE
        elif is_stateful(other):
            yield _NOT_APPLICABLE  # the state check reports it
        else:
            yield _unsteady("instances-apart", f"{method}()", unsteady)
        return
    difference = _difference(before, after, f"{method}()", ("before", "after"))
    if difference:
        yield Violation(
            "instances-apart",
            f"{_SCRIPTED} picks and records on one instance changed the {method}() of another: "
            f"{difference}. Keep what record() learns on the instance: a mutable default "
            f"argument (weights={{}}) or a class attribute is shared by every instance",
        )


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


#: How many picks and records the kit's scripted run makes, unless told otherwise.
_SCRIPTED = 40


def _scripted_picks(sampler: Any, start: int = 0, stop: int = _SCRIPTED) -> list[str]:
    picks = []
    for round_index in range(start, stop):
        picked = sampler.pick(list(_SHARD), round_index)
        picks.append(picked)
        recorded = _member(picked, _SHARD)
        sampler.record(recorded, float(len(recorded) % 2 == round_index % 2))
    return picks


@contextmanager
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every microsecond inside the block, so unguarded races show up."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def _show(shard: Sequence[str]) -> str:
    """``shard`` as a report shows it, its first four keys: a tuple as a tuple (``('task-0',
    ...)``), anything else as a list, so that a message names the type the sampler was given."""
    items = list(shard)
    if isinstance(shard, tuple):
        text = safe_repr(tuple(items[:4]))
        return text[:-1] + ", ...)" if len(items) > 4 else text
    text = safe_repr(items[:4])
    return text[:-1] + ", ...]" if len(items) > 4 else text
