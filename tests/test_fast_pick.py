"""The grouped pick returns exactly what the straightforward loop returns, ties included."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdescent_sampling import DifficultyWeighted
from agentdescent_sampling.bench.reference import ReferenceDifficultyWeighted

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
