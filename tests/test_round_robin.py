import pytest

from agentdescent_sampling import RoundRobin


def test_picks_cycle_through_the_shard_in_order() -> None:
    sampler = RoundRobin()
    keys = ["a", "b", "c"]
    assert [sampler.pick(keys, r) for r in range(7)] == ["a", "b", "c", "a", "b", "c", "a"]


def test_record_learns_nothing() -> None:
    sampler = RoundRobin()
    sampler.record("a", 1.0)
    sampler.record("b", 0.0)
    assert [sampler.pick(["a", "b"], r) for r in range(2)] == ["a", "b"]


def test_tuples_and_one_key_shards_work() -> None:
    assert RoundRobin().pick(("x", "y"), 3) == "y"
    assert RoundRobin().pick(["only"], 41) == "only"


def test_empty_shard_raises_value_error() -> None:
    with pytest.raises(ValueError, match="empty shard"):
        RoundRobin().pick([], 0)


def test_round_index_must_be_an_integer() -> None:
    with pytest.raises(TypeError):
        RoundRobin().pick(["a"], 0.5)  # type: ignore[arg-type]


def test_record_rejects_bad_scores() -> None:
    with pytest.raises(ValueError, match="'t1'"):
        RoundRobin().record("t1", 1.5)
    with pytest.raises(TypeError):
        RoundRobin().record("t1", "1.0")  # type: ignore[arg-type]


def test_repr_reads_like_the_call_that_built_it() -> None:
    assert repr(RoundRobin()) == "RoundRobin(spread_in_flight=False)"


def test_spreading_hands_workers_in_one_round_the_next_free_keys() -> None:
    sampler = RoundRobin(spread_in_flight=True)
    keys = ["a", "b", "c", "d"]
    assert [sampler.pick(keys, 2) for _ in range(3)] == ["c", "d", "a"]
    sampler.record("c", 1.0)
    assert sampler.pick(keys, 2) == "c"  # c came back; d and a are still in flight


def test_spreading_changes_nothing_for_a_single_worker() -> None:
    plain, spreading = RoundRobin(), RoundRobin(spread_in_flight=True)
    keys = ["a", "b", "c"]
    for r in range(7):
        picked = spreading.pick(keys, r)
        assert picked == plain.pick(keys, r)
        spreading.record(picked, 0.0)
