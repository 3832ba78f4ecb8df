import random
import time
from collections.abc import Callable, Sequence

import pytest

from agentdescent_sampling import (
    DifficultyWeighted,
    FixableFirst,
    RoundRobin,
    check_keys,
    check_score,
    synchronized,
)
from agentdescent_sampling.errors import InvalidSamplerConfig
from agentdescent_sampling.testing import check_sampler


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
        "threads",
    }
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
    assert str(violation).endswith(
        "raised RuntimeError: boom in pick; every other check picks and records, so none ran"
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
    assert "returned 0 (a int, not a task id), which is not in the list it was given" in text
    assert {v.check for v in report.violations} == {
        "pick-returns-a-member", "record-outside-the-shard", "threads"
    }  # fmt: skip
    assert "raised" not in text
    assert "lock" not in text


def test_a_failure_on_one_thread_too_gets_no_advice_to_add_a_lock() -> None:
    class Tired:
        name = "tired"

        def __init__(self) -> None:
            self.picks = 0

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            check_keys(keys)
            self.picks += 1
            if self.picks > 5:
                raise RuntimeError("tired")
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)

    report = check_sampler(Tired)
    [threads] = [v for v in report.violations if v.check == "threads"]
    assert threads.message == (
        "the calls the threads make raise on one thread too, first: RuntimeError: tired; fix "
        "that first (no lock would)"
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
    (note,) = report.notes
    assert "lost records could not be observed, because unlocked has no stats()" in note
    assert f"note: {note}" in str(report)
    assert check_sampler(UnsafeCounter).notes == ()
    assert check_sampler(lambda: synchronized(Unlocked())).notes == ()


def test_the_concurrency_check_catches_an_unlocked_stateful_sampler() -> None:
    report = check_sampler(UnsafeCounter)
    assert [violation.check for violation in report.violations] == ["threads"]
    assert "concurrent records were lost" in report.violations[0].message


@pytest.mark.version_independent
def test_synchronized_makes_the_unlocked_sampler_pass() -> None:
    report = check_sampler(lambda: synchronized(UnsafeCounter()))
    assert report.ok, str(report)


def test_a_sampler_that_ignores_its_seed_is_caught() -> None:
    report = check_sampler(GlobalRandom)
    assert "seeds" in report.checks
    assert [violation.check for violation in report.violations] == ["seeds", "seeds"]
    assert "seed=0 picked differently" in report.violations[0].message


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
        "sampler 'first-key': unknown parameter 'seed'. Valid parameters: no parameters. "
        "check_sampler()'s keyword arguments are the sampler's parameters, passed to "
        "FirstKey(...): give each one it requires and none it does not take"
    )
    assert isinstance(raised.value.__cause__, TypeError)


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

    assert [str(violation) for violation in report.violations] == [
        "[protocol] raised TypeError: '<' not supported between instances of 'str' and 'int'"
    ]
