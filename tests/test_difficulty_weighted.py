import math

import pytest

from agentdescent_sampling import SOLVED, DifficultyWeighted
from agentdescent_sampling.bench.reference import ReferenceDifficultyWeighted


def test_every_untried_task_is_picked_before_any_repeat() -> None:
    sampler = DifficultyWeighted()
    keys = [f"t{i}" for i in range(10)]
    picked = []
    for r in range(10):
        task = sampler.pick(keys, r)
        picked.append(task)
        sampler.record(task, 0.0)
    assert picked == keys


def test_always_pass_and_never_pass_tasks_lose_to_a_mixed_one() -> None:
    sampler = DifficultyWeighted()
    keys = ["always", "never", "mixed"]
    for _ in range(4):
        sampler.record("always", 1.0)
        sampler.record("never", 0.0)
    for score in (1.0, 0.0, 1.0, 0.0):
        sampler.record("mixed", score)
    assert [sampler.pick(keys, r) for r in range(5)] == ["mixed"] * 5


def test_a_score_of_exactly_solved_is_a_pass_and_just_below_is_not() -> None:
    sampler = DifficultyWeighted()
    sampler.record("at", SOLVED)
    sampler.record("below", math.nextafter(SOLVED, 0.0))
    assert sampler.stats() == {"at": (1, 1), "below": (0, 1)}


def test_a_lower_pass_threshold_counts_graded_scores() -> None:
    sampler = DifficultyWeighted(pass_threshold=0.8)
    sampler.record("t", 0.85)
    sampler.record("t", 0.79)
    assert sampler.stats() == {"t": (1, 2)}


def test_ties_go_to_the_earliest_key() -> None:
    sampler = DifficultyWeighted()
    for key in ("b", "a"):
        sampler.record(key, 1.0)
        sampler.record(key, 0.0)
    assert sampler.pick(["b", "a"], 0) == "b"
    assert sampler.pick(["a", "b"], 0) == "a"


def test_picks_follow_the_doc_formula_on_a_long_random_run() -> None:
    import random

    rng = random.Random(7)
    sampler = DifficultyWeighted(c=0.3)
    reference = ReferenceDifficultyWeighted(c=0.3)
    keys = [f"t{i}" for i in range(12)]
    truth = {key: rng.random() for key in keys}
    for picks in range(1, 400):
        shard = rng.sample(keys, 8)
        expected = reference.pick(shard, picks)
        assert sampler.pick(shard, picks) == expected
        score = 1.0 if rng.random() < truth[expected] else 0.0
        sampler.record(expected, score)
        reference.record(expected, score)
    assert sampler.stats() == reference.stats


def test_pick_does_not_mutate_keys() -> None:
    sampler = DifficultyWeighted()
    keys = ["c", "a", "b"]
    sampler.record("a", 1.0)
    sampler.pick(keys, 0)
    assert keys == ["c", "a", "b"]


def test_record_accepts_ids_outside_the_current_shard() -> None:
    sampler = DifficultyWeighted()
    sampler.pick(["a"], 0)
    sampler.record("elsewhere", 0.5)
    assert sampler.stats() == {"elsewhere": (0, 1)}


@pytest.mark.parametrize("score", [math.nan, math.inf, -0.5, 2.0, None, "x"])
def test_a_rejected_score_changes_no_statistics(score: object) -> None:
    sampler = DifficultyWeighted()
    sampler.record("t", 1.0)
    with pytest.raises((ValueError, TypeError)):
        sampler.record("t", score)  # type: ignore[arg-type]
    assert sampler.stats() == {"t": (1, 1)}


def test_stats_is_a_copy() -> None:
    sampler = DifficultyWeighted()
    sampler.record("t", 1.0)
    sampler.stats()["t"] = (9, 9)
    assert sampler.stats() == {"t": (1, 1)}


@pytest.mark.parametrize(
    ("params", "error", "fragment"),
    [
        ({"c": -0.1}, ValueError, "c=-0.1"),
        ({"c": "big"}, TypeError, "c='big'"),
        ({"c": True}, TypeError, "c=True"),
        ({"pass_threshold": 0.0}, ValueError, "pass_threshold=0.0"),
        ({"pass_threshold": 1.5}, ValueError, "pass_threshold=1.5"),
        ({"prior": -0.1}, ValueError, "prior=-0.1"),
        ({"prior": math.nan}, ValueError, "prior=nan"),
    ],
)
def test_parameters_are_validated_with_clear_errors(
    params: dict[str, object], error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=fragment.replace("(", r"\(")):
        DifficultyWeighted(**params)  # type: ignore[arg-type]


def test_defaults_match_the_doc() -> None:
    assert repr(DifficultyWeighted()) == (
        "DifficultyWeighted(c=0.2, pass_threshold=0.999, prior=0.5, spread_in_flight=False)"
    )


def test_without_spreading_concurrent_picks_all_take_the_same_argmax() -> None:
    sampler = DifficultyWeighted()
    assert [sampler.pick(["a", "b", "c"], 0) for _ in range(3)] == ["a", "a", "a"]


def test_spreading_leaves_sequential_picks_exactly_as_the_doc_rule() -> None:
    import random

    rng = random.Random(3)
    plain, spread = DifficultyWeighted(), DifficultyWeighted(spread_in_flight=True)
    keys = [f"t{i}" for i in range(15)]
    for r in range(300):
        picked = plain.pick(keys, r)
        assert spread.pick(keys, r) == picked
        score = float(rng.random() < 0.4)
        plain.record(picked, score)
        spread.record(picked, score)


def test_a_pick_never_recorded_stops_counting_as_in_flight_after_the_ttl() -> None:
    from agentdescent_sampling.pending import TTL_PICKS

    sampler = DifficultyWeighted(spread_in_flight=True)
    assert sampler.pick(["lost", "b"], 0) == "lost"  # its rollout fails: no record
    for r in range(TTL_PICKS):
        picked = sampler.pick(["lost", "b"], r)
        assert picked == "b"
        sampler.record("b", 0.0)
    assert sampler.pick(["lost", "b"], 0) == "lost"


def test_the_prior_never_changes_a_pick() -> None:
    # The guide: an untried task keeps the optimistic prior p = 0.5. In the engine's rule an
    # untried task wins outright, so a prior of 0 or 0.3 must pick exactly as the default.
    import random

    rng = random.Random(5)
    samplers = [DifficultyWeighted(prior=prior) for prior in (0.5, 0.0, 0.3)]
    tasks = [f"t{i}" for i in range(12)]
    for r in range(300):
        shard = rng.sample(tasks, rng.randint(1, 12))
        picks = {sampler.pick(shard, r) for sampler in samplers}
        assert len(picks) == 1, (r, picks)
        [picked] = picks
        score = float(rng.random() < 0.5)
        for sampler in samplers:
            sampler.record(picked, score)


class _HeldLock:
    """A lock that knows whether it is held: to see that a method changes state under it."""

    def __init__(self) -> None:
        self.held = False

    def __enter__(self) -> None:
        self.held = True

    def __exit__(self, *exc: object) -> None:
        self.held = False


class _GuardedStats(dict[str, tuple[int, int]]):
    def __init__(self, lock: _HeldLock) -> None:
        super().__init__()
        self.lock = lock

    def __setitem__(self, key: str, value: tuple[int, int]) -> None:
        assert self.lock.held, "statistics changed without the lock"
        super().__setitem__(key, value)


def test_statistics_change_only_under_the_lock() -> None:
    # The guide: "DifficultyWeighted guards its statistics with a lock", since the workers of
    # evolve(max_concurrency > 1) call pick and record on one instance at once.
    sampler = DifficultyWeighted()
    lock = _HeldLock()
    sampler._lock = lock  # type: ignore[assignment]
    sampler._stats = _GuardedStats(lock)
    for r in range(6):
        picked = sampler.pick(["a", "b", "c"], r)
        sampler.record(picked, float(r % 2))
    assert sum(trials for _, trials in sampler.stats().values()) == 6
