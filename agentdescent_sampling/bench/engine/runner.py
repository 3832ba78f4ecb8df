"""``run_engine_bench``: every sampler on every engine workload for every seed, in ``evolve()``."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TextIO

import attrs

from ...errors import BenchError
from ...registry import Registry, default_registry
from ...spec import SpecLike
from ..core import Machine, WithSamplers, as_specs, cpus
from ..progress import Progress
from .lineup import QUICK_SPECS, EngineEntrant, default_engine_specs, engine_lineup
from .metrics import EngineSamplerResult, summarise_engine
from .run import EngineRun, run_engine
from .workloads import ENGINE_WORKLOADS, REFLECTORS, EngineWorkload

__all__ = [
    "ENGINE_EXTRA",
    "QUICK_SEEDS",
    "QUICK_WORKLOADS",
    "EngineBenchConfig",
    "EngineBenchResult",
    "EngineWorkloadResult",
    "require_engine",
    "run_engine_bench",
]

#: How to install what the engine bench needs.
ENGINE_EXTRA = 'from a clone, pip install -e ".[engine]"; or pip install agentdescent==0.7.0'

#: The quick bench's workloads: plain lessons, regressions whose held-out twins break, and
#: graded scores.
QUICK_WORKLOADS = ("lessons", "regressions-held-out", "graded")
#: The quick bench's seeds: enough for a paired interval, within 90 s on two cores.
QUICK_SEEDS = 6


def _workloads(value: Iterable[EngineWorkload | str]) -> tuple[EngineWorkload, ...]:
    chosen = []
    for item in value:
        if isinstance(item, str):
            if item not in ENGINE_WORKLOADS:
                raise ValueError(
                    f"unknown engine workload {item!r}; expected one of "
                    f"{', '.join(ENGINE_WORKLOADS)}"
                )
            item = ENGINE_WORKLOADS[item]
        chosen.append(item)
    if not chosen:
        raise ValueError("EngineBenchConfig(workloads=...) is empty; give at least one workload")
    return tuple(chosen)


def _reflector(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in REFLECTORS:
        raise ValueError(
            f"EngineBenchConfig(reflector={value!r}): expected one of {', '.join(REFLECTORS)}"
        )


def _at_least_one(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None and attribute.name == "processes":
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"EngineBenchConfig({attribute.name}={value!r}): expected a whole number >= 1"
        )


def _latency(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(
            f"EngineBenchConfig(latency={value!r}): expected seconds per agent call from 0 to "
            f"1, or None for the path's default; for example latency=0.002"
        )


def _specs(value: Any) -> tuple[SpecLike, ...] | None:
    return as_specs(value, "EngineBenchConfig")


@attrs.frozen
class EngineBenchConfig:
    """What an engine bench run compares, on which workloads, over which seeds.

    ``EngineBenchConfig()`` is the default run: every engine workload, 30 seeds,
    round-robin, every built-in sampler at its defaults (one with ``evidence``, such as
    fixable-first, once more wired to the engine's evidence by
    :func:`~agentdescent_sampling.wire`), the engine's own
    ``DifficultyWeighted``, the learner ceiling and the oracle, with the ``llm-like``
    reflector on the synchronous path.

    Args:
        workloads: engine workloads or their names (default: all of
            :data:`~agentdescent_sampling.bench.engine.workloads.ENGINE_WORKLOADS`).
        samplers: specs, as ``create()`` accepts them, or the bench's names
            ``agentdescent.DifficultyWeighted`` and ``oracle``; ``None`` for the default
            lineup. Round-robin (the baseline) and the oracle (the ceiling) are always
            added. A sampler that takes ``pass_threshold`` gets the workload's.
        extra: samplers built by your own factories, run after ``samplers``.
        seeds: seeds per sampler and workload; every sampler runs on the same seeds.
        first_seed: the first seed; a run uses ``first_seed`` to ``first_seed + seeds - 1``.
        processes: worker processes; ``None`` for one per CPU this process may use.
            Processes are forked, so ``extra`` factories need not be picklable; where
            fork is unavailable, the runs go one after another in this process.
        reflector: what the simulated agent proposes on a failure, one of
            :data:`~agentdescent_sampling.bench.engine.workloads.REFLECTORS`.
        asynchronous: run every entrant with ``evolve(asynchronous=True)``.
        latency: seconds each call of the simulated agent takes, without holding the
            interpreter, as a model's calls do; ``None`` for the path's default,
            :data:`~agentdescent_sampling.bench.engine.workloads.ASYNC_LATENCY` on the
            asynchronous path and none on the synchronous one, whose agent then answers at
            once (so a round's units in flight run nearly one after another).
        ceilings: also run the learner ceiling and the oracle.
    """

    workloads: tuple[EngineWorkload, ...] = attrs.field(
        default=tuple(ENGINE_WORKLOADS.values()), converter=_workloads
    )
    samplers: tuple[SpecLike, ...] | None = attrs.field(default=None, converter=_specs)
    extra: tuple[EngineEntrant, ...] = attrs.field(default=(), converter=tuple)
    seeds: int = attrs.field(default=30, validator=_at_least_one)
    first_seed: int = 0
    processes: int | None = attrs.field(default=None, validator=_at_least_one)
    reflector: str = attrs.field(default=REFLECTORS[0], validator=_reflector)
    asynchronous: bool = False
    latency: float | None = attrs.field(default=None, validator=_latency)
    ceilings: bool = True

    @classmethod
    def quick(cls, **changes: Any) -> EngineBenchConfig:
        """The quick bench, what ``agentdescent-sampling bench`` runs: round-robin,
        fixable-first alone and wired, informative-band and the engine's DifficultyWeighted,
        on :data:`QUICK_WORKLOADS` for :data:`QUICK_SEEDS` seeds, without the ceilings.
        ``changes`` override any of these, as keyword arguments of this class."""
        quick: dict[str, Any] = {
            "workloads": QUICK_WORKLOADS,
            "samplers": QUICK_SPECS,
            "seeds": QUICK_SEEDS,
            "ceilings": False,
        }
        return cls(**{**quick, **changes})


@attrs.frozen
class EngineWorkloadResult(WithSamplers[EngineSamplerResult]):
    """Every sampler's result on one engine workload, in the order the run listed them.

    Args:
        workload: the workload.
        start: the held-out reward of the empty artifact.
        attainable: the held-out reward with every rule committed.
        samplers: one result per sampler.
    """

    workload: EngineWorkload
    start: float
    attainable: float
    samplers: tuple[EngineSamplerResult, ...]

    @property
    def name(self) -> str:
        """The workload's name."""
        return self.workload.name


@attrs.frozen
class EngineBenchResult:
    """A finished engine bench run.

    Args:
        config: the configuration that ran.
        workloads: one result per workload, in config order.
        seconds: wall-clock duration of the run.
        processes: worker processes the runs were spread over.
        engine: the agentdescent version that ran.
        machine: the interpreter and CPUs it ran on.
    """

    config: EngineBenchConfig
    workloads: tuple[EngineWorkloadResult, ...]
    seconds: float
    processes: int
    engine: str
    machine: Machine = attrs.field(factory=Machine)


def require_engine() -> str:
    """Return the installed agentdescent version.

    Raises:
        BenchError: agentdescent is not installed; the message says how to install it.
    """
    try:
        import agentdescent  # noqa: F401  # imported only to prove it is there
    except ImportError as error:
        raise BenchError(
            f"the artifact bench runs agentdescent's evolve(), which is not installed "
            f"({error}): {ENGINE_EXTRA}; 'bench share' needs no engine"
        ) from None
    from importlib.metadata import version

    return version("agentdescent")


def run_engine_bench(
    config: EngineBenchConfig | None = None,
    *,
    registry: Registry | None = None,
    progress: TextIO | None = None,
) -> EngineBenchResult:
    """Run every sampler of ``config`` on every engine workload for every seed, and summarise.

    Each (workload, seed) pair is one task set shared by every sampler, so each
    sampler is compared with round-robin seed by seed.

    Args:
        config: what to run; ``None`` for the default run.
        registry: where sampler names are looked up; the default registry if ``None``.
        progress: a stream for the progress bar (drawn only on a terminal).

    Raises:
        BenchError: agentdescent is not installed, or a sampler failed during a run
            (the message names the sampler, workload and seed, and how to rerun it).
        SamplerError: a spec is malformed or names no installed sampler (raised
            before anything runs).
    """
    engine = require_engine()
    config = config or EngineBenchConfig()
    registry = registry or default_registry()
    started = time.perf_counter()
    specs = default_engine_specs(registry) if config.samplers is None else list(config.samplers)
    entrants = engine_lineup(specs, registry, config.extra, ceilings=config.ceilings)
    jobs = [
        (w, e, seed)
        for w in range(len(config.workloads))
        for seed in range(config.first_seed, config.first_seed + config.seeds)
        for e in range(len(entrants))
    ]
    processes = min(config.processes or cpus(), len(jobs))
    if "fork" not in multiprocessing.get_all_start_methods():
        processes = 1
    runs: dict[tuple[int, int, int], EngineRun] = {}
    with Progress(len(jobs), progress) as bar:
        if processes == 1:
            _install(config, entrants)
            for job in jobs:
                runs[job] = _run(*job)
                bar.advance()
        else:
            _pooled(jobs, processes, config, entrants, runs, bar)
    results = tuple(
        _summary(w, workload, entrants, config, runs) for w, workload in enumerate(config.workloads)
    )
    return EngineBenchResult(config, results, time.perf_counter() - started, processes, engine)


def _pooled(
    jobs: Sequence[tuple[int, int, int]],
    processes: int,
    config: EngineBenchConfig,
    entrants: Sequence[EngineEntrant],
    runs: dict[tuple[int, int, int], EngineRun],
    bar: Progress,
) -> None:
    # Forked workers inherit the lineup as it is, closures included: nothing is pickled
    # on the way in, and only the small EngineRun comes back.
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(
        processes, mp_context=context, initializer=_install, initargs=(config, entrants)
    ) as pool:
        pending: dict[Future[EngineRun], tuple[int, int, int]] = {
            pool.submit(_run, *job): job for job in jobs
        }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                error = future.exception()
                if error is not None:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise error
                runs[job] = future.result()
                bar.advance()


_LINEUP: tuple[EngineBenchConfig | None, Sequence[EngineEntrant]] = (None, ())


def _install(config: EngineBenchConfig, entrants: Sequence[EngineEntrant]) -> None:
    global _LINEUP
    _LINEUP = (config, entrants)


def _run(w: int, e: int, seed: int) -> EngineRun:
    config, entrants = _LINEUP
    assert config is not None  # for mypy: _install ran first
    workload, entrant = config.workloads[w], entrants[e]
    try:
        return run_engine(
            workload,
            entrant.make,
            seed,
            reflector=config.reflector,
            wiring=entrant.wiring,
            asynchronous=config.asynchronous,
            latency=config.latency,
        )
    except Exception as error:
        options = (f" --reflector {config.reflector}" if config.reflector != REFLECTORS[0]
                   else "") + (" --async" if config.asynchronous else "") + (
            f" --latency {config.latency}" if config.latency is not None else "")  # fmt: skip
        # A workload of your own (--from-run's, say) has no name --workload takes.
        named = workload.name in ENGINE_WORKLOADS
        rerun = "rerun it alone with: agentdescent-sampling bench" if named else (
            "rerun it alone on the same workload, as you gave it, with")  # fmt: skip
        where = f" --workload {workload.name}" if named else ""
        raise BenchError(
            f"sampler {entrant.label!r} failed on engine workload {workload.name}, seed {seed}: "
            f"{type(error).__name__}: {error}; {rerun} --engine --sampler {entrant.label!r}"
            f"{where} --first-seed {seed} --seeds 1{options}"
        ) from error


def _summary(
    w: int,
    workload: EngineWorkload,
    entrants: Sequence[EngineEntrant],
    config: EngineBenchConfig,
    runs: Mapping[tuple[int, int, int], EngineRun],
) -> EngineWorkloadResult:
    seeds = range(config.first_seed, config.first_seed + config.seeds)
    by_entrant = [[runs[(w, e, seed)] for seed in seeds] for e in range(len(entrants))]
    baseline = by_entrant[0]  # engine_lineup puts round-robin first
    first = baseline[0]
    return EngineWorkloadResult(
        workload,
        first.start,
        first.attainable,
        tuple(
            summarise_engine(entrant.label, entrant.role, entrant_runs, baseline, workload.budget)
            for entrant, entrant_runs in zip(entrants, by_entrant, strict=True)
        ),
    )
