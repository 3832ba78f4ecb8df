"""Pick cost against shard size, for each built-in sampler and a reference of the same rule.

Run it with ``python benchmarks/pick_cost.py``. It is a timing script, not a test:
it asserts nothing about speed, and only checks that each built-in picks exactly
what its reference picks, so a later optimisation has a baseline to beat and a rule
it must keep. A second table times the built-ins beside every rule of the
``agentdescent-sampling-curricula`` pack, when it is installed, in the same run.

Every shard is warmed up first: each key is recorded once (a pass or a fail) and
one key in seven gets a second, opposite score, so the sampler holds statistics for
every key and a pick has to weigh all of them, which is the steady state of a run.
In the second table, as in a run, each timed pick is followed by an (untimed) record
of its task, so a sampler cannot serve every pick from one cached answer. The first
table records nothing after a pick, so its picks stay in flight, and the samplers
that spread workers (fixable-first, informative-band) pass over them.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from collections.abc import Callable, Sequence

from agentdescent_sampling import SamplerInfo, TaskSampler, available, create
from agentdescent_sampling._display import aligned
from agentdescent_sampling.bench.reference import (
    ReferenceDifficultyWeighted,
    ReferenceFixableFirst,
    ReferenceInformativeBand,
    ReferenceRoundRobin,
)

SIZES = (100, 1_000, 10_000, 100_000)
PACK = "agentdescent-sampling-curricula"
MIN_SECONDS = 0.3  # per sampler and size: enough picks for a stable median
MAX_PICKS = 2_000
MIN_PAIRS = 7  # timed picks at the least, however slow the reference


#: Each built-in's reference; a new built-in adds its own here.
REFERENCES: dict[str, Callable[[], TaskSampler]] = {
    "round-robin": ReferenceRoundRobin,
    "difficulty-weighted": ReferenceDifficultyWeighted,
    "informative-band": ReferenceInformativeBand,
    "fixable-first": ReferenceFixableFirst,
}


def warm(samplers: Sequence[TaskSampler], keys: Sequence[str]) -> None:
    """Give every sampler the same statistics: every key tried, one in seven mixed."""
    rng = random.Random(0)
    for index, key in enumerate(keys):
        score = float(rng.random() < 0.5)
        for sampler in samplers:
            sampler.record(key, score)
            if index % 7 == 0:
                sampler.record(key, 1.0 - score)


def time_picks(
    built_in: TaskSampler, reference: TaskSampler, keys: list[str]
) -> tuple[float, float, bool]:
    """Median microseconds per pick of each, alternating, and whether they always agreed.

    The first pick of each is not timed (it builds the shard's structures, which the second
    table times), and at least ``MIN_PAIRS`` are, so that one pick preempted on a busy
    machine cannot be the median of a slow reference's few.
    """
    own: list[float] = []
    ref: list[float] = []
    agree = built_in.pick(keys, 0) == reference.pick(keys, 0)
    deadline = time.perf_counter() + MIN_SECONDS
    round_index = 1
    while (time.perf_counter() < deadline or len(own) < MIN_PAIRS) and len(own) < MAX_PICKS:
        before = time.perf_counter()
        mine = built_in.pick(keys, round_index)
        middle = time.perf_counter()
        theirs = reference.pick(keys, round_index)
        after = time.perf_counter()
        own.append((middle - before) * 1e6)
        ref.append((after - middle) * 1e6)
        agree = agree and mine == theirs
        round_index += 1
    return statistics.median(own), statistics.median(ref), agree


def time_alone(sampler: TaskSampler, keys: list[str]) -> tuple[float, float, float]:
    """Microseconds of the first pick (it builds the shard's structures), then the median
    and 99th percentile of the picks after it."""
    outcomes = random.Random(1)
    before = time.perf_counter()
    picked = sampler.pick(keys, 0)
    first = (time.perf_counter() - before) * 1e6
    sampler.record(picked, float(outcomes.random() < 0.5))
    spent: list[float] = []
    deadline = time.perf_counter() + MIN_SECONDS
    while (time.perf_counter() < deadline or len(spent) < 3) and len(spent) < MAX_PICKS:
        before = time.perf_counter()
        picked = sampler.pick(keys, len(spent) + 1)
        spent.append((time.perf_counter() - before) * 1e6)
        sampler.record(picked, float(outcomes.random() < 0.5))
    spent.sort()
    return first, statistics.median(spent), spent[min(len(spent) - 1, int(0.99 * len(spent)))]


def pack_table(built_ins: list[str]) -> str:
    """The built-ins and the curricula pack's rules at their defaults, timed alike."""
    pack = [
        record.name
        for record in available()
        if isinstance(record, SamplerInfo) and record.distribution == PACK
    ]
    if not pack:
        return f"({PACK} is not installed: pip install ./plugins/{PACK} to time its rules)"
    rows = [("sampler", "keys", "first pick us", "pick us p50", "pick us p99")]
    for name in [*built_ins, *pack]:
        for size in SIZES:
            keys = [f"task-{index:06d}" for index in range(size)]
            sampler = create(name)
            warm([sampler], keys)
            first, median, p99 = time_alone(sampler, keys)
            rows.append((name, f"{size:,}", f"{first:,.1f}", f"{median:,.1f}", f"{p99:,.1f}"))
    return "\n".join(aligned(rows, numbers=True))


def main() -> None:
    """Print the tables."""
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help; no options
    built_ins = [
        record.name
        for record in available()
        if isinstance(record, SamplerInfo) and record.distribution == "agentdescent-sampling"
    ]
    print(f"pick cost against shard size; Python {platform.python_version()}, {platform.machine()}")
    print("(median microseconds per pick after every key has been tried; lower is better)")
    print()
    header = ("sampler", "keys", "built-in us", "reference us", "speed-up", "same picks")
    rows = [header]
    for name in built_ins:
        if name not in REFERENCES:
            rows.append((name, "-", "-", "-", "-", "no reference yet; add one to REFERENCES"))
            continue
        for size in SIZES:
            keys = [f"task-{index:06d}" for index in range(size)]
            built_in, reference = create(name), REFERENCES[name]()
            warm([built_in, reference], keys)
            own, ref, agree = time_picks(built_in, reference, keys)
            rows.append(
                (
                    name,
                    f"{size:,}",
                    f"{own:,.1f}",
                    f"{ref:,.1f}",
                    f"{ref / own:.2f}x",
                    "yes" if agree else "NO",
                )
            )
    print("\n".join(aligned(rows, numbers=True)))
    print()
    print("beside the curricula pack (each timed pick followed by a record, as in a run)")
    print()
    print(pack_table(built_ins))


if __name__ == "__main__":
    main()
