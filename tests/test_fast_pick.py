"""The grouped picks return exactly what the straightforward loops return, ties included."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdescent_sampling import (
    SOLVED,
    DifficultyWeighted,
    FixableFirst,
    InformativeBand,
    RoundRobin,
    TaskSampler,
)
from agentdescent_sampling.bench.reference import (
    ReferenceDifficultyWeighted,
    ReferenceFixableFirst,
    ReferenceInformativeBand,
    ReferenceRoundRobin,
)
from agentdescent_sampling.samplers._groups import TaskGroups
from agentdescent_sampling.samplers.fixable_first import _Task

TASKS = [f"t{i}" for i in range(12)]
shards = st.lists(st.sampled_from(TASKS), min_size=1, max_size=12)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("pick"), shards),
        st.tuples(st.just("record"), st.sampled_from(TASKS), st.sampled_from([0.0, 0.5, 1.0])),
        st.tuples(st.just("record-last"), st.sampled_from([0.0, 1.0])),
    ),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@given(
    ops=operations,
    c=st.sampled_from([0.0, 0.1, 0.2, 1.4]),
    spread=st.booleans(),
    threshold=st.sampled_from([0.5, 0.999]),
)
def test_grouped_picks_equal_the_reference_loop(
    ops: list[tuple[object, ...]], c: float, spread: bool, threshold: float
) -> None:
    fast = DifficultyWeighted(c=c, pass_threshold=threshold, spread_in_flight=spread)
    reference = ReferenceDifficultyWeighted(c, threshold, spread_in_flight=spread)
    last = None
    for op in ops:
        if op[0] == "pick":
            keys = list(op[1])  # type: ignore[call-overload]
            last = reference.pick(keys, 0)
            assert fast.pick(keys, 0) == last
        elif op[0] == "record":
            reference.record(op[1], op[2])  # type: ignore[arg-type]
            fast.record(op[1], op[2])  # type: ignore[arg-type]
        elif last is not None:
            reference.record(last, op[1])  # type: ignore[arg-type]
            fast.record(last, op[1])  # type: ignore[arg-type]
    assert fast.stats() == reference.stats


def test_large_shards_with_many_records_stay_exact() -> None:
    rng = random.Random(5)
    keys = [f"k{i}" for i in range(2000)]
    fast = DifficultyWeighted()
    reference = ReferenceDifficultyWeighted()
    truth = {key: rng.random() for key in keys}
    for _ in range(2500):  # enough records to trigger the index compaction
        picked = reference.pick(keys, 0)
        assert fast.pick(keys, 0) == picked
        score = float(rng.random() < truth[picked])
        reference.record(picked, score)
        fast.record(picked, score)


@pytest.mark.parametrize("spread", [False, True])
def test_picks_stay_exact_while_shards_of_new_keys_push_old_ones_out_of_the_cache(
    spread: bool,
) -> None:
    rng = random.Random(7)
    universe = [f"k{i}" for i in range(20_000)]
    fast = DifficultyWeighted(spread_in_flight=spread)
    reference = ReferenceDifficultyWeighted(spread_in_flight=spread)
    known = []
    for round_index in range(60):
        shard = rng.sample(universe, 200)
        for _ in range(5):
            picked = reference.pick(shard, round_index)
            assert fast.pick(shard, round_index) == picked
            score = float(rng.random() < 0.5)
            reference.record(picked, score)
            fast.record(picked, score)
        known.append(len(fast._index._shared.ids))  # the keys the index remembers
    # Shards pushed out of the cache were forgotten: the index holds about the eight
    # cached shards' keys, not every key seen (60 shards of 200 would be ~10,000).
    assert max(known) < 5_000
    assert fast.stats() == reference.stats


class LoopFixableFirst(ReferenceFixableFirst):
    """The reference loop, with the counts its values learn from taken afresh from every
    task on each call, so that nothing it reads is kept up to date as the sampler goes."""

    def _grouping(self) -> TaskGroups[_Task]:
        groups = TaskGroups(self._filing, self._specimen)
        groups.touch(*self._tasks)
        return groups


class ExactFixableFirst(FixableFirst):
    """fixable-first picking the exact best, as the bench's learner ceiling does."""

    _band = 1.0


class ExactLoopFixableFirst(LoopFixableFirst):
    _band = 1.0


def crafted_state(rng: random.Random, keys: Sequence[str]) -> dict[str, Any]:
    """A valid saved state with tasks of every kind, many artifact changes, and lasts and
    seens that tie and differ: long-unchanged tasks that only passed are worth exactly the
    same, so the tie rule decides between them."""
    changes = rng.choice([0, 3, 40, 5_000])
    tasks: dict[str, list[int]] = {}
    credit: dict[str, float] = {}
    no_commit: list[str] = []
    refused: dict[str, int] = {}
    for key in rng.sample(list(keys), rng.randrange(len(keys) + 1)):
        fails, passes = rng.choice([0, 0, 1, 2, 3, 5]), rng.choice([0, 1, 2, 4])
        if not fails and not passes:
            passes = 1
        streak = rng.randrange(passes + 1) if fails else passes
        mixed = int(streak < passes)  # it failed after a pass
        last = rng.choice([-1, 0, 1, 2, rng.randrange(50)])
        seen = rng.choice([0, changes, rng.randrange(changes + 1)])
        tasks[key] = [fails, passes, streak, mixed, last, seen]
        if fails and (not streak or mixed) and rng.random() < 0.5:
            if rng.random() < 0.5:
                credit[key] = rng.choice([0.25, 0.5, 0.9, rng.random()])
            else:
                no_commit.append(key)
        if fails and not mixed and rng.random() < 0.3:
            refused[key] = rng.randrange(1, fails + 1)
    pairs = [[rng.choice([0.5, 3.0]), rng.choice([20.0, 50.0])] for _ in range(4)]
    return {
        "sampler": FixableFirst.name,
        "version": 1,
        "params": {"pass_threshold": SOLVED},
        "picks": 50,
        "changes": changes,
        "tasks": tasks,
        "credit": credit,
        "no_commit": no_commit,
        "refused": refused,
        "evidence": pairs,
    }


def assert_counts_match_every_task(sampler: FixableFirst) -> None:
    """The groups' population counts what a pass over every task counts."""
    tasks = sampler._tasks.values()
    counted: Counter[tuple[int, int, bool]] = Counter()
    for task, count in sampler._grouping().population():
        counted[task.fails, task.streak, task.mixed] += count
    assert counted == Counter((t.fails, t.streak, t.mixed) for t in tasks)


def drive(seed: int, steps: int, exact: bool = False) -> None:
    """Drive the grouped and the loop sampler through one seeded random trace, asserting
    the same pick every time; with ``exact``, both pick the best, not within the band."""
    rng = random.Random(seed)
    universe = [f"t{i}" for i in range(rng.choice([3, 12, 40]))]
    shards: list[Sequence[str]] = [universe]
    for _ in range(rng.randrange(1, 5)):
        shard = rng.choices(universe, k=rng.randrange(1, len(universe) + 3))  # repeats too
        shards.append(tuple(shard) if rng.random() < 0.3 else shard)
    fast, loop = (
        (ExactFixableFirst(), ExactLoopFixableFirst())
        if exact
        else (FixableFirst(), LoopFixableFirst())
    )
    picked: list[str] = []
    for step in range(steps):
        roll = rng.random()
        if roll < 0.35:
            if rng.random() < 0.05:  # a shard never seen, pushing old ones from the cache
                shard = rng.sample(universe, rng.randrange(1, len(universe) + 1))
            else:
                shard = rng.choice(shards)
            choice = loop.pick(shard, step)
            assert fast.pick(shard, step) == choice, (seed, step)
            picked.append(choice)
        elif roll < 0.7:
            key = picked.pop(rng.randrange(len(picked))) if picked else rng.choice(universe)
            score = rng.choice([0.0, 1.0])
            loop.record(key, score)
            fast.record(key, score)
        elif roll < 0.8:
            key, gain = rng.choice(universe), rng.choice([0.0, 1.0, None])
            committed = rng.random() < 0.5
            loop.evidence(key, gain, committed)
            fast.evidence(key, gain, committed)
        elif roll < 0.92:
            committed = rng.choice([0, 0, 1, 2])
            loop.end_round(committed)
            fast.end_round(committed)
        elif roll < 0.96:
            state = fast.state_dict()  # a restart: what was in flight is lost
            loop.load_state_dict(state)
            fast.load_state_dict(state)
            picked = []
        else:
            state = crafted_state(rng, universe)
            loop.load_state_dict(state)
            fast.load_state_dict(state)
            picked = []
        if step % 25 == 0:
            assert_counts_match_every_task(fast)
    assert fast.state_dict() == loop.state_dict()


@pytest.mark.parametrize("block", range(10))
def test_fixable_first_grouped_picks_equal_the_loop_on_random_traces(block: int) -> None:
    for seed in range(block * 40, block * 40 + 40):
        drive(seed, 250)


@pytest.mark.parametrize("block", range(3))
def test_grouped_picks_of_the_exact_best_equal_the_loop_on_random_traces(block: int) -> None:
    for seed in range(block * 40, block * 40 + 40):
        drive(seed, 250, exact=True)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 120))
def test_fixable_first_grouped_picks_equal_the_loop_for_any_seed(seed: int, steps: int) -> None:
    drive(seed, steps)


def test_fixable_first_ties_between_long_unchanged_passing_tasks_go_to_the_least_recent() -> None:
    # Thousands of artifact changes since these passed: each is surely broken, and worth
    # exactly what the others are, whatever its seen; the least recently picked then wins.
    keys = [f"p{i}" for i in range(6)]
    rows = {key: [0, 1, 1, 0, 10 - i, 10 * i] for i, key in enumerate(keys)}
    rows["recent"] = [0, 1, 1, 0, 0, 5_000]  # passed just now: worth less, picked longest ago
    keys.append("recent")
    state = crafted_state(random.Random(0), [])
    state.update(
        changes=5_000, tasks=rows, evidence=[[1.0, 2.0], [0.5, 4.0], [0.5, 4.0], [0.5, 20.0]]
    )
    state["picks"] = 10  # too few for any task to be overdue, so the values decide
    fast, loop = FixableFirst(), LoopFixableFirst()
    fast.load_state_dict(state)
    loop.load_state_dict(state)
    values = fast._values()
    assert values.of(fast._tasks["p0"]) == values.of(fast._tasks["p5"])  # seen 0 and 50
    assert values.of(fast._tasks["recent"]) < values.of(fast._tasks["p5"])
    assert loop.pick(keys, 0) == fast.pick(keys, 0) == "p5"  # last 5, the least


def test_fixable_first_stays_exact_while_shards_of_new_keys_push_old_ones_out_of_the_cache() -> (
    None
):
    rng = random.Random(11)
    universe = [f"k{i}" for i in range(20_000)]
    fast, loop = FixableFirst(), LoopFixableFirst()
    known = []
    home = rng.sample(universe, 200)  # revisited throughout, so it stays cached
    for round_index in range(60):
        shard = rng.sample(universe, 200)
        for keys in [shard] * 4 + [home] * 2:
            picked = loop.pick(keys, round_index)
            assert fast.pick(keys, round_index) == picked
            score = float(rng.random() < 0.3)
            loop.record(picked, score)
            fast.record(picked, score)
        loop.end_round(1)
        fast.end_round(1)
        known.append(len(fast._groups._ids))  # the keys the groups remember
    # Shards pushed out of the cache were forgotten: about the eight cached shards' keys
    # are remembered, not every key seen (60 shards of 200 would be ~11,000).
    assert max(known) < 5_000
    assert fast.state_dict() == loop.state_dict()


def shards_in_turn(rng: random.Random, universe: list[str]) -> list[Sequence[str]]:
    """Far more shards than eight, to be used in turn: the universe dealt among many
    workers, rotations of all of it (more than the memory bound lets a cache hold), shards
    with the same length and end keys, with repeated keys, and tuples."""
    dealt = rng.choice([9, 12, 20])
    shards: list[Sequence[str]] = [universe[start::dealt] for start in range(dealt)]
    step = len(universe) // 10
    shards += [universe[start:] + universe[:start] for start in range(0, 10 * step, step)]
    first, last = universe[0], universe[-1]
    for _ in range(3):  # found again by their ends, told apart by their middles
        shards.append([first, *rng.sample(universe[1:-1], 5), last])
    for _ in range(3):
        shards.append(rng.choices(universe, k=rng.randrange(2, 30)))  # keys repeated
    rng.shuffle(shards)
    return [tuple(shard) if rng.random() < 0.2 else shard for shard in shards]


SAMPLERS_AND_REFERENCES = {
    "round-robin": lambda: (RoundRobin(), ReferenceRoundRobin()),
    "difficulty-weighted": lambda: (DifficultyWeighted(), ReferenceDifficultyWeighted()),
    "difficulty-weighted, spreading": lambda: (
        DifficultyWeighted(spread_in_flight=True),
        ReferenceDifficultyWeighted(spread_in_flight=True),
    ),
    "informative-band": lambda: (InformativeBand(), ReferenceInformativeBand()),
    "fixable-first": lambda: (FixableFirst(), LoopFixableFirst()),
}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", SAMPLERS_AND_REFERENCES)
def test_picks_stay_exact_when_more_shards_than_eight_are_used_in_turn(
    name: str, seed: int
) -> None:
    rng = random.Random(seed)
    universe = [f"t{i}" for i in range(rng.choice([40, 150]))]
    shards = shards_in_turn(rng, universe)
    fast: TaskSampler
    reference: Any
    fast, reference = SAMPLERS_AND_REFERENCES[name]()
    in_flight: list[str] = []
    if rng.random() < 0.5:  # the whole universe first: the dealt shards' keys then spread thinly
        in_flight.append(reference.pick(universe, 0))
        assert fast.pick(universe, 0) == in_flight[0]
    for step in range(1, 500):
        if step % 100 == 0:  # keys never seen, enough to make the index forget dropped ones
            shard: Sequence[str] = [f"new{step}-{i}" for i in range(rng.randrange(1, 3000))]
        elif rng.random() < 0.8:
            shard = shards[step % len(shards)]
        else:
            shard = rng.choice(shards)
        picked = reference.pick(shard, step)
        assert fast.pick(shard, step) == picked, (name, seed, step)
        in_flight.append(picked)
        if rng.random() < 0.8 or len(in_flight) > 6:  # a few stay in flight a while
            key = in_flight.pop(rng.randrange(len(in_flight)) if len(in_flight) <= 6 else 0)
            score = rng.choice([0.0, 1.0, 1.0, 0.5])
            fast.record(key, score)
            reference.record(key, score)
        if isinstance(fast, FixableFirst) and rng.random() < 0.1:
            committed = rng.choice([0, 1])
            fast.end_round(committed)
            reference.end_round(committed)
