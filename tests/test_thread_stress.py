"""32 threads hammering one shared sampler: no exception, no lost record, still usable.

The CI run does 32 x 1,000 operations per sampler; the soak (``pytest -m soak``) does
the issue's 32 x 20,000.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from agentdescent_sampling import SamplerInfo, available, create
from agentdescent_sampling.plugin import check_keys, check_score
from agentdescent_sampling.plugin import synchronized as synchronized_

THREADS = 32
TASKS = [f"task-{i}" for i in range(64)]
OPERATIONS = [
    pytest.param(1_000, id="ci"),
    pytest.param(20_000, id="soak", marks=pytest.mark.soak),
]
BUILT_INS = sorted(
    record.name
    for record in available()
    if isinstance(record, SamplerInfo) and record.distribution == "agentdescent-sampling"
)


class Unsafe:
    """Counts trials with an unguarded read-modify-write: loses records under threads."""

    name = "unsafe"

    def __init__(self) -> None:
        self.trials: dict[str, int] = {}

    def pick(self, keys: list[str], round_index: int) -> str:
        return min(check_keys(keys), key=lambda key: self.trials.get(key, 0))

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        seen = self.trials.get(task_id, 0)
        time.sleep(0)
        self.trials[task_id] = seen + 1

    def stats(self) -> dict[str, tuple[int, int]]:
        return {key: (0, count) for key, count in self.trials.items()}


def hammer(sampler: Any, operations: int) -> tuple[int, list[str]]:
    """Mixed picks and records from 32 threads; return the records made and any errors."""
    errors: list[str] = []
    records = [0] * THREADS
    barrier = threading.Barrier(THREADS)

    def work(worker: int) -> None:
        rng = random.Random(worker)
        shard = TASKS[worker % 4 :: 4] if worker % 2 else TASKS
        try:
            barrier.wait()
            for step in range(operations):
                if rng.random() < 0.5:
                    picked = sampler.pick(shard, step)
                    assert picked in shard, picked
                else:
                    sampler.record(rng.choice(TASKS), rng.choice([0.0, 0.4, 1.0]))
                    records[worker] += 1
        except Exception as error:  # noqa: BLE001  # collected and asserted by the caller
            errors.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(records), errors


def built_in(spec: str) -> Callable[[], Any]:
    return lambda: create(spec)


SPREADING = ["round-robin:spread_in_flight=true", "difficulty-weighted:spread_in_flight=true"]
FACTORIES = [pytest.param(built_in(spec), id=spec) for spec in BUILT_INS + SPREADING] + [
    pytest.param(lambda: synchronized_(Unsafe()), id="synchronized-unsafe")
]


@pytest.mark.usefixtures("fast_thread_switching")
@pytest.mark.parametrize("operations", OPERATIONS)
@pytest.mark.parametrize("factory", FACTORIES)
def test_a_shared_sampler_loses_no_record_under_32_threads(
    factory: Callable[[], Any], operations: int
) -> None:
    sampler = factory()
    records, errors = hammer(sampler, operations)
    assert errors == []
    stats = getattr(sampler, "stats", None)
    if callable(stats):
        assert sum(trials for _, trials in stats().values()) == records
    picked = sampler.pick(TASKS, 0)
    sampler.record(picked, 1.0)
    assert picked in TASKS


@pytest.mark.usefixtures("fast_thread_switching")
def test_the_stress_test_catches_an_unsafe_sampler() -> None:
    sampler = Unsafe()
    records, errors = hammer(sampler, 1_000)
    assert errors == []
    assert sum(trials for _, trials in sampler.stats().values()) < records
