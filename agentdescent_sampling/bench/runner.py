"""``run_bench``: every sampler, on every workload, for every seed, through the engine's loop."""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import attrs

from .._display import shown
from ..errors import BenchError
from ..registry import Registry, default_registry
from ..spec import SpecLike
from .core import Machine, RunFailure, WithSamplers, as_specs, first_seed_in_range, sampler_line
from .driver import Rollout, RolloutLoop, drive
from .lineup import Entrant, Skipped, default_specs, lineup
from .metrics import SamplerResult, summarise
from .progress import Progress
from .workloads import WORKLOADS, Workload

__all__ = ["BenchConfig", "BenchResult", "WorkloadResult", "run_bench"]


def _workloads(value: Iterable[Workload]) -> tuple[Workload, ...]:
    return tuple(value)


def _at_least_one(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"BenchConfig({attribute.name}={value!r}): expected a whole number >= 1")


def _specs(value: Any) -> tuple[SpecLike, ...] | None:
    return as_specs(value, "BenchConfig")


@attrs.frozen
class BenchConfig:
    """What a bench run compares, on which workloads, and how the engine drives it.

    ``BenchConfig()`` is the default run: the doc's ``c`` sweep of difficulty-weighted,
    round-robin and every other installed sampler at its defaults, on ``stationary``
    and ``noisy``, 200 rollouts, one worker, 100 seeds.

    Args:
        samplers: specs of the samplers to compare, in any form ``create()``
            accepts; ``None`` for the default lineup. Round-robin (the baseline)
            and the oracle (the ceiling) are always added.
        workloads: the workloads to run every sampler on.
        loop: how the engine calls the samplers: budget, workers, concurrency, path.
        seeds: how many seeds, each a fresh workload realization and fresh samplers.
        first_seed: the first seed; a run uses ``first_seed`` to ``first_seed + seeds - 1``.
    """

    samplers: tuple[SpecLike, ...] | None = attrs.field(default=None, converter=_specs)
    workloads: tuple[Workload, ...] = attrs.field(
        default=(WORKLOADS["stationary"], WORKLOADS["noisy"]), converter=_workloads
    )
    loop: RolloutLoop = attrs.field(factory=RolloutLoop)
    seeds: int = attrs.field(default=100, validator=_at_least_one)
    first_seed: int = attrs.field(default=0, validator=first_seed_in_range)


@attrs.frozen
class WorkloadResult(WithSamplers[SamplerResult]):
    """Every sampler's result on one workload, in the order the run listed them."""

    name: str
    label: str
    noise: float
    #: How many tasks each seed's shard held.
    tasks: int
    samplers: tuple[SamplerResult, ...]


@attrs.frozen
class BenchResult:
    """A finished bench run: its config, one result per workload, and what it left out.

    Args:
        config: the configuration that ran.
        workloads: one result per workload, in config order.
        skipped: installed samplers the default lineup could not run, and why.
        seconds: wall-clock duration of the run.
        machine: the interpreter and CPUs it ran on.
        failures: the samplers left out of ``workloads`` because a run of theirs raised or
            broke the contract, in the order they failed.
    """

    config: BenchConfig
    workloads: tuple[WorkloadResult, ...]
    skipped: tuple[Skipped, ...] = ()
    seconds: float = 0.0
    machine: Machine = attrs.field(factory=Machine)
    failures: tuple[RunFailure, ...] = ()


def run_bench(
    config: BenchConfig | None = None,
    *,
    registry: Registry | None = None,
    progress: TextIO | None = None,
) -> BenchResult:
    """Run every sampler of ``config`` on every workload for every seed, and summarise.

    Each seed builds one realization of the workload and shares it between the
    samplers, so they are compared on identical tasks; each run gets a new sampler.

    Args:
        config: what to run; ``None`` for the default run.
        registry: where sampler names are looked up; the default registry if ``None``.
        progress: a stream for the progress bar (drawn only on a terminal).

    Raises:
        SamplerError: a spec is malformed or names no installed sampler
            (raised before anything runs).
        BenchError: round-robin, which every sampler is compared with, raised or broke the
            contract during the run; the message names the workload and the seed. Another
            sampler that does is left out, with all its runs, and named in
            :attr:`BenchResult.failures`.
    """
    config = config or BenchConfig()
    registry = registry or default_registry()
    started = time.perf_counter()
    if config.samplers is None:
        specs, skipped = default_specs(registry)
    else:
        specs, skipped = list(config.samplers), []
    entrants = lineup(specs, registry)
    steps = len(config.workloads) * config.seeds * len(entrants)
    failed: dict[str, RunFailure] = {}
    with Progress(steps, progress) as bar:
        results = [
            _run_workload(workload, entrants, config, bar, failed) for workload in config.workloads
        ]
    kept = tuple(
        attrs.evolve(
            result,
            samplers=tuple(each for each in result.samplers if each.label not in failed),
        )
        for result in results
    )
    seconds = time.perf_counter() - started
    return BenchResult(config, kept, tuple(skipped), seconds, failures=tuple(failed.values()))


def _run_workload(
    workload: Workload,
    entrants: Sequence[Entrant],
    config: BenchConfig,
    bar: Progress,
    failed: dict[str, RunFailure],
) -> WorkloadResult:
    """Run every entrant not in ``failed`` on ``workload``; add to ``failed`` each that fails.

    Raises:
        BenchError: round-robin failed.
    """
    traces: dict[str, list[tuple[Rollout, ...]]] = {entrant.label: [] for entrant in entrants}
    for seed in range(config.first_seed, config.first_seed + config.seeds):
        # One realization per seed, shared by every sampler: a paired comparison.
        scenario = workload.build(seed)
        for entrant in entrants:
            bar.advance()
            if entrant.label in failed:
                continue
            try:
                sampler = entrant.build(scenario, config.loop.budget, seed)
                traces[entrant.label].append(drive(sampler, scenario, config.loop, seed))
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # a sampler's SystemExit too
                failure = _failure(entrant, workload, seed, error)
                if entrant.role == "baseline":
                    raise BenchError(failure.message) from error
                failed[entrant.label] = failure
    summaries = [
        summarise(entrant.label, entrant.role, traces[entrant.label])
        for entrant in entrants
        if entrant.label not in failed
    ]
    baseline = next(summary.share.mean for summary in summaries if summary.role == "baseline")
    return WorkloadResult(
        workload.name,
        workload.label,
        workload.noise,
        len(scenario.keys),
        tuple(
            attrs.evolve(
                summary, ratio_to_round_robin=summary.share.mean / baseline if baseline else None
            )
            for summary in summaries
        ),
    )


def _failure(entrant: Entrant, workload: Workload, seed: int, error: BaseException) -> RunFailure:
    """What a failed run says: the sampler, where, what it raised, and how to rerun it alone."""
    what = str(error) if isinstance(error, BenchError) else f"{type(error).__name__}: {error}"
    message = (
        f"sampler {entrant.label!r} failed on workload {workload.label}, seed {seed}: "
        f"{shown(what)}{sampler_line(error)}; reproduce it alone with the same command and "
        f"options, with "
        f"--sampler {shlex.quote(entrant.label)} --workload {workload.name} --first-seed {seed} "
        f"--seeds 1"
    )
    return RunFailure.of(entrant.label, workload.name, seed, message, error)
