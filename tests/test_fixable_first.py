"""fixable-first spends rollouts where a failure is most likely to teach a fix soon."""

from __future__ import annotations

import copy
import itertools
import json
import math
import random
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from agentdescent_sampling import FixableFirst, StateError, create
from agentdescent_sampling.protocol import short_repr
from agentdescent_sampling.samplers import fixable_first as ff
from agentdescent_sampling.samplers.fixable_first import _Task


def outcomes(sampler: FixableFirst, history: list[tuple[str, float]]) -> FixableFirst:
    """Feed ``history`` through pick and record, as a run would."""
    for task_id, score in history:
        sampler.pick([task_id], 0)
        sampler.record(task_id, score)
    return sampler


class Uncapped(FixableFirst):
    """fixable-first without the re-test cap."""

    _cap_retests = False


class Unguarded(Uncapped):
    """fixable-first without the overdue rule and the re-test cap, for tests of what its
    values say alone."""

    def _overdue(self, size: int) -> Callable[[_Task | None], int]:
        return lambda task: -1


#: Three tasks that passed their first rollout: an untried task is then likely to pass too.
PASSED_FIRST = [("p0", 1.0), ("p1", 1.0), ("p2", 1.0)]


def test_a_task_that_failed_is_retried_before_an_untried_one_that_will_likely_pass() -> None:
    # Counting rollouts alone: priced in calls, the untried task's likely pass costs a third
    # of a failure, and it is worth the band of the best.
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    assert sampler.pick(["u", "a"], 0) == "a"


def test_an_untried_task_worth_half_a_failed_one_goes_first_as_in_round_robin() -> None:
    # With one outcome seen, a failure: an untried task is likely to fail as well, and worth
    # more than half of the failed task's retry, so it goes first, having never been picked.
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    assert sampler.pick(["a", "u"], 0) == "u"
    sampler.record("u", 1.0)
    assert sampler.pick(["a", "u"], 1) == "a"


def test_once_rounds_end_a_task_that_failed_waits_for_the_end_of_its_round() -> None:
    keys = ["a", "b"]
    unwired = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    assert unwired.pick(keys, 0) == "a"  # not told that rounds end: retried at once
    sampler = FixableFirst(failure_cost=1)
    sampler.end_round(0)
    outcomes(sampler, [*PASSED_FIRST, ("a", 0.0)])
    assert sampler.pick(keys, 0) == "b"  # a re-run before the merge tests the same artifact
    sampler.record("b", 1.0)
    sampler.end_round(0)
    assert sampler.pick(keys, 1) == "a"


def test_a_held_task_is_picked_when_the_others_are_in_flight_which_still_wait() -> None:
    sampler = FixableFirst()
    sampler.end_round(0)
    outcomes(sampler, [("a", 0.0)])
    assert sampler.pick(["a"], 0) == "a"  # alone in its shard
    sampler.record("a", 0.0)
    assert sampler.pick(["a", "b"], 0) == "b"  # b is now in flight
    assert sampler.pick(["a", "b", "c"], 0) == "c"
    assert sampler.pick(["a", "b", "c"], 0) == "a"  # held, but the others are in flight


def test_rounds_no_longer_end_once_no_round_has_ended_for_two_cycles_of_picks() -> None:
    # A sampler wired for a synchronous run, then for an asynchronous one (or its state
    # resumed there): no round ends again, and a task that failed must not wait for one.
    keys = ["a", "b"]
    sampler = FixableFirst(failure_cost=1)
    sampler.end_round(0)
    outcomes(sampler, [*PASSED_FIRST, ("a", 0.0)])
    seen = []
    for round_index in range(12):
        seen.append(sampler.pick(keys, round_index))
        sampler.record(seen[-1], 1.0 if seen[-1] == "b" else 0.0)
    assert seen[0] == "b"  # held while a round may still end
    assert "a" in seen  # 4 tasks: a round that ran 8 picks without ending is no round


def test_a_round_longer_than_two_cycles_keeps_its_failures_waiting_to_its_end() -> None:
    # Many workers on one shared shard make a round of more picks than two cycles: the
    # hold lasts as long as rounds do, so the failure waits for the round's merge.
    keys = ["a", "b", "c"]
    sampler = FixableFirst(failure_cost=1)

    def round_of(picks: int) -> list[str]:
        seen = []
        for round_index in range(picks):
            seen.append(sampler.pick(keys, round_index))
            sampler.record(seen[-1], 0.0 if seen[-1] == "a" else 1.0)
        sampler.end_round(0)
        return seen

    round_of(10)
    assert round_of(10).count("a") == 1


def test_a_restored_sampler_still_knows_that_rounds_end() -> None:
    first = FixableFirst()
    first.end_round(0)
    resumed = FixableFirst()
    resumed.load_state_dict(first.state_dict())
    outcomes(resumed, [("a", 0.0)])
    assert resumed.pick(["a", "b"], 1) == "b"


def test_a_task_that_passed_waits_behind_untried_tasks() -> None:
    sampler = outcomes(FixableFirst(), [("a", 1.0)])
    assert sampler.pick(["a", "u"], 0) == "u"


def test_a_task_whose_failures_outrun_every_fix_seen_is_dropped() -> None:
    fixed_at_two = [(f"fix{i}", score) for i in range(4) for score in (0.0, 0.0, 1.0, 1.0)]
    sampler = outcomes(FixableFirst(), fixed_at_two + [("hopeless", 0.0)] * 6)
    assert sampler.pick(["hopeless", "u"], 0) == "u"
    # Seventeen picks among five tasks: by the overdue rule alone, "u" would go first.
    sampler = outcomes(Unguarded(), [*fixed_at_two, ("young", 0.0)])
    assert sampler.pick(["u", "young"], 0) == "young"  # its second failure may fix it


def _after_a_slow_fix(seen_by: str, fixed_at: int | None, failures: int) -> str:
    """What is picked, "passing" or "deep" (``failures`` failures), once a task's fix was seen
    at its ``fixed_at``-th failure (``None``: that failure fixed nothing) by ``seen_by``."""
    sampler = outcomes(Uncapped(), [("slow", 0.0)] * (fixed_at or 5))
    if seen_by == "a-pass-after-it":
        outcomes(sampler, [("slow", 0.0 if fixed_at is None else 1.0)])
    else:
        gain = 0.0 if fixed_at is None else 1.0
        sampler.evidence("slow", gain, seen_by.startswith("a-committed"))
    outcomes(sampler, [("deep", 0.0)] * failures + [("passing", 1.0)])
    return sampler.pick(["passing", "deep"], 0)


#: How a fix of a task is seen: from outcomes, its pass after failing; wired, its card's
#: self-verify re-run passing, whether the gate took the fix or refused it.
SEEN_BY = ["a-pass-after-it", "a-committed-verified-card", "a-refused-verified-card"]


def _retried_through(seen_by: str, fixed_at: int) -> int:
    """The most failures a task may have and still be retried after a fix seen at the
    ``fixed_at``-th failure: one past the prior's flat part, which a pass or a refused fix
    also extends as a fix seen there (a committed card's task is not counted as flipped)."""
    return fixed_at + (seen_by != "a-committed-verified-card")


@pytest.mark.parametrize("seen_by", SEEN_BY)
@pytest.mark.parametrize("fixed_at", [4, 5, 6])
def test_past_a_fix_seen_at_a_fourth_failure_or_later_the_prior_stays_flat_through_it(
    seen_by: str, fixed_at: int
) -> None:
    # A fix seen at the fourth failure or later makes that failure count like the first two:
    # a task failing that long is retried one failure further than when the prior only moved
    # out to put its step there (rules taking up to six failures were found later; BENCHMARKS.md,
    # "The prior flat through the deepest fix seen"), and no further.
    through = _retried_through(seen_by, fixed_at)
    assert _after_a_slow_fix(seen_by, fixed_at, through) == "deep"
    assert _after_a_slow_fix(seen_by, fixed_at, through + 1) == "passing"


@pytest.mark.parametrize("seen_by", SEEN_BY)
def test_a_fix_seen_at_a_third_failure_or_none_leaves_the_prior_where_it_was(
    seen_by: str,
) -> None:
    # The prior expects fixes up to a third failure: one seen there moves nothing, and a task
    # is retried through one failure fewer than past a fix at a fourth failure or later.
    through = _retried_through(seen_by, 3) - 1
    assert _after_a_slow_fix(seen_by, 3, through) == "deep"
    assert _after_a_slow_fix(seen_by, 3, through + 1) == "passing"
    assert _after_a_slow_fix(seen_by, None, 3) == "passing"  # its failures outrun the prior's


def test_one_pass_after_thirty_failures_moves_the_prior_out_a_bounded_way() -> None:
    history = [("lucky", 0.0)] * 30 + [("lucky", 1.0)] + [("deep", 0.0)] * 10
    sampler = outcomes(FixableFirst(), history)
    assert sampler.pick(["untried", "deep"], 0) == "untried"


def _picks_of_a_never_and_an_always_passing_task(failure_cost: float) -> list[str]:
    sampler = outcomes(FixableFirst(failure_cost=failure_cost), [("always", 1.0)] * 3)
    picks: list[str] = []
    for round_index in range(4):
        picks.append(sampler.pick(["never", "always"], round_index))
        sampler.record(picks[-1], 0.0 if picks[-1] == "never" else 1.0)
    return picks


def test_a_task_that_only_fails_is_set_aside_sooner_when_a_failure_costs_more_calls() -> None:
    assert FixableFirst().failure_cost == 3.0  # a rollout, a proposal, a self-verify re-run
    # Counting rollouts alone, its fourth failure is still worth twice a re-test of the task
    # that passed three times; counting calls, the re-test (one call) is worth as much as half
    # a failure (three: a rollout, a proposal, a self-verify re-run) less likely to teach
    # than the first three were, and goes first, having waited longer.
    assert _picks_of_a_never_and_an_always_passing_task(1) == ["never"] * 4
    assert _picks_of_a_never_and_an_always_passing_task(3) == ["never"] * 3 + ["always"]


def _picks_around_a_hopeless_task(
    sampler: FixableFirst, told: bool, before: tuple[float, ...] = (), score: float = 0.0
) -> list[str]:
    """Forty picks among "h", which scored ``before`` and then failed eight times with no fix
    seen, and scores ``score`` from then on, and three tasks that pass; ``told``: each failure
    of "h" is told, as ``wire()`` tells a card, to have made a note whose self-verify re-run
    failed."""
    keys = ["h", "p1", "p2", "p3"]
    history = [*before, *[0.0] * 8]
    picked: list[str] = []
    for round_index in range(len(history) + 40):
        alone = round_index < len(history)
        picked.append(sampler.pick(["h"] if alone else keys, round_index))
        h_score = history[round_index] if alone else score
        sampler.record(picked[-1], h_score if picked[-1] == "h" else 1.0)
        if told and picked[-1] == "h" and h_score < 1.0:
            sampler.evidence("h", 0.0, committed=False)
    return picked[len(history) :]


def _gaps(picked: list[str]) -> list[int]:
    at = [index for index, key in enumerate(picked) if key == "h"]
    return [later - earlier for earlier, later in itertools.pairwise(at)]


def test_no_task_waits_more_than_two_round_robin_cycles() -> None:
    # Told by the engine that each failure made nothing: by its values alone, "h" is never
    # retried while the passing tasks are worth a re-test; a fix may still come, so it is
    # retried as soon as more than twice as many picks as there are tasks have gone by.
    assert "h" not in _picks_around_a_hopeless_task(Unguarded(), told=True)
    assert _gaps(_picks_around_a_hopeless_task(Uncapped(), told=True)) == [2 * 4 + 2] * 3
    # With the re-test cap, the passing tasks, re-tested on an unchanged artifact, get no more
    # than round-robin gives them: "h" has its turn every cycle.
    assert _gaps(_picks_around_a_hopeless_task(FixableFirst(), told=True)) == [4] * 9


def test_from_outcomes_alone_a_task_that_has_failed_waits_one_cycle_at_most() -> None:
    # Outcomes do not say whether a fix its failures made was lost at the gate or to a slip
    # of the agent, after which the next fix needs as many failures again: round-robin retries
    # it every cycle, and so does fixable-first, even without the re-test cap.
    assert _gaps(_picks_around_a_hopeless_task(Uncapped(), told=False)) == [4 + 2] * 5
    # So is one that failed after passing (flaky, or broken)...
    broken = _picks_around_a_hopeless_task(Uncapped(), told=False, before=(1.0,))
    assert _gaps(broken) == [4 + 2] * 5
    # ...and one that passes again after its failures: the passes may be luck, not a fix.
    passing = _picks_around_a_hopeless_task(Uncapped(), told=False, before=(1.0,), score=1.0)
    assert _gaps(passing) == [4 + 2] * 5
    # Once a card has come, a task that passes waits two cycles, as any task does.
    told = _picks_around_a_hopeless_task(Uncapped(), told=True, before=(1.0,), score=1.0)
    assert _gaps(told) == [2 * 4 + 2] * 3


def test_from_outcomes_alone_a_task_that_passed_after_failing_is_re_tested_every_cycle() -> None:
    # Its pass may be luck, or a fix the gate then refused: round-robin re-tests it every
    # cycle, and so does fixable-first while no card has said which, however much the six
    # failing tasks beside it are worth.
    sampler = outcomes(FixableFirst(), [("h", 0.0)] * 8)
    keys = ["h", *(f"f{index}" for index in range(6))]
    picked: list[str] = []
    for round_index in range(60):
        picked.append(sampler.pick(keys, round_index))
        sampler.record(picked[-1], 1.0 if picked[-1] == "h" else 0.0)
    assert _gaps(picked) == [7 + 2] * 5


def test_a_passing_task_is_re_tested_within_a_cycle_only_if_the_artifact_changed_since() -> None:
    def pick_after(change: bool) -> str:
        sampler = outcomes(FixableFirst(), [("h", 0.0)] * 8 + [("p", 1.0), ("f", 0.0)])
        if change:
            sampler.evidence("f", 1.0, True)  # a committed fix whose re-run passed
        return sampler.pick(["h", "p"], 0)

    assert pick_after(change=False) == "h"  # "p" passed on this very artifact: as round-robin
    assert pick_after(change=True) == "p"  # a commit since may have broken it
    assert outcomes(Uncapped(), [("h", 0.0)] * 8 + [("p", 1.0)]).pick(["h", "p"], 0) == "p"


def test_a_committed_verified_fix_is_an_artifact_change_from_its_card() -> None:
    sampler = outcomes(FixableFirst(), [("solved", 1.0), ("a", 0.0), ("b", 0.0)])
    before = sampler._values().of(sampler._tasks["solved"])
    sampler.evidence("b", 0.0, True)  # a note that rode into a commit: its re-run failed
    sampler.evidence("a", 1.0, False)  # a fix the gate refused
    assert sampler.state_dict()["changes"] == 0
    sampler.evidence("a", 1.0, True)  # passed its re-run and was committed
    assert sampler.state_dict()["changes"] == 1
    # A task that passed before the commit may have been broken by it: worth more to re-test.
    assert sampler._values().of(sampler._tasks["solved"]) > before
    sampler.record("a", 1.0)  # the pass that confirms the fix is not a second change
    assert sampler.state_dict()["changes"] == 1
    outcomes(sampler, [("b", 1.0)])  # its card said no fix: a pass is luck, not a change
    assert sampler.state_dict()["changes"] == 1
    outcomes(sampler, [("c", 0.0), ("c", 1.0)])  # a flip no card told of: probably a change
    assert sampler.state_dict()["changes"] == 2


@pytest.mark.parametrize("cost", [0.5, math.nan, math.inf, "3"])
def test_a_failure_cost_below_one_or_not_a_number_is_refused(cost: object) -> None:
    with pytest.raises((TypeError, ValueError), match="failure_cost"):
        FixableFirst(failure_cost=cost)  # type: ignore[arg-type]


def test_a_flip_to_passing_counts_as_a_fix_unless_the_task_fails_again() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("a", 1.0), ("a", 1.0)])
    assert sampler.pick(["a", "u"], 0) == "u"
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("a", 1.0), ("a", 0.0), ("p", 1.0)])
    assert sampler.stats()["a"] == (1, 3)
    assert sampler.pick(["p", "a"], 0) == "a"  # failed after passing: known to be fixable


def test_a_task_that_breaks_after_passing_is_kept_in_play() -> None:
    sampler = outcomes(FixableFirst(), [("victim", 1.0), ("victim", 1.0), ("victim", 0.0)])
    sampler = outcomes(sampler, [("solved", 1.0)])
    assert sampler.pick(["solved", "victim"], 0) == "victim"


def test_a_pass_from_before_the_artifact_changed_is_re_tested_first() -> None:
    sampler = outcomes(FixableFirst(), [("new", 1.0), ("old", 1.0)])
    assert sampler.pick(["new"], 0) == "new"  # picked first, so it would win a tie
    assert sampler.pick(["old"], 0) == "old"
    sampler.record("old", 1.0)
    outcomes(sampler, [("fixed", 0.0), ("fixed", 1.0)])  # a flip: the artifact changed
    sampler.record("new", 1.0)  # passed after the change
    assert sampler.pick(["new", "old"], 0) == "old"


def test_ties_go_to_the_task_picked_least_recently_then_the_earliest_key() -> None:
    sampler = FixableFirst()
    first = sampler.pick(["a", "b"], 0)
    sampler.record(first, 1.0)
    second = sampler.pick(["a", "b"], 1)
    sampler.record(second, 1.0)
    assert (first, second) == ("a", "b")
    assert sampler.pick(["a", "b"], 2) == "a"


def test_pass_threshold_decides_what_counts_as_a_pass() -> None:
    sampler = outcomes(FixableFirst(pass_threshold=0.8), [("a", 0.85)])
    assert sampler.stats() == {"a": (1, 1)}
    sampler = outcomes(FixableFirst(), [("a", 0.85)])
    assert sampler.stats() == {"a": (0, 1)}


def run(
    sampler: FixableFirst, seed: int, start: int, stop: int, *, rounds: bool = False
) -> list[str]:
    """Picks on a workload of fixable, hopeless and solved tasks, each with seeded luck.

    A fixable task is fixed by its second rollout's failure. With ``rounds``, every two picks
    make a round, closed with ``end_round`` and the fixes made in it.
    """
    keys = [f"t{i}" for i in range(12)]
    picks = []
    commits = 0
    for step in range(start, stop):
        task = sampler.pick(keys, step)
        kind = int(task[1:]) % 3
        lucky = random.Random(f"{seed}:{step}").random() < 0.3
        trials = sampler.stats().get(task, (0, 0))[1]
        fixed = kind == 0 and trials >= 2
        passed = kind == 2 or fixed or lucky
        commits += kind == 0 and trials == 1 and not passed
        sampler.record(task, 1.0 if passed else 0.0)
        picks.append(task)
        if rounds and step % 2:
            sampler.end_round(commits)
            commits = 0
    return picks


@pytest.mark.parametrize("rounds", [False, True], ids=["outcomes", "with-commits"])
@pytest.mark.parametrize("seed", range(1, 4))
def test_a_saved_and_restored_sampler_picks_as_if_never_stopped(seed: int, rounds: bool) -> None:
    whole = run(FixableFirst(), seed, 0, 200, rounds=rounds)
    first = FixableFirst()
    head = run(first, seed, 0, 24, rounds=rounds)  # 24 picks: the end of a round
    if rounds:
        assert first.state_dict()["credit"], "the stop should leave some credit to save"
        assert first.state_dict()["no_commit"], "and some failures known to have made no commit"
    resumed = FixableFirst()
    resumed.load_state_dict(first.state_dict())
    assert resumed.state_dict() == first.state_dict()
    assert head + run(resumed, seed, 24, 200, rounds=rounds) == whole


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s["tasks"].update({"t0": [1, 0, 2, 0, 3, 0]}),  # streak above passes
        lambda s: s["tasks"].update({"t0": [1, 0, 0, 2, 3, 0]}),  # mixed is not 0 or 1
        lambda s: s["tasks"].update({"t0": [1, 0, 0, 0, 3, s["changes"] + 1]}),  # unseen change
        lambda s: s["tasks"].update({"t0": [1, 0, 0, 0, 3]}),  # a row without "seen"
        lambda s: s.update({"evidence": s["evidence"][:3]}),
        lambda s: s.update({"picks": -1}),
        lambda s: s.update({"changes": 1.5}),
        lambda s: s["params"].update({"pass_threshold": 0.5}),
        lambda s: s.update({"credit": [0.5]}),
        lambda s: s["credit"].update({"nowhere": 0.5}),  # a task the state does not hold
        lambda s: s["credit"].update({"t0": 1.5}),
        lambda s: s["credit"].update({"t0": float("nan")}),
        lambda s: s["credit"].update({t: 0.5 for t, row in s["tasks"].items() if row[2]}),
        # A task that flipped to passing and never failed after: its pass said it is fixed.
        lambda s: s["credit"].update(
            {t: 0.5 for t, row in s["tasks"].items() if row[0] and row[2] and not row[3]}
        ),
        lambda s: s.update({"no_commit": "t0"}),
        lambda s: s["no_commit"].append("nowhere"),
        lambda s: s["no_commit"].append(0),
        lambda s: s["no_commit"].extend(
            t for t, row in s["tasks"].items() if row[2] and not row[3]
        ),
        lambda s: s["no_commit"].extend(t for t, row in s["tasks"].items() if not row[0]),
        lambda s: s["credit"].update(dict.fromkeys(s["no_commit"], 0.5)),
        lambda s: s.update({"refused": [3]}),
        lambda s: s["refused"].update({"nowhere": 1}),
        lambda s: s["refused"].update({t: row[0] + 1 for t, row in s["tasks"].items() if row[0]}),
        lambda s: s["refused"].update({t: 0 for t, row in s["tasks"].items() if row[0]}),
        lambda s: s.update(evidenced=1),
        lambda s: s.update(closed_at="yes"),
        lambda s: s.update(closed_at=s["picks"] + 1),
        lambda s: s.update(longest_round=-1),
        lambda s: s.update(longest_round=s["picks"] + 1),
        lambda s: s.update({"low": [0.5]}),
        lambda s: s["low"].update({"nowhere": 0.5}),
        lambda s: s["low"].update({t: 0.5 for t, row in s["tasks"].items() if row[2]}),
        lambda s: s["low"].update({t: 1.5 for t, row in s["tasks"].items() if not row[2]}),
    ],
    ids=[
        "streak",
        "mixed",
        "seen",
        "short-row",
        "evidence",
        "picks",
        "changes",
        "params",
        "credit-not-a-mapping",
        "credit-unknown-task",
        "credit-above-1",
        "credit-nan",
        "credit-on-a-passing-task",
        "credit-on-a-fixed-task",
        "no-commit-not-a-list",
        "no-commit-unknown-task",
        "no-commit-not-a-task-id",
        "no-commit-on-a-fixed-task",
        "no-commit-on-a-task-that-never-failed",
        "no-commit-on-a-credited-task",
        "refused-not-a-mapping",
        "refused-unknown-task",
        "refused-past-its-failures",
        "refused-at-no-failure",
        "evidenced-not-a-bool",
        "closed-at-not-a-count",
        "closed-at-past-the-picks",
        "longest-round-negative",
        "longest-round-past-the-picks",
        "low-not-a-mapping",
        "low-unknown-task",
        "low-on-a-passing-task",
        "low-above-1",
    ],
)
def test_a_damaged_state_is_refused_and_changes_nothing(damage: object) -> None:
    sampler = FixableFirst()
    run(sampler, 0, 0, 40, rounds=True)  # long enough for a task to be fixed
    before = sampler.state_dict()
    state = sampler.state_dict()
    damage(state)  # type: ignore[operator]
    with pytest.raises(StateError):
        sampler.load_state_dict(state)
    assert sampler.state_dict() == before


def test_a_restored_sampler_still_knows_the_score_of_each_graded_failure() -> None:
    # A self-verify gain is added to the failing score: 0.5 + 0.5 passes, a verified fix.
    keys = ["a", "b", "c", "d"]
    sampler = FixableFirst()
    for _ in keys:
        sampler.record(sampler.pick(keys, 0), 0.5)
    sampler.end_round(0)
    restored = FixableFirst()
    restored.load_state_dict(json.loads(json.dumps(sampler.state_dict())))

    for each in (sampler, restored):
        each.evidence("a", 0.5, True)
    assert restored.state_dict() == sampler.state_dict()
    assert restored.state_dict()["verified"] == ["a"]


def test_it_is_a_built_in_selected_by_name() -> None:
    sampler = create("fixable-first:pass_threshold=0.8")
    assert isinstance(sampler, FixableFirst)
    assert sampler.pass_threshold == 0.8


def test_a_commit_after_a_lone_failure_stops_its_retries_until_its_next_outcome() -> None:
    history = [("solved", 1.0), ("a", 0.0)]
    assert outcomes(FixableFirst(), history).pick(["a", "solved"], 1) == "a"  # no commit told
    sampler = outcomes(FixableFirst(), history)
    sampler.end_round(1)  # the round's one failure made the commit: a is probably fixed
    assert sampler.state_dict()["credit"] == {"a": 1.0}
    assert sampler.pick(["a", "solved"], 1) == "solved"
    sampler.record("a", 0.0)  # it failed again after all: retried as before
    assert sampler.state_dict()["credit"] == {}


def test_a_task_that_failed_after_a_pass_keeps_its_credit_until_it_fails_again() -> None:
    # "a" passed, then failed: fixable, and lucky now and then, so a pass does not say it is fixed.
    history = [("solved", 1.0), ("solved", 1.0), ("a", 1.0), ("a", 0.0)]
    # Counting rollouts alone: priced in calls, a re-test of either is worth the same.
    untold = outcomes(FixableFirst(failure_cost=1), [*history, ("a", 1.0)])
    assert untold.pick(["a", "solved"], 1) == "a"  # the pass may have been luck: re-test it
    sampler = outcomes(FixableFirst(), history)
    sampler.end_round(1)  # the round's one failure made the commit
    assert sampler.state_dict()["credit"] == {"a": 1.0}
    sampler.record("a", 1.0)
    assert sampler.state_dict()["credit"] == {"a": 1.0}
    resumed = FixableFirst()
    resumed.load_state_dict(sampler.state_dict())  # a saved state keeps it too
    for kept in (sampler, resumed):
        assert kept.pick(["a", "solved"], 1) == "solved"
    sampler.record("a", 0.0)  # not fixed after all
    assert sampler.state_dict()["credit"] == {}


def test_a_commit_is_shared_among_the_rounds_failures_by_their_chances() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("b", 0.0)])
    sampler.end_round(1)  # at least one of the two made it (the engine may fuse two fixes)
    credit = sampler.state_dict()["credit"]
    assert credit["a"] == credit["b"]
    assert 0.5 < credit["a"] < 1
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("b", 0.0)])
    sampler.end_round(2)
    assert sampler.state_dict()["credit"] == {"a": 1.0, "b": 1.0}
    # A failure far past every fix seen is an unlikely source of the commit.
    fixed_at_one = [(f"fix{i}", score) for i in range(4) for score in (0.0, 1.0)]
    sampler = outcomes(FixableFirst(), [*fixed_at_one, *[("old", 0.0)] * 5])
    sampler.end_round(0)  # close the round those outcomes made
    outcomes(sampler, [("old", 0.0), ("new", 0.0)])
    sampler.end_round(1)
    credit = sampler.state_dict()["credit"]
    assert credit["new"] > 0.9 > 0.1 > credit["old"]


def test_a_round_without_commits_credits_nothing_and_notes_its_failures_made_none() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    before = sampler.state_dict()
    sampler.end_round(0)
    after = sampler.state_dict()
    closed = {"closed_at": before["picks"], "longest_round": before["picks"]}
    assert after == {**before, "no_commit": ["a"], **closed}
    sampler.end_round(1)  # the round that failed "a" is closed: a later commit is not its
    assert sampler.state_dict() == {**after, "unchanged": []}  # only noted: the artifact changed


def test_a_pass_right_after_a_failure_that_made_no_commit_is_luck() -> None:
    history = [("solved", 1.0), ("a", 0.0)]
    untold = outcomes(FixableFirst(), [*history, ("a", 1.0)])
    assert untold.pick(["a", "solved"], 1) == "solved"  # the flip looks like a fix
    sampler = outcomes(FixableFirst(), history)
    sampler.end_round(0)  # but nothing was committed after the failure
    outcomes(sampler, [("a", 1.0)])
    state = sampler.state_dict()
    assert state["tasks"]["a"][3] == 1  # mixed: fixable, and lucky now and then
    events, flips = untold.state_dict()["evidence"][1]  # flips to passing, and those luck
    assert state["evidence"][1] == [events + 1, flips]
    assert sampler.pick(["a", "solved"], 1) == "a"
    sampler.record("a", 1.0)  # its passes are luck until it fails again: it is not fixed
    assert sampler.state_dict()["no_commit"] == ["a"]
    assert sampler.pick(["a", "solved"], 2) == "a"
    sampler.record("a", 0.0)
    assert sampler.state_dict()["no_commit"] == []


@pytest.mark.parametrize(
    ("committed", "error"),
    [(1.5, TypeError), (True, TypeError), ("1", TypeError), (-1, ValueError)],
)
def test_end_round_refuses_a_count_that_is_not_a_whole_number(
    committed: object, error: type[Exception]
) -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    with pytest.raises(error, match=r"fixable-first: end_round\(\) takes .*RoundInfo.committed"):
        sampler.end_round(committed)  # type: ignore[arg-type]
    sampler.end_round(1)  # the round's failures were kept
    assert sampler.state_dict()["credit"] == {"a": 1.0}


@pytest.mark.parametrize("seed", range(20))
def test_commit_credits_are_those_of_counting_every_outcome_of_the_round(seed: int) -> None:
    from agentdescent_sampling.samplers.fixable_first import _credits

    rng = random.Random(seed)
    chances = [rng.random() for _ in range(rng.randint(1, 6))]
    commits = rng.randint(1, 7)
    # Every way the round's failures could have gone, kept if at least `commits` yielded one.
    weights = [0.0] * len(chances)
    total = 0.0
    for made in itertools.product([False, True], repeat=len(chances)):
        if sum(made) < min(commits, len(chances)):
            continue
        chance = math.prod(c if m else 1 - c for c, m in zip(chances, made, strict=True))
        total += chance
        weights = [w + chance * m for w, m in zip(weights, made, strict=True)]
    assert _credits(chances, commits) == pytest.approx([w / total for w in weights])


def test_a_round_past_the_exact_bound_scales_each_chance_up_to_the_commits() -> None:
    from agentdescent_sampling.samplers.fixable_first import _EXACT_CREDITS, _credits

    chances = [0.001, 0.002] * (_EXACT_CREDITS // 2) + [0.5]  # past the bound at 1 commit
    expected = sum(chances)
    commits = 4 * round(expected)  # more commits than the chances expect: each scaled up

    credits = _credits(chances, commits)

    assert credits == pytest.approx([c * commits / expected for c in chances[:-1]] + [1.0])
    assert _credits(chances, 1) == chances  # fewer than expected: the chances stand


def test_credits_are_exact_up_to_the_bound_and_scaled_just_past_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentdescent_sampling.samplers import fixable_first

    monkeypatch.setattr(fixable_first, "_EXACT_CREDITS", 6)
    chances = [0.1, 0.2, 0.3]
    # At least 2 of the 3 yielded a fix: each pair, or all three, weighted by its chance.
    pairs = {(0, 1): 0.1 * 0.2 * 0.7, (0, 2): 0.1 * 0.8 * 0.3, (1, 2): 0.9 * 0.2 * 0.3}
    every = 0.1 * 0.2 * 0.3
    total = sum(pairs.values()) + every
    given = [(sum(w for pair, w in pairs.items() if i in pair) + every) / total for i in range(3)]

    assert fixable_first._credits(chances, 2) == pytest.approx(given)  # 3 x 2: at the bound
    scaled = fixable_first._credits([*chances, 0.0], 2)  # 4 x 2: past it
    assert scaled == pytest.approx([c * 2 / 0.6 for c in chances] + [0.0])


def test_once_a_card_has_arrived_the_commit_counts_are_not_used() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("b", 0.0)])
    sampler.evidence("a", 1.0, True)
    credit = sampler.state_dict()["credit"]
    sampler.end_round(1)  # b's card may come a round late: the count says nothing of it
    assert sampler.state_dict()["credit"] == credit
    assert "b" not in sampler.state_dict()["no_commit"]


def test_a_committed_fix_that_self_verify_passed_is_set_aside() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("b", 0.0)])
    sampler.evidence("a", 1.0, True)  # a's proposal passed its re-run and was committed
    assert 0.5 < sampler.state_dict()["credit"]["a"] <= 0.9
    assert sampler.pick(["a", "b"], 1) == "b"


@pytest.mark.parametrize(
    ("gain", "committed"),
    [(0.0, True), (0.0, False), (1.0, False)],
    ids=["a-note-that-rode-in-beside-a-fix", "a-refused-note", "a-refused-fix"],
)
def test_a_failure_whose_proposal_did_not_fix_it_keeps_its_task_in_play(
    gain: float, committed: bool
) -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("b", 0.0)])
    sampler.evidence("a", gain, committed)
    assert sampler.state_dict()["credit"] == {}
    assert sampler.state_dict()["no_commit"] == ["a"]
    sampler.record("a", 1.0)  # so a pass right after is luck
    assert sampler.state_dict()["tasks"]["a"][3] == 1  # mixed: kept in play, not fixed


@pytest.mark.parametrize("gain", [0.0, 1.0], ids=["a-note", "a-verified-fix"])
def test_a_verified_fix_the_gate_refused_counts_its_tasks_failures_afresh(gain: float) -> None:
    # Three failures each: past the prior's likely fixes, so both look hopeless alike, and
    # "hopeless" goes first, picked less recently; unless "refused" has shown its fix.
    sampler = outcomes(FixableFirst(), [("hopeless", 0.0)] * 3 + [("refused", 0.0)] * 3)
    sampler.evidence("refused", gain, False)
    assert sampler.pick(["hopeless", "refused"], 0) == ("refused" if gain else "hopeless")
    assert sampler.state_dict()["refused"] == ({"refused": 3} if gain else {})


def test_failures_after_a_refused_verified_fix_still_count_afresh_after_a_restore() -> None:
    sampler = outcomes(FixableFirst(), [("hopeless", 0.0)] * 3 + [("refused", 0.0)] * 3)
    sampler.evidence("refused", 1.0, False)
    outcomes(sampler, [("hopeless", 0.0), ("refused", 0.0)])  # a fourth failure each
    restored = FixableFirst()
    restored.load_state_dict(sampler.state_dict())
    assert restored.state_dict() == sampler.state_dict()
    # "refused" has one failure since its fix was seen, "hopeless" four with none seen.
    assert sampler.pick(["hopeless", "refused"], 0) == "refused"
    assert restored.pick(["hopeless", "refused"], 0) == "refused"


def test_a_flaky_tasks_refused_verified_fix_is_not_saved_as_a_fix_seen() -> None:
    # It failed after a pass: a pass of its re-run may be luck, so the card shows no fix.
    # A mixed task is valued from all its failures, so only the saved state can show it.
    flaky = [("flaky", 0.0), ("flaky", 1.0)] + [("flaky", 0.0)] * 3
    sampler = outcomes(FixableFirst(), flaky)
    sampler.evidence("flaky", 1.0, False)
    assert sampler.state_dict()["refused"] == {}


def test_a_graded_gain_counts_as_a_fix_only_when_the_re_run_reaches_the_threshold() -> None:
    sampler = outcomes(FixableFirst(pass_threshold=0.8), [("a", 0.5), ("b", 0.5)])
    sampler.evidence("a", 0.2, True)  # 0.7: better, still failing
    sampler.evidence("b", 0.3, True)  # 0.8: passes
    assert set(sampler.state_dict()["credit"]) == {"b"}
    assert sampler.state_dict()["no_commit"] == ["a"]


def test_without_self_verify_a_commit_is_credited_by_the_failures_chance() -> None:
    told = outcomes(FixableFirst(), [("a", 0.0)])
    told.evidence("a", None, True)
    verified = outcomes(FixableFirst(), [("a", 0.0)])
    verified.evidence("a", 1.0, True)
    assert 0 < told.state_dict()["credit"]["a"] < verified.state_dict()["credit"]["a"]


def test_a_known_flaky_tasks_verified_fix_is_trusted_less_than_a_steady_tasks() -> None:
    steady = outcomes(FixableFirst(), [("a", 0.0)])
    flaky = outcomes(FixableFirst(), [("a", 0.0), ("a", 1.0), ("a", 1.0), ("a", 0.0)])
    for sampler in (steady, flaky):
        sampler.evidence("a", 1.0, True)
    assert flaky.state_dict()["credit"]["a"] < steady.state_dict()["credit"]["a"]


def test_a_later_card_of_the_same_failures_does_not_undo_a_committed_verified_fix() -> None:
    # On the asynchronous path a task can fail twice before one merge takes both cards, in
    # either order: the fix and a note that rode in beside it, the fix refused as a repeat, or
    # the same fix committed twice. Either way the artifact changed once.
    for later in ((0.0, True), (0.0, False), (1.0, False), (1.0, True)):
        fixed_first = outcomes(FixableFirst(), [("a", 0.0), ("a", 0.0)])
        fixed_first.evidence("a", 1.0, True)
        fixed_first.evidence("a", *later)
        fixed_last = outcomes(FixableFirst(), [("a", 0.0), ("a", 0.0)])
        fixed_last.evidence("a", *later)
        fixed_last.evidence("a", 1.0, True)
        for sampler in (fixed_first, fixed_last):
            state = sampler.state_dict()
            assert state["credit"]["a"] > 0.5, later
            assert state["verified"] == ["a"], later
            assert state["no_commit"] == [], later
            assert state["changes"] == 1, later


def test_a_verified_fix_stops_holding_once_the_task_has_a_new_outcome() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    sampler.evidence("a", 1.0, True)
    sampler.record("a", 0.0)  # it failed again: the fix did not hold
    sampler.evidence("a", 0.0, False)
    state = sampler.state_dict()
    assert state["credit"] == {}
    assert state["no_commit"] == ["a"]


def test_evidence_ignores_a_task_that_did_not_just_fail() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("a", 1.0)])
    before = sampler.state_dict()
    sampler.evidence("a", 0.0, True)  # its last outcome is a pass
    sampler.evidence("never-recorded", 1.0, True)
    # The commits are noted all the same: the artifact changed.
    assert sampler.state_dict() == {**before, "evidenced": True, "unchanged": []}


@pytest.mark.parametrize(
    ("task_id", "gain", "committed"),
    [("a", 1.0, 1), ("a", "1", True), ("a", math.nan, True), ("a", True, True), (3, 1.0, True)],
)
def test_evidence_refuses_a_bad_task_id_gain_or_committed(
    task_id: object, gain: object, committed: object
) -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    before = sampler.state_dict()
    with pytest.raises(TypeError, match=r"fixable-first: evidence\(\) takes|task id"):
        sampler.evidence(task_id, gain, committed)  # type: ignore[arg-type]
    assert sampler.state_dict() == before


def test_a_task_failing_past_the_state_bound_still_saves_a_state_that_loads() -> None:
    from agentdescent_sampling.samplers.fixable_first import _MAX_FAILS

    sampler = FixableFirst()
    for _ in range(_MAX_FAILS + 2):
        sampler.record("a", 0.0)
    state = sampler.state_dict()
    assert state["tasks"]["a"][0] == _MAX_FAILS
    FixableFirst().load_state_dict(state)


@pytest.mark.parametrize("task_id", [3, None, ("a",)])
def test_evidence_refuses_a_task_id_that_is_not_a_string_naming_evidence_not_pick(
    task_id: object,
) -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    before = sampler.state_dict()
    with pytest.raises(TypeError) as refused:
        sampler.evidence(task_id, 1.0, True)  # type: ignore[arg-type]
    message = str(refused.value)
    assert "evidence()" in message
    assert "pick()" not in message
    assert short_repr(task_id) in message
    assert "str" in message
    assert sampler.state_dict() == before


@pytest.mark.parametrize("gain", [Decimal("1.0"), Fraction(1), Decimal(1)])
def test_evidence_takes_a_gain_of_any_real_number_as_record_takes_a_score(gain: object) -> None:
    as_float = outcomes(FixableFirst(), [("a", 0.0)])
    as_float.evidence("a", 1.0, False)
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    sampler.evidence("a", gain, False)  # type: ignore[arg-type]
    assert sampler.state_dict() == as_float.state_dict()
    assert sampler.state_dict()["refused"] == {"a": 1}
    json.dumps(sampler.state_dict())


def test_evidence_refusing_a_gain_says_what_to_pass() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    with pytest.raises(TypeError, match=r"got gain=Decimal\('NaN'\).*pass the card's before_after"):
        sampler.evidence("a", Decimal("NaN"), True)  # type: ignore[arg-type]


def test_a_failed_task_whose_model_repeats_itself_waits_for_the_artifact_to_change() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.evidence("a", 0.0, False)
    assert sampler.pick(keys, 0) == "a"  # nothing says a retry is wasted: retried at once
    sampler.record("a", 0.0)
    sampler.evidence("a", 0.0, False)
    sampler.repeated("a", True)  # the same proposal, on the same artifact
    assert sampler.pick(keys, 1) == "b"
    sampler.record("b", 1.0)
    assert sampler.pick(keys, 2) == "b"  # held while another task is free
    sampler.record("b", 1.0)
    sampler.evidence("b", 0.0, True)  # a commit: the artifact changed
    assert sampler.pick(keys, 3) == "a"


def test_a_task_held_for_its_model_repeating_itself_is_retried_within_a_cycle() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.evidence("a", 0.0, False)
    sampler.repeated("a", True)
    seen = []
    for round_index in range(6):  # five tasks: a cycle is five picks
        seen.append(sampler.pick(keys, round_index))
        sampler.record(seen[-1], 1.0 if seen[-1] == "b" else 0.0)
    assert seen[:5] == ["b"] * 5  # no commit came
    assert seen[5] == "a"  # as round-robin would retry it, at the latest


def test_a_task_whose_model_repeats_itself_is_held_after_each_failure_until_it_does_not() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.evidence("a", 0.0, False)
    sampler.repeated("a", True)
    sampler.evidence("b", 0.0, True)  # a commit frees it
    assert sampler.pick(keys, 0) == "a"
    sampler.record("a", 0.0)  # failed on the new artifact: its model still repeats itself
    assert sampler.pick(keys, 1) == "b"
    sampler.record("b", 1.0)
    sampler.evidence("a", 0.0, False)
    sampler.repeated("a", False)  # another proposal on one artifact: a model that varies
    assert sampler.pick(keys, 2) == "a"


def test_a_repeat_told_of_a_task_that_passed_since_or_is_unknown_holds_nothing() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.evidence("b", 0.0, True)  # a commit since its failure
    sampler.repeated("a", True)  # told late: the artifact it failed on has changed
    sampler.repeated("unknown", True)
    assert sampler.state_dict()["held"] == {}
    assert sampler.pick(keys, 0) == "a"


@pytest.mark.parametrize(("task_id", "same"), [("a", 1), ("a", "true"), (3, True), (None, False)])
def test_repeated_refuses_a_bad_task_id_or_same(task_id: object, same: object) -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0)])
    before = sampler.state_dict()
    with pytest.raises(TypeError, match=r"fixable-first: repeated\(\) takes") as raised:
        sampler.repeated(task_id, same)  # type: ignore[arg-type]
    assert short_repr(task_id) in str(raised.value)
    assert sampler.state_dict() == before


def test_no_more_than_the_bound_of_tasks_are_held_the_oldest_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ff, "_MAX_HELD", 2)
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("b", 0.0), ("c", 0.0)])
    for task_id in "abc":
        sampler.repeated(task_id, True)
    assert list(sampler.state_dict()["held"]) == ["b", "c"]


def test_what_is_held_for_a_model_repeating_itself_is_saved_and_restored() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.evidence("a", 0.0, False)
    sampler.repeated("a", True)
    state = sampler.state_dict()
    assert (state["repeats"], state["held"]) == (["a"], {"a": 4})
    assert state["unchanged"] == ["p0", "p1", "p2", "a"]
    resumed = FixableFirst(failure_cost=1)
    resumed.load_state_dict(json.loads(json.dumps(state)))
    assert resumed.state_dict() == state
    assert resumed.pick(keys, 0) == sampler.pick(keys, 0) == "b"


@pytest.mark.parametrize(
    "damage",
    [
        {"unchanged": "a"},
        {"unchanged": ["nowhere"]},
        {"unchanged": ["a", "a"]},
        {"repeats": "a"},
        {"repeats": ["nowhere"]},
        {"held": ["a"]},  # a list, not task ids mapped to pick counts
        {"held": {"b": 0}},  # failed last, since the last commit, but not repeating itself
        {"held": {"a": 0}, "unchanged": ["p0"]},  # its failure came before a commit
        {"held": {"a": 0, "c": 0}, "repeats": ["a", "c"]},  # passed last
        {"held": {"a": 99}},  # after the state's picks
        {"held": {"a": -1}},
    ],
    ids=repr,
)
def test_a_state_with_a_bad_repeat_entry_is_refused_whole(damage: dict[str, Any]) -> None:
    sampler = outcomes(
        FixableFirst(), [*PASSED_FIRST, ("c", 0.0), ("c", 1.0), ("b", 0.0), ("a", 0.0)]
    )
    sampler.evidence("a", 0.0, False)
    sampler.repeated("a", True)
    state = {**sampler.state_dict(), **damage}
    fresh = FixableFirst()
    with pytest.raises(StateError, match=r"fixable-first: .*(unchanged|repeats|held)"):
        fresh.load_state_dict(state)
    assert fresh.state_dict() == FixableFirst().state_dict()


def test_a_state_saved_before_repeats_were_told_loads_with_none() -> None:
    state = outcomes(FixableFirst(), [("a", 0.0)]).state_dict()
    for key in ("unchanged", "repeats", "held"):
        del state[key]
    sampler = FixableFirst()
    sampler.load_state_dict(state)
    assert (sampler.state_dict()["unchanged"], sampler.state_dict()["held"]) == ([], {})


def test_a_failure_whose_card_repeats_the_one_before_is_no_failure_a_fix_takes() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("a", 0.0), ("b", 0.0)])
    sampler.repeated("a", True)  # its second failure taught the reflector nothing new
    sampler.repeated("b", True)  # its one failure is kept: the card before was another's
    sampler.repeated("a", False)
    assert {key: row[0] for key, row in sampler.state_dict()["tasks"].items()} == {"a": 1, "b": 1}
    passed = outcomes(FixableFirst(), [("c", 0.0), ("c", 0.0), ("c", 1.0)])
    passed.repeated("c", True)  # told after its pass: the count is that of its fix
    assert passed.state_dict()["tasks"]["c"][0] == 2


def test_a_copy_holds_a_task_told_of_its_repeat_as_the_original_does() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.evidence("b", 0.0, True)  # a commit, before "a" fails again
    outcomes(sampler, [("a", 0.0)])
    copied = copy.deepcopy(sampler)
    for each in (sampler, copied):
        each.repeated("a", True)
    assert sampler.pick(keys, 0) == copied.pick(keys, 0) == "b"


def test_a_round_that_commits_lets_the_held_tasks_go() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.repeated("a", True)
    assert sampler.pick(keys, 0) == "b"
    sampler.record("b", 1.0)
    sampler.end_round(1)
    assert sampler.pick(keys, 1) == "a"


def test_a_task_that_passes_or_stops_repeating_is_no_longer_held() -> None:
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.repeated("a", True)
    sampler.pick(["a"], 0)  # alone in its shard
    sampler.record("a", 1.0)
    assert sampler.state_dict()["held"] == {}
    outcomes(sampler, [("a", 0.0)])
    sampler.repeated("a", False)  # another proposal on one artifact: its model varies
    outcomes(sampler, [("a", 0.0)])  # so its next failure is not held
    assert sampler.state_dict()["held"] == {}


def test_the_held_are_let_go_before_the_rounds_failures_when_nothing_else_is_free() -> None:
    sampler = FixableFirst(failure_cost=1)
    sampler.end_round(0)
    outcomes(sampler, [("a", 0.0), ("b", 0.0)])
    sampler.evidence("a", 0.0, False)
    sampler.repeated("a", True)
    sampler.end_round(0)  # "a" is held; "b" failed in the round just ended
    outcomes(sampler, [("b", 0.0)])  # "b" failed in this round, not yet ended
    assert sampler.pick(["a", "b"], 1) == "a"  # passing over both would leave none


def test_a_repeat_never_takes_a_tasks_failures_below_its_refused_fix() -> None:
    sampler = outcomes(FixableFirst(), [("a", 0.0), ("a", 0.0)])
    sampler.evidence("a", 1.0, False)  # a verified fix the gate refused, at failure 2
    sampler.repeated("a", True)
    state = sampler.state_dict()
    assert (state["tasks"]["a"][0], state["refused"]) == (2, {"a": 2})


def test_a_hold_lasts_a_cycle_from_the_failure_however_late_its_card_comes() -> None:
    keys = ["a", "b"]
    sampler = outcomes(FixableFirst(failure_cost=1), [*PASSED_FIRST, ("a", 0.0)])
    sampler.repeated("a", True)
    sampler.evidence("b", 0.0, True)  # a commit frees it
    assert sampler.pick(keys, 0) == "a"
    sampler.record("a", 0.0)  # held at once: its model repeats itself
    seen = []
    for round_index in range(1, 10):  # five tasks: a cycle is five picks
        if round_index == 3:
            sampler.repeated("a", True)  # its card, told late
        seen.append(sampler.pick(keys, round_index))
        sampler.record(seen[-1], 1.0 if seen[-1] == "b" else 0.0)
    assert seen.index("a") == 5  # once a cycle of picks has passed since its failure
