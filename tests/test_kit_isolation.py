"""A sampler under check cannot stop, hang or take over the conformance kit."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import registry as registry_module
from agentdescent_sampling import testing
from agentdescent_sampling.cli import main
from agentdescent_sampling.registry import Registry
from agentdescent_sampling.testing import check_sampler


class Custom(BaseException):
    """A BaseException subclass of a plugin's own."""


RAISED: dict[str, BaseException] = {
    "SystemExit(0)": SystemExit(0),
    "SystemExit(1)": SystemExit(1),
    "GeneratorExit": GeneratorExit(),
    "a BaseException subclass": Custom("boom"),
}


def _sampler(where: str, error: BaseException) -> type:
    class Raising:
        name = "raises-something"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            if where == "pick" and round_index == 1:
                raise error
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            if where == "record":
                raise error

    return Raising


@pytest.mark.parametrize("where", ["pick", "record"])
@pytest.mark.parametrize("error", RAISED.values(), ids=RAISED)
def test_any_base_exception_from_a_sampler_is_that_samplers_violation(
    where: str, error: BaseException
) -> None:
    report = check_sampler(_sampler(where, error))
    assert not report.ok
    assert any(type(error).__name__ in str(violation) for violation in report.violations)


@pytest.mark.parametrize("error", RAISED.values(), ids=RAISED)
def test_any_base_exception_from_a_constructor_is_told_as_building_it_with_its_line(
    error: BaseException,
) -> None:
    # A SystemExit there was told as "[protocol] raised SystemExit: 0", without the call,
    # the line or that no other check ran, as a RuntimeError is told.
    class RaisesWhenBuilt:
        name = "raises-when-built"

        def __init__(self) -> None:
            raise error

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            pass

    (violation,) = check_sampler(RaisesWhenBuilt).violations

    assert violation.check == "protocol"
    assert violation.message.startswith(
        f"building it, RaisesWhenBuilt(), raised {type(error).__name__}"
    )
    assert "test_kit_isolation.py:" in violation.message
    assert violation.message.endswith("every other check builds one, so none ran")


def test_a_keyboard_interrupt_from_a_sampler_still_propagates() -> None:
    with pytest.raises(KeyboardInterrupt):
        check_sampler(_sampler("record", KeyboardInterrupt()))


class HangsInPick:
    name = "hangs-in-pick"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if round_index == 2:
            threading.Event().wait()
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        pass


class HangsInRecord(HangsInPick):
    name = "hangs-in-record"

    def __init__(self) -> None:
        self._records = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        self._records += 1
        if self._records == 3:
            threading.Event().wait()


class DeadlocksUnderThreads(HangsInPick):
    """Two locks taken in opposite orders by alternate calls: a deadlock under threads."""

    name = "deadlocks-under-threads"

    def __init__(self) -> None:
        self._a, self._b = threading.Lock(), threading.Lock()
        self._calls = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self._calls += 1
        first, second = (self._a, self._b) if self._calls % 2 else (self._b, self._a)
        with first:
            threading.Event().wait(0.001)
            with second:
                return keys[0]


@pytest.fixture
def quick_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testing, "CHECK_SECONDS", 1.0)


def _lines_of(function: Any, *texts: str) -> set[str]:
    """``test_kit_isolation.py:N`` for each line of ``function`` that holds one of ``texts``."""
    lines, first = inspect.getsourcelines(function)
    found = {first + at for at, line in enumerate(lines) if any(text in line for text in texts)}
    assert found, texts
    return {f"{Path(__file__).name}:{number}" for number in found}


class HangsUnderThreadsServed(HangsInPick):
    """Declared not thread-safe, so the kit serves it through a wrapper whose method is named
    pick() too; it hangs on the threads check's threads alone."""

    name = "hangs-under-threads-served"
    thread_safe = False

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if threading.current_thread().name.startswith("conformance-threads"):
            threading.Event().wait()
        return keys[round_index % len(keys)]


class SpinsInPick(HangsInPick):
    """Loops for ever in one call, from line to line."""

    name = "spins-in-pick"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        while round_index == 2:
            first = sum(range(200))
            second = sum(range(200))
            round_index += first - second
        return keys[0]


HANGS = {
    "pick": (HangsInPick, "stuck in pick(['task-0', ", HangsInPick.pick, ("wait()",)),
    "record": (HangsInRecord, "stuck in record('task-", HangsInRecord.record, ("wait()",)),
    "a deadlock": (
        DeadlocksUnderThreads,
        "stuck in pick([",
        DeadlocksUnderThreads.pick,
        ("with first:", "with second:"),  # whichever thread is looked at first
    ),
    "an endless loop": (
        SpinsInPick,
        "stuck in pick(['task-0', ",
        SpinsInPick.pick,
        ("while round_index", "first =", "second =", "round_index +="),  # wherever it is
    ),
    "a served sampler": (
        HangsUnderThreadsServed,
        "stuck in pick([",
        HangsUnderThreadsServed.pick,
        ("wait()",),  # its own line, not the wrapper's
    ),
}


@pytest.mark.usefixtures("quick_timeout")
@pytest.mark.parametrize(("factory", "call", "method", "texts"), HANGS.values(), ids=HANGS)
def test_a_check_that_hangs_is_reported_by_name_with_the_call_and_line_it_is_stuck_at(
    factory: Any, call: str, method: Any, texts: tuple[str, ...]
) -> None:
    report = check_sampler(factory)
    assert not report.ok
    hung = [violation for violation in report.violations if "did not finish" in str(violation)]
    assert len(hung) == 1
    assert hung[0].check == report.checks[-1]
    message = str(hung[0])
    assert call in message
    assert any(f"/{line} (a deadlock" in message for line in _lines_of(method, *texts)), message


class SlowPick(HangsInPick):
    """Never stuck, only slow: each pick of the threads check's takes 5 ms (the other checks'
    are quick, so that they end within their time on a loaded machine too)."""

    name = "slow-pick"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if threading.current_thread().name.startswith("conformance-threads"):
            threading.Event().wait(0.005)
        return keys[round_index % len(keys)]


@pytest.mark.usefixtures("quick_timeout")
def test_a_check_still_making_calls_at_its_time_is_told_slow_not_stuck() -> None:
    # A 20 ms pick had been told "stuck in pick([...], 930) (a deadlock, an endless loop or
    # a wait with no end?)" after reaching round 930.
    report = check_sampler(SlowPick)
    (hung,) = [str(v) for v in report.violations if "did not finish" in str(v)]
    assert "though it was not stuck: it was still making calls: in pick([" in hung
    assert "; 1 s later, in pick([" in hung
    assert "deadlock" not in hung
    assert ". The sampler's calls are too slow for the checks" in hung
    assert "give the kit more time or fewer calls in your conftest.py" in hung
    assert "or on the command line (agentdescent-sampling check --seconds)" in hung


class SlowFirstPick(HangsInPick):
    """Its first pick takes 1.25 s; every other is quick. Past a limit of 1 s however fast
    the machine, and done before the kit looks again 1 s later however loaded it is."""

    name = "slow-first-pick"

    def __init__(self) -> None:
        self._waited = threading.Event()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if not self._waited.is_set():
            self._waited.set()
            threading.Event().wait(1.25)
        return keys[round_index % len(keys)]


@pytest.mark.usefixtures("quick_timeout")
def test_a_check_that_finishes_after_its_time_while_the_kit_looks_again_is_still_reported() -> None:
    # The kit looks again 1 s after a check's time is up; a check done by then once passed,
    # so a limit of 1 s let 2 s through.
    report = check_sampler(SlowFirstPick)
    (late,) = [str(v) for v in report.violations if "did not finish" in str(v)]
    assert "did not finish within 1 s, though it was not stuck: it finished less than 1 s " in late
    assert ". The sampler's calls are too slow for the checks" in late


class Stray(HangsInPick):
    """Stuck in its pick() on a thread no check started."""

    name = "stray"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        threading.Event().wait()
        return keys[0]


@pytest.mark.usefixtures("quick_timeout")
def test_a_hang_is_told_where_the_checks_own_threads_are_stuck_not_another_threads() -> None:
    # A check that an earlier one left behind may start threads at any time, as may the
    # program: started while this check runs, this one is stuck in a sampler's pick() too.
    def stray() -> None:
        Stray().pick(["a"], 0)

    timer = threading.Timer(0.2, lambda: threading.Thread(target=stray, daemon=True).start())
    timer.daemon = True
    timer.start()
    report = check_sampler(HangsInPick)
    (hung,) = [str(v) for v in report.violations if "did not finish" in str(v)]
    (line,) = _lines_of(HangsInPick.pick, "wait()")
    assert f"/{line} (a deadlock" in hung


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Registry:
    registry = Registry(only=[])
    monkeypatch.setattr(registry_module, "_default", registry)
    return registry


@pytest.mark.parametrize("error", [SystemExit(0), SystemExit(2), Custom("x")], ids=repr)
def test_check_exits_1_when_a_sampler_raises_a_base_exception(
    registered: Registry, error: BaseException, capsys: pytest.CaptureFixture[str]
) -> None:
    registered.register(_sampler("pick", error))
    assert main(["check", "raises-something"]) == 1
    assert "violation" in capsys.readouterr().out


@pytest.fixture
def patient_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # Long enough for every built-in's checks on a busy machine: a check given up on goes on
    # working in the background, and would skew another test's memory or timing.
    monkeypatch.setattr(testing, "CHECK_SECONDS", 10.0)


@pytest.mark.usefixtures("patient_timeout")
def test_check_all_goes_on_after_a_sampler_that_exits_or_hangs(
    registered: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    registered.register(_sampler("pick", SystemExit(0)))
    registered.register(HangsInPick)
    assert main(["check", "--all"]) == 1
    out = capsys.readouterr().out
    assert "raises-something: " in out
    assert "hangs-in-pick: " in out
    assert "round-robin: all " in out  # the built-ins are still checked


class HangsWhenBuilt(HangsInPick):
    name = "hangs-when-built"

    def __init__(self) -> None:
        threading.Event().wait()


@pytest.mark.usefixtures("quick_timeout")
def test_check_of_a_sampler_whose_constructor_hangs_says_so_and_exits_1(
    registered: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    registered.register(HangsWhenBuilt)
    assert main(["check", "hangs-when-built"]) == 1
    out = capsys.readouterr().out
    assert "  - [build] building it did not finish within 1 s: stuck at " in out
    (line,) = _lines_of(HangsWhenBuilt.__init__, "wait()")
    assert f"/{line} (a deadlock" in out
    assert "no check was run" in out


def test_check_of_a_bad_parameter_is_still_a_config_error(
    registered: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "round-robin:nonsense=1"]) == 2
    assert "nonsense" in capsys.readouterr().err
