import ast
import inspect
import math
import random
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Optional, Union

import attrs
import pytest

from agentdescent_sampling import (
    DifficultyWeighted,
    FixableFirst,
    Registry,
    RoundRobin,
    StateError,
    testing,
)
from agentdescent_sampling.errors import InvalidSamplerConfig, SamplerConflictError
from agentdescent_sampling.plugin import (
    check_keys,
    check_score,
    check_state,
    rng_state,
    synchronized,
)
from agentdescent_sampling.protocol import is_count
from agentdescent_sampling.spec import SamplerSpec
from agentdescent_sampling.testing import check_sampler
from tests.support.distinfo import TWO_PROVIDERS, install_plugins


class Broken:
    """Breaks every rule the kit checks."""

    name = "Not A Valid Name"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if isinstance(keys, list):
            keys.reverse()
        return "not-a-member"

    def record(self, task_id: str, score: float) -> None:
        if task_id.startswith("a-task-from"):
            raise KeyError(task_id)


class UnsafeCounter:
    """Keeps stats with an unguarded read-modify-write, the bug the doc warns about."""

    name = "unsafe-counter"

    def __init__(self) -> None:
        self.trials: dict[str, int] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if not keys:
            raise ValueError("empty shard")
        return min(keys, key=lambda key: self.trials.get(key, 0))

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        seen = self.trials.get(task_id, 0)
        time.sleep(0)  # any work between the read and the write lets another thread in
        self.trials[task_id] = seen + 1

    def stats(self) -> dict[str, tuple[int, int]]:
        return {key: (0, trials) for key, trials in self.trials.items()}


class GlobalRandom:
    """Takes a seed and ignores it."""

    name = "global-random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if not keys:
            raise ValueError("empty shard")
        return random.choice(list(keys))

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


@pytest.mark.parametrize(
    "factory",
    [
        RoundRobin,
        DifficultyWeighted,
        lambda: RoundRobin(spread_in_flight=True),
        lambda: DifficultyWeighted(spread_in_flight=True),
        FixableFirst,
    ],
    ids=[
        "round-robin",
        "difficulty-weighted",
        "round-robin-spreading",
        "difficulty-spreading",
        "fixable-first",
    ],
)
# The built-ins' own conformance, seconds of threads checks each; the kit's behaviour on each
# Python is pinned by the other tests here, which every session runs.
@pytest.mark.version_independent
def test_the_builtins_conform(factory: Callable[[], object]) -> None:
    report = check_sampler(factory)
    assert report.ok, str(report)


def test_a_broken_sampler_gets_one_message_per_violation() -> None:
    report = check_sampler(Broken)
    assert not report.ok
    assert {violation.check for violation in report.violations} == {
        "name",
        "pick-returns-a-member",
        "keys-unchanged",
        "empty-shard",
        "record-outside-the-shard",
    }  # its non-members under threads are the members check's, not reported twice
    text = str(report)
    assert "invalid sampler name 'Not A Valid Name'" in text
    assert "returned 'not-a-member', which is not in the list" in text
    assert "mutated the shard" in text
    assert "pick([], 0) returned 'not-a-member'; expected ValueError" in text
    assert "raised KeyError" in text
    assert "note: bad scores: record() accepted nan, inf, -0.5, 1.5, '0.5', None." in text


def test_the_product_docs_own_sampler_conforms_with_advice_on_bad_scores() -> None:
    class Hardest:  # "Writing your own", agentdescent's task-sampling guide, as written
        name = "hardest-first"

        def __init__(self) -> None:
            self.seen: dict[str, float] = {}

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return min(keys, key=lambda k: self.seen.get(k, 0.0))

        def record(self, task_id: str, score: float) -> None:
            self.seen[task_id] = score

    report = check_sampler(Hardest)
    assert report.ok, str(report)
    [advice] = [note for note in report.notes if note.startswith("bad scores")]
    assert "check_score(task_id, score) refuses them for you" in advice


def test_bad_scores_go_to_a_task_it_picked_so_refusing_unknown_ids_is_not_blamed_on_them() -> None:
    class Strict:  # records only tasks it handed out, and checks each score
        name = "strict"

        def __init__(self) -> None:
            self.handed: set[str] = set()
            self.lock = threading.Lock()

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            with self.lock:
                self.handed.add(check_keys(keys)[0])
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            with self.lock:
                if task_id not in self.handed:
                    raise KeyError(f"unknown task {task_id}")
            check_score(task_id, score)

    report = check_sampler(Strict)

    assert not [note for note in report.notes if note.startswith("bad scores")], str(report)


def test_a_pick_that_raises_is_one_violation_and_no_other_check_runs() -> None:
    class Raises:
        name = "raises"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            raise RuntimeError("boom in pick")

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)

    report = check_sampler(Raises)
    assert report.checks == ("protocol", "pick-and-record")
    [violation] = report.violations
    assert str(violation).startswith("[pick-and-record] pick(['task-0', 'task-1', ")
    assert re.search(
        rf"raised RuntimeError: boom in pick \(at {re.escape(__file__)}:\d+\); every other check "
        rf"picks and records, so none ran$",
        str(violation),
    )


@pytest.mark.parametrize(
    ("fails", "raised"),
    [(lambda score: math.log(score), "ValueError: math domain error"),  # log of a failure's 0.0
     (lambda score: sys.exit(0) if score == 0.0 else None, "SystemExit: 0")],
    ids=["log-of-zero", "system-exit"],
)  # fmt: skip
def test_a_record_that_cannot_take_a_failure_is_told_at_the_first_check(
    fails: Callable[[float], object], raised: str
) -> None:
    class FailsOnAFailure:
        name = "fails-on-a-failure"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return keys[round_index % len(keys)]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)
            fails(score)

    report = check_sampler(FailsOnAFailure)

    assert report.checks == ("protocol", "pick-and-record")
    [violation] = report.violations
    assert str(violation).startswith(
        "[pick-and-record] record('task-1', 0.0) after pick(['task-0', 'task-1', 'task-2', "
        f"'task-3', ...], 1) raised {raised} (at "
    )
    assert "; record() must take a failure (0.0); every other check" in violation.message


class BoomOnceThreeTracked:
    """Raises RuntimeError('boom') in the method ``where`` names once three tasks are tracked."""

    name = "boom"
    where = ""

    def __init__(self) -> None:
        self.tracked: set[str] = set()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        self._boom("pick")
        return keys[round_index % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        self.tracked.add(task_id)
        self._boom("record")

    def _boom(self, method: str) -> None:
        if method == self.where and len(self.tracked) >= 3:
            raise RuntimeError("boom")


def _raised_at(call: Callable[[], object]) -> str:
    """``FILE:LINE`` of the line ``call()`` raises at, as its own traceback says."""
    try:
        call()
    except Exception as error:  # noqa: BLE001  # whatever it raises: where is the point
        frame = traceback.extract_tb(error.__traceback__)[-1]
        return f"{frame.filename}:{frame.lineno}"
    raise AssertionError(f"{call} did not raise")


@pytest.mark.parametrize(
    ("where", "call"),
    [
        ("pick", "pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 3)"),
        ("record", "record('task-2', 0.0)"),
    ],
    ids=["pick", "record"],
)  # fmt: skip
def test_a_later_pick_or_record_that_raises_is_named_with_its_call_and_the_line_it_raised_at(
    where: str, call: str
) -> None:
    factory = type("Boom", (BoomOnceThreeTracked,), {"where": where})
    sampler = factory()

    def four_rounds() -> None:
        for index in range(4):
            sampler.record(sampler.pick(list(testing._calls._SHARD), index), 0.0)

    at = _raised_at(four_rounds)
    assert Path(at).name.startswith("test_conformance_kit.py:")  # the sampler's, not the kit's

    report = check_sampler(factory)

    # One fault, one violation: the later checks that raise the same are not reported again.
    assert [str(violation) for violation in report.violations] == [
        f"[pick-returns-a-member] {call} raised RuntimeError: boom (at {at})",
    ]


class BoomNamingTheTask(BoomOnceThreeTracked):
    """Raises in record(), naming the task recorded: each call's message differs."""

    name = "boom-naming-the-task"

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        self.tracked.add(task_id)
        if len(self.tracked) >= 3:
            raise RuntimeError(f"boom on {task_id}")


def test_one_exception_from_one_line_is_one_violation_whatever_its_message_names() -> None:
    report = check_sampler(BoomNamingTheTask)

    assert len(report.violations) == 1, str(report)
    assert "raised RuntimeError: boom on " in report.violations[0].message


class SkipsTheFirst:
    """Picks the second task: the library it calls raises where there is none."""

    name = "skips-the-first"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if not keys:
            return random.choice(keys)  # the standard library's IndexError
        return check_keys(list(keys)[1:])[0]  # this package's ValueError, for one task

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


@attrs.define
class _WholeScore:
    value: int = attrs.field(validator=attrs.validators.instance_of(int))


class ValidatesWithAttrs:
    """Records through an attrs validator, which refuses a float score inside attrs."""

    name = "validates-with-attrs"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[0]

    def record(self, task_id: str, score: float) -> None:
        _WholeScore(score)  # type: ignore[arg-type]  # attrs' TypeError, raised in attrs


def test_the_line_a_failure_names_is_the_samplers_own_not_another_librarys_it_called() -> None:
    source, start = inspect.getsourcelines(ValidatesWithAttrs.record)
    line = start + next(i for i, text in enumerate(source) if "_WholeScore(score)" in text)

    report = check_sampler(ValidatesWithAttrs)

    (message,) = {violation.message for violation in report.violations}
    assert f"(at {__file__}:{line})" in message, message


def test_the_line_a_failure_names_is_the_samplers_own_not_the_librarys_it_called() -> None:
    source, start = inspect.getsourcelines(SkipsTheFirst.pick)
    at = {
        text: f"{__file__}:{start + next(i for i, line in enumerate(source) if text in line)}"
        for text in ("random.choice", "check_keys")
    }

    report = check_sampler(SkipsTheFirst)

    messages = {violation.check: violation.message for violation in report.violations}
    one_task = messages["pick-returns-a-member"]
    assert one_task.startswith("pick(['only-task'], 0) raised ValueError: ")
    assert one_task.endswith(f" (at {at['check_keys']})")
    # The IndexError's own words differ between Python versions.
    said = re.escape(
        f"(at {at['random.choice']}); expected ValueError "
        f"(agentdescent_sampling.plugin.check_keys raises it for you)"
    )
    assert re.fullmatch(
        f"pick\\(\\[\\], 0\\) raised IndexError: .+ {said}", messages["empty-shard"]
    )


def test_a_sampler_that_reorders_its_shard_leaves_the_kits_own_shard_as_it_was() -> None:
    class ReversesOnce:
        """Reverses the first list any instance is given, once: the bug the kit catches."""

        name = "reverses-once"
        done = False

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            if isinstance(keys, list) and not ReversesOnce.done:
                ReversesOnce.done = True
                keys.reverse()
            return "not-a-member"

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)

    for _ in range(2):  # a second run of the kit sees what the first left behind
        report = check_sampler(ReversesOnce)
        assert "pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 0) returned" in str(report)


class PopsItsShard:
    """Takes the last key out of the list it is given and returns it: a member it removed."""

    name = "pops-its-shard"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        return keys.pop() if isinstance(keys, list) and len(keys) > 1 else keys[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


def test_a_pick_that_removes_the_key_it_returns_is_a_mutation_not_a_non_member() -> None:
    report = check_sampler(PopsItsShard)

    assert [str(violation) for violation in report.violations] == [
        "[keys-unchanged] pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 0) mutated the "
        "shard it was given: 12 keys became 11, removed ['task-11']; copy it (sorted(keys), "
        "list(keys)) before reordering or removing"
    ]


def test_a_reordered_shard_is_reported_with_the_first_position_that_changed() -> None:
    class SwapsTheLastTwo(PopsItsShard):
        def pick(self, keys: Sequence[str], round_index: int) -> str:
            check_keys(keys)
            if isinstance(keys, list) and len(keys) > 1:
                keys[-1], keys[-2] = keys[-2], keys[-1]
            return keys[0]

    (violation,) = check_sampler(SwapsTheLastTwo).violations

    assert violation.check == "keys-unchanged"
    assert "reordered it, keys[10] was 'task-10' and is now 'task-11'" in violation.message


def test_a_pick_that_returns_no_task_id_is_reported_as_itself_never_as_a_record_error() -> None:
    class Zero:
        name = "zero"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            check_keys(keys)
            return 0  # type: ignore[return-value]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)  # would raise TypeError on the int

    report = check_sampler(Zero)
    text = str(report)
    assert "returned 0 (an int, not a task id), which is not in the list it was given" in text
    # The same non-member is not reported again by the checks after the members check.
    assert {v.check for v in report.violations} == {"pick-returns-a-member"}
    assert "raised" not in text
    assert "lock" not in text


def test_a_failure_on_one_thread_too_gets_no_advice_to_add_a_lock() -> None:
    class Tired:
        name = "tired"

        def __init__(self) -> None:
            self.picks = 0

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            check_keys(keys)
            self.picks += len(keys) == 4  # the threads' shards: no earlier check reports it
            if self.picks > 5:
                raise RuntimeError("tired")
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)

    report = check_sampler(Tired)
    [threads] = [v for v in report.violations if v.check == "threads"]
    assert re.fullmatch(
        rf"the calls the threads make raise on one thread too, first: pick\(\['task-0', "
        rf"'task-3', 'task-6', 'task-9'\], 5\) raised RuntimeError: tired \(at "
        rf"{re.escape(__file__)}:\d+\); fix that first \(no lock would\)",
        threads.message,
    )


def test_an_object_without_record_fails_the_protocol_check() -> None:
    class PickOnly:
        name = "pick-only"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return keys[0]

    report = check_sampler(PickOnly)
    assert "[protocol] PickOnly is not a TaskSampler: it has no record()" in str(report)


def test_a_pick_without_round_index_is_one_violation_and_no_other_check_runs() -> None:
    class NoRound:
        name = "no-round"

        def pick(self, keys: Sequence[str]) -> str:
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)

    report = check_sampler(NoRound)
    assert report.checks == ("protocol",)
    (violation,) = report.violations
    assert "its pick(keys) can't be called as pick(keys, round_index)" in violation.message
    assert "lock" not in str(report)


def test_the_threads_check_says_when_it_could_not_observe_lost_records() -> None:
    class Unlocked:
        name = "unlocked"

        def __init__(self) -> None:
            self.trials: dict[str, int] = {}

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            if not keys:
                raise ValueError("empty shard")
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)
            self.trials[task_id] = self.trials.get(task_id, 0) + 1

    report = check_sampler(Unlocked)
    assert report.ok
    (note,) = [note for note in report.notes if note.startswith("threads")]
    assert "lost records could not be observed, because unlocked has no stats()" in note
    assert f"note: {note}" in str(report)
    assert check_sampler(UnsafeCounter).notes == ()
    # Locked, it gets no threads note; the instances check's note is the only one left.
    (apart,) = check_sampler(lambda: synchronized(Unlocked())).notes
    assert apart.startswith("instances-apart: not checked: ")


def test_the_concurrency_check_catches_an_unlocked_stateful_sampler() -> None:
    report = check_sampler(UnsafeCounter)
    assert [violation.check for violation in report.violations] == ["threads"]
    assert "concurrent records were lost" in report.violations[0].message


@pytest.mark.version_independent
def test_synchronized_makes_the_unlocked_sampler_pass() -> None:
    report = check_sampler(lambda: synchronized(UnsafeCounter()))
    assert report.ok, str(report)


class DeclaredUnsafe(UnsafeCounter):
    thread_safe = False


def test_a_class_declaring_thread_safe_false_is_checked_as_served_under_a_lock() -> None:
    report = check_sampler(DeclaredUnsafe)

    assert report.ok, str(report)
    assert "threads" in report.checks
    assert report.notes == ()
    assert check_sampler(lambda: DeclaredUnsafe()).ok  # the instance declares it: create() too


def test_a_sampler_that_ignores_its_seed_is_caught() -> None:
    report = check_sampler(GlobalRandom)
    assert "seeds" in report.checks
    assert [violation.check for violation in report.violations] == ["seeds"]
    assert "seed=0 picked differently (and so did two with seed=12345)" in (
        report.violations[0].message
    )


def test_samplers_without_a_seed_skip_the_seed_check() -> None:
    assert "seeds" not in check_sampler(RoundRobin).checks


def test_a_name_is_checked_through_the_registry_with_its_parameters() -> None:
    report = check_sampler("difficulty-weighted:c=0.5")
    assert report.ok
    assert report.sampler == "difficulty-weighted"


def test_the_pytest_fixture_passes_a_conforming_sampler(sampler_conformance) -> None:  # type: ignore[no-untyped-def]
    assert sampler_conformance(DifficultyWeighted, c=0.3).ok


def test_the_pytest_fixture_fails_with_the_whole_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        class NoEmptyCheck:
            name = "no-empty-check"
            def pick(self, keys, round_index):
                return keys[0] if keys else None
            def record(self, task_id, score):
                if not 0 <= score <= 1:
                    raise ValueError(score)

        def test_conforms(sampler_conformance):
            sampler_conformance(NoEmptyCheck)
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*[[]empty-shard[]] pick([[][]], 0) returned None*"])


@pytest.mark.parametrize(
    ("checked", "meant"),
    [("Windowed, windw=3", "window"), ("'difficulty-weighted', cc=0.1", "c")],
    ids=["a-class", "a-name"],
)
def test_a_misspelt_parameter_fails_the_fixture_with_one_error_naming_the_one_meant(
    pytester: pytest.Pytester, checked: str, meant: str
) -> None:
    pytester.makepyfile(
        f"""
        class Windowed:
            name = "windowed"
            def __init__(self, window=3):
                self.window = window
            def pick(self, keys, round_index):
                return keys[0]
            def record(self, task_id, score):
                pass

        def test_conforms(sampler_conformance):
            sampler_conformance({checked})
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "During handling of the above exception" not in output
    assert "The above exception was the direct cause" not in output
    assert "got an unexpected keyword argument" not in output  # the TypeError beneath it
    said = f"unknown parameter *. Did you mean '{meant}'? Valid parameters: {meant}=*"
    result.stdout.fnmatch_lines([f"InvalidSamplerConfig: sampler *: {said}"])


def test_an_instance_is_refused_with_how_to_pass_its_class() -> None:
    with pytest.raises(TypeError, match=r"it is a RoundRobin instance, and each check needs a "
                       r"fresh one: pass the class \(check_sampler\(RoundRobin\)\)"):  # fmt: skip
        check_sampler(RoundRobin())  # type: ignore[arg-type]


def test_a_bad_parameter_for_a_name_is_a_config_error_not_a_violation() -> None:
    with pytest.raises(InvalidSamplerConfig, match="'c'"):
        check_sampler("fixable-first", c=1)


class FirstKey:
    """Takes no parameters, as a plugin's simplest sampler does."""

    name = "first-key"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


def test_a_parameter_a_class_does_not_take_is_a_config_error_not_a_violation() -> None:
    with pytest.raises(InvalidSamplerConfig) as raised:
        check_sampler(FirstKey, seed=1)

    assert str(raised.value) == (
        "sampler 'first-key': unknown parameter 'seed'. Valid parameters: none (it takes no "
        "parameters). "
        "check_sampler()'s keyword arguments are the sampler's parameters, passed to "
        "FirstKey(...): give each one it requires and none it does not take"
    )
    assert raised.value.__cause__ is None  # one error: the TypeError beneath adds nothing
    assert raised.value.__suppress_context__


def test_a_misspelt_or_missing_parameter_of_a_class_is_named_with_the_one_meant() -> None:
    class Windowed(FirstKey):
        def __init__(self, window: int) -> None:
            self.window = window

    with pytest.raises(InvalidSamplerConfig, match=r"^sampler 'first-key': unknown parameter "
                       r"'windw'; missing required parameter 'window'\. Did you mean "
                       r"'window'\? Valid parameters: window\. "):  # fmt: skip
        check_sampler(Windowed, windw=3)
    with pytest.raises(InvalidSamplerConfig, match="missing required parameter 'window'"):
        check_sampler(Windowed)
    assert check_sampler(Windowed, window=3).ok


@pytest.mark.parametrize("params", [{}, {"seed": 1}], ids=["no-parameters", "its-own-seed"])
def test_a_type_error_the_signature_does_not_explain_is_still_the_samplers_violation(
    params: dict[str, int],
) -> None:
    class BuggyConstructor(FirstKey):
        def __init__(self, seed: int = 0) -> None:
            self.keys = sorted([1, "a"])  # type: ignore[list-item]  # the bug: a TypeError

    report = check_sampler(BuggyConstructor, **params)

    given = ", ".join(f"{key}={value}" for key, value in params.items())
    assert [str(violation) for violation in report.violations] == [
        f"[protocol] building it, BuggyConstructor({given}), raised TypeError: '<' not "
        f"supported between instances of 'str' and 'int' (at "
        f"{_line_of(BuggyConstructor, 'sorted(')}); every other check builds one, so none ran"
    ]


def test_a_constructor_that_raises_is_named_with_its_call_and_the_line_it_raised_at() -> None:
    class NeedsAFile(FirstKey):
        def __init__(self, c: float = 0.1) -> None:
            self.table = Path("/nonexistent/table.json").read_text()

    at = _line_of(NeedsAFile, "read_text")
    registry = Registry(only=[])
    registry.register(NeedsAFile, name="needs-a-file")
    by_class = check_sampler(NeedsAFile, c=0.2)
    by_name = check_sampler("needs-a-file", registry=registry)

    (violation,) = by_class.violations
    assert violation.message.startswith(
        "building it, NeedsAFile(c=0.2), raised FileNotFoundError: "
    )
    assert violation.message.endswith(f" (at {at}); every other check builds one, so none ran")
    (violation,) = by_name.violations
    assert violation.message.startswith("building it, create('needs-a-file'), raised ")
    assert f" (at {at}); " in violation.message


class LockedCounts:
    """Locked throughout, so no record is ever lost; ``stats()`` is what the tests vary."""

    name = "steady-counts"
    #: The most records of one task that ``stats()`` counts; ``None`` counts every one.
    cap: int | None = None

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outcomes: dict[str, list[float]] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        return keys[round_index % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        value = check_score(task_id, score)
        with self._lock:
            outcomes = self._outcomes.setdefault(task_id, [])
            outcomes.append(value)
            if self.cap is not None:
                del outcomes[: -self.cap]

    def stats(self) -> Any:
        with self._lock:
            return {
                key: (sum(o == 1.0 for o in out), len(out)) for key, out in self._outcomes.items()
            }


class MeanScores(LockedCounts):
    def stats(self) -> Any:
        with self._lock:
            return {key: sum(out) / len(out) for key, out in self._outcomes.items()}


class TrialsFirst(LockedCounts):
    def stats(self) -> Any:
        return {key: (trials, passes) for key, (passes, trials) in super().stats().items()}


class ListOfCounts(LockedCounts):
    def stats(self) -> Any:
        return list(super().stats().items())


@pytest.mark.parametrize(
    ("factory", "sample"),
    [
        (MeanScores, "'task-0': 0.0, not a (passes, trials) pair"),
        (TrialsFirst, "'task-0': (2, 0): passes and trials must be whole numbers with 0 <= "),
        (ListOfCounts, "returned list [('task-0', (0, 2)), "),
    ],
    ids=["mean-scores", "trials-first", "a-list"],
)
def test_a_stats_of_another_shape_is_named_with_a_sample_and_not_blamed_on_a_lock(
    factory: type, sample: str
) -> None:
    report = check_sampler(factory)

    assert report.ok, str(report)
    (note,) = report.notes
    assert note.startswith("threads: lost records could not be observed: stats() ")
    assert sample in note
    assert "reads stats() as {task_id: (passes, trials)} with whole numbers counting every " in note
    assert "lock" not in str(report).replace("steady-counts", "")


@pytest.mark.parametrize(
    ("cap", "counted"),
    [
        (1, "counts 12 trials after 24 records made on one thread"),
        (200, "counts 2400 trials after 16000 records made one after another on one thread"),
    ],
    ids=["seen-at-once", "seen-only-after-the-threads"],
)
def test_a_stats_that_does_not_count_every_record_is_not_taken_for_lost_records(
    cap: int, counted: str
) -> None:
    capped = type("Capped", (LockedCounts,), {"cap": cap, "name": "capped"})

    report = check_sampler(capped)

    assert report.ok, str(report)
    assert "were lost" not in str(report)
    (note,) = report.notes
    assert note.startswith(f"threads: lost records could not be observed: stats() {counted}, ")
    assert f"only exceptions and non-members under {testing.THREADS} threads were checked" in note


class TrialsCapped(LockedCounts):
    """Counts trials up to 40 a task, passes without end: a (passes, trials) pair at first,
    passes above trials once a task has more than 40 records, on one thread as on many."""

    name = "trials-capped"

    def stats(self) -> Any:
        return {key: (passes, min(trials, 40)) for key, (passes, trials) in super().stats().items()}


def test_a_stats_whose_shape_breaks_only_after_many_records_is_not_blamed_on_a_lock() -> None:
    # The shape broke only after the threads' records, and was told a race of the statistics.
    report = check_sampler(TrialsCapped)

    assert report.ok, str(report)
    assert "lock" not in str(report)
    (note,) = report.notes
    assert note.startswith("threads: lost records could not be observed: stats() returned an entry")
    assert (
        ": passes and trials must be whole numbers with 0 <= passes <= trials, after 16000 "
        "records made one after another on one thread, and the threads check reads stats() as "
    ) in note


def test_the_threads_check_runs_as_the_settings_on_the_package_say(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(testing, "THREADS", 3)
    monkeypatch.setattr(testing, "OPERATIONS_PER_THREAD", 10)
    capped = type("Capped", (LockedCounts,), {"cap": 2, "name": "capped"})

    (note,) = check_sampler(capped).notes

    assert "counts 24 trials after 30 records made one after another on one thread" in note
    assert "only exceptions and non-members under 3 threads were checked" in note


def test_a_stats_that_counts_every_record_still_shows_lost_records() -> None:
    assert check_sampler(LockedCounts).ok
    report = check_sampler(UnsafeCounter)
    (violation,) = report.violations
    assert re.match(r"\d+ of 16000 concurrent records were lost", violation.message)
    assert report.notes == ()


class StatsRaises(LockedCounts):
    """A ``stats()`` that raises KeyError once ``records`` or more records were made."""

    name = "stats-raises"
    records = 0

    def stats(self) -> Any:
        counted = super().stats()
        if sum(trials for _, trials in counted.values()) >= self.records:
            raise KeyError("task-0")
        return counted


@pytest.mark.parametrize(
    ("records", "when"),
    [(0, "on a fresh instance"), (1, "after 24 picks and records on one thread")],
    ids=["always", "once-it-has-records"],
)
def test_a_stats_that_raises_is_a_violation_naming_it_never_a_pass(records: int, when: str) -> None:
    factory = type("Raises", (StatsRaises,), {"records": records})
    sampler = factory()
    sampler.record("task-0", 1.0)

    report = check_sampler(factory)

    assert not report.ok
    [violation] = report.violations
    assert violation.check == "stats"
    assert violation.message.startswith(
        f"{when}, stats() raised KeyError: 'task-0' (at {_raised_at(sampler.stats)}); stats() "
        f"is optional, but one that is there must work"
    )
    assert report.notes == ()
    # instances-apart reads a fresh instance's stats(): where that raises, it saw nothing.
    assert ("instances-apart" in report.checks) == (records > 0)


def test_a_check_that_could_observe_nothing_is_not_listed_as_passed() -> None:
    class StateDictRaises(FirstKey):  # no load_state_dict(): not Stateful, so no violation
        def state_dict(self) -> dict[str, Any]:
            raise KeyError("task-0")

    report = check_sampler(StateDictRaises)

    assert report.ok, str(report)
    assert "instances-apart" not in report.checks
    assert "instances-apart" in check_sampler(Counts).checks  # one whose state_dict() works


class Counts:
    """A locked, deterministic sampler with a state; subclasses break the state one way each."""

    name = "counts"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.trials: dict[str, int] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        with self._lock:
            return min(keys, key=lambda key: self.trials.get(key, 0))

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        with self._lock:
            self.trials[task_id] = self.trials.get(task_id, 0) + 1

    def state_dict(self) -> dict[str, Any]:
        with self._lock:
            return {"sampler": self.name, "version": 1, "trials": dict(self.trials)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        trials = check_state(state, self.name, 1).get("trials")
        if not (isinstance(trials, Mapping) and all(map(is_count, trials.values()))):
            raise StateError(f"{self.name}: 'trials' must map task ids to counts")
        with self._lock:
            self.trials = dict(trials)


class LoadsNothing(Counts):
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        pass


class LoadsAllButItsGenerator(Counts):
    """Saves its generator's state and keeps its own when loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(0)

    def record(self, task_id: str, score: float) -> None:
        super().record(task_id, score)
        self.rng.random()

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "rng": rng_state(self.rng)}


def _not_json(value: object) -> type:
    class NotJson(Counts):
        def state_dict(self) -> dict[str, Any]:
            return {**super().state_dict(), "extra": value}

    return NotJson


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        (LoadsNothing, "returns another state_dict(): state['trials']['task-0'] is there only "
         "when saved. load_state_dict() must restore everything state_dict() saves"),
        # The first number that differs, not the generator's 625 numbers, cut short.
        (LoadsAllButItsGenerator, "returns another state_dict(): state['rng'][1][0] was "),
        (_not_json({"a", "b"}), "is not plain JSON: state['extra'] is a set"),
        (_not_json((1, 2)), "state['extra'] is a tuple, (1, 2): JSON has no tuples"),
        (
            _not_json({1: 2}),
            "state['extra'] has the key 1 (an int), which JSON turns into a string",
        ),
        (_not_json([math.nan]), "state['extra'][0] is nan, which JSON cannot hold"),
    ],
    ids=["load-is-pass", "a-generator-left-unloaded", "a-set", "a-tuple", "an-int-key", "nan"],
)  # fmt: skip
def test_a_state_that_does_not_survive_json_and_a_reload_is_a_violation(
    factory: type, expected: str
) -> None:
    report = check_sampler(factory)

    (violation,) = report.violations
    assert violation.check == "state"
    assert expected in violation.message


def test_a_state_with_several_kinds_of_non_json_value_names_each_kind_in_one_report() -> None:
    # It named the first alone: an author fixed the tuples, ran again, and only then heard
    # of the set, and then of the int key.
    many = {f"task-{n}": (n, 1) for n in range(5)}
    report = check_sampler(_not_json({"seen": {"a"}, "stats": many, "by_round": {3: []}}))

    (violation,) = report.violations
    named = violation.message.split("is not plain JSON: ")[1]
    assert "state['extra']['by_round'] has the key 3 (an int)" in named
    assert "state['extra']['stats']['task-4'] is a tuple, (4, 1)" in named
    assert "state['extra']['seen'] is a set" in named
    assert "(and 4 more)" in named  # the other four tuples
    assert "task-3" not in named


class StampsItsState(Counts):
    """Saves a clock reading in its state: two states of one sampler never compare equal."""

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "saved_at": time.perf_counter_ns()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)


class StampsItsStats(Counts):
    """Reports a clock reading among its statistics, and has no state."""

    state_dict = None  # type: ignore[assignment]
    load_state_dict = None  # type: ignore[assignment]

    def stats(self) -> dict[str, Any]:
        return {"calls": time.perf_counter_ns()}


def test_a_state_that_changes_between_two_calls_in_a_row_is_named_as_that() -> None:
    # Not "load_state_dict() must restore everything", nor "a mutable default argument":
    # neither is the author's mistake, and neither fix would make the check pass.
    report = check_sampler(StampsItsState)

    (violation,) = report.violations
    assert violation.check == "state"
    assert violation.message.startswith(
        "two calls of state_dict() in a row, with no pick or record between, returned different "
        "values: "
    )
    assert "no clock" in violation.message
    assert "mutable default" not in str(report)
    assert "must restore everything" not in str(report)


def test_stats_that_change_between_two_calls_in_a_row_are_a_note_not_a_violation() -> None:
    # stats() is optional and never read by the engine: a clock or a call count in it breaks
    # no rule, and only keeps the kit from telling whether instances share what they learn.
    report = check_sampler(StampsItsStats)

    assert report.ok, str(report)
    assert "instances-apart" not in report.checks
    (note,) = [note for note in report.notes if note.startswith("instances-apart:")]
    assert note.startswith(
        "instances-apart: not checked: two calls of stats() in a row, with no pick or record "
        "between, returned different values: stats()['calls'] was "
    )
    assert "mutable default" not in str(report)


class LoadsAnotherKey(Counts):
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.trials = dict(state["counts"])  # the bug: state_dict() saves "trials"


class SavesOnlyFresh(Counts):
    def state_dict(self) -> dict[str, Any]:
        if not hasattr(self, "loaded"):
            return super().state_dict()
        return {**super().state_dict(), "share": 1 / len(self.trials)}  # fresh: 1 / 0

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.loaded = True
        self.trials = {}  # the bug: it restores nothing, so the state_dict() after it raises


class ChecksNothing(Counts):
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        with self._lock:
            self.trials = dict(state["trials"])


class ChecksOnlyAMapping(Counts):
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if not isinstance(state, Mapping):
            raise StateError("not a state")
        with self._lock:
            self.trials = dict(state["trials"])


class ChecksNoNumbers(Counts):
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        with self._lock:
            self.trials = dict(check_state(state, self.name, 1)["trials"])


class NamesNothing(Counts):
    def state_dict(self) -> dict[str, Any]:
        with self._lock:
            return {"trials": dict(self.trials)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        with self._lock:
            self.trials = dict(state["trials"])


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        (ChecksNothing, "load_state_dict() given a list holding its state raised TypeError: "
         "list indices must be integers or slices, not str (at "),
        (ChecksOnlyAMapping, "load_state_dict() took its state marked as sampler "
         "'counts-other''s; start it with check_state(state, self.name, VERSION)"),
        (ChecksNoNumbers, "load_state_dict() took its state with state['trials']['task-"),
        (NamesNothing, "which holds no 'sampler' (its name) and 'version' (its format)"),
    ],
    ids=["checks-nothing", "any-mapping", "text-for-a-number", "no-name-or-version"],
)  # fmt: skip
def test_a_load_state_dict_that_takes_a_state_not_its_own_or_damaged_is_a_violation(
    factory: type, expected: str
) -> None:
    (violation,) = check_sampler(factory).violations

    assert violation.check == "state"
    assert expected in violation.message
    if factory is ChecksNoNumbers:  # taken, it breaks the run later: the kit names the call
        assert "= 'oops', and then pick(" in violation.message
        assert "raised TypeError" in violation.message


def test_a_load_state_dict_that_checks_its_state_passes_and_so_does_every_built_in() -> None:
    assert not check_sampler(Counts).violations
    for builtin in (RoundRobin, DifficultyWeighted, FixableFirst):
        assert "state" in check_sampler(builtin).checks
        assert not check_sampler(builtin).violations


def _line_of(cls: type, text: str) -> str:
    lines, first = inspect.getsourcelines(cls)
    offset = next(number for number, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(cls)}:{first + offset}"


def test_a_state_method_that_raises_is_named_with_the_line_it_raised_at() -> None:
    (loading,) = check_sampler(LoadsAnotherKey).violations
    (after,) = check_sampler(SavesOnlyFresh).violations

    at_load = _line_of(LoadsAnotherKey, "counts")
    assert loading.message == (
        "load_state_dict(state) of a fresh instance, given the state_dict() of one that made "
        "30 picks and records as JSON reads it back, raised KeyError: 'counts' (at "
        f"{at_load})"
    )
    assert after.message == (
        "state_dict() of a fresh instance that loaded the state_dict() of one that made 30 "
        "picks and records raised ZeroDivisionError: division by zero (at "
        f"{_line_of(SavesOnlyFresh, '1 / len')})"
    )


class SavesNothingFresh(Counts):
    def state_dict(self) -> dict[str, Any]:
        if not self.trials:
            raise ValueError("no trials to save")  # as max() of none would, in any words
        return {**super().state_dict(), "most": max(self.trials.values())}


def test_a_state_dict_that_raises_on_a_fresh_instance_is_a_violation() -> None:
    # create(spec, state=PATH) saves the state of a sampler as soon as it is built.
    (violation,) = check_sampler(SavesNothingFresh).violations

    assert violation.check == "state"
    assert violation.message.startswith(
        "state_dict() of a fresh instance, before any pick or record, raised ValueError: "
        "no trials to save (at "
    )


def test_a_tuple_in_the_state_is_flagged_saying_it_comes_back_as_a_list_so_return_a_list() -> None:
    report = check_sampler(_not_json({"band": (0.1, 0.9)}))

    (violation,) = report.violations
    assert violation.check == "state"
    assert (
        "state['extra']['band'] is a tuple, (0.1, 0.9): JSON has no tuples, so a state saved "
        "and loaded back gives load_state_dict() a list there, [0.1, 0.9], not the tuple: "
        "return a list"
    ) in violation.message


def test_a_state_that_contains_itself_is_a_violation_and_one_that_shares_a_value_is_not() -> None:
    looped: list[Any] = [1]
    looped.append({"back": looped})
    shared = [1, 2]

    (violation,) = [v for v in check_sampler(_not_json(looped)).violations if v.check == "state"]
    assert "state['extra'][1]['back'] contains itself, which JSON cannot hold" in violation.message
    assert check_sampler(_not_json({"a": shared, "b": shared})).ok


class SeededRandom(Counts):
    """Picks at random from a seeded generator, but leaves the generator out of its state."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self._rng = random.Random(seed)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        with self._lock:
            return self._rng.choice(list(keys))


class UnseededRandom(SeededRandom):
    """Picks at random, unseeded: its picks cannot be compared, only its state."""

    def __init__(self) -> None:
        super().__init__()
        self._rng = random.Random()


def test_a_seeded_sampler_whose_state_leaves_out_its_generator_picks_differently_restored() -> None:
    report = check_sampler(SeededRandom, seed=5)

    (violation,) = report.violations
    assert violation.check == "state"
    assert violation.message.startswith("after load_state_dict(), the next picks differ from ")
    assert "the state leaves out something pick() depends on (a generator's state?)" in str(report)
    assert check_sampler(UnseededRandom).ok  # picks at random: only its state is compared


def test_the_state_check_runs_for_samplers_with_state_and_only_for_them() -> None:
    assert "state" in check_sampler(Counts).checks
    assert check_sampler(Counts).ok
    assert "state" in check_sampler(RoundRobin).checks
    assert "state" not in check_sampler(FirstKey).checks

    class HalfState(FirstKey):
        def state_dict(self) -> dict[str, Any]:
            return {}

    report = check_sampler(HalfState)
    assert report.ok
    assert "state" not in report.checks
    assert report.notes[0].startswith(
        "state: not checked: it has state_dict() but no load_state_dict(), so it is not Stateful"
    )


class NoName:
    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


class IntName(NoName):
    name = 42


class PropertyName(NoName):
    @property
    def name(self) -> int:
        return 42


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        (NoName, "NoName has no name attribute; add name = 'no-name' to the class"),
        (IntName, "IntName's name attribute is 42, not a string; add name = 'int-name' to the "),
        (PropertyName, "PropertyName's name attribute is 42, not a string; add name = "),
    ],
    ids=["none", "an-int", "a-property"],
)
def test_a_class_without_a_name_is_told_to_add_one_and_labelled_by_its_class(
    factory: type, expected: str
) -> None:
    report = check_sampler(factory)

    assert report.sampler == factory.__qualname__
    (violation,) = report.violations
    assert violation.check == "name"
    assert violation.message.startswith(expected)
    assert "invalid sampler name" not in violation.message
    assert str(report).startswith(f"{factory.__qualname__}: 1 violation(s)")


class ClaimsRoundRobin(FirstKey):
    """Calls itself by a built-in's name, which the registry would refuse."""

    name = "Round_Robin"


class SubclassOfABuiltin(RoundRobin):
    """Inherits the built-in's name, and so claims it."""


class ClaimsTheBuiltinsModule(FirstKey):
    """Claims the built-in's module as its own, as if it were the built-in."""

    name = "round-robin"


ClaimsTheBuiltinsModule.__module__ = "agentdescent_sampling.samplers.round_robin"


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        (ClaimsRoundRobin, "ClaimsRoundRobin's name 'Round_Robin' selects the built-in "
         "round-robin, and built-in names are reserved: registered under it, the plugin is "
         "refused and a config naming it gets the built-in, and under another name its samplers "
         "would still call themselves the built-in; give the class its own (name = "
         "'claims-round-robin')"),
        (SubclassOfABuiltin, "SubclassOfABuiltin's name 'round-robin' selects the built-in "
         "round-robin, and built-in names are reserved"),
        # Its module was taken at its word: the check passed it as the built-in.
        (ClaimsTheBuiltinsModule, "ClaimsTheBuiltinsModule's name 'round-robin' selects the "
         "built-in round-robin, and built-in names are reserved"),
    ],
    ids=["its-own", "inherited", "claiming-the-module"],
)  # fmt: skip
def test_a_class_named_like_a_builtin_is_told_to_rename_and_labelled_by_its_class(
    factory: type, expected: str
) -> None:
    report = check_sampler(factory)

    assert report.sampler == factory.__qualname__
    (violation,) = report.violations
    assert violation.check == "name"
    assert violation.message.startswith(expected)
    assert check_sampler(RoundRobin).ok  # the built-in itself keeps its name
    assert check_sampler("RoundRobin").ok


def test_a_class_named_like_a_builtin_checked_by_its_entry_points_name_is_told_that_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was told a name made of its Python class's name, not the one configs select it by.
    source = """
        from agentdescent_sampling.plugin import check_keys

        class S:
            name = "round-robin"

            def pick(self, keys, round_index):
                return check_keys(keys)[0]

            def record(self, task_id, score):
                pass
    """
    install_plugins(tmp_path, monkeypatch, {"kit-test-sneaky": (source, {"sneaky": "S"})})

    (violation,) = check_sampler("sneaky").violations

    assert violation.check == "name"
    assert violation.message.endswith("give the class its own (name = 'sneaky')")


def test_check_sampler_takes_the_spec_or_mapping_the_conflict_error_advises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = install_plugins(tmp_path, monkeypatch, TWO_PROVIDERS)
    with pytest.raises(SamplerConflictError) as conflict:
        check_sampler("kit-dup")
    advised = re.search(r"for example (\{.*?\})", str(conflict.value))
    assert advised is not None, str(conflict.value)

    advice = ast.literal_eval(advised[1])
    # kit-test-dup-a breaks the contract and dup-b keeps it: the report says which was checked.
    assert check_sampler(advice).ok == (advice["provider"] == "kit-test-dup-b")
    report = check_sampler(SamplerSpec("kit-dup", {}, "kit-test-dup-b"), registry=registry)
    assert report.ok, str(report)
    assert not check_sampler({"name": "kit-dup", "provider": "kit-test-dup-a"}).ok
    assert report.sampler == "kit-dup"


class LooseNumbers:
    """Takes two numbers and checks neither."""

    name = "loose-numbers"

    def __init__(self, epsilon: float = 0.1, window: int = 3, label: str = "x") -> None:
        self.epsilon, self.window, self.label = epsilon, window, label

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


class CheckedNumbers(LooseNumbers):
    """Refuses a number parameter that is not a number."""

    name = "checked-numbers"

    def __init__(self, epsilon: float = 0.1, window: int = 3, label: str = "x") -> None:
        if not isinstance(epsilon, float) or not isinstance(window, int):
            raise TypeError("epsilon must be a float and window an int")
        super().__init__(epsilon, window, label)


def test_number_parameters_that_accept_a_string_get_a_note_naming_them() -> None:
    report = check_sampler(LooseNumbers)

    assert report.ok
    (note,) = [note for note in report.notes if note.startswith("parameters:")]
    assert note.startswith("parameters: epsilon, window, declared a number, accepted the string")
    assert "(loose-numbers:epsilon=abc) passes create()" in note
    assert "agentdescent_sampling.plugin.number_in" in note


LOOSE_NUMBERS_PLUGIN = """
    from agentdescent_sampling.plugin import check_keys, check_score

    class LooseNumbers:
        name = "loose-numbers"

        def __init__(self, epsilon: float = 0.1, label: str = "x") -> None:
            self.epsilon, self.label = epsilon, label

        def pick(self, keys, round_index):
            return check_keys(keys)[0]

        def record(self, task_id, score):
            check_score(task_id, score)
"""


def test_an_installed_sampler_checked_by_name_gets_the_note_on_its_unchecked_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # check NAME (and the scaffold's own test) checks a sampler through the registry, whose
    # build(**given) has no parameters of its own: the note must read the sampler's.
    plugin = {"kit-test-loose": (LOOSE_NUMBERS_PLUGIN, {"loose-numbers": "LooseNumbers"})}
    install_plugins(tmp_path, monkeypatch, plugin)

    report = check_sampler("loose-numbers")

    assert report.ok, str(report)
    (note,) = [note for note in report.notes if note.startswith("parameters:")]
    assert note.startswith("parameters: epsilon, declared a number, accepted the string")
    assert "(loose-numbers:epsilon=abc) passes create()" in note


def test_validated_number_parameters_and_the_built_ins_get_no_parameters_note() -> None:
    for checked in (CheckedNumbers, FixableFirst, DifficultyWeighted):
        notes = check_sampler(checked).notes
        assert not [note for note in notes if note.startswith("parameters:")], (checked, notes)


class SharedByDefault:
    """Counts its records in a mutable default argument, which every instance shares."""

    name = "shared-by-default"

    def __init__(self, seen: dict[str, list[int]] = {}) -> None:  # noqa: B006  # the defect
        self.seen = seen
        self._lock = threading.Lock()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[round_index % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        with self._lock:
            counts = self.seen.setdefault(task_id, [0, 0])
            counts[0] += score >= 0.999
            counts[1] += 1

    def stats(self) -> dict[str, tuple[int, int]]:
        with self._lock:
            return {task_id: (passes, trials) for task_id, (passes, trials) in self.seen.items()}


class SharedOnTheClass(Counts):
    """Keeps its state in a class attribute, which every instance shares."""

    trials_of_all: ClassVar[dict[str, int]] = {}

    def record(self, task_id: str, score: float) -> None:
        super().record(task_id, score)
        with self._lock:
            self.trials_of_all[task_id] = self.trials_of_all.get(task_id, 0) + 1

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "all": dict(self.trials_of_all)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict({key: value for key, value in state.items() if key != "all"})
        self.trials_of_all.clear()
        self.trials_of_all.update(state["all"])


@pytest.mark.parametrize(
    ("factory", "method"),
    [(SharedByDefault, "stats"), (SharedOnTheClass, "state_dict")],
    ids=["a-mutable-default", "a-class-attribute"],
)
def test_instances_that_share_what_they_learn_are_a_violation(factory: type, method: str) -> None:
    report = check_sampler(factory)

    [violation] = [each for each in report.violations if each.check == "instances-apart"]
    assert violation.message.startswith(
        f"40 picks and records on one instance changed the {method}() of another: {method}()["
    )
    assert "a mutable default argument (weights={}) or a class attribute" in violation.message


def test_the_instances_check_runs_only_where_state_or_stats_can_show_it() -> None:
    assert "instances-apart" in check_sampler(RoundRobin).checks
    assert "instances-apart" not in check_sampler(LooseNumbers).checks


class LooseOptionals(LooseNumbers):
    """Takes numbers declared as unions, written the ways Python allows, and checks none."""

    name = "loose-optionals"

    def __init__(
        self,
        epsilon: Optional[float] = None,  # noqa: UP045  # the older spelling, on purpose
        window: Union[int, float] = 3,  # noqa: UP007
        floor: None | int = None,  # noqa: RUF036
    ) -> None:
        super().__init__()


def test_number_parameters_declared_as_unions_with_none_are_noted_too() -> None:
    (note,) = [note for note in check_sampler(LooseOptionals).notes if "parameters:" in note]
    assert note.startswith("parameters: epsilon, window, floor, declared a number, accepted")


class SeededRandomUnnamedState(NamesNothing, SeededRandom):
    """Leaves its generator out of its state, and 'sampler' and 'version' too."""


def test_a_state_that_leaves_out_its_generator_and_its_name_is_told_both() -> None:
    # The missing 'sampler' and 'version' were told only once the generator was saved: "every
    # violation, not just the first".
    report = check_sampler(SeededRandomUnnamedState, seed=5)

    picks, unnamed = report.violations
    assert (picks.check, unnamed.check) == ("state", "state")
    assert picks.message.startswith("after load_state_dict(), the next picks differ from ")
    assert "which holds no 'sampler' (its name) and 'version' (its format)" in unnamed.message
