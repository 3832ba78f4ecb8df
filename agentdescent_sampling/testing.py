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

import functools
import math
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from ._display import safe_repr, shown
from .errors import InvalidSamplerConfig
from .loading import describe
from .params import signature_of
from .protocol import check_name, method_problem
from .records import PluginFailure, SamplerInfo
from .registry import Registry, available, default_registry, wrong_parameters
from .served import ServedSampler
from .spec import SamplerSpec, parse_spec

__all__ = [
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
        required = [p.name for p in record.signature.parameters if p.required]
        if record.status != "ok":
            yield InstalledCheck(
                f"{record.name} ({shown(record.distribution)}): not checked: more than one "
                f"distribution provides it; uninstall one",
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
Check = Callable[[Factory, dict[str, Any]], Iterator[Violation]]


def check_sampler(
    factory_or_name: Factory | str, /, *, registry: Registry | None = None, **params: Any
) -> ConformanceReport:
    """Run the sampler contract against a factory, or an installed sampler's name or spec.

    Each check builds fresh instances with ``params``, the sampler's own parameters
    (``check_sampler(MySampler, seed=1)`` builds ``MySampler(seed=1)``). A sampler taking
    a ``seed`` is also checked for identical picks under identical seeds. ``stats()``,
    when a sampler has it, is used to check that concurrent records are not lost.

    Args:
        factory_or_name: a sampler class or factory, or a name or spec string that
            ``create()`` accepts (built through the registry, so ``thread_safe = False``
            classes are checked as they are served: wrapped).
        registry: the registry for names; the default one if omitted.
        params: the sampler's parameters, passed to every instance the checks build;
            give only those its constructor or factory takes.

    Returns:
        A report listing every violation, not just the first.

    Raises:
        TypeError: ``factory_or_name`` is a sampler instance (the kit needs a fresh one
            for each check: pass its class, or a function that builds one) or not callable.
        UnknownSamplerError: an unknown name.
        InvalidSamplerConfig: a bad parameter for a name or spec, or one a class or
            factory refuses by its signature (unknown, or required and missing): the
            caller's config, not the sampler's contract.
    """
    factory, label, takes_seed, builtin = _resolve(factory_or_name, registry, params)
    if isinstance(factory_or_name, str):
        try:
            built = _finishes(lambda: factory(**params))
        except InvalidSamplerConfig:
            raise
        except Exception:  # noqa: BLE001  # the sampler's own failure: the checks report it
            built = True
        if not built:
            hang = Violation(
                "build",
                f"building it did not finish within {CHECK_SECONDS:g} s (a deadlock or an "
                f"endless loop in its constructor?); no check was run",
            )
            return ConformanceReport(label, ("build",), (hang,))
    else:
        _refuse_wrong_parameters(factory, label, params)
    violations: list[Violation] = []
    checks = [check for check in _CHECKS if takes_seed or check is not _check_seeds]
    names = tuple(check.__name__.removeprefix("_check_").replace("_", "-") for check in checks)
    for index, (check, name) in enumerate(zip(checks, names, strict=True)):
        found, finished = _bounded(name, functools.partial(_listed, check, factory, params))
        violations.extend(found)
        if not finished:
            return ConformanceReport(label, names[: index + 1], tuple(violations))
        if check in _GATES and found:  # every later check would fail on the same call
            return ConformanceReport(label, names[: index + 1], tuple(violations))
    # A built-in's records under threads are this package's own tests' business, not its user's.
    notes, _ = _bounded("notes", lambda: [] if builtin else list(_notes(factory, params, label)))
    return ConformanceReport(
        label,
        names,
        tuple(violations + [note for note in notes if isinstance(note, Violation)]),
        tuple(note for note in notes if isinstance(note, str)),
    )


def _refuse_wrong_parameters(factory: Factory, label: str, params: dict[str, Any]) -> None:
    """Raise :class:`InvalidSamplerConfig` if ``factory`` refuses ``params`` because its
    signature does not take them, as ``create()`` does for a name. A ``TypeError`` that the
    signature does not explain is the sampler's own, and left for the checks to report."""
    wrong = wrong_parameters(label, signature_of(factory), params)
    if wrong is None:
        return
    outcome = _in_thread("build", lambda: factory(**params))
    if outcome and isinstance(outcome[0], TypeError):
        name = getattr(factory, "__name__", "")
        called = f"{name}(...)" if isinstance(name, str) and name.isidentifier() else "it"
        raise InvalidSamplerConfig(
            f"{wrong}. check_sampler()'s keyword arguments are the sampler's parameters, "
            f"passed to {called}: give each one it requires and none it does not take"
        ) from outcome[0]


def _listed(check: Check, factory: Factory, params: dict[str, Any]) -> list[Violation]:
    return list(check(factory, params))


def _finishes(build: Callable[[], object]) -> bool:
    """Whether ``build()`` returns within :data:`CHECK_SECONDS`, run in a daemon thread as
    each check is (one that does not finish is left behind: it cannot keep the process
    alive). What it raised is raised here, so that a bad parameter stays a config error.
    """
    outcome = _in_thread("build", build)
    if outcome and isinstance(outcome[0], BaseException):
        raise outcome[0]
    return bool(outcome)


def _in_thread(name: str, function: Callable[[], Any]) -> list[Any]:
    """``[what function returned or raised]``, or ``[]`` if it ran past :data:`CHECK_SECONDS`."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(function())
        except BaseException as error:  # noqa: BLE001  # a sampler's failure, whatever it is
            outcome.append(error)

    worker = threading.Thread(target=run, name=f"conformance-{name}", daemon=True)
    worker.start()
    worker.join(CHECK_SECONDS)
    return outcome


def _bounded(name: str, check: Callable[[], list[Any]]) -> tuple[list[Any], bool]:
    """Run ``check`` in a daemon thread for at most :data:`CHECK_SECONDS`.

    Returns what it returned, or a violation for whatever it raised (``SystemExit``
    included: a sampler cannot end the check) or for not finishing, with whether it
    finished. Only ``KeyboardInterrupt`` propagates, since it is the user's.
    """
    outcome = _in_thread(name, check)
    if not outcome:
        return [
            Violation(
                name,
                f"did not finish within {CHECK_SECONDS:g} s (a deadlock or an endless loop "
                f"in pick() or record()?); the remaining checks were not run",
            )
        ], False
    result = outcome[0]
    if isinstance(result, KeyboardInterrupt):
        raise result
    if isinstance(result, BaseException):
        return [Violation(name, f"raised {describe(result)}")], True
    return result, True


def _resolve(
    factory_or_name: Factory | str, registry: Registry | None, params: dict[str, Any]
) -> tuple[Factory, str, bool, bool]:
    """The factory to check, its label, whether it takes a seed, and whether it is a built-in."""
    if isinstance(factory_or_name, str):
        spec = parse_spec(factory_or_name)
        chosen = registry or default_registry()
        info = chosen.get(spec.name, provider=spec.provider)
        params.update({**spec.params, **params})

        def build(**given: Any) -> Any:
            return chosen.create(SamplerSpec(info.name, given, info.distribution))

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
    label = getattr(factory_or_name, "name", None) or getattr(
        factory_or_name, "__name__", repr(factory_or_name)
    )
    return factory_or_name, str(label), "seed" in parameters, False


def _check_protocol(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    problem = method_problem(sampler)
    if problem is not None:
        yield Violation(
            "protocol",
            f"{type(sampler).__name__} is not a TaskSampler: {problem}. Every other check "
            f"calls pick(keys, round_index) and record(task_id, score), so none ran",
        )


_NONE_RAN = "every other check picks and records, so none ran"


def _check_pick_and_record(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    call = f"pick({_show(_SHARD)}, 0)"
    try:
        picked = _member(sampler.pick(list(_SHARD), 0), _SHARD)
    except Exception as error:  # noqa: BLE001  # any exception is the violation
        yield Violation("pick-and-record", f"{call} raised {describe(error)}; {_NONE_RAN}")
        return
    try:
        sampler.record(picked, 1.0)
    except Exception as error:  # noqa: BLE001  # any exception is the violation
        yield Violation(
            "pick-and-record",
            f"record({picked!r}, 1.0) after {call} raised {describe(error)}; {_NONE_RAN}",
        )


def _not_a_str(picked: object) -> str:
    return "" if isinstance(picked, str) else f" (a {type(picked).__name__}, not a task id)"


def _member(picked: object, shard: Sequence[str]) -> str:
    """``picked`` if it is in ``shard``, else the shard's first task: the kit records only
    members, so that a bad pick is reported once, as itself, and not as ``record()``'s error."""
    return picked if isinstance(picked, str) and picked in shard else shard[0]


def _notes(factory: Factory, params: dict[str, Any], label: str) -> tuple[str, ...]:
    sampler = factory(**params)
    notes = []
    locked = isinstance(sampler, ServedSampler) and sampler.lock is not None
    if not (locked or callable(getattr(sampler, "stats", None))):
        notes.append(
            f"threads: lost records could not be observed, because {label} has no stats(); only "
            f"exceptions and non-members under {THREADS} threads were checked. Add stats() "
            f"returning {{task_id: (passes, trials)}}, or declare thread_safe = False"
        )
    taken = _bad_scores_taken(sampler)  # looked at above, not yet called
    if taken:
        notes.append(
            f"bad scores: record() {taken}. The engine checks each reward before record(), so "
            f"no run is harmed, but another caller's bad score would skew the statistics "
            f"silently: agentdescent_sampling.check_score(task_id, score) refuses them for you"
        )
    return tuple(notes)


def _bad_scores_taken(sampler: Any) -> str:
    """How ``record()`` met the bad scores it did not refuse as :func:`check_score` does,
    or ``""``. Advice, not a violation: the contract is the engine's, which never passes one."""
    accepted, mistaken = [], []
    for score, expected in _BAD_SCORES:
        try:
            sampler.record(_SHARD[0], score)
        except expected:
            continue
        except Exception as error:  # noqa: BLE001  # the wrong exception is what is noted
            mistaken.append(f"raised {describe(error)} for {score!r}")
        else:
            accepted.append(repr(score))
    return "; ".join(([f"accepted {', '.join(accepted)}"] if accepted else []) + mistaken[:2])


def _check_name(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    first, second = factory(**params), factory(**params)
    name = getattr(first, "name", None)
    try:
        check_name(name)
    except ValueError as error:
        yield Violation("name", f"the sampler's name attribute is wrong: {error}")
        return
    first.pick(list(_SHARD), 0)
    first.record(_SHARD[0], 1.0)
    if getattr(first, "name", None) != name or getattr(second, "name", None) != name:
        yield Violation("name", f"name {name!r} is not stable across instances and calls")


def _check_pick_returns_a_member(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    shards: list[Sequence[str]] = [list(_SHARD), tuple(_SHARD[:5]), ["only-task"]]
    for shard in shards:
        sampler = factory(**params)
        for round_index in range(3 * len(shard)):
            picked = sampler.pick(shard, round_index)
            if picked not in shard:
                yield Violation(
                    "pick-returns-a-member",
                    f"pick({_show(shard)}, {round_index}) returned {safe_repr(picked)}"
                    f"{_not_a_str(picked)}, which is not in the {type(shard).__name__} it was "
                    f"given",
                )
                break
            sampler.record(picked, float(round_index % 2))


def _check_keys_unchanged(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    shard = list(_SHARD)
    for round_index in range(2 * len(shard)):
        picked = sampler.pick(shard, round_index)
        if shard != list(_SHARD):
            yield Violation(
                "keys-unchanged",
                f"pick() mutated the shard it was given: {_show(_SHARD)} became {_show(shard)}; "
                f"copy it (sorted(keys), list(keys)) before reordering",
            )
            return
        sampler.record(_member(picked, _SHARD), 0.0)


def _check_empty_shard(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    yield from _expect(
        lambda: sampler.pick([], 0), ValueError, "empty-shard", "pick([], 0)", "check_keys"
    )


def _check_record_outside_the_shard(
    factory: Factory, params: dict[str, Any]
) -> Iterator[Violation]:
    sampler = factory(**params)
    sampler.pick(list(_SHARD[:3]), 0)
    try:
        sampler.record("a-task-from-another-shard", 0.5)
    except Exception as error:  # noqa: BLE001  # any exception is the violation
        yield Violation(
            "record-outside-the-shard",
            f"record() of a task outside the current shard raised {describe(error)}; shards "
            f"rotate between rounds, so this must be accepted",
        )
        return
    picked = sampler.pick(list(_SHARD[:3]), 1)
    if picked not in _SHARD[:3]:
        yield Violation(
            "record-outside-the-shard",
            f"after recording a task outside the shard, pick() returned {safe_repr(picked)}, "
            f"not a member",
        )


def _expect(
    call: Callable[[], object], expected: type[Exception], check: str, what: str, helper: str
) -> Iterator[Violation]:
    """Yield a violation unless ``call`` raises ``expected``."""
    try:
        result = call()
    except expected:
        return
    except Exception as error:  # noqa: BLE001  # the wrong exception is the violation
        outcome = f"raised {describe(error)}"
    else:
        outcome = f"returned {safe_repr(result)}"
    yield Violation(
        check,
        f"{what} {outcome}; expected {expected.__name__} "
        f"(agentdescent_sampling.{helper} raises it for you)",
    )


def _check_seeds(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    for seed in (0, 12345):
        runs = [_scripted_picks(factory(**{**params, "seed": seed})) for _ in range(2)]
        if runs[0] != runs[1]:
            yield Violation(
                "seeds",
                f"two instances with seed={seed} picked differently: {runs[0][:8]} vs "
                f"{runs[1][:8]}; draw randomness only from a generator seeded with seed",
            )


def _check_threads(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    # A race in an unguarded read-modify-write shows up in most rounds, not all; a few
    # rounds make a miss vanishingly rare, and a correct sampler costs only the rounds.
    for _ in range(THREAD_ROUNDS):
        violations = list(_threads_round(factory(**params)))
        if violations:
            alone = _one_thread_error(factory(**params))
            if alone is not None:  # not a race: the same calls fail on one thread
                yield Violation(
                    "threads",
                    f"the calls the threads make raise on one thread too, first: {alone}; "
                    f"fix that first (no lock would)",
                )
                return
            yield from violations
            return


def _worker_calls(sampler: Any, worker: int, strays: list[str]) -> None:
    """The picks and records one of the threads check's workers makes, noting strays."""
    shard = list(_SHARD[worker % 3 :: 3])
    for step in range(OPERATIONS_PER_THREAD):
        picked = sampler.pick(shard, step)
        if picked not in shard:
            strays.append(safe_repr(picked))
        sampler.record(_member(picked, shard), float((worker + step) % 2))


def _one_thread_error(sampler: Any) -> str | None:
    """What the threads' calls, made one after another on one thread, raise first, if any."""
    try:
        for worker in range(THREADS):
            _worker_calls(sampler, worker, [])
    except Exception as error:  # noqa: BLE001  # reported as a violation
        return describe(error)
    return None


def _threads_round(sampler: Any) -> Iterator[Violation]:
    errors: list[str] = []
    strays: list[str] = []
    barrier = threading.Barrier(THREADS)

    def work(worker: int) -> None:
        try:
            barrier.wait()
            _worker_calls(sampler, worker, strays)
        # Reported as a violation below; SystemExit included, which a thread would swallow.
        except BaseException as error:  # noqa: BLE001
            errors.append(describe(error))
            barrier.abort()  # the other threads must not wait for this one forever

    with fast_thread_switching():
        # Daemons: a sampler that deadlocks them must not keep the process from exiting.
        threads = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if errors:
        yield Violation(
            "threads",
            f"{len(errors)} of {THREADS} threads raised while sharing one instance, first: "
            f"{errors[0]}; guard pick() and record() with a lock, or declare thread_safe = False",
        )
    if strays:
        yield Violation("threads", f"under threads, pick() returned non-members: {strays[:3]}")
    expected = (THREADS - len(errors)) * OPERATIONS_PER_THREAD
    stats = getattr(sampler, "stats", None)
    if callable(stats) and not errors:
        counted = sum(int(trials) for _, trials in stats().values())
        if counted != expected:
            yield Violation(
                "threads",
                f"{expected - counted} of {expected} concurrent records were lost (stats() "
                f"counts {counted} trials); guard the statistics with a lock, or declare "
                f"thread_safe = False to have the registry wrap the sampler",
            )
    try:
        sampler.record(_member(sampler.pick(list(_SHARD), 0), _SHARD), 1.0)
    except Exception as error:  # noqa: BLE001  # reported as a violation
        yield Violation(
            "threads", f"the sampler is unusable after concurrent use: {type(error).__name__}"
        )


_CHECKS: tuple[Check, ...] = (
    _check_protocol,
    _check_pick_and_record,
    _check_name,
    _check_pick_returns_a_member,
    _check_keys_unchanged,
    _check_empty_shard,
    _check_record_outside_the_shard,
    _check_seeds,
    _check_threads,
)


#: The checks whose violation means no later check could run.
_GATES = (_check_protocol, _check_pick_and_record)


def _scripted_picks(sampler: Any) -> list[str]:
    picks = []
    for round_index in range(40):
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
    items = list(shard)
    text = safe_repr(items[:4])
    return text[:-1] + ", ...]" if len(items) > 4 else text
