"""What four picks in flight cost in informative share, and how much of it spreading causes.

Run it with ``python benchmarks/in_flight.py`` (about 45 s; ``--seeds 10`` for a
quick look). It is a measurement script, not a test: it prints one table and asserts
nothing about the figures.

Every row runs the ``stationary`` workload (40 tasks, 6 informative) at the default
budget of 200 rollouts with four workers, through the bench's rollout loop:

- **shared shard** (a ``PipelineParallel`` plan): every worker is handed all 40 tasks,
  so concurrent picks can land on the same task (``dup``);
- **split shards** (the engine's ``DataParallel``, its default): the tasks are dealt to
  the workers, so concurrent picks never collide.

Each is run with one rollout in flight and with four (the sync path).

Besides the built-ins, some rows show an idealized learner that is told whether a task
is informative once one (two, three) rollouts of it have been recorded. No real sampler
recognises a task from one rollout, since a single pass or fail cannot tell a solved or
hopeless task from an informative one. It takes a free task it knows to be informative,
else the free task it is closest to recognising. The ``spreads`` rows never hand out a
task already in flight while another task is free; the ``doubles up`` row puts a worker
on a known-informative task even when that task is in flight already. How far a
spreading row falls from one rollout in flight to four is what spreading costs a
learner that needs that many rollouts to recognise a task. ``informative-band, pending
ignored`` is the built-in with its in-flight bookkeeping switched off, which is what it
would score if duplicates were allowed.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence

from agentdescent_sampling import TaskSampler, create
from agentdescent_sampling._display import aligned
from agentdescent_sampling.bench import WORKLOADS, RolloutLoop, Scenario, drive, is_informative
from agentdescent_sampling.samplers.informative_band import InformativeBand

LOOPS = {
    "shared, 1 in flight": RolloutLoop(n_workers=4, max_concurrency=1, shared_shard=True),
    "shared, 4 in flight": RolloutLoop(n_workers=4, max_concurrency=4, shared_shard=True),
    "split, 1 in flight": RolloutLoop(n_workers=4, max_concurrency=1),
    "split, 4 in flight": RolloutLoop(n_workers=4, max_concurrency=4),
}


class IdealizedLearner:
    """Is told whether a task is informative once ``looks`` rollouts of it have been recorded.

    Args:
        scenario: a stationary realization, whose true p it reads.
        looks: how many recorded rollouts of a task it takes to recognise it.
        doubles_up: put a worker on a known-informative task already in flight
            rather than on a task it does not know yet.
    """

    name = "idealized"

    def __init__(self, scenario: Scenario, looks: int = 1, doubles_up: bool = False) -> None:
        self.informative = {key for key in scenario.keys if is_informative(scenario.true_p(key, 0))}
        self.looks = looks
        self.doubles_up = doubles_up
        self.recorded: Counter[str] = Counter()
        self.in_flight: Counter[str] = Counter()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """A free known-informative task, else (doubling up) a busy one, else the free
        task it is closest to recognising."""
        good = [key for key in keys if self.known(key) and key in self.informative]
        free = [key for key in keys if not self.in_flight[key]]
        unknown = [key for key in free if not self.known(key)]
        choices = (
            [key for key in good if key in free],
            sorted(good, key=self.in_flight.__getitem__) if self.doubles_up else [],
            sorted(unknown, key=self.recorded.__getitem__, reverse=True),
            free,
            list(keys),
        )
        task = next(choice for choice in choices if choice)[0]
        self.in_flight[task] += 1
        return task

    def record(self, task_id: str, score: float) -> None:
        """Count a look at ``task_id``; its rollout is no longer in flight."""
        self.recorded[task_id] += 1
        self.in_flight[task_id] -= 1

    def known(self, task_id: str) -> bool:
        """Whether it knows yet if ``task_id`` is informative."""
        return self.recorded[task_id] >= self.looks


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
    "one-look learner, spreads": lambda scenario: IdealizedLearner(scenario),
    "one-look learner, doubles up": lambda scenario: IdealizedLearner(scenario, doubles_up=True),
    "two-look learner, spreads": lambda scenario: IdealizedLearner(scenario, looks=2),
    "three-look learner, spreads": lambda scenario: IdealizedLearner(scenario, looks=3),
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
    print("\n".join(aligned(rows, numbers=True)))


if __name__ == "__main__":
    main()
