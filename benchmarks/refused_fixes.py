"""How often the gate refuses a real fix, and what rode into the candidate beside it.

Usage::

    python benchmarks/refused_fixes.py [--workload graded] [--seeds 130] [--first-seed 0]
        [--reflector llm-like] [--sticky] [--null]

Runs one engine bench workload in the real ``evolve()`` (the ``engine`` extra) with round-robin
and fixable-first alone and wired, on the synchronous path, where the engine fuses a round's
surviving proposals into one candidate and gates it once. For each run it counts the rounds
with two proposals or more, the rounds with a task's real fix (the rule, or a patch, the
reflector proposes on the failure that finds it, when the artifact lacks it), those whose
candidate the gate measured and refused, and of those how many also held a proposal that is
not a fix (a note, a wrong rule, a fix already in the artifact). agentdescent's default
acceptance folds each card's self-verify gain into the candidate's evidence, and a note's gain
is 0, so a fix whose held-out gain is small can pass alone and be refused beside a note. The
bench's reflectors then find that fix again only ``k`` failures later (or by chance);
``--sticky`` runs the reflector of ``sticky_reflector.py`` instead, which proposes a found fix
again on the task's next failure. ``--null`` adds two null controls: round-robin taking the
shard from six places on, and walking it backwards. Neither learns anything, so their
difference from round-robin's final reward is what mere reordering moves it by: a sampler's
difference no larger than theirs is no sign of what the sampler does.

At the end it counts the fixable tasks (a lesson, a regression's victim) whose fix the final
artifact lacks: those whose fix the reflector found (proposed) and the run lost, and those whose
fix it never found. Prints, per sampler, the mean per run of each count, and the final held-out
reward against round-robin's (mean paired difference with a 95% interval, and on how many seeds
it is lower and higher).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentdescent_sampling.bench.engine import EngineEntrant
from agentdescent_sampling.bench.engine.lineup import engine_lineup
from agentdescent_sampling.bench.engine.run import run_engine
from agentdescent_sampling.bench.engine.workloads import (
    ENGINE_WORKLOADS,
    REFLECTORS,
    Built,
    SimulatedReflector,
)
from agentdescent_sampling.plugin import check_keys, check_score
from agentdescent_sampling.registry import default_registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.sticky_reflector import _sticky_finds  # after the path

COLUMNS = ("2+ proposals", "fix rounds", "refused", "beside non-fix", "lost, found", "never found")


def counted(entrant: EngineEntrant, workload: str, seed: int, reflector: str) -> dict[str, float]:
    """One run's rounds with a fix, those refused, those refused beside a non-fix, and its
    final held-out reward."""
    counts = dict.fromkeys(COLUMNS, 0.0)
    proposals: list[bool] = []  # this round's: whether each is a real fix
    runs: list[Built] = []

    def wiring(sampler: Any, built: Built, options: Mapping[str, Any]) -> dict[str, Any]:
        runs.append(built)
        agent = built.agent
        propose = agent.propose

        def watched(rendered: str, task: Any, output: str, reward: float) -> str | None:
            proposal: str | None = propose(rendered, task, output, reward)
            if proposal is not None:  # a fix already in the artifact (a slip) changes nothing
                fix = agent.fix(agent.by_id[task.id])
                proposals.append(proposal == fix and fix not in rendered)
            return proposal

        def on_round(info: Any) -> None:
            counts["2+ proposals"] += len(proposals) >= 2
            if any(proposals):
                counts["fix rounds"] += 1
                # Refused by the gate: a candidate was measured and rejected, none committed
                # (a fix whose self-verify re-run failed never reaches the gate).
                if not info.committed and info.rejected:
                    counts["refused"] += 1
                    counts["beside non-fix"] += not all(proposals)
            proposals.clear()

        agent.propose = watched
        if entrant.wiring is None:
            return {"on_round": on_round}
        return entrant.wiring(sampler, built, {**options, "on_round": on_round})

    run = run_engine(
        ENGINE_WORKLOADS[workload], entrant.make, seed, reflector=reflector, wiring=wiring
    )
    # The fixes the final artifact lacks: found (proposed) and lost, or never found.
    agent = runs[0].agent
    missing = [t for t in runs[0].fixable if agent.fix(agent.by_id[t]) not in run.artifact]
    counts["lost, found"] = sum(task in agent.found for task in missing)
    counts["never found"] = len(missing) - counts["lost, found"]
    return {**counts, "final": run.final}


class Reordered:
    """Round-robin in another order, a null control: from ``shift`` places on, or backwards."""

    def __init__(self, shift: int = 0, backwards: bool = False) -> None:
        self.shift, self.backwards = shift, backwards

    def pick(self, keys: Any, round_index: int) -> str:
        keys = check_keys(keys)
        at = (round_index + self.shift) % len(keys)
        return str(keys[-1 - at] if self.backwards else keys[at])

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)


NULL_CONTROLS = (
    EngineEntrant("round-robin, 6 places on", lambda built: Reordered(shift=6)),
    EngineEntrant("round-robin, backwards", lambda built: Reordered(backwards=True)),
)

_ENTRANTS: list[EngineEntrant] = []  # set before the pool forks; jobs name them by index


def _job(entrant: int, workload: str, seed: int, reflector: str, sticky: bool) -> dict[str, float]:
    if sticky:
        SimulatedReflector.finds = _sticky_finds  # type: ignore[method-assign]
    return counted(_ENTRANTS[entrant], workload, seed, reflector)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="graded", choices=sorted(ENGINE_WORKLOADS))
    parser.add_argument("--seeds", type=int, default=130)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--reflector", default=REFLECTORS[0], choices=REFLECTORS)
    parser.add_argument("--sticky", action="store_true", help="propose a found fix again at once")
    parser.add_argument("--null", action="store_true", help="add round-robin in two other orders")
    args = parser.parse_args()
    if args.reflector in ("silent", "llm-like-gate"):
        parser.error("needs a reflector with notes and an exact gate: llm-like or a departure")
    extra = NULL_CONTROLS if args.null else ()
    _ENTRANTS[:] = engine_lineup(["fixable-first"], default_registry(), extra, ceilings=False)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"{args.workload}, reflector {args.reflector}{' (sticky)' if args.sticky else ''}, "
          f"seeds {seeds.start}-{seeds.stop - 1}: mean per run; 'final vs RR': mean paired "
          f"difference from round-robin's final held-out reward, 95% interval")  # fmt: skip
    print(f"{'sampler':24s}" + "".join(f"{key:>16s}" for key in COLUMNS) + "   final vs RR")
    finals: dict[str, list[float]] = {}
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        for index, entrant in enumerate(_ENTRANTS):
            jobs = [(index, args.workload, seed, args.reflector, args.sticky) for seed in seeds]
            runs = pool.starmap(_job, jobs)
            finals[entrant.label] = [run["final"] for run in runs]
            means = "".join(f"{sum(run[k] for run in runs) / len(runs):16.2f}" for k in COLUMNS)
            print(f"{entrant.label:24s}{means}   {_versus(finals[entrant.label], finals)}")


def _versus(finals: list[float], every: Mapping[str, list[float]]) -> str:
    """The mean paired difference from round-robin's finals, its 95% interval, and the seeds
    lower and higher."""
    differences = [mine - base for mine, base in zip(finals, every["round-robin"], strict=True)]
    mean = statistics.fmean(differences)
    half = 1.96 * statistics.stdev(differences) / len(differences) ** 0.5
    lower = sum(d < -1e-9 for d in differences)
    higher = sum(d > 1e-9 for d in differences)
    return f"{mean:+.4f} ± {half:.4f} (lower on {lower}, higher on {higher})"


if __name__ == "__main__":
    main()
