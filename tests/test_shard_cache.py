"""The shard cache keeps every shard in use, within its memory bound.

Whether a pick is served by a cached index or a rebuilt one never changes it
(``test_fast_pick.py`` pins that); these tests pin which shards stay cached.
"""

from __future__ import annotations

import random
from array import array
from typing import Any

import pytest

from agentdescent_sampling import DifficultyWeighted, FixableFirst, InformativeBand
from agentdescent_sampling.samplers._index import Positions

KEYS = [f"task-{i:04d}" for i in range(960)]


def cache_of(sampler: Any) -> Any:
    return sampler._groups._shards if isinstance(sampler, FixableFirst) else sampler._index._shards


def known_keys(sampler: Any) -> int:
    if isinstance(sampler, FixableFirst):
        return len(sampler._groups._ids)
    return len(sampler._index._shared.ids)


def cycle(sampler: Any, shards: list[list[str]], passes: int) -> None:
    for round_index, shard in enumerate(shards * passes):
        sampler.record(sampler.pick(shard, round_index), float(round_index % 3 == 0))


SAMPLERS = [DifficultyWeighted, InformativeBand, FixableFirst]


@pytest.mark.parametrize("workers", [9, 16, 64])
@pytest.mark.parametrize("make", SAMPLERS)
def test_every_shard_dealt_to_more_than_eight_workers_stays_cached(make: Any, workers: int) -> None:
    sampler = make()
    cycle(sampler, [KEYS[start::workers] for start in range(workers)], passes=3)
    assert len(cache_of(sampler)) == workers


@pytest.mark.parametrize(("workers", "cached"), [(200, 200), (300, 8)])
def test_at_most_256_shards_stay_cached_since_a_record_refiles_its_task_in_each(
    workers: int, cached: int
) -> None:
    # More than 256 shards in turn: each is forgotten before it comes back, so none is known
    # to be in use, and the cache keeps its first eight, as before it grew.
    sampler = DifficultyWeighted()
    cycle(sampler, [KEYS[start::workers] for start in range(workers)], passes=3)
    assert len(cache_of(sampler)) == cached


@pytest.mark.parametrize("make", SAMPLERS)
def test_shards_picked_from_once_each_do_not_grow_the_cache(make: Any) -> None:
    rng = random.Random(3)
    sampler = make()
    cycle(sampler, [rng.sample(KEYS, 40) for _ in range(50)], passes=1)
    assert len(cache_of(sampler)) == 8


@pytest.mark.parametrize("make", SAMPLERS)
def test_shards_of_every_key_beyond_eight_are_not_cached(make: Any) -> None:
    # Twelve shards of all 960 keys would hold twelve keys per known key; the bound is eight.
    sampler = make()
    cycle(sampler, [KEYS[start:] + KEYS[:start] for start in range(0, 960, 80)], passes=3)
    cache = cache_of(sampler)
    assert len(cache) == 8
    assert sum(len(shard.keys) for shard in cache) <= 8 * known_keys(sampler)


@pytest.mark.parametrize("make", SAMPLERS)
def test_more_than_eight_overlapping_shards_stay_cached_within_eight_keys_per_known_key(
    make: Any,
) -> None:
    rng = random.Random(5)
    sampler = make()
    cycle(sampler, [rng.sample(KEYS, 240) for _ in range(40)], passes=3)
    cache = cache_of(sampler)
    assert 8 < len(cache) < 40
    assert sum(len(shard.keys) for shard in cache) <= 8 * known_keys(sampler)


@pytest.mark.parametrize("spread", [1, 3, 50])
def test_positions_find_each_key_id_whether_its_ids_are_dense_or_spread(spread: int) -> None:
    rng = random.Random(spread)
    numbers = rng.sample(range(0, 200 * spread, spread), 150)
    table = array("i", [-1]) * (200 * spread + 10)
    for position, number in enumerate(numbers):
        table[number] = position
    positions = Positions(table, numbers)
    looked_up = [positions.at(number) for number in range(len(table) + 5)]
    assert looked_up == [*table] + [-1] * 5  # ids past the table, as new keys get, too
