"""benchmarks/regressions_bound.py: the break planner's chances and values, checked by hand."""

from __future__ import annotations

from types import ModuleType
from types import SimpleNamespace as Plan
from typing import Any

import pytest

SCRIPT = "regressions_bound"
START = (0, 0, 0, 0, 0, 0, 0)


@pytest.fixture(scope="module")
def bound(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


def test_a_breakers_patch_costs_a_rollout_in_the_round_after_its_commit(bound: ModuleType) -> None:
    # One lesson fixed by its first failure, and it breaks a task: round 1 makes the rule (one
    # unit; the second rollout has nothing to do), the commit breaks the victim, round 2
    # patches it (a second unit). Four rollouts.
    planner = bound.BreakPlanner((1, 0, 0), 0, 0, goal=2, breakers=1, weight=1)
    assert planner.value((1, 0, 0, 0), START) == pytest.approx(4)
    # A rule alone is one unit: done after round 1.
    planner = bound.BreakPlanner((1, 0, 0), 0, 0, goal=1, breakers=1, weight=1)
    assert planner.value((1, 0, 0, 0), START) == pytest.approx(2)


def test_a_patch_counts_the_victims_weight_in_held_out_units(bound: ModuleType) -> None:
    planner = bound.BreakPlanner((1, 0, 0), 0, 0, goal=3, breakers=1, weight=2)
    assert planner.value((1, 0, 0, 0), START) == pytest.approx(4)
    assert planner.done((0, 1, 0, 0, 0, 0, 1))
    assert not planner.done((0, 1, 0, 0, 0, 1, 0))  # the breaker alone: 1 of 3 units


def test_a_rule_is_a_breaker_as_often_as_the_breakers_left_among_the_lessons_left(
    bound: ModuleType,
) -> None:
    planner = bound.BreakPlanner((4, 0, 0), 0, 0, goal=4, breakers=1, weight=1)
    branches = planner.outcomes((4, 0, 0, 0), (4, 0, 0, 0), START, "u")
    assert sorted(p for p, _, _ in branches) == pytest.approx([1 / 4, 3 / 4])
    # Once the breaker is among the rules found (its victim broken), no other rule breaks.
    branches = planner.outcomes((3, 0, 0, 1), (3, 0, 0, 1), (0, 1, 0, 0, 0, 0, 0), "u")
    assert [seen[5] for _, _, seen in branches] == [0]


def test_two_rules_of_one_round_hold_as_many_breakers_as_the_make_up(bound: ModuleType) -> None:
    # Two one-failure lessons, one of them a breaker: whichever rule comes first, the round's
    # two rules hold exactly one breaker.
    planner = bound.BreakPlanner((2, 0, 0), 0, 0, goal=3, breakers=1, weight=1)
    pending = {}
    for p, after, seen in planner.outcomes((2, 0, 0, 0), (2, 0, 0, 0), START, "u"):
        for q, _, done in planner.outcomes(after, after, seen, "u"):
            pending[done[5]] = pending.get(done[5], 0.0) + p * q
    assert pending == pytest.approx({1: 1.0})


def test_a_patched_victims_breaker_is_not_found_again(bound: ModuleType) -> None:
    planner = bound.BreakPlanner((2, 0, 0), 0, 0, goal=3, breakers=1, weight=1)
    patched = (0, 1, 0, 0, 0, 0, 1)  # one rule found, its victim patched
    branches = planner.outcomes((1, 0, 0, 0), (1, 0, 0, 0), patched, "u")
    assert [seen[5] for _, _, seen in branches] == [0]


def test_a_patch_mends_one_broken_victim(bound: ModuleType) -> None:
    planner = bound.BreakPlanner((2, 0, 0), 0, 0, goal=4, breakers=2, weight=1)
    [(p, after, seen)] = planner.outcomes((0, 0, 0, 2), (0, 0, 0, 2), (0, 2, 0, 0, 0, 0, 0), "v")
    assert (p, after, seen[6]) == (1.0, (0, 0, 0, 1), 1)


def test_a_commit_breaks_the_rounds_breakers_victims_once(bound: ModuleType) -> None:
    pool, found = bound.BreakPlanner.commit((3, 1, 0, 1), (0, 2, 0, 0, 1, 2, 0))
    assert pool == (3, 1, 0, 3)
    assert found == (0, 2, 0, 0, 1, 0, 0)  # none left to break at the next commit


def test_the_goals_are_three_quarters_and_all_of_the_held_out_units(bound: ModuleType) -> None:
    from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS

    for name, goals in (("regressions", [9, 11]), ("regressions-held-out", [11, 14])):
        planners = bound.planners_for(ENGINE_WORKLOADS[name])
        assert [planner.goal for planner in planners] == goals
        # The victims are not in the pool: 8 lessons, 10 always-pass and 8 never-pass tasks.
        assert {(p.lessons, p.solved, p.hopeless, p.breakers) for p in planners} == {
            ((3, 3, 2), 10, 8, 3)
        }
        assert bound.start_pool(ENGINE_WORKLOADS[name]) == (26, 0, 0, 0)


def test_the_rounds_last_rollout_patches_when_that_reaches_the_goal(bound: ModuleType) -> None:
    # One rule found, its victim broken, a hopeless task untried: the patch ends the run now,
    # a look at the hopeless task would not (a planner that counted a rollout still to come
    # in the round would take them for equal).
    planner = bound.BreakPlanner((1, 0, 0), 0, 1, goal=2, breakers=1, weight=1)
    found = (0, 1, 0, 0, 0, 0, 0)
    assert planner.choose((1, 0, 0, 1), (0, 0, 0, 0), found, first=False) == "v"


def test_the_two_shard_table_is_refused(bound: ModuleType) -> None:
    planner = bound.BreakPlanner((1, 0, 0), 0, 0, goal=1, breakers=1, weight=1)
    with pytest.raises(NotImplementedError, match="value"):
        planner.round((1, 0, 0, 0), (0, 0, 0, 0), START)


def test_the_victim_waits_for_the_rounds_commit(bound: ModuleType) -> None:
    # The victim of a rule made at the round's first rollout is not yet broken at its second.
    planner = bound.BreakPlanner((1, 0, 0), 2, 0, goal=2, breakers=1, weight=1)
    (_, after, seen), *_ = planner.outcomes((3, 0, 0, 0), (3, 0, 0, 0), START, "u")
    assert "v" not in planner.actions(after)
    assert seen[5] == 1
    assert "v" in planner.actions((0, 0, 0, 1))


def test_a_planner_free_of_shards_never_needs_more_rollouts_than_one_held_to_them(
    bound: ModuleType,
) -> None:
    from benchmarks.outcome_ceiling import Planner

    for lessons, solved, hopeless, goal, shards in [
        ((1, 1, 1), 2, 2, 2, (4, 3)),
        ((2, 1, 0), 1, 1, 2, (3, 2)),
        ((1, 1, 1), 1, 3, 3, (4, 3)),
    ]:
        pooled = bound.BreakPlanner(lessons, solved, hopeless, goal, breakers=0, weight=0)
        held = Planner(lessons, solved, hopeless, goal)
        free = pooled.value((sum(shards), 0, 0, 0), START)
        assert free <= held.round((shards[0], 0, 0), (shards[1], 0, 0), START[:5]) + 1e-9


def test_the_sampler_patches_the_victim_the_round_after_its_breaker(bound: ModuleType) -> None:
    planner = bound.BreakPlanner((1, 0, 0), 1, 0, goal=2, breakers=1, weight=1)
    plans = {
        "lesson-train": Plan(kind="lesson", failures_needed=1, breaks="victim"),
        "victim-train": Plan(kind="victim", failures_needed=1, breaks=None),
        "always-train": Plan(kind="always", failures_needed=1, breaks=None),
    }
    sampler = _sampler(bound, planner, plans)
    keys = list(plans)
    assert sampler.pick(keys, 0) in ("lesson-train", "always-train")  # never the victim yet
    sampler.record("lesson-train", 0.0)  # its rule: the victim breaks when the round commits
    assert sampler._state["victim-train"] == "breaking"
    assert sampler.pick(keys, 0) != "victim-train"
    sampler.record("always-train", 1.0)
    assert sampler.pick(keys, 1) == "victim-train"
    sampler.record("victim-train", 0.0)
    assert sampler._found == [0, 1, 0, 0, 1, 0, 1]


def test_a_victim_that_passes_when_taken_for_broken_is_left_out_again(bound: ModuleType) -> None:
    planner = bound.BreakPlanner((1, 0, 0), 0, 0, goal=2, breakers=1, weight=1)
    plans = {
        "lesson-train": Plan(kind="lesson", failures_needed=1, breaks="victim"),
        "victim-train": Plan(kind="victim", failures_needed=1, breaks=None),
    }
    sampler = _sampler(bound, planner, plans)
    sampler.pick(list(plans), 0)
    sampler.record("lesson-train", 0.0)
    assert sampler.pick(list(plans), 1) == "victim-train"
    sampler.record("victim-train", 1.0)  # the gate refused its breaker: nothing broke
    assert sampler._state["victim-train"] == "intact"
    assert sampler._found[6] == 0


SEARCHED = {
    "lesson-train": Plan(kind="lesson", failures_needed=1, breaks="victim"),
    "victim-train": Plan(kind="victim", failures_needed=1, breaks=None),
    "always-train": Plan(kind="always", failures_needed=1, breaks=None),
}


def test_a_searchers_victims_are_among_the_tasks_that_pass(bound: ModuleType) -> None:
    from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS

    workload = ENGINE_WORKLOADS["regressions"]
    planners = bound.planners_for(workload, search=True)
    assert {(p.solved, p.breakers) for p in planners} == {(13, 3)}
    assert bound.start_pool(workload, search=True) == (29, 0, 0, 0)


def test_a_searcher_takes_a_task_that_passed_before_a_commit_for_broken_by_the_make_ups_odds(
    bound: ModuleType,
) -> None:
    planner = bound.BreakPlanner((1, 0, 0), 2, 0, goal=2, breakers=1, weight=1)
    sampler = _searcher(bound, planner)
    sampler.pick(list(SEARCHED), 0)
    sampler.record("always-train", 1.0)
    sampler.record("lesson-train", 0.0)  # the rule, committed at the round's end
    sampler.pick(list(SEARCHED), 1)
    assert sampler._placings() == [(1.0, 1, 0)]  # the one rule committed is the breaker
    # Its victim is one of the 2 tasks that pass, the untried one included.
    assert sampler._broken_chance("always-train", 1) == pytest.approx(1 / 2)
    sampler.record("always-train", 1.0)  # seen passing since: not broken
    assert sampler._broken_chance("always-train", 1) == 0


def test_the_breakers_lie_among_committed_new_and_unfound_rules_as_a_hypergeometric_draw(
    bound: ModuleType,
) -> None:
    planner = bound.BreakPlanner((4, 0, 0), 0, 0, goal=4, breakers=2, weight=1)
    plans = {f"lesson{i}-train": Plan(kind="lesson", failures_needed=1) for i in range(4)}
    built = Plan(agent=Plan(by_id=plans), tasks=[Plan(id=t) for t in plans], pass_threshold=1)
    sampler = bound.SearchSampler(built, [planner])
    sampler.pick(list(plans), 0)
    sampler.record("lesson0-train", 0.0)
    sampler.pick(list(plans), 1)  # lesson0's rule is committed
    sampler.record("lesson1-train", 0.0)  # lesson1's is new this round; 2 rules unfound
    placings = {(k, j): p for p, k, j in sampler._placings()}
    # 2 breakers among 4 rules, 6 ways: committed and new 1, each with an unfound 2, both 1.
    assert placings == pytest.approx({(0, 0): 1 / 6, (0, 1): 2 / 6, (1, 0): 2 / 6, (1, 1): 1 / 6})


def test_a_searcher_retests_a_passing_task_when_nothing_else_is_left_and_its_failure_is_a_patch(
    bound: ModuleType,
) -> None:
    planner = bound.BreakPlanner((1, 0, 0), 2, 0, goal=2, breakers=1, weight=1)
    sampler = _searcher(bound, planner)
    keys = list(SEARCHED)
    for task_id, score in (("lesson-train", 0.0), ("victim-train", 1.0), ("always-train", 1.0)):
        sampler.pick(keys, 0)
        sampler.record(task_id, score)
    sampler.pick(keys, 1)  # at the round's first, the round's second rollout could patch
    # The lesson's rule is in; only a re-test of a task that passed can reach the goal.
    assert sampler.pick(keys, 1) in ("victim-train", "always-train")
    sampler.record("victim-train", 0.0)
    assert sampler._found[6] == 1  # its patch, told at once as any fix is when wired
    assert planner.done(tuple(sampler._found))


def test_a_victims_first_look_that_fails_is_a_patch_of_a_task_the_make_up_counts_as_passing(
    bound: ModuleType,
) -> None:
    planner = bound.BreakPlanner((1, 0, 0), 2, 0, goal=2, breakers=1, weight=1)
    sampler = _searcher(bound, planner)
    sampler.pick(list(SEARCHED), 3)
    sampler.record("victim-train", 0.0)
    assert (sampler._found[4], sampler._found[6]) == (1, 1)
    assert sampler._state["victim-train"] == "done"


def _searcher(bound: ModuleType, planner: Any) -> Any:
    built = Plan(
        agent=Plan(by_id=SEARCHED),
        tasks=[Plan(id=task_id) for task_id in SEARCHED],
        pass_threshold=0.999,
    )
    return bound.SearchSampler(built, [planner])


def test_workloads_without_breaks_are_refused_by_name(bound: ModuleType) -> None:
    from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS

    with pytest.raises(SystemExit, match="lessons: the bound models regressions"):
        bound.planners_for(ENGINE_WORKLOADS["lessons"])


def _sampler(bound: ModuleType, planner: Any, plans: dict[str, Any]) -> Any:
    built = Plan(
        agent=Plan(by_id=plans), tasks=[Plan(id=task_id) for task_id in plans], pass_threshold=0.999
    )
    return bound.BreakSampler(built, [planner])
