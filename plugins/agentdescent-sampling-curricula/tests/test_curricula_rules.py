"""Each rule's defining behaviour, against small cases computed by hand from its paper."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from agentdescent_sampling_curricula import (
    AbsoluteLearningProgress,
    DynamicFiltering,
    FailureAware,
    Learnability,
    ModelPredictivePromptSelection,
    PrioritizedLevelReplay,
    SamplingForLearnability,
    Speed,
    TeacherStudentCurriculum,
)
from agentdescent_sampling_curricula._common import rng_state
from agentdescent_sampling_curricula.learnability import variance
from agentdescent_sampling_curricula.tscl import abs_slope

from agentdescent_sampling import StateError

ABC = ["a", "b", "c"]


def next_picks(sampler: Any, state: dict[str, Any], keys: list[str], draws: int) -> Counter[str]:
    """The next pick from ``state`` under ``draws`` different generator states."""
    counts: Counter[str] = Counter()
    for seed in range(draws):
        sampler.load_state_dict({**state, "rng": rng_state(random.Random(seed))})
        counts[sampler.pick(keys, 0)] += 1
    return counts


# --- PLR ---------------------------------------------------------------------------


def test_plr_tries_every_unseen_task_once_before_any_replay() -> None:
    sampler = PrioritizedLevelReplay(seed=4)
    first = []
    for round_index in range(3):
        first.append(sampler.pick(ABC, round_index))
        sampler.record(first[-1], 1.0)
    assert sorted(first) == ABC


def test_plr_scores_a_rollout_by_its_distance_from_the_tasks_mean_so_far() -> None:
    sampler = PrioritizedLevelReplay()
    scores = []
    for outcome in (1.0, 0.0, 1.0):
        sampler.record("a", outcome)
        scores.append(sampler.state_dict()["tasks"]["a"][3])
    # |1 - 0.5| (no mean yet), |0 - 1|, |1 - 0.5|
    assert scores == [0.5, 1.0, 0.5]


def seen(last: int, score: float) -> list[float]:
    return [last, 1.0, 1, score, 1]


@pytest.mark.parametrize(
    ("temperature", "expected"),
    [
        # (1/rank)^(1/β), normalised: β = 0.1 gives 1 : 2^-10 : 3^-10
        (0.1, {"b": 1 / (1 + 2**-10 + 3**-10)}),
        (1.0, {"b": 6 / 11, "c": 3 / 11, "a": 2 / 11}),
    ],
)
def test_plr_replays_by_rank_with_temperature(
    temperature: float, expected: dict[str, float]
) -> None:
    sampler = PrioritizedLevelReplay(temperature=temperature, staleness=0.0)
    state = {
        **sampler.state_dict(),
        "picks": 3,
        "tasks": {"a": seen(1, 0.0), "b": seen(2, 1.0), "c": seen(3, 0.5)},
    }
    counts = next_picks(sampler, state, ABC, 4000)
    for task, probability in expected.items():
        assert counts[task] / 4000 == pytest.approx(probability, abs=0.025)


def test_plr_staleness_draws_in_proportion_to_picks_since_last_pick() -> None:
    sampler = PrioritizedLevelReplay(staleness=1.0)
    # Picked at 1, 2 and 3; the next pick is number 4: weights 3, 2, 1.
    state = {
        **sampler.state_dict(),
        "picks": 3,
        "tasks": {"a": seen(1, 0.2), "b": seen(2, 0.9), "c": seen(3, 0.4)},
    }
    counts = next_picks(sampler, state, ABC, 4000)
    assert counts["a"] / 4000 == pytest.approx(3 / 6, abs=0.025)
    assert counts["b"] / 4000 == pytest.approx(2 / 6, abs=0.025)
    assert counts["c"] / 4000 == pytest.approx(1 / 6, abs=0.025)


def test_plr_refuses_a_task_with_more_passes_than_rollouts() -> None:
    sampler = PrioritizedLevelReplay()
    good = {**sampler.state_dict(), "picks": 1, "tasks": {"a": seen(1, 0.5)}}
    sampler.load_state_dict(good)
    with pytest.raises(StateError, match=r"bad entry for task 'a'.*passes <= rollouts"):
        sampler.load_state_dict({**good, "tasks": {"a": [1, 1.0, 1, 0.5, 2]}})
    assert sampler.stats() == {"a": (1, 1)}


def test_plr_spreads_picks_in_flight_down_the_ranks() -> None:
    sampler = PrioritizedLevelReplay(staleness=0.0)
    keys = [f"t{i}" for i in range(6)]
    for index, key in enumerate(keys):
        sampler.pick(keys, index)
        sampler.record(key, 0.5 + index / 20)  # t5 scores highest
    in_flight = [sampler.pick(keys, 6) for _ in range(3)]
    assert len(set(in_flight)) == 3
    assert in_flight[0] == "t5"


def test_plr_draws_a_task_whose_first_rollout_was_lost_again_once_its_pick_expires() -> None:
    sampler = PrioritizedLevelReplay()
    keys = ["a", "b", "c", "d"]
    lost = sampler.pick(keys, 0)  # the engine records nothing for a failed rollout
    picks = Counter()
    for index in range(2000):
        picked = sampler.pick(keys, 1)
        picks[picked] += 1
        sampler.record(picked, float(index % 3 > 0))
    assert picks[lost] > 0
    assert sampler.state_dict()["tasks"][lost][2] > 0  # it was scored, so ranked since


def test_plr_draws_a_task_in_flight_when_saved_among_the_unseen_after_a_restart() -> None:
    sampler = PrioritizedLevelReplay()
    keys = ["a", "b", "c"]
    sampler.pick(keys, 0)  # in flight when saved: its rollout does not survive the restart
    restarted = PrioritizedLevelReplay()
    restarted.load_state_dict(sampler.state_dict())
    picked = []
    for _ in keys:
        picked.append(restarted.pick(keys, 0))
        restarted.record(picked[-1], 1.0)
    assert sorted(picked) == keys  # every unseen task first, the one in flight included


# --- SFL ---------------------------------------------------------------------------


def record_all(sampler: Any, outcomes: dict[str, str]) -> None:
    for task, results in outcomes.items():
        for result in results:
            sampler.record(task, float(result == "1"))


def test_sfl_buffers_the_top_k_by_learnability_and_only_mixed_tasks() -> None:
    sampler = SamplingForLearnability(buffer_size=2)
    # p(1-p): a 1/2 -> 0.25, e 2/3 -> 0.222, b 1/4 -> 0.1875, c and d -> 0
    record_all(sampler, {"a": "10", "b": "1000", "c": "111", "d": "00", "e": "110"})
    sampler.pick(list("abcde"), 0)
    assert sampler.buffer() == ["a", "e"]


def test_sfl_draws_from_the_buffer_with_the_sample_ratio_and_refreshes_every_t_picks() -> None:
    sampler = SamplingForLearnability(buffer_size=1, sample_ratio=1.0, refresh=3)
    record_all(sampler, {"a": "10", "b": "1"})
    picks = []
    for round_index in range(3):
        picks.append(sampler.pick(["a", "b", "c"], round_index))
        sampler.record(picks[-1], 1.0)
        record_all(sampler, {"b": "0"})  # b is mixed now, but the buffer waits
    assert picks == ["a", "a", "a"]
    # Pick 4 refreshes: b (1 pass in 4, 0.1875) now beats a (4 passes in 5, 0.16).
    sampler.pick(["a", "b", "c"], 3)
    assert sampler.buffer() == ["b"]


# --- MoPPS -------------------------------------------------------------------------


def test_mopps_updates_a_beta_posterior_with_decay_per_rollout() -> None:
    sampler = ModelPredictivePromptSelection(decay=0.5)
    keep = 0.5 ** (1 / 8)
    sampler.record("a", 1.0)
    assert sampler.posterior("a") == pytest.approx((2.0, 1.0))  # keep*1 + (1-keep)*1 + 1
    sampler.record("a", 0.0)
    assert sampler.posterior("a") == pytest.approx((1 + keep, 2.0))


def test_mopps_without_decay_counts_passes_and_failures_on_the_uniform_prior() -> None:
    sampler = ModelPredictivePromptSelection(decay=1.0)
    for outcome in (1.0, 1.0, 0.0):
        sampler.record("a", outcome)
    assert sampler.posterior("a") == (3.0, 2.0)


@pytest.mark.parametrize(("target", "chosen"), [(0.5, "b"), (0.95, "c"), (0.05, "a")])
def test_mopps_picks_the_thompson_sample_nearest_the_target(target: float, chosen: str) -> None:
    sampler = ModelPredictivePromptSelection(target=target, candidates=3, seed=2)
    state = {
        **sampler.state_dict(),
        "posterior": {"a": [50.0, 950.0], "b": [500.0, 500.0], "c": [950.0, 50.0]},
    }
    assert next_picks(sampler, state, ABC, 50) == {chosen: 50}


# --- TSCL --------------------------------------------------------------------------


def test_tscl_slope_is_the_least_squares_fit_through_the_window() -> None:
    assert abs_slope([(1, 0.0), (2, 1.0)]) == 1.0
    # t = 1, 3, 5 (mean 3), s = 0, 1, 1 (mean 2/3): cov 2, var 8
    assert abs_slope([(1, 0.0), (3, 1.0), (5, 1.0)]) == pytest.approx(0.25)
    assert abs_slope([(1, 1.0), (3, 0.0), (5, 0.0)]) == pytest.approx(0.25)  # forgetting counts
    assert abs_slope([(7, 1.0)]) == 1.0  # too few scores: try it


def test_tscl_picks_the_highest_absolute_slope() -> None:
    sampler = TeacherStudentCurriculum(epsilon=0.0)
    record_all(sampler, {"a": "0"})  # record 1
    record_all(sampler, {"b": "0"})  # record 2
    record_all(sampler, {"a": "1"})  # record 3: a's slope is 1/2
    assert sampler.pick(["a", "b"], 0) == "b"  # one score: slope 1
    record_all(sampler, {"b": "0"})  # record 4: b's slope is 0
    assert sampler.pick(["a", "b"], 1) == "a"


def test_tscl_window_keeps_only_the_last_k_scores() -> None:
    sampler = TeacherStudentCurriculum(window=2)
    record_all(sampler, {"a": "011"})  # the window holds (2, 1), (3, 1): flat
    assert sampler.slope("a") == 0.0


def test_tscl_breaks_ties_at_random() -> None:
    keys = [f"t{i}" for i in range(10)]
    first = {TeacherStudentCurriculum(epsilon=0.0, seed=seed).pick(keys, 0) for seed in range(20)}
    assert len(first) > 3


@pytest.mark.parametrize("times", [[1, 1], [2, 1]])
def test_tscl_refuses_a_window_whose_record_numbers_do_not_increase(times: list[int]) -> None:
    sampler = TeacherStudentCurriculum()
    for outcome in (0.0, 1.0):
        sampler.record("a", outcome)
    good = sampler.state_dict()
    broken = {**good, "windows": {"a": [[times[0], 0.0], [times[1], 1.0]]}}
    with pytest.raises(StateError, match="record numbers increasing"):
        sampler.load_state_dict(broken)
    assert sampler.state_dict() == good
    assert sampler.pick(ABC, 0) in ABC


# --- ALP ---------------------------------------------------------------------------


def test_alp_draws_by_mean_absolute_progress_after_the_bootstrap() -> None:
    sampler = AbsoluteLearningProgress(fit_rate=4, random_ratio=0.0)
    # ALPs: a 0 (first), a |1 - 0| = 1, b 0 (first), b |1 - 1| = 0
    record_all(sampler, {"a": "01", "b": "11"})
    assert sampler.progress() == {"a": 0.5}
    picks = []
    for round_index in range(3):
        picks.append(sampler.pick(["a", "b", "c"], round_index))
        sampler.record(picks[-1], 1.0)
    assert picks == ["a", "a", "a"]


def test_alp_is_uniform_during_the_bootstrap() -> None:
    sampler = AbsoluteLearningProgress(fit_rate=250, random_ratio=0.0)
    record_all(sampler, {"a": "01" * 5})
    picks = Counter(sampler.pick(ABC, r) for r in range(300))
    assert min(picks.values()) > 60


# --- SPEED -------------------------------------------------------------------------


def test_speed_continues_only_tasks_neither_solved_nor_hopeless() -> None:
    sampler = Speed(screen=2, continuation=3, seed=1)
    results = {"a": iter("11" * 9), "b": iter("10" * 9), "c": iter("00" * 9)}
    epoch = Counter()
    for round_index in range(2 + 5 + 2):  # one epoch: a 2, b 2 + 3, c 2
        picked = sampler.pick(ABC, round_index)
        epoch[picked] += 1
        sampler.record(picked, float(next(results[picked]) == "1"))
    assert epoch == {"a": 2, "b": 5, "c": 2}


def test_speed_screens_concurrently_but_never_hands_out_more_than_the_screen_needs() -> None:
    sampler = Speed(screen=4, seed=1)
    picks = Counter(sampler.pick(ABC, 0) for _ in range(10))
    assert sorted(picks.values()) == [2, 4, 4]


# --- DAPO --------------------------------------------------------------------------


def test_dapo_filter_skips_tasks_whose_last_g_outcomes_agree() -> None:
    sampler = DynamicFiltering(group=2, seed=3)
    results = {"a": iter("1" * 20), "b": iter("10" * 20), "c": iter("0" * 20)}
    picks = []
    for round_index in range(12):
        picks.append(sampler.pick(ABC, round_index))
        sampler.record(picks[-1], float(next(results[picks[-1]]) == "1"))
    assert sorted(picks[:3]) == ABC  # two full epochs
    assert sorted(picks[3:6]) == ABC
    assert picks[6:] == ["b"] * 6  # then a (all pass) and c (all fail) are skipped
    assert [sampler.skipped(task) for task in ABC] == [True, False, True]


def test_dapo_filter_follows_the_epoch_order_when_every_task_is_skipped() -> None:
    sampler = DynamicFiltering(group=2)
    record_all(sampler, {"a": "11", "b": "00"})
    picks = [sampler.pick(["a", "b"], r) for r in range(4)]
    assert sorted(picks[:2]) == ["a", "b"]
    assert sorted(picks[2:]) == ["a", "b"]


# --- Learnability (GEPA) -----------------------------------------------------------


def test_learnability_tries_every_untried_task_before_any_repeat() -> None:
    sampler = Learnability(seed=4)
    keys = [f"t{i}" for i in range(6)]
    first = []
    for round_index in range(6):
        first.append(sampler.pick(keys, round_index))
        sampler.record(first[-1], 0.0)
    assert sorted(first) == keys
    assert first != keys  # in a seeded order, not the shard's


def test_learnability_is_the_variance_of_the_last_window_scores_from_the_third() -> None:
    # GEPA weights an example once min_candidates (3) candidates have scored it.
    sampler = Learnability(window=3)
    learnability = []
    for score in (0.0, 1.0, 1.0, 0.25):
        sampler.record("a", score)
        learnability.append(sampler.learnability("a"))
    # [0]: 0; [0, 1]: 0, two scores; [0, 1, 1]: 2/9; [1, 1, 0.25]: 1/8
    assert learnability == [0.0, 0.0, pytest.approx(2 / 9), pytest.approx(0.125)]
    assert sampler.stats() == {"a": (2, 4)}
    assert variance([0.2, 0.4, 0.6]) == pytest.approx(0.08 / 3)


def windows(**scores: str) -> dict[str, list[Any]]:
    """State entries ``[passes, trials, window]`` from strings of 0/1 outcomes."""
    return {
        task: [outcomes.count("1"), len(outcomes), [float(o) for o in outcomes]]
        for task, outcomes in scores.items()
    }


def test_learnability_counts_no_variance_before_three_scores() -> None:
    sampler = Learnability()
    # a flipped in two scores, which GEPA would not weight; b varies in three: only b is drawn
    state = {**sampler.state_dict(), "tasks": windows(a="01", b="011", c="1111")}
    counts = next_picks(sampler, state, ABC, 2000)
    assert counts["b"] / 2000 == pytest.approx(1.01 / 1.03, abs=0.01)


def test_learnability_draws_by_variance_over_the_highest_plus_one_percent() -> None:
    sampler = Learnability(window=4)
    # variances: a 1/4 (the highest), b 3/16, c 0: weights 1.01, 0.76 and 0.01
    state = {**sampler.state_dict(), "tasks": windows(a="0101", b="0001", c="1111")}
    counts = next_picks(sampler, state, ABC, 4000)
    assert counts["a"] / 4000 == pytest.approx(1.01 / 1.78, abs=0.025)
    assert counts["b"] / 4000 == pytest.approx(0.76 / 1.78, abs=0.025)
    assert 0 < counts["c"] < 4000 * 0.02


def test_learnability_takes_shuffled_epochs_while_no_task_varies() -> None:
    # GEPA's EpochShuffledBatchSampler while no example varies: the fewest records first,
    # each epoch in a new seeded order.
    keys = [f"t{i}" for i in range(6)]
    sampler = Learnability(seed=3)
    state = windows(t0="00", t1="11", t2="0", t3="11", t4="00", t5="1")
    sampler.load_state_dict({**sampler.state_dict(), "tasks": state})
    picks = []
    for round_index in range(18):
        picks.append(sampler.pick(keys, round_index))
        sampler.record(picks[-1], float(state[picks[-1]][2][-1]))  # its last score again
    assert set(picks[:2]) == {"t2", "t5"}  # one record each: behind by an epoch
    epochs = [picks[2:8], picks[8:14]]
    assert all(sorted(epoch) == keys for epoch in epochs)
    assert epochs[0] != epochs[1]  # a new order each epoch


def test_learnability_spreads_picks_in_flight_beyond_the_varying_task() -> None:
    sampler = Learnability()
    sampler.load_state_dict({**sampler.state_dict(), "tasks": windows(a="01", b="00", c="11")})
    assert len({sampler.pick(ABC, 0) for _ in range(3)}) == 3


def test_learnability_refuses_a_window_longer_than_its_own_or_scores_outside_0_1() -> None:
    sampler = Learnability(window=3)
    good = sampler.state_dict()
    for entry in ([4, 4, [1.0] * 4], [1, 1, [1.5]], [2, 1, [1.0]], [0, 0, [0.0]]):
        with pytest.raises(StateError, match="bad entry for task 'a'"):
            sampler.load_state_dict({**good, "tasks": {"a": entry}})
    assert sampler.state_dict() == good


@pytest.mark.parametrize("factory", [Learnability, FailureAware])
def test_a_run_resumed_among_untried_tasks_picks_as_an_uninterrupted_one(factory: Any) -> None:
    keys = [f"t{i}" for i in range(8)]

    def run(sampler: Any, rounds: range) -> list[str]:
        picks = []
        for round_index in rounds:
            picks.append(sampler.pick(keys, round_index))
            sampler.record(picks[-1], float(picks[-1] < "t3"))
        return picks

    expected = run(factory(seed=2), range(20))
    first = factory(seed=2)
    before = run(first, range(3))
    resumed = factory(seed=2)
    resumed.load_state_dict(first.state_dict())
    assert before + run(resumed, range(3, 20)) == expected


# --- Failure-aware (Opik GEPA v2) --------------------------------------------------

SIDES = {"p1": 1.0, "p2": 1.0, "p3": 1.0, "f1": 0.0, "f2": 0.0, "f3": 0.0}


def tried_once(sampler: FailureAware) -> list[str]:
    """Pick every task of SIDES once, recording its fixed outcome; return the picks."""
    picks = []
    for round_index in range(len(SIDES)):
        picks.append(sampler.pick(list(SIDES), round_index))
        sampler.record(picks[-1], SIDES[picks[-1]])
    return picks


def test_failure_aware_tries_untried_tasks_first_in_a_seeded_order() -> None:
    orders = [tried_once(FailureAware(seed=seed)) for seed in (0, 1)]
    assert all(sorted(order) == sorted(SIDES) for order in orders)
    assert orders[0] != orders[1]


def test_failure_aware_alternates_failing_and_passing_least_recently_picked_first() -> None:
    sampler = FailureAware()
    first = tried_once(sampler)
    picks = []
    for round_index in range(6, 18):
        picks.append(sampler.pick(list(SIDES), round_index))
        sampler.record(picks[-1], SIDES[picks[-1]])
    assert [SIDES[task] for task in picks] == [0.0, 1.0] * 6  # even rounds fail, odd pass
    failing = [task for task in first if task.startswith("f")]
    passing = [task for task in first if task.startswith("p")]
    assert picks[0::2] == failing * 2  # each side rotates in the order it was last picked
    assert picks[1::2] == passing * 2


def test_failure_aware_takes_the_other_side_when_one_is_empty() -> None:
    sampler = FailureAware()
    for task in ABC:
        sampler.record(task, 0.0)  # all failing, none picked yet: ties in seeded order
    picks = []
    for round_index in range(6):
        picks.append(sampler.pick(ABC, round_index))
        sampler.record(picks[-1], 0.0)
    assert sorted(picks[:3]) == ABC
    assert picks[3:] == picks[:3]  # odd rounds too, least recently picked first


def test_failure_aware_moves_a_task_to_the_side_of_its_latest_outcome() -> None:
    sampler = FailureAware(pass_threshold=0.8)
    sides = []
    for score in (0.5, 0.85, 0.79):
        sampler.record("a", score)
        sides.append(sampler.failing("a"))
    assert sides == [True, False, True]
    assert sampler.stats() == {"a": (1, 3)}


def test_failure_aware_counts_a_pick_not_yet_back_as_failing() -> None:
    sampler = FailureAware()
    picked = sampler.pick(["a"], 0)
    assert sampler.failing(picked)
    assert sampler.stats() == {}


def test_failure_aware_passes_over_tasks_in_flight_then_crosses_sides() -> None:
    sampler = FailureAware()
    tried_once(sampler)
    in_flight = [sampler.pick(list(SIDES), 6) for _ in range(5)]
    assert [SIDES[task] for task in in_flight] == [0.0, 0.0, 0.0, 1.0, 1.0]
    assert len(set(in_flight)) == 5


def test_failure_aware_refuses_an_outcome_that_disagrees_with_the_counts() -> None:
    sampler = FailureAware()
    tried_once(sampler)
    good = sampler.state_dict()
    for entry in ([1, None, 1, 1], [1, True, 0, 0], [1, True, 2, 1], [99, True, 1, 1]):
        with pytest.raises(StateError, match="bad entry for task 'a'"):
            sampler.load_state_dict({**good, "tasks": {**good["tasks"], "a": entry}})
    assert sampler.state_dict() == good
