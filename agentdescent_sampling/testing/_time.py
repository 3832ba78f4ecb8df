"""Each check in a daemon thread of its own for at most :data:`CHECK_SECONDS`, and where a
check that did not finish is stuck."""

from __future__ import annotations

import itertools
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from .._display import shown
from ..loading import describe, stack_lines
from ._calls import _CALLED, _PACKAGE, _SHARD, _call, _failed_call, _fault_of
from ._report import Violation, _Fault
from ._settings import _check_seconds, _operations, _thread_rounds, _threads

#: How long after a check's time is up the kit looks again at where it is, to tell a check
#: still making calls (another call, or the same with other arguments) from one stuck.
_LOOK_AGAIN = 1.0
#: What the look again finds of a check that finished in the meantime: past its time, so
#: reported, as slow and not stuck.
_FINISHED = ""

#: Numbers each run of a check in a thread, whose name, and its threads', carry it.
_RUNS = itertools.count()

#: The packages on a kit thread's stack that are not the sampler's code.
_NOT_SAMPLER = (_PACKAGE, "threading")


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
    another call (:func:`_call_of`), or :data:`_FINISHED` if it has finished: a run still
    making calls is slow, not stuck, and so is one that finished late, which is still
    ``[]``."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(function())
        except BaseException as error:  # noqa: BLE001  # a sampler's failure, whatever it is
            outcome.append(error)

    label = f"conformance-{name}-{next(_RUNS)}"  # the threads it starts add to it
    worker = threading.Thread(target=run, name=label, daemon=True)
    worker.start()
    worker.join(_check_seconds() if seconds is None else seconds)
    if outcome:
        return outcome, ""
    stuck = _stuck_at(label)
    if later is not None:
        worker.join(_LOOK_AGAIN)
        if outcome and isinstance(outcome[0], KeyboardInterrupt):
            return outcome, stuck  # the user's, whenever it comes: raised by the caller
        if outcome:
            later.append(_FINISHED)
        else:
            again = _stuck_at(label)
            if _call_of(again) and _call_of(stuck) and _call_of(again) != _call_of(stuck):
                later.append(again)
    return [], stuck


def _call_of(stuck: str) -> str:
    """The call of where :func:`_stuck_at` found a run (`` in pick([...], 2)``), without
    its line, or ``""``: a loop that never ends moves from line to line within one call."""
    return stuck.rpartition(", at ")[0] if stuck.startswith(" in ") else ""


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


def _slow(stuck: str, later: str) -> str:
    """What showed a check past its time to be slow: where it was then and a moment later
    (``later``, from :func:`_in_thread`), or that it finished a moment later."""
    if later == _FINISHED:
        return f"it finished less than {_LOOK_AGAIN:g} s later"
    return f"it was still making calls:{stuck}; {_LOOK_AGAIN:g} s later,{later}"


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
                f"did not finish within {_check_seconds():g} s, though it was not stuck: "
                f"{_slow(stuck, later[0])}. The "
                f"sampler's calls are too slow for the checks (the threads check makes "
                f"{_thread_rounds() * _threads() * _operations():,} picks and as many "
                f"records): time pick() and record() on a shard of {len(_SHARD)} tasks, or, "
                f"if they are this slow by design, give the kit more time or fewer calls in "
                f"your conftest.py (agentdescent_sampling.testing.CHECK_SECONDS, "
                f"OPERATIONS_PER_THREAD) or on the command line (agentdescent-sampling check "
                f"--seconds); the remaining checks were not run",
            )
        ], False
    if not outcome:
        return [
            Violation(
                name,
                f"did not finish within {_check_seconds():g} s: stuck{stuck or ' in the sampler'} "
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
