"""Where a run's agent calls go before it reaches 75% of the gain: rollouts, reflection, the gate.

Usage::

    python benchmarks/gate_calls.py [--workload W ...] [--seeds N] [--first-seed N]
        [--reflector NAME] [--async]

Runs engine bench workloads (by default the six of one rollout per worker and round) in the
real ``evolve()`` (the ``engine`` extra) with round-robin, fixable-first alone and wired, the
learner ceiling and the oracle, and splits each run's calls up to the round that first reached
75% of the gain into

- ``rollouts``: one call each;
- ``reflect``: the proposal and self-verify re-run of each failure (two calls, with the
  ``llm-like`` reflector, which proposes on every failure);
- ``gate``: the held-out measurements, what is left. On the synchronous path the engine fuses a
  round's proposals into one candidate and measures it once, so a round with any failure costs a
  whole held-out measurement and a round of passes costs none: ``gated`` counts the rounds that
  were measured, of ``rounds``.

With ``--async`` the runs are ``evolve(asynchronous=True)``, whose merger gates cards as they
come: there a "round" is one merge, and ``gated`` counts the merges that measured a candidate.

Prints the mean of each per run, and round-robin's mean over the sampler's for calls, for gated
rounds and for rollouts, so the calls figure can be read as rollouts times how often a round is
gated. Each run's figures are to its own 75% point; a run that never reached it counts its whole
budget.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentdescent_sampling import TaskSampler
from agentdescent_sampling.bench.engine import EngineEntrant
from agentdescent_sampling.bench.engine.lineup import engine_lineup
from agentdescent_sampling.bench.engine.run import run_engine
from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS, REFLECTORS, Built
from agentdescent_sampling.registry import default_registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.where_rollouts_go import Spy  # after the path

#: The workloads run by default: one rollout per worker and round. ``concurrent`` and
#: ``concurrent-shared`` (four a round) may be named with ``--workload``.
ONE_A_ROUND = ("lessons", "sparse", "flaky", "regressions", "regressions-held-out", "graded")
COLUMNS = ("rollouts", "reflect", "gate", "calls", "rounds", "gated")


def split(
    entrant: EngineEntrant, workload: str, seed: int, reflector: str, asynchronous: bool = False
) -> dict[str, int]:
    """One run's calls to 75% of the gain, split as the module says."""
    spies: list[Spy] = []

    def make(built: Built) -> TaskSampler:
        spies.append(Spy(entrant.make(built)))
        return spies[-1]

    def wiring(spy: Any, built: Built, options: Mapping[str, Any]) -> dict[str, Any]:
        if entrant.wiring is None:
            return {}
        return {**entrant.wiring(spy.sampler, built, options), "task_sampler": spy}

    run = run_engine(
        ENGINE_WORKLOADS[workload],
        make,
        seed,
        reflector=reflector,
        wiring=wiring,
        asynchronous=asynchronous,
    )
    reached = run.reached(0.75)
    end = len(run.curve) - 1 if reached is None else reached
    threshold = ENGINE_WORKLOADS[workload].solved_threshold
    failed = [score < threshold for _, score in spies[0].log]
    totals = dict.fromkeys(COLUMNS, 0)
    for point in range(1, end + 1):
        (before, _), (after, _) = run.curve[point - 1], run.curve[point]
        failures = sum(failed[before:after])
        calls = run.call_curve[point] - run.call_curve[point - 1]
        gate = calls - (after - before) - 2 * failures
        totals["rollouts"] += after - before
        totals["reflect"] += 2 * failures
        totals["gate"] += gate
        totals["calls"] += calls
        totals["rounds"] += 1
        totals["gated"] += gate > 0
    return totals


_ENTRANTS: list[EngineEntrant] = []  # set before the pool forks; jobs name them by index


def _job(
    entrant: int, workload: str, seed: int, reflector: str, asynchronous: bool
) -> dict[str, int]:
    return split(_ENTRANTS[entrant], workload, seed, reflector, asynchronous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", action="append", choices=sorted(ENGINE_WORKLOADS))
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--reflector", default=REFLECTORS[0], choices=REFLECTORS)
    parser.add_argument(
        "--async", dest="asynchronous", action="store_true", help="evolve(asynchronous=True)"
    )
    args = parser.parse_args()
    if args.reflector == "silent":
        parser.error("the split needs a proposal on every failure; use llm-like or llm-like-wrong")
    _ENTRANTS[:] = engine_lineup(["fixable-first"], default_registry())
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"Agent calls to 75% of the gain, mean per run, seeds {seeds.start}-{seeds.stop - 1}, "
          f"reflector {args.reflector}{', asynchronous' if args.asynchronous else ''}; "
          f"RR/it: round-robin's mean over the sampler's")  # fmt: skip
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        for workload in args.workload or ONE_A_ROUND:
            means = {}
            for index, entrant in enumerate(_ENTRANTS):
                jobs = [
                    (index, workload, seed, args.reflector, args.asynchronous) for seed in seeds
                ]
                runs = pool.starmap(_job, jobs)
                means[entrant.label] = {k: sum(r[k] for r in runs) / len(runs) for k in COLUMNS}
            print(f"\n{workload}")
            print(_table(means))


def _table(means: Mapping[str, Mapping[str, float]]) -> str:
    """One workload's means, and round-robin's over each sampler's."""
    base = means["round-robin"]
    lines = [f"{'sampler':24s}" + "".join(f"{key:>9s}" for key in COLUMNS)
             + "  gated share   RR/it calls  gated  rollouts"]  # fmt: skip
    for label, mean in means.items():
        ratios = (base[key] / mean[key] for key in ("calls", "gated", "rollouts"))
        lines.append(f"{label:24s}" + "".join(f"{mean[key]:9.1f}" for key in COLUMNS)
                     + f"  {mean['gated'] / mean['rounds']:11.2f}  "
                     + "  ".join(f"{ratio:10.2f}x" for ratio in ratios))  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    main()
