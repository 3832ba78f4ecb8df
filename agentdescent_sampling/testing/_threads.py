"""The stats and threads checks: a ``stats()`` that works, and no record lost or call failed
when threads share one instance."""

from __future__ import annotations

import operator
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from .._display import safe_repr
from ..loading import describe
from ..protocol import declares_thread_unsafe
from ..served import ServedSampler, synchronized
from ._calls import _SHARD, _failed_call, _fault_of, _member, _where
from ._report import (
    _MISCOUNTS_OUTSIDE,
    _NON_MEMBER,
    _NOT_APPLICABLE,
    Factory,
    Finding,
    Violation,
    _Fault,
)
from ._settings import _operations, _thread_rounds, _threads

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
    for _ in range(_thread_rounds()):
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
            made = _threads() * _operations()
            if counted == made:
                yield outcome.lost
            else:  # it does not count every record, so nothing was shown to be lost
                after = f"after {made} records made one after another on one thread"
                if isinstance(counted, str):  # what is wrong with what it returned
                    yield _not_counted(f"{counted}, {after}")
                else:
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
        f"only exceptions and non-members under {_threads()} threads were checked. Return that "
        f"from stats() (the author's guide, 'Statistics'), or give the method another name"
    )


def _worker_calls(sampler: Any, worker: int, strays: list[str]) -> None:
    """The picks and records one of the threads check's workers makes, noting strays."""
    shard = list(_SHARD[worker % 3 :: 3])
    for step in range(_operations()):
        # A copy for each call, as in the members check: a pick that mutates its shard is
        # the keys-unchanged check's to report, not a non-member here.
        picked = sampler.pick(list(shard), step)
        if picked not in shard:
            strays.append(safe_repr(picked))
        sampler.record(_member(picked, shard), float((worker + step) % 2))


def _one_thread_run(sampler: Any, counts: bool) -> tuple[Exception | None, int | str | None]:
    """What the threads' calls, made one after another on one thread, raise first, if
    any, and the trials ``stats()`` then counts, or what is wrong with what it returned
    (:func:`_trials`); ``None`` if it is not read or raises."""
    try:
        for worker in range(_threads()):
            _worker_calls(sampler, worker, [])
    except Exception as error:  # noqa: BLE001  # reported as a violation
        return error, None
    if not counts:
        return None, None
    try:
        counted = _trials(sampler.stats())
    except Exception:  # noqa: BLE001  # then the lost records cannot be told
        return None, None
    return None, counted


@attrs.frozen
class _Round:
    """What one round of the threads check found: its violations, and apart from them the
    lost-records one, which stands only if ``stats()`` counts every record on one thread."""

    violations: list[Violation | _Fault]
    lost: Violation | _Fault | None = None


def _threads_round(sampler: Any, counts: bool) -> _Round:
    errors: list[str] = []
    strays: list[str] = []
    barrier = threading.Barrier(_threads())

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
            for n in range(_threads())
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
                f"{len(errors)} of {_threads()} threads raised while sharing one instance, first: "
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
        expected = _threads() * _operations()
        try:
            counted = _trials(sampler.stats())
        except Exception as error:  # noqa: BLE001  # reported as a violation
            counted = f"raised {describe(error)}{_where(error)}"
        if isinstance(counted, str):  # a race's, only if the same calls on one thread are not
            lost = Violation(
                "threads",
                f"after {_threads()} threads shared one instance, stats() {counted}, though "
                f"on one thread it returned {_STATS_SHAPE}; guard the statistics with a "
                f"lock, or declare thread_safe = False",
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
            else:  # not told again where record() was seen to drop a task outside the shard
                race = Violation(
                    "threads",
                    f"{what}; guard the statistics with a lock, or declare thread_safe = "
                    f"False to have the registry wrap the sampler",
                )
                lost = _Fault(race, _MISCOUNTS_OUTSIDE)
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


@contextmanager
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every microsecond inside the block, so unguarded races show up."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)
