"""Which of ``llm-like-all``'s departures from ``llm-like`` take wired fixable-first's margin.

Usage::

    python benchmarks/departure_pairs.py [--reflector R ...] [--workload W ...] [--seeds 30]
        [--first-seed 0]

``llm-like-all`` departs from ``llm-like`` in three ways at once: a rule at a random failure
(``random``), a wrong rule in about one note of six (``wrong``) and an agent that slips 1 time in
10 (``noisy``). This script adds the three pairs of them as reflectors (``random+wrong``,
``random+noisy``, ``wrong+noisy``), beside the bench's own, and runs round-robin and
``fixable-first + wired`` on each seed in the real ``evolve()`` (the ``engine`` extra). It prints,
per reflector and workload, the median and mean over seeds of round-robin's rollouts to 75% of
the attainable gain over the wired sampler's (a run that does not reach it counts as the whole
budget).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

from agentdescent_sampling import TaskSampler, create, wire
from agentdescent_sampling.bench.engine import workloads
from agentdescent_sampling.bench.engine.run import run_engine

#: The pairs of ``llm-like-all``'s departures, as reflector names.
PAIRS: dict[str, frozenset[str]] = {
    "random+wrong": frozenset({"random", "wrong"}),
    "random+noisy": frozenset({"random", "noisy"}),
    "wrong+noisy": frozenset({"wrong", "noisy"}),
}
DEFAULT_REFLECTORS = ("llm-like-random", "llm-like-noisy", *PAIRS, "llm-like-all")


def register_pairs() -> None:
    """Make the bench's simulated reflector take each of :data:`PAIRS` by name."""
    workloads.REFLECTORS = (
        *workloads.REFLECTORS,
        *(p for p in PAIRS if p not in workloads.REFLECTORS),
    )
    workloads._DEPARTURES.update(PAIRS)


def ratios(reflector: str, workload: workloads.EngineWorkload, seeds: Sequence[int]) -> list[float]:
    """Round-robin's rollouts to 75% of the gain over wired fixable-first's, one per seed."""

    def wired(built: workloads.Built) -> TaskSampler:
        return create({"name": "fixable-first", "pass_threshold": built.pass_threshold})

    found = []
    for seed in seeds:
        runs = (
            run_engine(workload, lambda _: create("round-robin"), seed, reflector=reflector),
            run_engine(workload, wired, seed, reflector=reflector,
                       wiring=lambda sampler, _, options: wire(sampler, **options)),
        )  # fmt: skip
        plain, aimed = (run.rollouts_to(0.75) or workload.budget for run in runs)
        found.append(plain / aimed)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reflector", action="append", help="repeatable; default: see the docstring"
    )
    parser.add_argument("--workload", action="append", choices=sorted(workloads.ENGINE_WORKLOADS))
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    register_pairs()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for reflector in args.reflector or DEFAULT_REFLECTORS:
        for name in args.workload or ("lessons", "graded"):
            found = ratios(reflector, workloads.ENGINE_WORKLOADS[name], seeds)
            median, mean = statistics.median(found), statistics.mean(found)
            print(f"{reflector:16s} {name:22s} RR/wired at 75%: {median:.2f}x, mean {mean:.2f}x")


if __name__ == "__main__":
    main()
