"""Pick cost and memory at 10^4, 10^5 and 10^6 keys, for the samplers that index shards.

Run it with ``python benchmarks/scale.py``. It is a measuring script, not a test: it
asserts nothing about speed or memory. The bound it is held to (issue 15): one
million keys in eight cached shards under 300 MB. ``python benchmarks/scale.py in-turn``
prints only the second table (below), at 10^4 and 10^5 keys, in a few minutes.

For each size ``n`` and each built-in that keeps a shard index (difficulty-weighted,
informative-band; round-robin keeps none), in a fresh sampler:

- **first pick**: the pick that meets a shard for the first time, and indexes it;
- **pick**: the median of 200 later picks of that shard, each followed by a record,
  so that statistics change between picks as in a run;
- **8 shards of n**: the memory the sampler holds after picking from eight shards of
  ``n`` keys each (the same ``n`` task ids, each shard rotated by ``n / 8``), the
  most it caches: the issue's "eight cached shards";
- **n over 8 shards**: the same for ``n`` keys split into eight shards of ``n / 8``,
  as ``evolve()`` splits a task set among eight workers.

The second table picks from many shards in turn, as ``evolve()`` does with more workers
than a sampler used to cache shards for (eight), and as a user cycling shards does. For
each built-in that indexes shards (fixable-first too), at 10^4 and 10^5 keys, every key
tried once as in a run:

- **split**: the keys dealt into 8, 16 or 64 shards; **halves**: 24 shards, each a
  random half of the keys (twelve shards of every key in all, of which the memory bound
  lets a sampler cache eight); **rotated**: 12 shards of all the keys, each starting a
  twelfth further on (more than eight shards of every key, which the memory bound does
  not let a sampler cache);
- each shard is picked from twice in turn first (untimed), so that a sampler that sizes
  its cache by the shards in use has seen them come back; then each shard in turn is
  picked from twice running: the first pick (**in turn**) finds the shard as the picks
  from all the others left it, cached or dropped; the second (**again**) is served by the
  index the first one used or built. Each pick is followed by a record, timed apart. The
  ratio is the in-turn pick's median over the again pick's, from one run;
- **cached**: how many shards the sampler holds at the end; **MB**: what it holds after
  three passes over the shards, with ``tracemalloc`` (statistics of a few hundred tasks
  included, key lists not).

Memory is measured with ``tracemalloc``: what the sampler allocated and still holds,
not counting the key lists, which the caller owns. Times are measured without
``tracemalloc``, which slows allocation.
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import statistics
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

from agentdescent_sampling import TaskSampler, create
from agentdescent_sampling._display import aligned

SIZES = (10_000, 100_000, 1_000_000)
SAMPLERS = ("difficulty-weighted", "informative-band")
SHARDS = 8
TIMED_PICKS = 200

IN_TURN_SIZES = (10_000, 100_000)
IN_TURN_SAMPLERS = ("difficulty-weighted", "informative-band", "fixable-first")
IN_TURN_LAYOUTS = (("split", 8), ("split", 16), ("split", 64), ("halves", 24), ("rotated", 12))
MIN_SECONDS = 1.0  # per row: enough pairs of picks for a stable median
MIN_PAIRS = 15
MAX_PAIRS = 1_000


def keys_of(size: int) -> list[str]:
    return [f"task-{index:07d}" for index in range(size)]


def rotations(keys: list[str]) -> list[list[str]]:
    """Eight shards holding every key, each starting an eighth further on."""
    step = len(keys) // SHARDS
    return [keys[start:] + keys[:start] for start in range(0, SHARDS * step, step)]


def split(keys: list[str]) -> list[list[str]]:
    """Eight disjoint shards, as evolve() deals a task set among eight workers."""
    return [keys[start::SHARDS] for start in range(SHARDS)]


def time_picks(name: str, keys: list[str]) -> tuple[float, float]:
    """Seconds for the first pick of a fresh sampler, and median microseconds of later ones."""
    sampler = create(name)
    before = time.perf_counter()
    picked = sampler.pick(keys, 0)
    first = time.perf_counter() - before
    sampler.record(picked, 1.0)
    samples = []
    for round_index in range(1, TIMED_PICKS + 1):
        before = time.perf_counter()
        picked = sampler.pick(keys, round_index)
        samples.append(time.perf_counter() - before)
        sampler.record(picked, float(round_index % 3 == 0))
    return first, statistics.median(samples) * 1e6


def held_megabytes(name: str, shards: Sequence[list[str]], passes: int = 1) -> float:
    """Megabytes the sampler holds after ``passes`` passes over the shards, a pick and a
    record from each."""
    gc.collect()
    tracemalloc.start()
    sampler: TaskSampler = create(name)
    for round_index, shard in enumerate(list(shards) * passes):
        sampler.record(sampler.pick(shard, round_index), 0.0)
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del sampler
    return held / 1e6


def in_turn_shards(keys: list[str], layout: str, count: int) -> list[list[str]]:
    """``count`` shards of ``keys``: dealt (``split``), each a random half of them
    (``halves``), or each holding every key (``rotated``)."""
    if layout == "split":
        return [keys[start::count] for start in range(count)]
    if layout == "halves":
        draw = random.Random(count)
        return [draw.sample(keys, len(keys) // 2) for _ in range(count)]
    step = len(keys) // count
    return [keys[start:] + keys[:start] for start in range(0, count * step, step)]


def cached_shards(sampler: Any) -> int:
    """How many shards ``sampler`` holds an index for."""
    index = getattr(sampler, "_index", None) or sampler._groups
    return len(index._shards)


def time_in_turn(name: str, keys: list[str], shards: list[list[str]]) -> tuple[float, ...]:
    """Median microseconds of an in-turn pick, the pick again from the same shard, and the
    record after each, and how many shards the sampler caches at the end."""
    sampler: Any = create(name)
    outcomes = random.Random(0)
    for key in keys:  # every task tried, as in a run
        sampler.record(key, float(outcomes.random() < 0.5))
    round_index = 0

    def step(shard: list[str], picks: list[float], records: list[float]) -> None:
        nonlocal round_index
        before = time.perf_counter()
        picked = sampler.pick(shard, round_index)
        middle = time.perf_counter()
        sampler.record(picked, float(outcomes.random() < 0.5))
        after = time.perf_counter()
        picks.append((middle - before) * 1e6)
        records.append((after - middle) * 1e6)
        round_index += 1

    for shard in shards * 2:
        step(shard, [], [])
    turn: tuple[list[float], list[float]] = ([], [])
    again: tuple[list[float], list[float]] = ([], [])
    deadline = time.perf_counter() + MIN_SECONDS
    while (time.perf_counter() < deadline or len(turn[0]) < MIN_PAIRS) and len(turn[0]) < MAX_PAIRS:
        shard = shards[len(turn[0]) % len(shards)]
        step(shard, *turn)
        step(shard, *again)
    medians = [statistics.median(samples) for samples in (*turn, *again)]
    return (*medians, cached_shards(sampler))


def in_turn_table() -> list[tuple[str, ...]]:
    """Rows of the second table: picks from many shards in turn, and again."""
    header = (
        "sampler",
        "keys",
        "shards",
        "cached",
        "in turn pick us",
        "again pick us",
        "ratio",
        "in turn record us",
        "again record us",
        "MB",
    )
    rows: list[tuple[str, ...]] = [header]
    for size in IN_TURN_SIZES:
        keys = keys_of(size)
        for name in IN_TURN_SAMPLERS:
            for layout, count in IN_TURN_LAYOUTS:
                shards = in_turn_shards(keys, layout, count)
                turn_pick, turn_record, again_pick, again_record, cached = time_in_turn(
                    name, keys, shards
                )
                rows.append(
                    (
                        name,
                        f"{size:,}",
                        f"{count} {layout}",
                        f"{cached:.0f}",
                        f"{turn_pick:,.1f}",
                        f"{again_pick:,.1f}",
                        f"{turn_pick / again_pick:,.1f}x",
                        f"{turn_record:,.1f}",
                        f"{again_record:,.1f}",
                        f"{held_megabytes(name, shards, passes=3):,.1f}",
                    )
                )
                print("\n".join(aligned(rows[-1:], numbers=True)), flush=True)  # progress
    return rows


def main() -> None:
    """Print the tables; with ``in-turn``, only the second."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", choices=["in-turn"], help="only the second table")
    if parser.parse_args().part == "in-turn":
        print(
            f"picks from many shards in turn; Python {platform.python_version()}, "
            f"{platform.machine()}"
        )
        print()
        rows = in_turn_table()
        print()
        print("\n".join(aligned(rows, numbers=True)))
        return
    print(
        f"pick cost and memory against shard size; Python {platform.python_version()}, "
        f"{platform.machine()}"
    )
    print()
    header = ("sampler", "keys", "first pick s", "pick us", "8 shards of n MB", "n over 8 MB")
    rows = [header]
    for name in SAMPLERS:
        for size in SIZES:
            keys = keys_of(size)
            first, pick = time_picks(name, keys)
            cached = held_megabytes(name, rotations(keys))
            dealt = held_megabytes(name, split(keys))
            rows.append(
                (
                    name,
                    f"{size:,}",
                    f"{first:.3f}",
                    f"{pick:,.1f}",
                    f"{cached:,.1f}",
                    f"{dealt:,.1f}",
                )
            )
            print(
                "\n".join(aligned(rows[-1:], numbers=True)), flush=True
            )  # progress: a size can take a minute
    print()
    print("\n".join(aligned(rows, numbers=True)))
    print()
    print("picks from many shards in turn")
    print()
    print("\n".join(aligned(in_turn_table(), numbers=True)))


if __name__ == "__main__":
    main()
