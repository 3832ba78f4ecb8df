"""The rollout loop calls a sampler the way the engine's sync and async paths do."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agentdescent_sampling import DifficultyWeighted, RoundRobin
from agentdescent_sampling.bench import WORKLOADS, Rollout, RolloutLoop, Stationary, drive
from agentdescent_sampling.errors import BenchError


class Recorder:
    """Round-robin that remembers every call, and how many picks were awaiting a score."""

    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, object, object]] = []
        self.outstanding = 0
        self.most_outstanding = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.calls.append(("pick", list(keys), round_index))
        self.outstanding += 1
        self.most_outstanding = max(self.most_outstanding, self.outstanding)
        return keys[round_index % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        self.calls.append(("record", task_id, score))
        self.outstanding -= 1


class First:
    """Always the first key: every in-flight worker on a shared shard collides."""

    name = "first"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        return None


def _share(rollouts: Sequence[Rollout]) -> float:
    return sum(rollout.informative for rollout in rollouts) / len(rollouts)


@pytest.mark.parametrize("n_workers", [1, 2, 4])
@pytest.mark.parametrize("budget", [40, 80, 200])
def test_round_robin_spends_exactly_6_of_40_on_stationary_when_budget_is_a_multiple_of_40(
    n_workers: int, budget: int
) -> None:
    loop = RolloutLoop(budget=budget, n_workers=n_workers)
    for seed in range(3):
        rollouts = drive(RoundRobin(), WORKLOADS["stationary"].build(seed), loop, seed)
        assert _share(rollouts) == 6 / 40


def test_the_budget_is_spent_exactly_even_when_it_splits_a_round() -> None:
    rollouts = drive(RoundRobin(), Stationary().build(0), RolloutLoop(budget=7, n_workers=3), 0)
    assert len(rollouts) == 7


def test_sync_path_hands_out_rotating_shards_with_the_round_number() -> None:
    scenario = Stationary(n_tasks=6, n_informative=2).build(0)
    keys = list(scenario.keys)
    recorder = Recorder()
    drive(recorder, scenario, RolloutLoop(budget=4, n_workers=2), 0)
    picks = [(shard, index) for kind, shard, index in recorder.calls if kind == "pick"]
    even, odd = keys[0::2], keys[1::2]
    assert picks == [(even, 0), (odd, 0), (odd, 1), (even, 1)]


def test_async_path_gives_each_worker_a_fixed_shard_and_its_own_pick_count() -> None:
    scenario = Stationary(n_tasks=6, n_informative=2).build(0)
    keys = list(scenario.keys)
    recorder = Recorder()
    loop = RolloutLoop(budget=30, n_workers=2, asynchronous=True)
    rollouts = drive(recorder, scenario, loop, 0)
    picks = [(shard, index) for kind, shard, index in recorder.calls if kind == "pick"]
    for worker, shard in enumerate((keys[0::2], keys[1::2])):
        indices = [index for seen, index in picks if seen == shard]
        assert indices == list(range(len(indices)))
        assert {r.worker for r in rollouts if r.task_id in shard} == {worker}
    assert recorder.most_outstanding == 2


def test_a_score_comes_back_only_after_every_in_flight_pick_is_made() -> None:
    recorder = Recorder()
    loop = RolloutLoop(budget=8, n_workers=4, max_concurrency=4)
    drive(recorder, Stationary().build(0), loop, 0)
    kinds = [kind for kind, *_ in recorder.calls]
    assert kinds[:5] == ["pick"] * 4 + ["record"]


@pytest.mark.parametrize(("n_workers", "limit"), [(6, 3), (6, 1), (2, 4)])
def test_max_concurrency_caps_the_picks_awaiting_a_score(n_workers: int, limit: int) -> None:
    recorder = Recorder()
    loop = RolloutLoop(budget=60, n_workers=n_workers, max_concurrency=limit)
    drive(recorder, Stationary().build(0), loop, 0)
    assert recorder.most_outstanding == min(limit, n_workers)


def test_in_flight_picks_of_one_task_on_a_shared_shard_are_duplicates() -> None:
    loop = RolloutLoop(budget=40, n_workers=4, max_concurrency=4, shared_shard=True)
    rollouts = drive(First(), Stationary().build(0), loop, 0)
    assert sum(rollout.duplicate for rollout in rollouts) == 30


def test_split_shards_never_put_one_task_in_flight_twice() -> None:
    loop = RolloutLoop(budget=80, n_workers=4, max_concurrency=4)
    rollouts = drive(DifficultyWeighted(), Stationary().build(0), loop, 0)
    assert not any(rollout.duplicate for rollout in rollouts)


def test_a_rollout_is_informative_exactly_when_its_true_p_is_in_the_band() -> None:
    rollouts = drive(RoundRobin(), WORKLOADS["drift"].build(0), RolloutLoop(budget=200), 0)
    assert all(r.informative == (0.1 <= r.true_p <= 0.9) for r in rollouts)
    assert {r.informative for r in rollouts} == {True, False}


def test_the_same_seed_gives_the_same_rollouts() -> None:
    loop = RolloutLoop(budget=120, n_workers=3, max_concurrency=2)

    def outcome(seed: int) -> list[tuple[object, ...]]:
        rollouts = drive(DifficultyWeighted(), WORKLOADS["noisy"].build(seed), loop, seed)
        return [rollout[:-2] for rollout in rollouts]  # all but the timings

    assert outcome(4) == outcome(4)
    assert outcome(4) != outcome(5)


def test_a_pick_outside_the_shard_is_reported_naming_the_sampler() -> None:
    class Stray(First):
        name = "stray"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return "not-a-task"

    with pytest.raises(BenchError, match="sampler 'stray' picked 'not-a-task'"):
        drive(Stray(), Stationary().build(0), RolloutLoop(budget=5), 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": 0}, "budget=0"),
        ({"n_workers": True}, "n_workers=True"),
        ({"max_concurrency": 0}, "max_concurrency=0"),
    ],
)
def test_a_bad_loop_is_rejected_naming_the_value(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RolloutLoop(**kwargs)  # type: ignore[arg-type]
