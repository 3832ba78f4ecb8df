"""What four picks in flight cost in informative share, and how much of it spreading causes.

Run it with ``python benchmarks/in_flight.py`` (about a minute; ``--seeds 10`` for a
quick look). It is a measurement script, not a test: it prints one table and asserts
nothing about the figures.

Every row runs the ``stationary`` workload (40 tasks, 6 informative) at the default
budget of 200 rollouts with four workers, through the bench's rollout loop:

- **shared shard** (a ``PipelineParallel`` plan): every worker is handed all 40 tasks,
  so concurrent picks can land on the same task (``dup``);
- **split shards** (the engine's ``DataParallel``, its default): the tasks are dealt to
  the workers, so concurrent picks never collide.

Each is run with one rollout in flight and with four (the sync path).

Besides the built-ins, two rows show an idealized *one-look learner*: it is told
whether a task is informative as soon as one rollout of that task has been recorded,
which no real sampler can match, since a single pass or fail cannot tell a solved or
hopeless task from an informative one. It takes a free task it knows to be informative,
else an untried one. The ``spreads`` row never hands out a task already in flight while
another task is free; the ``doubles up`` row puts a worker on a known-informative task
even when that task is in flight already. How far the spreading row falls from one
rollout in flight to four is what spreading costs a learner that recognises tasks
faster than any real one. ``informative-band, pending ignored`` is the built-in with
its in-flight bookkeeping switched off, which is what it would score if duplicates
were allowed.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence

from _table import format_table  # benchmarks/, on sys.path when a script runs

from agentdescent_sampling import TaskSampler, create
from agentdescent_sampling.bench import WORKLOADS, RolloutLoop, Scenario, drive, is_informative
from agentdescent_sampling.samplers.informative_band import InformativeBand

LOOPS = {
    "shared, 1 in flight": RolloutLoop(n_workers=4, max_concurrency=1, shared_shard=True),
    "shared, 4 in flight": RolloutLoop(n_workers=4, max_concurrency=4, shared_shard=True),
    "split, 1 in flight": RolloutLoop(n_workers=4, max_concurrency=1),
    "split, 4 in flight": RolloutLoop(n_workers=4, max_concurrency=4),
}


class OneLookLearner:
    """Knows whether a task is informative once one rollout of it has been recorded.

    Args:
        scenario: a stationary realization, whose true p it reads.
        doubles_up: put a worker on a known-informative task already in flight
            rather than on a task it has not tried.
    """

    name = "one-look"

    def __init__(self, scenario: Scenario, doubles_up: bool) -> None:
        self.informative = {key for key in scenario.keys if is_informative(scenario.true_p(key, 0))}
        self.doubles_up = doubles_up
        self.known: set[str] = set()
        self.in_flight: Counter[str] = Counter()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """A free known-informative task, else (doubling up) a busy one, else an untried one."""
        good = [key for key in keys if key in self.known and key in self.informative]
        free = [key for key in keys if not self.in_flight[key]]
        untried = [key for key in free if key not in self.known]
        choices = (
            [key for key in good if key in free],
            sorted(good, key=self.in_flight.__getitem__) if self.doubles_up else [],
            untried,
            free,
            list(keys),
        )
        task = next(choice for choice in choices if choice)[0]
        self.in_flight[task] += 1
        return task

    def record(self, task_id: str, score: float) -> None:
        """Learn whether ``task_id`` is informative; its rollout is no longer in flight."""
        self.known.add(task_id)
        self.in_flight[task_id] -= 1


class _NothingPending:
    """Stands in for informative-band's in-flight bookkeeping and forgets every pick."""

    def add(self, task_id: str, pick: int) -> None:
        pass

    def remove(self, task_id: str) -> None:
        pass

    def tasks(self, now: int) -> set[str]:
        return set()


def informative_band_ignoring_pending() -> TaskSampler:
    """informative-band with its in-flight bookkeeping off: it picks as if alone."""
    sampler = InformativeBand()
    sampler._pending = _NothingPending()  # type: ignore[assignment]  # a measurement device
    return sampler


ENTRANTS: dict[str, Callable[[Scenario], TaskSampler]] = {
    "one-look learner, spreads": lambda scenario: OneLookLearner(scenario, doubles_up=False),
    "one-look learner, doubles up": lambda scenario: OneLookLearner(scenario, doubles_up=True),
    "informative-band": lambda _: create("informative-band"),
    "informative-band, pending ignored": lambda _: informative_band_ignoring_pending(),
    "difficulty-weighted:spread_in_flight=true": lambda _: create(
        "difficulty-weighted:spread_in_flight=true"
    ),
    "difficulty-weighted": lambda _: create("difficulty-weighted"),
}


def measure(
    entrant: Callable[[Scenario], TaskSampler], loop: RolloutLoop, seeds: range
) -> tuple[list[float], float]:
    """Each seed's informative share for ``entrant``, and its duplicate rate over all seeds."""
    shares: list[float] = []
    duplicates = total = 0
    for seed in seeds:
        scenario = WORKLOADS["stationary"].build(seed)
        rollouts = drive(entrant(scenario), scenario, loop, seed)
        shares.append(sum(rollout.informative for rollout in rollouts) / len(rollouts))
        duplicates += sum(rollout.duplicate for rollout in rollouts)
        total += len(rollouts)
    return shares, duplicates / total


def table(seeds: range) -> list[tuple[str, ...]]:
    """One row per entrant: its mean share in each loop, what four shared picks in flight
    change against one (paired by seed, with a 95% interval), and their duplicates."""
    rows = [("sampler", *LOOPS, "shared: 4 - 1 in flight", "dup, shared 4")]
    for label, entrant in ENTRANTS.items():
        results = {name: measure(entrant, loop, seeds) for name, loop in LOOPS.items()}
        means = [f"{statistics.fmean(shares):.1%}" for shares, _ in results.values()]
        one, four = results["shared, 1 in flight"][0], results["shared, 4 in flight"][0]
        change = [b - a for a, b in zip(one, four, strict=True)]
        half_width = 1.96 * statistics.stdev(change) / math.sqrt(len(change))
        rows.append(
            (
                label,
                *means,
                f"{statistics.fmean(change):+.1%} ± {half_width:.1%}",
                f"{results['shared, 4 in flight'][1]:.1%}",
            )
        )
    return rows


def _seed_count(text: str) -> int:
    count = int(text)
    if count < 2:
        raise argparse.ArgumentTypeError(f"{count}: expected 2 or more seeds, for an interval")
    return count


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=_seed_count, default=100, help="seeds 0..N-1 (default 100)")
    seeds = range(parser.parse_args(argv).seeds)
    started = time.perf_counter()
    rows = table(seeds)
    print(
        f"stationary, budget 200, 4 workers, sync path, mean informative share over "
        f"{len(seeds)} seeds; Python {platform.python_version()}, "
        f"{time.perf_counter() - started:.0f} s"
    )
    print()
    print(format_table(rows))


if __name__ == "__main__":
    main()
