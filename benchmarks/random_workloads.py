"""Look for a workload on which fixable-first loses to round-robin: random workloads, drawn.

Usage::

    python benchmarks/random_workloads.py [--workloads 40] [--seeds 12] [--draw-seed 0]
        [--reflector NAME] [--async] [--only INDEX ...] [--first-seed 0]
        [--change FIELD=VALUE ...]

The engine bench's nine workloads are chosen by hand. A user cannot tell in advance which
workload they have, so this draws ``--workloads`` more from a seeded generator, each with its
own make-up (lessons and the failures their rules take, flaky lessons and their luck, always-
and never-pass tasks, regressions and their held-out weight, graded scores, workers, shared
shards, concurrency, a budget of 2.5 to 9 rollouts per train task) and a reflector drawn from
:data:`DRAWN_REFLECTORS` (``--reflector`` runs them all with any of the bench's, the draw
unchanged), and runs round-robin,
``fixable-first`` and ``fixable-first + wired`` on ``--seeds`` seeds of each in the real
``evolve()`` (the ``engine`` extra), paired by seed as the bench pairs them.

It prints one line per workload and sampler: round-robin's rollouts and calls to 75% and 90% of
the gain over the sampler's (median over seeds, with its 95% interval; a run that never got
there counts as its budget), the final held-out reward's paired difference from round-robin's,
and how many of the sampler's runs never reached 75%. A line is marked ``LOSS`` where one of the
four ratios' intervals lies wholly below 1.0 (the sampler spent more than round-robin) or the
final reward's wholly below 0. A default run screens 400 intervals at 95%, so a few marks come
by chance: ``--only`` runs some of the same draw again, on fresh seeds with ``--first-seed``, to
see whether a loss holds, and ``--change`` runs them changed (``--change shared_shard=false``),
to see what makes it.

:func:`register` hands the same draw to the scripts that take ``--workload``:
``benchmarks/gate_calls.py`` splits a drawn workload's calls (BENCHMARKS.md, "Workloads drawn at
random"). With ``--async`` a workload drawn with ``llm-like-gate`` (synchronous only) is skipped.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from typing import Any

import attrs

from agentdescent_sampling.bench.engine.metrics import EngineSamplerResult
from agentdescent_sampling.bench.engine.report import _ratio_interval  # the report's format
from agentdescent_sampling.bench.engine.runner import EngineBenchConfig, run_engine_bench
from agentdescent_sampling.bench.engine.workloads import (
    ENGINE_WORKLOADS,
    REFLECTORS,
    EngineWorkload,
    check_path,
)

#: The reflectors a workload is drawn with: the bench's as the committed draws were made. A
#: reflector the bench adds later is left out, so that each draw stays as committed.
DRAWN_REFLECTORS = (
    "llm-like",
    "silent",
    "llm-like-wrong",
    "llm-like-random",
    "llm-like-noisy",
    "llm-like-all",
    "llm-like-gate",
)
#: Rollouts per train task in a run's budget: about the bench's own, 2.5 (sparse) to 8.9 (late).
BUDGET_PER_TASK = (2.5, 9.0)


def draw(rng: random.Random, index: int) -> EngineWorkload:
    """One random workload, named ``random-INDEX``, summarised by what was drawn."""
    lessons = rng.randint(1, 12)
    low = rng.randint(1, 4)
    failures_needed = tuple(range(low, rng.randint(low, 6) + 1))
    always, never = rng.randint(0, 20), rng.randint(0, 20)
    shape: dict[str, Any] = {
        "lessons": lessons,
        "failures_needed": failures_needed,
        "always": always,
        "never": never,
    }
    if rng.random() < 0.35:
        shape.update(flaky=rng.randint(1, lessons), luck=round(rng.uniform(0.1, 0.8), 2))
    if rng.random() < 0.35:
        shape.update(
            regressions=rng.randint(1, lessons),
            victim_weight=rng.randint(1, 3),
            patch_failures=rng.randint(1, 3),
        )
    if rng.random() < 0.25:
        shape["graded"] = True
    workers = rng.choice((1, 2, 2, 2, 4))
    shape["workers"] = workers
    if workers > 1 and rng.random() < 0.3:
        shape["max_concurrency"] = workers
        shape["shared_shard"] = rng.random() < 0.5
    train = lessons + shape.get("regressions", 0) + always + never
    budget = rng.uniform(*BUDGET_PER_TASK) * train
    shape["rounds"] = max(4, round(budget / workers))
    summary = " ".join(f"{key}={value}" for key, value in shape.items())
    return EngineWorkload(name=f"random-{index}", summary=summary, **shape)


def line(result: EngineSamplerResult) -> tuple[str, bool]:
    """The sampler's figures in one line, and whether they show a loss to round-robin."""
    reaches = [result.at(0.75), result.at(0.75, "calls"), result.at(0.9), result.at(0.9, "calls")]
    final = result.final_vs_round_robin
    loss = any(r.ratio_to_round_robin.high < 1.0 for r in reaches) or final.high < 0.0
    rollouts, calls, rollouts_90, calls_90 = map(_ratio_interval, reaches)
    text = (
        f"  {result.label:24s} rollouts 75% {rollouts}  calls 75% {calls}  "
        f"90% {rollouts_90} / {calls_90}  final {final.value:+.3f} "
        f"[{final.low:+.3f}, {final.high:+.3f}]  not at 75%: {reaches[0].not_reached} of "
        f"{result.seeds}"
    )
    return text + ("  LOSS" if loss else ""), loss


def drawn(count: int, draw_seed: int = 0) -> list[tuple[EngineWorkload, str]]:
    """The first ``count`` workloads of draw ``draw_seed``, each with the reflector drawn for
    it: what :func:`main` runs (``--reflector`` replaces the reflector, not the draw)."""
    rng = random.Random(draw_seed)
    return [(draw(rng, index), rng.choice(DRAWN_REFLECTORS)) for index in range(count)]


def register(count: int = 40, draw_seed: int = 0) -> None:
    """Add the draw's workloads to the engine bench's ``ENGINE_WORKLOADS`` by name, so the
    scripts that take ``--workload`` (``gate_calls.py``, ``where_rollouts_go.py``) run them."""
    ENGINE_WORKLOADS.update((workload.name, workload) for workload, _ in drawn(count, draw_seed))


def changed(workload: EngineWorkload, changes: Sequence[str]) -> EngineWorkload:
    """``workload`` with each ``FIELD=VALUE`` of ``changes`` set, the value read as JSON (a
    list as a tuple). ``rounds`` stays as drawn, so changing ``workers`` changes the budget.

    Raises:
        ValueError: a change names no field of the workload's make-up, or its value is no
            JSON, or the workload refuses it.
    """
    if not changes:
        return workload
    fields: dict[str, Any] = {}
    for change in changes:
        key, sep, text = change.partition("=")
        if not sep or key not in _CHANGEABLE:
            raise ValueError(f"--change {change!r}: give FIELD=VALUE, FIELD one of {_CHANGEABLE}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(
                f"--change {change!r}: the value is read as JSON; for example "
                f"shared_shard=false or failures_needed=[1,2]"
            ) from None
        fields[key] = tuple(value) if isinstance(value, list) else value
    summary = f"{workload.summary}, changed: {' '.join(changes)}"
    try:
        return attrs.evolve(workload, summary=summary, **fields)
    except (TypeError, ValueError) as error:
        raise ValueError(f"--change {' '.join(changes)}: {error}") from None


#: The fields ``--change`` may set: the make-up and run shape, not the name or summary.
_CHANGEABLE = sorted(set(attrs.fields_dict(EngineWorkload)) - {"name", "summary", "notes"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--draw-seed", type=int, default=0, help="seeds the workloads drawn")
    parser.add_argument(
        "--reflector", choices=REFLECTORS, help="run every workload with this reflector"
    )
    parser.add_argument("--async", dest="asynchronous", action="store_true")
    parser.add_argument(
        "--only", type=int, action="append", help="run only random-INDEX of the same draw"
    )
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--change",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="set a field of every workload run, read as JSON: shared_shard=false",
    )
    args = parser.parse_args(argv)
    if args.workloads < 1:
        parser.error(f"--workloads {args.workloads}: draw at least 1")
    if args.seeds < 2:
        parser.error(f"--seeds {args.seeds}: give at least 2, or no interval can be formed")
    outside = [index for index in args.only or () if not 0 <= index < args.workloads]
    if outside:
        parser.error(f"--only {outside[0]}: the draw holds random-0 to random-{args.workloads - 1}")
    if args.reflector and _refused(args.reflector, args.asynchronous):
        parser.error(f"--reflector {args.reflector} runs on the synchronous path only")
    chosen: dict[str, list[EngineWorkload]] = {}
    for index, (workload, reflector) in enumerate(drawn(args.workloads, args.draw_seed)):
        if args.only is not None and index not in args.only:
            continue
        reflector = args.reflector or reflector
        if _refused(reflector, args.asynchronous):
            print(f"{workload.name} ({reflector}): skipped, synchronous only; --reflector runs it")
            continue
        try:
            chosen.setdefault(reflector, []).append(changed(workload, args.change))
        except ValueError as error:
            parser.error(str(error))
    losses = 0
    for reflector, workloads in chosen.items():
        config = EngineBenchConfig(
            workloads=workloads,
            samplers=["fixable-first"],
            seeds=args.seeds,
            first_seed=args.first_seed,
            reflector=reflector,
            asynchronous=args.asynchronous,
            ceilings=False,
        )
        result = run_engine_bench(config)
        for found in result.workloads:
            print(f"{found.name} ({reflector}): {found.workload.summary}")
            for sampler in found.samplers:
                if sampler.role == "sampler":
                    text, loss = line(sampler)
                    losses += loss
                    print(text)
        sys.stdout.flush()
    run = sum(map(len, chosen.values()))
    print(f"{run} workloads run; {losses} sampler-workload pairs lose to round-robin by the rule")
    return 0


def _refused(reflector: str, asynchronous: bool) -> bool:
    try:
        check_path(reflector, asynchronous)
    except ValueError:
        return True
    return False


if __name__ == "__main__":
    raise SystemExit(main())
