"""What was tried against fixable-first's loss on the regressions workloads at random counts.

Usage::

    python benchmarks/regressions_variants.py [--seeds 30] [--first-seed 0]
        [--reflector llm-like-random] [--workload W ...] [VARIANT ...]

With ``llm-like-random`` (a fix on each failure with chance 1/k), fixable-first needs more
rollouts and calls than round-robin on ``regressions`` and ``regressions-held-out`` (BENCHMARKS.md,
"The regressions workloads at random counts"). Each variant here changes one thing the
diagnosis pointed at; they run in the engine bench beside round-robin, fixable-first alone and
wired, and the two ceilings, and the bench's report is printed. Variants marked wired get the
engine's evidence through ``wire()``. Needs the ``engine`` extra.

Its figures in BENCHMARKS.md were measured at commit ``d0f7fa5``, before fixable-first's
``failure_cost=3`` default, its overdue rule and its commit clock; on later commits each variant
inherits all three. Two rows of that table, a committed verified fix counted as an artifact
change at its card and a task unpicked for two cycles going first, are that shipped behaviour
since ``185bb07``: check out ``d0f7fa5`` to run them as they were measured. The variants here
have no re-test cap (``_cap_retests``), which came after every figure measured with them;
``no-retest-cap`` is fixable-first's defaults before it, and ``retest-cap-any`` the cap tried
first, which waits a cycle even when the artifact changed since the re-test.
``refused-as-notes + wired`` is fixable-first wired before a verified fix the gate refused made
its task's failures count afresh (run it with ``--reflector llm-like-wrong``, BENCHMARKS.md,
"A verified fix the gate refused").
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from agentdescent_sampling import FixableFirst, TaskSampler, wire
from agentdescent_sampling.bench.engine import (
    Built,
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)
from agentdescent_sampling.samplers import fixable_first

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.fixable_first_variants import variant_class  # after the path


@attrs.define(eq=False)
class NoRetestCap(FixableFirst):
    """fixable-first before its re-test cap."""

    _cap_retests = False


@attrs.define(eq=False)
class RetestCapAny(FixableFirst):
    """The re-test cap, also when the artifact changed since the task's last re-test."""

    def _retested(self, task_id: str, value: fixable_first._Values, size: int) -> bool:
        task = self._tasks.get(task_id)
        if task is None:
            return False
        cycle = max(len(self._tasks), size)
        return task.last > self._picks - cycle and value.fail_chance(task) < 0.5


@attrs.define(eq=False)
class RefusedAsNotes(FixableFirst):
    """Reads a verified fix the gate refused as it reads a note's card: its task's failures do
    not count afresh."""

    def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
        # Not committed, the gain decides only whether a refused fix counts afresh.
        super().evidence(task_id, gain if committed else 0.0, committed)


class _UntriedFirstValues(fixable_first._Values):
    def of(self, task: Any) -> float:
        return float("inf") if task is None else super().of(task)


@attrs.define(eq=False)
class UntriedFirst(NoRetestCap):
    """Every task once before any is retried, as round-robin's first cycle."""

    def _values(self) -> fixable_first._Values:
        return _UntriedFirstValues(self)


@attrs.define(eq=False)
class StaleGuard(NoRetestCap):
    """A free task not picked for ``cycles`` times as many picks as there are tasks goes first:
    fixable-first's own overdue rule, at another bound than its two cycles (a task that has
    failed, before any card, is overdue after one cycle, as in fixable-first since ``f5a0018``)."""

    cycles: float = 2.0

    def _overdue(self, size: int) -> Callable[[fixable_first._Task | None], int]:
        # A whole pick number: last < bound holds for a whole last exactly when last < ceil.
        cycle = max(len(self._tasks), size)
        bound = math.ceil(self._picks - self.cycles * cycle)
        if self._evidenced:
            return lambda task: bound
        # As the base: until a card comes, a task that has failed is overdue after one cycle.
        failed = self._picks - fixable_first._FAILED_OVERDUE_CYCLES * cycle
        return lambda task: failed if task is not None and task.fails else bound


@attrs.define(eq=False)
class GateAware(NoRetestCap):
    """Prices a failure at what it costs on the synchronous path: 3 calls, plus a held-out
    measurement (``gate`` calls) if no earlier rollout of its round has failed."""

    gate: int = 0
    _round_of: dict[str, int] = attrs.field(init=False, factory=dict)
    _failed_rounds: set[int] = attrs.field(init=False, factory=set)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.failure_cost = 3.0 + (0 if round_index in self._failed_rounds else self.gate)
        picked = super().pick(keys, round_index)
        self._round_of[picked] = round_index
        return picked

    def record(self, task_id: str, score: float) -> None:
        if score < self.pass_threshold and task_id in self._round_of:
            self._failed_rounds.add(self._round_of[task_id])
        super().record(task_id, score)


def _held_out(built: Built) -> int:
    from agentdescent.evolution import held_out_size

    return int(held_out_size(len(built.tasks), built.held_out_frac))


def _wired(sampler: TaskSampler, built: Built, options: Any) -> dict[str, Any]:
    return wire(sampler, **options)  # the run's options: wire() reads some of them


_FLAT_ONE = variant_class({"_FLAT": 1, "_RETEST_CYCLES": 0})
_SLOW_TAIL = variant_class({"_FLAT": 1, "_STEP": 0.7, "_TAIL": 0.7, "_RETEST_CYCLES": 0})

#: label -> (factory given the seeded workload, wired?)
VARIANTS: dict[str, tuple[Callable[[Built], TaskSampler], bool]] = {
    "untried-first": (lambda b: UntriedFirst(pass_threshold=b.pass_threshold), False),
    "untried-first + wired": (lambda b: UntriedFirst(pass_threshold=b.pass_threshold), True),
    "no-retest-cap": (lambda b: NoRetestCap(pass_threshold=b.pass_threshold), False),
    "no-retest-cap + wired": (lambda b: NoRetestCap(pass_threshold=b.pass_threshold), True),
    "retest-cap-any": (lambda b: RetestCapAny(pass_threshold=b.pass_threshold), False),
    "retest-cap-any + wired": (lambda b: RetestCapAny(pass_threshold=b.pass_threshold), True),
    "stale-guard-1": (lambda b: StaleGuard(pass_threshold=b.pass_threshold, cycles=1.0), False),
    "stale-guard-1.5": (lambda b: StaleGuard(pass_threshold=b.pass_threshold, cycles=1.5), False),
    "stale-guard-1.5 + wired": (
        lambda b: StaleGuard(pass_threshold=b.pass_threshold, cycles=1.5),
        True,
    ),
    "prior-flat-1 + wired": (lambda b: _FLAT_ONE(pass_threshold=b.pass_threshold), True),
    "prior-slow-tail + wired": (lambda b: _SLOW_TAIL(pass_threshold=b.pass_threshold), True),
    "refused-as-notes + wired": (
        lambda b: RefusedAsNotes(pass_threshold=b.pass_threshold),
        True,
    ),
    "gate-aware + wired": (
        lambda b: GateAware(pass_threshold=b.pass_threshold, gate=_held_out(b)),
        True,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--reflector", default="llm-like-random")
    parser.add_argument(
        "--workload", action="append", help="default: regressions and regressions-held-out"
    )
    parser.add_argument("variants", nargs="*", help=f"default: all of {', '.join(VARIANTS)}")
    args = parser.parse_args()
    unknown = set(args.variants) - set(VARIANTS)
    if unknown:
        parser.error(f"no variant {sorted(unknown)}; choose from {', '.join(VARIANTS)}")
    extra = []
    for label in args.variants or VARIANTS:
        make, wired = VARIANTS[label]
        extra.append(EngineEntrant(label, make, wiring=_wired if wired else None))
    config = EngineBenchConfig(
        workloads=args.workload or ["regressions", "regressions-held-out"],
        samplers=["fixable-first"],
        extra=extra,
        seeds=args.seeds,
        first_seed=args.first_seed,
        reflector=args.reflector,
    )
    print(format_engine_report(run_engine_bench(config)))


if __name__ == "__main__":
    main()
