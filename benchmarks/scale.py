"""Pick cost and memory at 10^4, 10^5 and 10^6 keys, for the samplers that index shards.

Run it with ``python benchmarks/scale.py``. It is a measuring script, not a test: it
asserts nothing about speed or memory. The bound it is held to (issue 15): one
million keys in eight cached shards under 300 MB.

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

Memory is measured with ``tracemalloc``: what the sampler allocated and still holds,
not counting the key lists, which the caller owns. Times are measured without
``tracemalloc``, which slows allocation.
"""

from __future__ import annotations

import gc
import platform
import statistics
import time
import tracemalloc
from collections.abc import Sequence

from agentdescent_sampling import TaskSampler, create
from agentdescent_sampling._display import aligned

SIZES = (10_000, 100_000, 1_000_000)
SAMPLERS = ("difficulty-weighted", "informative-band")
SHARDS = 8
TIMED_PICKS = 200


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


def held_megabytes(name: str, shards: Sequence[list[str]]) -> float:
    """Megabytes the sampler holds after one pick from each shard."""
    gc.collect()
    tracemalloc.start()
    sampler: TaskSampler = create(name)
    for round_index, shard in enumerate(shards):
        sampler.record(sampler.pick(shard, round_index), 0.0)
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del sampler
    return held / 1e6


def main() -> None:
    """Print the table."""
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


if __name__ == "__main__":
    main()
