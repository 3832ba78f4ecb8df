"""Property-based tests of every built-in sampler: random valid and invalid call sequences."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentdescent_sampling import SamplerInfo, available, create
from agentdescent_sampling.registry import default_registry

BUILT_INS = sorted(
    record.name
    for record in available()
    if isinstance(record, SamplerInfo) and record.distribution == "agentdescent-sampling"
)
TASKS = [f"task-{i}" for i in range(10)]

shards = st.one_of(
    st.lists(st.sampled_from(TASKS), min_size=1, max_size=10),  # overlapping, repeats allowed
    st.lists(st.sampled_from(TASKS), min_size=1, max_size=10).map(tuple),
    st.sampled_from(TASKS).map(lambda task: [task]),  # one-key shards
    st.integers(0, 9).map(lambda start: TASKS[start:] + TASKS[:start]),  # rotating
)
valid_scores = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0), st.integers(0, 1))
operations = st.lists(
    st.one_of(
        st.tuples(st.just("pick"), shards, st.integers(0, 10_000)),
        st.tuples(st.just("record"), st.sampled_from([*TASKS, "elsewhere"]), valid_scores),
        st.tuples(st.just("record-last"), valid_scores),
    ),
    max_size=80,
)
invalid_scores = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, None, "0.5", b"1", True, [0.5], 10**400]),
    st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False),
    st.floats(min_value=1.0000001, allow_nan=False, allow_infinity=False),
)
invalid_shards = st.sampled_from([[], (), None, "abc", {"a", "b"}, {"a": 1}, 5, iter(["a"])])


def build(name: str) -> Any:
    """A fresh instance; samplers that take a seed get a fixed one."""
    takes_seed = any(p.name == "seed" for p in default_registry().get(name).signature.parameters)
    return create({"name": name, "seed": 11} if takes_seed else name)


def trials(sampler: Any) -> int | None:
    stats = getattr(sampler, "stats", None)
    return sum(count for _, count in stats().values()) if callable(stats) else None


def replay(sampler: Any, ops: list[tuple[Any, ...]]) -> tuple[list[str], int]:
    """Run ``ops``, checking the invariants on the way; return the picks and records made."""
    picks: list[str] = []
    records = 0
    for op in ops:
        if op[0] == "pick":
            keys = op[1]
            before = list(keys)
            picked = sampler.pick(keys, op[2])
            assert picked in keys
            assert list(keys) == before
            picks.append(picked)
        else:
            task = op[1] if op[0] == "record" else (picks[-1] if picks else TASKS[0])
            sampler.record(task, op[-1])
            records += 1
    return picks, records


@pytest.mark.parametrize("name", BUILT_INS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_valid_sequences_keep_every_invariant(name: str, ops: list[tuple[Any, ...]]) -> None:
    sampler = build(name)
    picks, records = replay(sampler, ops)
    assert trials(sampler) in (None, records)
    assert replay(build(name), ops)[0] == picks  # same seed and sequence, same picks


@pytest.mark.parametrize("name", BUILT_INS)
@settings(max_examples=100, deadline=None)
@given(ops=operations, score=invalid_scores)
def test_invalid_scores_raise_and_change_no_statistics(
    name: str, ops: list[tuple[Any, ...]], score: object
) -> None:
    sampler = build(name)
    replay(sampler, ops)
    before = sampler.state_dict()
    expected = (
        TypeError if score is None or isinstance(score, (str, bytes, bool, list)) else ValueError
    )
    with pytest.raises(expected, match="task-0"):
        sampler.record("task-0", score)
    assert sampler.state_dict() == before


@pytest.mark.parametrize("name", BUILT_INS)
@settings(max_examples=60, deadline=None)
@given(ops=operations, keys=invalid_shards)
def test_invalid_shards_raise_and_change_nothing(
    name: str, ops: list[tuple[Any, ...]], keys: object
) -> None:
    sampler = build(name)
    replay(sampler, ops)
    before = sampler.state_dict()
    expected = ValueError if keys in ([], ()) else TypeError
    with pytest.raises(expected):
        sampler.pick(keys, 0)
    assert sampler.state_dict() == before


#: Shards a pick must refuse: the first key is not a string (unhashable or not), so even
#: round-robin, which looks at one key, sees it.
unpickable_shards = st.sampled_from(
    [[["task-0"]], [{"a": 1}, "task-1"], [{"task-2"}], [1, "task-0"], (None,), [b"task-0"]]
)
EVERY_VARIANT = [
    *BUILT_INS,
    "round-robin:spread_in_flight=true",
    "difficulty-weighted:spread_in_flight=true",
]


@pytest.mark.parametrize("spec", EVERY_VARIANT)
@settings(max_examples=60, deadline=None)
@given(before=operations, keys=unpickable_shards, after=operations)
def test_a_pick_that_raises_changes_nothing(
    spec: str, before: list[tuple[Any, ...]], keys: list[Any], after: list[tuple[Any, ...]]
) -> None:
    sampler, twin = create(spec), create(spec)
    replay(sampler, before)
    replay(twin, before)
    with pytest.raises(TypeError, match="task ids as strings"):
        sampler.pick(keys, 0)
    # The pick counter; round-robin's is not in its state_dict().
    assert getattr(sampler, "_picks", None) == getattr(twin, "_picks", None)
    assert sampler.state_dict() == twin.state_dict()
    assert replay(sampler, after) == replay(twin, after)


@pytest.mark.parametrize("name", ["difficulty-weighted", "informative-band"])
def test_a_key_that_is_not_a_string_anywhere_in_the_shard_is_refused(name: str) -> None:
    sampler = create(name)
    with pytest.raises(TypeError, match=r"got list \['b'\]"):
        sampler.pick(["a", ["b"], "c"], 0)
    assert sampler.pick(["a", "b", "c"], 0) == "a"
