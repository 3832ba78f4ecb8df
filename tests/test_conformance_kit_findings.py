"""The conformance kit against the faults a review of 36 buggy samplers found it missed,
misreported or reported more than once: each sampler here has one such bug."""

from __future__ import annotations

import math
import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import pytest

from agentdescent_sampling import RoundRobin, testing
from agentdescent_sampling.plugin import check_keys, check_pick, check_score, check_state
from agentdescent_sampling.testing import check_sampler


class Counted:
    """Picks the least-tried task and keeps ``{task_id: (passes, trials)}`` under a lock."""

    name = "counted"

    def __init__(self) -> None:
        self.trials: dict[str, int] = {}
        self.passes: dict[str, int] = {}
        self.lock = threading.Lock()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        keys, _ = check_pick(keys, round_index)
        with self.lock:
            return min(keys, key=lambda key: self.trials.get(key, 0))

    def record(self, task_id: str, score: float) -> None:
        value = check_score(task_id, score)
        with self.lock:
            self.trials[task_id] = self.trials.get(task_id, 0) + 1
            self.passes[task_id] = self.passes.get(task_id, 0) + (value >= 0.999)

    def stats(self) -> dict[str, tuple[int, int]]:
        with self.lock:
            return {key: (self.passes[key], trials) for key, trials in self.trials.items()}


class CountsTheRejected(Counted):
    """Counts the trial before it checks the score, so a score it refuses is still counted."""

    name = "counts-the-rejected"

    def record(self, task_id: str, score: float) -> None:
        with self.lock:
            self.trials[task_id] = self.trials.get(task_id, 0) + 1
        value = check_score(task_id, score)
        with self.lock:
            self.passes[task_id] = self.passes.get(task_id, 0) + (value >= 0.999)


def test_a_rejected_score_that_changes_stats_is_a_violation() -> None:
    report = check_sampler(CountsTheRejected)

    [violation] = report.violations
    assert violation.check == "bad-scores"
    assert re.match(
        r"after 12 picks and records, record\('task-\d+', nan\) raised ValueError, yet "
        r"stats\(\)\['task-\d+'\] was \(\d+, 1\) before, \(\d+, 2\) after; so did inf, -0\.5, "
        r"1\.5, '0\.5', None\. A score record\(\) refuses must change nothing",
        violation.message,
    ), violation.message
    assert "check_score(task_id, score)" in violation.message


class MovesOnFirst:
    """No stats() or state: picks the least-tried task, but counts a try before the score's
    check, so a refused score still moves its next picks on."""

    name = "moves-on-first"

    def __init__(self) -> None:
        self.tried: dict[str, int] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return min(check_keys(keys), key=lambda key: self.tried.get(key, 0))

    def record(self, task_id: str, score: float) -> None:
        self.tried[task_id] = self.tried.get(task_id, 0) + 1
        check_score(task_id, score)


def test_a_rejected_score_that_changes_only_the_picks_that_follow_is_a_violation() -> None:
    report = check_sampler(MovesOnFirst)

    [violation] = report.violations
    assert violation.check == "bad-scores"
    assert "raised ValueError, yet the picks that followed were [" in violation.message
    assert "on an instance that made the same picks and records without it" in violation.message


def test_samplers_that_refuse_bad_scores_cleanly_pass_the_bad_scores_check() -> None:
    for factory in (Counted, RoundRobin):
        report = check_sampler(factory)
        assert report.ok, str(report)
        assert "bad-scores" in report.checks


def test_the_bad_scores_check_is_not_listed_for_a_sampler_that_takes_every_score() -> None:
    class TakesAll(Counted):
        name = "takes-all"

        def record(self, task_id: str, score: float) -> None:
            with self.lock:
                self.trials[task_id] = self.trials.get(task_id, 0) + 1
                self.passes.setdefault(task_id, 0)

    report = check_sampler(TakesAll)

    assert report.ok, str(report)
    assert "bad-scores" not in report.checks  # nothing refused: nothing it could observe
    assert [note for note in report.notes if note.startswith("bad scores: record() accepted")]


class DropsSolved:
    """Takes a solved task out of the list it is given: only once something has passed."""

    name = "drops-solved"

    def __init__(self) -> None:
        self.solved: set[str] = set()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        if isinstance(keys, list):
            for key in [key for key in keys if key in self.solved][: len(keys) - 1]:
                keys.remove(key)
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        if check_score(task_id, score) >= 0.999:
            self.solved.add(task_id)


def test_a_pick_that_mutates_its_shard_only_after_a_pass_is_caught() -> None:
    report = check_sampler(DropsSolved)

    [violation] = [v for v in report.violations if v.check == "keys-unchanged"]
    assert violation.message.startswith(
        "pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 1), made after 1 record (the last "
        "record('task-0', 1.0)), mutated the shard it was given: 12 keys became 11, removed "
        "['task-0']; copy it"
    )


class DropsSolvedWhenRecorded(DropsSolved):
    """Keeps the list it was given and takes a solved task out of it in record()."""

    name = "drops-solved-when-recorded"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.keys = keys
        return check_keys(keys)[0]

    def record(self, task_id: str, score: float) -> None:
        if check_score(task_id, score) >= 0.999:
            self.keys.remove(task_id)  # type: ignore[attr-defined]  # the list pick() kept


def test_a_record_that_mutates_the_shard_a_pick_kept_is_blamed_not_the_next_pick() -> None:
    # The next pick was blamed for it, "made after 1 record", though it changed nothing.
    report = check_sampler(DropsSolvedWhenRecorded)

    [violation] = [v for v in report.violations if v.check == "keys-unchanged"]
    assert violation.message == (
        "record('task-0', 1.0), after pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 0), "
        "mutated the shard that pick was given: 12 keys became 11, removed ['task-0']; keep a "
        "copy of the shard (list(keys)), not the list evolve() passes"
    )


class Unlocked:
    """Conforms, but has no stats(): the kit notes what it could not observe."""

    name = "unlocked"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


def test_the_pytest_fixture_warns_each_note_as_a_conformance_note(sampler_conformance) -> None:  # type: ignore[no-untyped-def]
    with pytest.warns(testing.ConformanceNote) as warned:
        report = sampler_conformance(Unlocked)

    assert report.ok
    assert [str(warning.message) for warning in warned] == [
        f"unlocked: {note}" for note in report.notes
    ]
    assert all(warning.filename == __file__ for warning in warned)  # the test's own line


def test_the_pytest_fixture_shows_notes_in_the_warnings_summary_and_passes(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        from agentdescent_sampling.plugin import check_keys, check_score

        class Unlocked:
            name = "unlocked"
            def pick(self, keys, round_index):
                return check_keys(keys)[0]
            def record(self, task_id, score):
                check_score(task_id, score)

        def test_conforms(sampler_conformance):
            sampler_conformance(Unlocked)
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*warnings summary*",
            "*ConformanceNote: unlocked: threads and instances-apart: lost records could not*",
        ]
    )


def test_notes_made_errors_fail_the_test_with_every_note_not_the_first_alone(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        from agentdescent_sampling.plugin import check_keys

        class Unchecked:  # no stats(), and record() takes any score: two notes
            name = "unchecked"
            def pick(self, keys, round_index):
                return check_keys(keys)[0]
            def record(self, task_id, score):
                pass

        def test_conforms(sampler_conformance):
            sampler_conformance(Unchecked)
        """
    )
    result = pytester.runpytest_subprocess(
        "-W", "error::agentdescent_sampling.testing.ConformanceNote"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ConformanceNote: unchecked: threads and instances-apart: lost records could not*",
            "*unchecked: bad scores: record() accepted nan, inf, -0.5, 1.5, *",
        ]
    )
    # Named as the filter names it, not by the kit's private module that defines it.
    assert "agentdescent_sampling.testing.ConformanceNote: unchecked" in result.stdout.str()
    assert "testing._" not in result.stdout.str()


def test_the_pytest_fixture_given_an_instance_fails_with_the_fix_alone(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        from agentdescent_sampling import RoundRobin

        def test_conforms(sampler_conformance):
            sampler_conformance(RoundRobin())
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*pass the class (sampler_conformance(RoundRobin))*"])
    assert "Traceback" not in result.stdout.str()
    assert re.search(r"testing[/\\]_\w+\.py", result.stdout.str()) is None


def test_the_pytest_fixture_fails_a_sampler_it_cannot_build_with_the_message_alone(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        from agentdescent_sampling.plugin import check_keys, check_score

        class Sized:
            name = "sized"
            def __init__(self, size: int):
                self.size = size
            def pick(self, keys, round_index):
                return check_keys(keys)[0]
            def record(self, task_id, score):
                check_score(task_id, score)

        def test_conforms(sampler_conformance):
            sampler_conformance(Sized)
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*InvalidSamplerConfig: sampler 'sized': missing required parameter 'size'*"]
    )
    assert "Traceback" not in result.stdout.str()
    # None of the kit's own frames, whichever of its modules.
    assert re.search(r"testing[/\\]_\w+\.py", result.stdout.str()) is None


def test_the_pytest_fixture_fails_a_value_a_class_refuses_as_a_config_error_not_a_violation(
    pytester: pytest.Pytester,
) -> None:
    # sampler_conformance(MySampler, epsilon=2) was "1 violation(s) of the sampler contract",
    # where the same value given by name is the config's error, as the docs say of both.
    pytester.makepyfile(
        """
        import attrs
        from agentdescent_sampling.plugin import check_pick, check_score, number_in

        @attrs.define
        class CoolPick:
            name = "cool-pick"
            epsilon: float = attrs.field(default=0.1, validator=number_in(0.0, 1.0))
            def pick(self, keys, round_index):
                keys, _ = check_pick(keys, round_index)
                return keys[0]
            def record(self, task_id, score):
                check_score(task_id, score)

        def test_conforms(sampler_conformance):
            sampler_conformance(CoolPick, epsilon=2)
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*InvalidSamplerConfig: cool-pick: CoolPick(epsilon=2) refused a value given: "
         "ValueError: CoolPick(epsilon=2): expected a finite number in [[]0, 1]*"]
    )  # fmt: skip
    assert "violation(s) of the sampler contract" not in result.stdout.str()


class CopiesWithDotCopy:
    """Copies its shard with keys.copy(), which a tuple does not have."""

    name = "copies-with-dot-copy"
    thread_safe = False

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        check_keys(keys)
        order = keys.copy()  # type: ignore[attr-defined]
        order.sort()
        return str(order[0])

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


def test_a_pick_that_cannot_take_a_tuple_shows_the_tuple_and_says_keys_may_be_one() -> None:
    [violation] = check_sampler(CopiesWithDotCopy).violations

    assert violation.check == "pick-returns-a-member"
    assert violation.message.startswith(
        "pick(('task-0', 'task-1', 'task-2', 'task-3', ...), 0) raised AttributeError: 'tuple' "
        "object has no attribute 'copy'"
    )
    assert violation.message.endswith(
        "; keys may be any sequence of task ids, a tuple too, so read it without changing it, "
        "and copy it with list(keys) to sort or change the copy"
    )


def test_a_non_member_from_a_tuple_is_shown_with_the_tuple_it_was_given() -> None:
    class ShoutsAtTuples(Unlocked):
        name = "shouts-at-tuples"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            first = check_keys(keys)[0]
            return first.upper() if isinstance(keys, tuple) else first

    [violation] = check_sampler(ShoutsAtTuples).violations

    assert violation.message == (
        "pick(('task-0', 'task-1', 'task-2', 'task-3', ...), 0) returned 'TASK-0' ('task-0' "
        "changed: return a key as it is given, as the engine looks it up), which is not in the "
        "tuple it was given"
    )


class SeedsTheRandomModule:
    """Seeds the random module's generator in __init__, which every instance shares."""

    name = "seeds-the-random-module"

    def __init__(self, seed: int = 0) -> None:
        random.seed(seed)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return random.choice(check_keys(keys))

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


def test_a_sampler_that_seeds_the_random_module_in_init_picks_differently_from_its_twin() -> None:
    report = check_sampler(SeedsTheRandomModule)

    assert [violation.check for violation in report.violations] == ["seeds"]
    message = report.violations[0].message
    assert message.startswith(
        "two instances with seed=0 picked differently (and so did two with seed=12345), built "
        "together and called in turn"
    )
    assert "random.Random(seed)" in message


class ParticipatesLate(SeedsTheRandomModule):
    """Picks in order for its first ten picks, then draws from the shared random module."""

    name = "participates-late"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.picks = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.picks += 1
        return check_keys(keys)[0] if self.picks <= 10 else super().pick(keys, round_index)


def test_a_seeds_violation_shows_the_picks_from_where_the_twins_part() -> None:
    # It showed the first eight of each, the same list twice when they part later.
    message = check_sampler(ParticipatesLate).violations[0].message

    shown = re.search(r"from pick (\d+) on: (\[.*?\]) vs (\[.*?\]);", message)
    assert shown is not None, message
    assert int(shown[1]) > 10
    assert shown[2] != shown[3]


class SharedInClass:
    """Keeps what it learns in a class attribute, and has no stats() or state_dict()."""

    name = "shared-in-class"
    tried: ClassVar[dict[str, int]] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return min(check_keys(keys), key=lambda key: self.tried.get(key, 0))

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        self.tried[task_id] = self.tried.get(task_id, 0) + 1


def test_the_instances_check_says_when_it_could_not_run() -> None:
    report = check_sampler(SharedInClass)

    assert "instances-apart" not in report.checks
    [note] = [note for note in report.notes if "instances-apart" in note]
    assert (
        "with no state_dict() either, whether records on one instance change what another "
        "learned (a class attribute or a mutable default argument shares it) could not be seen"
    ) in note
    assert f"note: {note}" in str(report)


class IndexOverflow(Unlocked):
    """keys[round_index] with no modulo: IndexError once the round passes the shard's size."""

    name = "index-overflow"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[round_index]


def test_one_exception_is_reported_once_not_again_by_each_later_check() -> None:
    report = check_sampler(IndexOverflow)

    [violation] = report.violations
    assert violation.check == "pick-returns-a-member"
    assert " raised IndexError: " in violation.message


class ReturnsAnIndex(Unlocked):
    """Returns the index of the task it chose, not the task."""

    name = "returns-an-index"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return round_index % len(check_keys(keys))  # type: ignore[return-value]


def test_a_non_member_is_reported_by_the_members_check_and_not_blamed_on_a_later_one() -> None:
    report = check_sampler(ReturnsAnIndex)

    assert {violation.check for violation in report.violations} == {"pick-returns-a-member"}
    assert "record-outside-the-shard" in report.checks  # it ran, and reported nothing new


def test_a_pick_of_the_task_recorded_outside_the_shard_is_still_that_checks_violation() -> None:
    class PicksTheLastRecorded(Unlocked):
        name = "picks-the-last-recorded"
        last = ""

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return self.last if self.last.startswith("a-task") else check_keys(keys)[0]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)
            self.last = task_id

    [violation] = check_sampler(PicksTheLastRecorded).violations

    assert violation.check == "record-outside-the-shard"
    assert "returned 'a-task-from-another-shard', the task recorded" in violation.message


class SharedCounts(Counted):
    """Its counts live in class attributes: every instance's stats() holds every record."""

    name = "shared-counts"
    trials: ClassVar[dict[str, int]] = {}  # type: ignore[misc]
    passes: ClassVar[dict[str, int]] = {}  # type: ignore[misc]
    lock: ClassVar[threading.Lock] = threading.Lock()  # type: ignore[misc]

    def __init__(self) -> None:
        pass


def test_stats_that_count_other_instances_records_get_no_advice_to_rename_them() -> None:
    report = check_sampler(SharedCounts)

    assert [violation.check for violation in report.violations] == ["instances-apart"]
    assert not [note for note in report.notes if "give the method another name" in note]


class StatsDividesByTrials(Counted):
    """stats() divides by the trials made: ZeroDivisionError on a fresh instance."""

    name = "stats-divides-by-trials"

    def stats(self) -> dict[str, tuple[int, int]]:
        counted = super().stats()
        _ = 1 / sum(trials for _, trials in counted.values())
        return counted


def test_a_stats_that_raises_on_a_fresh_instance_is_filed_under_its_own_check() -> None:
    report = check_sampler(StatsDividesByTrials)

    [violation] = report.violations
    assert violation.check == "stats"
    assert "stats" in report.checks
    assert violation.message.startswith("on a fresh instance, stats() raised ZeroDivisionError")


def test_a_non_member_picked_from_every_kind_of_shard_is_one_violation_naming_each_pick() -> None:
    [violation] = check_sampler(ReturnsAnIndex).violations

    assert violation.check == "pick-returns-a-member"
    assert violation.message == (
        "pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 0) returned 0 (an int, not a task "
        "id), which is not in the list it was given; so did pick(('task-0', 'task-1', 'task-2', "
        "'task-3', ...), 0), returning 0, and pick(['only-task'], 0), returning 0, and "
        "pick(['HumanEval/0', 'Dates-Train', 'task 2', 'tâche-3', ...], 0), returning 0"
    )


def test_a_sampler_with_neither_stats_nor_state_is_told_to_add_stats_once() -> None:
    report = check_sampler(Unlocked)

    [note] = [note for note in report.notes if "stats()" in note]
    assert note.startswith(
        "threads and instances-apart: lost records could not be observed, because unlocked has "
        "no stats(); only exceptions and non-members under 16 threads were checked; and with no "
        "state_dict() either, whether records on one instance change what another learned"
    )
    assert note.count("Add stats()") == 1
    assert "instances-apart" not in report.checks


class PlainUnannotated(Unlocked):
    """A plain __init__ whose parameters have defaults and no annotations, and are not checked."""

    name = "plain-unannotated"

    def __init__(self, epsilon=0.1, window=3, label="x", fast=False):  # type: ignore[no-untyped-def]  # the case under test
        self.epsilon, self.window, self.label, self.fast = epsilon, window, label, fast


class PlainUnannotatedChecked(PlainUnannotated):
    """The same parameters, unannotated, checked as they are set."""

    name = "plain-unannotated-checked"

    def __init__(self, epsilon=0.1, window=3, label="x", fast=False):  # type: ignore[no-untyped-def]  # the case under test
        if not isinstance(epsilon, float) or not isinstance(window, int):
            raise TypeError("epsilon must be a float and window an int")
        super().__init__(epsilon, window, label, fast)


def test_unannotated_parameters_defaulting_to_a_number_that_accept_a_string_get_a_note() -> None:
    report = check_sampler(PlainUnannotated)

    [note] = [note for note in report.notes if note.startswith("parameters:")]
    assert note.startswith(
        "parameters: epsilon, window, defaulting to a number, accepted the string 'not-a-number'"
    )  # not label (a str) nor fast (a bool): what a default of theirs shows is no number
    assert "(plain-unannotated:epsilon=abc) passes create()" in note
    assert "in a plain __init__ a check that raises TypeError or ValueError" in note
    checked = check_sampler(PlainUnannotatedChecked).notes
    assert not [note for note in checked if note.startswith("parameters:")]


def test_a_parameters_note_on_declared_and_undeclared_numbers_says_both() -> None:
    class HalfAnnotated(PlainUnannotated):
        name = "half-annotated"

        def __init__(self, epsilon: float = 0.1, window=3):  # type: ignore[no-untyped-def]  # the case under test
            super().__init__(epsilon, window)

    [note] = [n for n in check_sampler(HalfAnnotated).notes if n.startswith("parameters:")]
    assert note.startswith("parameters: epsilon, window, declared a number or defaulting to one,")


class TakesAShare(Unlocked):
    """Picks the first of a random share of the shard; takes any share, and a negative one
    breaks its first pick."""

    name = "takes-a-share"

    def __init__(self, share: float = 0.5, seed: int = 0) -> None:
        self.share = share
        self.rng = random.Random(seed)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        keys = check_keys(keys)
        return min(self.rng.sample(list(keys), math.ceil(len(keys) * self.share)))


def test_a_value_that_breaks_the_first_pick_is_named_with_both_fixes() -> None:
    [violation] = check_sampler(TakesAShare, share=-1, seed=1).violations

    assert violation.check == "pick-and-record"
    assert violation.message.startswith(
        "pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 0) raised ValueError: Sample "
        "larger than population or is negative (at "
    )
    assert (
        "; it was built with share=-1 without complaint, and at share's default, 0.5, it picks "
        "and records. If share takes that value, make pick() and record() work with it; if "
        "not, refuse it in __init__ (an attrs validator, or a check that raises TypeError or "
        "ValueError), so that create() names the parameter"
    ) in violation.message
    assert "seed" not in violation.message  # left at its default, the pick still fails


def test_a_first_pick_that_fails_whatever_the_parameters_blames_none_of_them() -> None:
    class ShareOfNothing(TakesAShare):
        name = "share-of-nothing"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return min(self.rng.sample([], 1))

    [violation] = check_sampler(ShareOfNothing, share=-1, seed=1).violations

    assert violation.check == "pick-and-record"
    assert violation.message.endswith("; every other check picks and records, so none ran")
    assert "share" not in violation.message
    assert "refuse it" not in violation.message


class FailsOnceAProcess(TakesAShare):
    """A first pick that fails once, whatever the parameters: a cache not warmed yet."""

    name = "fails-once"
    warmed: ClassVar[list[bool]] = []

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if not self.warmed:
            self.warmed.append(True)
            raise RuntimeError("cache not warmed")
        return super().pick(keys, round_index)


def test_a_first_pick_that_fails_once_whatever_the_parameters_blames_none_of_them() -> None:
    FailsOnceAProcess.warmed.clear()
    [violation] = check_sampler(FailsOnceAProcess, share=0.5, seed=1).violations

    assert "RuntimeError: cache not warmed" in violation.message
    assert "it was built with" not in violation.message  # given back, seed=1 works too


@pytest.mark.parametrize("at_default", ["exits", "hangs"])
def test_a_try_at_a_default_that_exits_or_hangs_leaves_the_failure_as_it_was(
    at_default: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(testing, "CHECK_SECONDS", 2.0)
    release = threading.Event()

    class BrokenBothWays(TakesAShare):
        name = "broken-both-ways"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            if self.share != 0.5:
                raise ValueError("the share given breaks it")
            if at_default == "exits":
                raise SystemExit(3)
            release.wait(30)  # a hang the test ends
            return keys[0]

    try:
        [violation] = check_sampler(BrokenBothWays, share=0.25).violations
    finally:
        release.set()
    # Reported as it was, not as a check that did not finish: the tries stop at half its time.
    assert violation.message.startswith("pick(['task-0', 'task-1', 'task-2', 'task-3', ...], 0) "
                                        "raised ValueError: the share given breaks it")  # fmt: skip
    assert violation.message.endswith("; every other check picks and records, so none ran")
    assert "it was built with" not in violation.message


class PassOrFailOnly(Counted):
    """Refuses a score between 0 and 1, as one written for pass and fail alone does."""

    name = "pass-or-fail-only"

    def record(self, task_id: str, score: float) -> None:
        if score not in (0.0, 1.0):
            raise ValueError(f"binary scores only, got {score}")
        super().record(task_id, score)


def test_a_record_that_refuses_a_graded_score_is_one_violation_saying_scores_are_graded() -> None:
    # It was reported again by record-outside-the-shard, as if ids from other shards were the
    # bug, and neither said 0.5 is a score to take.
    report = check_sampler(PassOrFailOnly)
    assert len(report.violations) == 1, report
    (violation,) = report.violations
    assert "raised ValueError: binary scores only, got 0.5" in violation.message
    assert violation.message.endswith(
        "; a score is any number in [0, 1], 0.5 too (a graded reward), and record() must take "
        "each: a sampler that counts passes compares it with a pass_threshold"
    )


class ChangesTheKey(Counted):
    """Returns the key it picked changed by ``change``, as it counts it."""

    @staticmethod
    def change(key: str) -> str:
        return key

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return self.change(super().pick(keys, round_index))


@pytest.mark.parametrize(
    ("change", "call", "returned"),
    [
        # Every shard of the kit was lower-case ASCII ids, which a lower-cased pick returns as
        # they are; the engine then looks up 'humaneval/0' and fails mid-run.
        (str.lower, 0, "'humaneval/0' ('HumanEval/0' changed"),
        # Every id of the kit's shards was stripped already: a stripped pick passed every check.
        (str.strip, 5, "'spaced-5' (' spaced-5 ' changed"),
    ],
    ids=["lower-cased", "stripped"],
)
def test_a_pick_that_changes_the_key_is_caught_on_ids_benchmarks_use(
    change: Callable[[str], str], call: int, returned: str
) -> None:
    changing = {"name": "changes-it", "change": staticmethod(change)}
    changes = type("ChangesIt", (ChangesTheKey,), changing)
    [violation] = check_sampler(changes).violations
    assert violation.check == "pick-returns-a-member"
    assert violation.message == (
        f"pick(['HumanEval/0', 'Dates-Train', 'task 2', 'tâche-3', ...], {call}) returned "
        f"{returned}: return a key as it is given, as the engine looks it up), which is not in "
        f"the list it was given"
    )


class UncheckedFlag(Counted):
    """Takes a flag it never checks: the string "false" is true in its if."""

    name = "unchecked-flag"

    def __init__(self, greedy: bool = False) -> None:
        super().__init__()
        self.greedy = greedy


def test_a_flag_that_takes_the_string_false_is_noted() -> None:
    # A config's greedy = "false" turned the option on, and the kit said nothing.
    report = check_sampler(UncheckedFlag)
    assert not report.violations
    [note] = [note for note in report.notes if note.startswith("flags:")]
    assert note.startswith(
        "flags: greedy accepted the string 'false', which an if reads as true, so a config's "
        'quoted "false" (unchecked-flag:greedy="false") turns it on.'
    )
    assert "agentdescent_sampling.plugin.boolean()" in note


class TakesAnyKeyword(Counted):
    """Takes ``**kwargs``, so a misspelt parameter is swallowed."""

    name = "takes-any-keyword"

    def __init__(self, epsilon: float = 0.1, **kwargs: object) -> None:
        super().__init__()
        self.epsilon = epsilon


def test_a_sampler_taking_any_keyword_is_noted_that_a_misspelt_parameter_is_swallowed() -> None:
    # check_sampler(S, epsilonn=0.3) passed with no word, and create() took the typo too.
    report = check_sampler(TakesAnyKeyword, epsilonn=0.3)
    assert not report.violations
    [note] = [note for note in report.notes if "**kwargs" in note]
    assert note.startswith(
        "parameters: takes-any-keyword takes any keyword (**kwargs), so the parameter given "
        "here that it does not name, epsilonn=0.3, was taken silently, as a config's typo is, "
        "and the sampler runs without it."
    )
    [note] = [note for note in check_sampler(TakesAnyKeyword).notes if "**kwargs" in note]
    assert "a config's misspelt parameter (takes-any-keyword:x=1) is taken silently" in note
    assert not [note for note in check_sampler(Counted).notes if "**kwargs" in note]


class HandsItsKeywordsOn(Counted):
    """Takes ``**kwargs`` and hands them to a class that names its parameters."""

    name = "hands-its-keywords-on"

    def __init__(self, **kwargs: object) -> None:
        super().__init__()
        self.base = UncheckedFlag(**kwargs)  # type: ignore[arg-type]


def test_a_sampler_handing_its_keywords_to_a_class_that_names_them_gets_no_such_note() -> None:
    # Its typos are refused by the class it hands them to, yet it was told a given greedy=True
    # "was taken silently, and the sampler runs without it".
    report = check_sampler(HandsItsKeywordsOn, greedy=True)
    assert not [note for note in report.notes if "**kwargs" in note]


class StateWithoutItsName:
    """Saves its statistics alone, without the 'sampler' and 'version' check_state() reads."""

    name = "state-without-its-name"

    def __init__(self) -> None:
        self.records = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        self.records += 1

    def state_dict(self) -> dict[str, Any]:
        return {"records": self.records}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.records = check_state(state, self.name, 1)["records"]


def test_a_state_without_the_keys_check_state_reads_is_told_to_the_author_as_the_fix() -> None:
    # The kit passed on the user's advice alone ("give the state ... or start it fresh").
    (violation,) = check_sampler(StateWithoutItsName).violations
    assert violation.check == "state"
    assert "give the state a state-without-its-name sampler's state_dict() returned" in (
        violation.message
    )
    assert violation.message.endswith(
        "; state_dict() must return what check_state() reads: 'sampler' (its name) and "
        "'version' beside the statistics"
    )


class DropsOutsideItsShard(Counted):
    """Keeps only the scores of tasks in the shard it last picked from, as one that keys its
    statistics by the current shard does."""

    name = "drops-outside-its-shard"

    def __init__(self) -> None:
        super().__init__()
        self.shard: frozenset[str] = frozenset()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.shard = frozenset(keys)
        return super().pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        if task_id in self.shard:
            super().record(task_id, score)


class CountsOutsideItsShardTwice(DropsOutsideItsShard):
    name = "counts-outside-its-shard-twice"

    def record(self, task_id: str, score: float) -> None:
        super().record(task_id, score)
        if task_id not in self.shard:
            Counted.record(self, task_id, score)
            Counted.record(self, task_id, score)


class DropsOutsideItsShardServed(DropsOutsideItsShard):
    name = "drops-outside-its-shard-served"
    thread_safe = False


class DropsTasksOfAnEarlierShard(DropsOutsideItsShard):
    """Keeps a task it never saw in a shard, but drops one of a shard it picked from before
    and not last: the threads, recording tasks of one another's shards, find it."""

    name = "drops-tasks-of-an-earlier-shard"
    thread_safe = False

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.seen.update(keys)
        return super().pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        if task_id in self.shard or task_id not in self.seen:
            Counted.record(self, task_id, score)


def test_a_record_outside_the_shard_that_is_silently_dropped_is_a_violation() -> None:
    # It passed every check: record-outside-the-shard looked only for an exception.
    report = check_sampler(DropsOutsideItsShard)
    (outside,) = [v for v in report.violations if v.check == "record-outside-the-shard"]
    assert outside.message.startswith(
        "record('a-task-from-another-shard', 0.5) of a task outside the current shard was "
        "not counted: stats() counts 0 trials more, not 1"
    )


def test_a_record_outside_the_shard_counted_twice_is_told_so_not_that_it_was_dropped() -> None:
    report = check_sampler(CountsOutsideItsShardTwice)
    (outside,) = [v for v in report.violations if v.check == "record-outside-the-shard"]
    assert outside.message.startswith(
        "record('a-task-from-another-shard', 0.5) of a task outside the current shard counted "
        "2 times: stats() counts 2 trials more, not 1"
    )


def test_records_lost_by_a_sampler_served_one_call_at_a_time_are_not_blamed_on_a_race() -> None:
    # It was told to "guard the statistics with a lock, or declare thread_safe = False",
    # which it had declared.
    report = check_sampler(DropsTasksOfAnEarlierShard)
    (threads,) = report.violations
    assert threads.check == "threads"
    assert "though it was served one call at a time (thread_safe = False)" in threads.message
    assert "so no race did it: record() drops records itself" in threads.message
    assert "guard the statistics with a lock" not in threads.message


@pytest.mark.parametrize(
    "sampler", [DropsOutsideItsShardServed, DropsOutsideItsShard], ids=["served", "locked"]
)
def test_a_record_outside_the_shard_miscounted_is_one_violation_not_one_per_check(
    sampler: type[DropsOutsideItsShard],
) -> None:
    # Its threads record tasks of one another's shards and lose them too: the same fault,
    # told again by the threads check (to a sampler with a lock of its own, as a race).
    report = check_sampler(sampler)
    assert [violation.check for violation in report.violations] == ["record-outside-the-shard"]
