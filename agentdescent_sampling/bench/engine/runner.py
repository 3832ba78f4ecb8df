"""``run_engine_bench``: every sampler on every engine workload for every seed, in ``evolve()``."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import signal
import tempfile
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TextIO

import attrs

from ..._display import shown
from ..._version import __version__
from ...errors import BenchError
from ...protocol import short_repr
from ...registry import Registry, default_registry
from ...spec import SpecLike
from ...wiring import ENGINE_INSTALL
from ..core import (
    Machine,
    RunFailure,
    WithSamplers,
    as_specs,
    cpus,
    first_seed_in_range,
    sampler_line,
)
from ..progress import Progress
from .lineup import (
    QUICK_SPECS,
    EngineEntrant,
    default_engine_specs,
    engine_lineup,
    registered_spec,
)
from .metrics import EngineSamplerResult, summarise_engine
from .run import EngineRun, run_engine
from .workloads import ENGINE_WORKLOADS, REFLECTORS, EngineWorkload, check_path

__all__ = [
    "QUICK_SEEDS",
    "QUICK_WORKLOADS",
    "EngineBenchConfig",
    "EngineBenchResult",
    "EngineWorkloadResult",
    "require_engine",
    "run_engine_bench",
]


#: The quick bench's workloads: plain lessons, regressions whose held-out twins break, and
#: graded scores.
QUICK_WORKLOADS = ("lessons", "regressions-held-out", "graded")
#: The quick bench's seeds: enough for a paired interval, within 90 s on two cores.
QUICK_SEEDS = 6


def _workloads(value: object) -> tuple[EngineWorkload, ...]:
    if isinstance(value, str):
        raise TypeError(
            f"EngineBenchConfig(workloads={short_repr(value)}) takes a sequence of workloads, "
            f"got one name; wrap it in a list: workloads=[{short_repr(value)}]"
        )
    if isinstance(value, EngineWorkload):
        raise TypeError(
            f"EngineBenchConfig(workloads=<the workload {value.name!r}>) takes a sequence of "
            f"workloads, got one; wrap it in a list: workloads=[workload]"
        )
    if not isinstance(value, Iterable):
        raise TypeError(
            f"EngineBenchConfig(workloads={short_repr(value)}): expected a list of engine "
            f"workloads or their names, for example workloads=['lessons']"
        )
    chosen = []
    for item in value:
        if isinstance(item, str):
            if item not in ENGINE_WORKLOADS:
                raise ValueError(
                    f"unknown engine workload {item!r}; expected one of "
                    f"{', '.join(ENGINE_WORKLOADS)}"
                )
            item = ENGINE_WORKLOADS[item]
        elif not isinstance(item, EngineWorkload):
            raise TypeError(
                f"EngineBenchConfig(workloads=[..., {short_repr(item)}, ...]): a workload is an "
                f"EngineWorkload or the name of one of {', '.join(ENGINE_WORKLOADS)}, not "
                f"{type(item).__name__}"
            )
        chosen.append(item)
    if not chosen:
        raise ValueError("EngineBenchConfig(workloads=...) is empty; give at least one workload")
    return tuple(chosen)


def _extra(value: object) -> tuple[EngineEntrant, ...]:
    if isinstance(value, EngineEntrant):
        raise TypeError(
            f"EngineBenchConfig(extra=EngineEntrant({value.label!r}, ...)) takes a sequence of "
            f"entrants, got one; wrap it in a list: extra=[EngineEntrant({value.label!r}, ...)]"
        )
    if isinstance(value, (str, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(
            f"EngineBenchConfig(extra={short_repr(value)}): expected a list of EngineEntrant, "
            f"for example extra=[EngineEntrant('mine', lambda built: Mine())]; a registered "
            f"sampler's spec goes in samplers=[...]"
        )
    entrants = tuple(value)
    for item in entrants:
        if isinstance(item, EngineEntrant):
            continue
        if isinstance(item, (str, Mapping)):
            fix = f"a registered sampler's spec goes in samplers=[{short_repr(item)}]"
        elif callable(item):
            fix = "wrap a factory with its label: EngineEntrant('mine', factory)"
        else:
            fix = "build one as EngineEntrant('mine', lambda built: Mine())"
        raise TypeError(
            f"EngineBenchConfig(extra=[..., {short_repr(item)}, ...]): each entrant is an "
            f"EngineEntrant, not {type(item).__name__}; {fix}"
        )
    return entrants


def _reflector(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in REFLECTORS:
        raise ValueError(
            f"EngineBenchConfig(reflector={value!r}): expected one of {', '.join(REFLECTORS)}"
        )


def _path(instance: Any, attribute: attrs.Attribute[Any], value: bool) -> None:
    try:
        check_path(instance.reflector, value)
    except ValueError as error:
        raise ValueError(f"EngineBenchConfig: {error}") from None


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
            ``agentdescent.DifficultyWeighted`` (which takes its class's parameters as a
            spec does: ``agentdescent.DifficultyWeighted:c=0.4``) and ``oracle``; ``None``
            for the default lineup. Round-robin (the baseline) and the oracle (the ceiling)
            are always added. A sampler that takes ``pass_threshold`` gets the workload's.
        extra: samplers built by your own factories, run after ``samplers``: a list of
            :class:`~agentdescent_sampling.bench.engine.lineup.EngineEntrant`.
        seeds: seeds per sampler and workload; every sampler runs on the same seeds.
        first_seed: the first seed, a whole number >= 0; a run uses ``first_seed`` to
            ``first_seed + seeds - 1``.
        processes: worker processes; ``None`` for one per CPU this process may use.
            Processes are forked, so ``extra`` factories need not be picklable; where
            fork is unavailable, the runs go one after another in this process.
        reflector: what the simulated agent proposes on a failure, one of
            :data:`~agentdescent_sampling.bench.engine.workloads.REFLECTORS`.
        asynchronous: run every entrant with ``evolve(asynchronous=True)``; refused with
            ``llm-like-gate``, whose gain is read from the artifact each round saw.
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
    extra: tuple[EngineEntrant, ...] = attrs.field(default=(), converter=_extra)
    seeds: int = attrs.field(default=30, validator=_at_least_one)
    first_seed: int = attrs.field(default=0, validator=first_seed_in_range)
    processes: int | None = attrs.field(default=None, validator=_at_least_one)
    reflector: str = attrs.field(default=REFLECTORS[0], validator=_reflector)
    asynchronous: bool = attrs.field(default=False, validator=_path)
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
        workloads: one result per workload, in config order, without the samplers in
            ``failures``.
        seconds: wall-clock duration of the run.
        processes: worker processes the runs were spread over.
        engine: the agentdescent version that ran.
        machine: the interpreter and CPUs it ran on.
        failures: the samplers left out because a run of theirs raised, in lineup order,
            each with its first failure; empty when every run finished.
        lineup: every entrant that ran, those in ``failures`` too, in order: each with the
            distribution its sampler comes from and that distribution's version, if known.
        sampling: the agentdescent-sampling version that ran.
    """

    config: EngineBenchConfig
    workloads: tuple[EngineWorkloadResult, ...]
    seconds: float
    processes: int
    engine: str
    machine: Machine = attrs.field(factory=Machine)
    failures: tuple[RunFailure, ...] = ()
    lineup: tuple[EngineEntrant, ...] = ()
    sampling: str = __version__


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
            f"({error}): {ENGINE_INSTALL}; 'bench share' needs no engine"
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
    sampler is compared with round-robin seed by seed. A sampler whose run raises is left
    out of the results, and its later runs are not started; the others run on, and
    :attr:`EngineBenchResult.failures` says which failed where, why, and how to rerun it.

    Args:
        config: what to run; ``None`` for the default run.
        registry: where sampler names are looked up; the default registry if ``None``.
        progress: a stream for the progress bar (drawn only on a terminal).

    Raises:
        BenchError: agentdescent is not installed, or a run of round-robin, the baseline
            every sampler is compared with, failed (the message names the workload and
            seed, and how to rerun it).
        SamplerError: a spec is malformed or names no installed sampler (raised
            before anything runs).
        KeyboardInterrupt: the run was interrupted; no run is started after it, and the
            worker processes are interrupted with this one (Ctrl-C reaches them all).
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
    with Progress(len(jobs), progress) as bar:
        tally = _Tally(bar)
        if processes == 1:
            _install(config, entrants)
            for job in jobs:
                if tally.wanted(job):
                    try:
                        run = _run(*job)
                    except _RunFailed as failed:
                        tally.fail(job, failed.failure)
                    else:
                        tally.finished(job, run)
        else:
            _pooled(jobs, processes, config, entrants, tally)
    kept = [(e, entrant) for e, entrant in enumerate(entrants) if e not in tally.failed]
    results = tuple(
        _summary(w, workload, kept, config, tally.runs)
        for w, workload in enumerate(config.workloads)
    )
    failures = tuple(failure for _, (_, failure) in sorted(tally.failed.items()))
    return EngineBenchResult(
        config,
        results,
        time.perf_counter() - started,
        processes,
        engine,
        failures=failures,
        lineup=tuple(entrants),
    )


#: One run: the workload's index, the entrant's index and the seed.
_Job = tuple[int, int, int]


class _RunFailed(Exception):
    """A run that raised, carried as the failure to report (picklable, from a worker)."""

    def __init__(self, failure: RunFailure) -> None:
        super().__init__(failure)
        self.failure = failure


@attrs.define
class _Tally:
    """The runs finished so far, and the entrants left out, each with its first failure."""

    bar: Progress
    runs: dict[_Job, EngineRun] = attrs.field(factory=dict)
    failed: dict[int, tuple[_Job, RunFailure]] = attrs.field(factory=dict)

    def wanted(self, job: _Job) -> bool:
        """Whether to start ``job``: not once its entrant failed (it counts as done then)."""
        if job[1] in self.failed:
            self.bar.advance()
            return False
        return True

    def finished(self, job: _Job, run: EngineRun) -> None:
        self.runs[job] = run
        self.bar.advance()

    def fail(self, job: _Job, failure: RunFailure) -> None:
        """Leave the job's entrant out, or end the bench if it is the baseline.

        Raises:
            BenchError: the entrant is round-robin, without which nothing compares.
        """
        if job[1] == 0:  # engine_lineup puts round-robin first
            raise BenchError(failure.message)
        earlier = self.failed.get(job[1])
        # Runs end out of order in a pool: keep the failure that comes first in run order.
        if earlier is None or (job[0], job[2]) < (earlier[0][0], earlier[0][2]):
            self.failed[job[1]] = (job, failure)
        self.bar.advance()


def _pooled(
    jobs: Sequence[_Job],
    processes: int,
    config: EngineBenchConfig,
    entrants: Sequence[EngineEntrant],
    tally: _Tally,
) -> None:
    # Forked workers inherit the lineup as it is, closures included: nothing is pickled
    # on the way in, and only the small EngineRun comes back. One run per worker is handed
    # out at a time, so a failed entrant's later runs are never started, and an interrupt
    # leaves no queued run to finish first.
    context = multiprocessing.get_context("fork")
    waiting = deque(jobs)
    pending: dict[Future[EngineRun], _Job] = {}
    # evolve() removes its scratch ledger when it returns, and only at exit when it raises
    # (Ctrl-C): a forked worker exits without running atexit, so every run interrupted there
    # would leave a git repository in $TMPDIR. The workers make their temporary files in this
    # directory, which goes once they have all exited.
    scratch = tempfile.mkdtemp(prefix="agentdescent-sampling-bench-")
    try:
        with ProcessPoolExecutor(
            processes,
            mp_context=context,
            initializer=_install_worker,
            initargs=(config, entrants, scratch),
        ) as pool:
            try:
                while waiting or pending:
                    while waiting and len(pending) < processes:
                        job = waiting.popleft()
                        if tally.wanted(job):
                            pending[pool.submit(_work, *job)] = job
                    if not pending:
                        break
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    in_flight = list(pending.values())  # one dead worker breaks them all
                    for future in done:
                        job = pending.pop(future)
                        error = future.exception()
                        if isinstance(error, _RunFailed):
                            tally.fail(job, error.failure)
                        elif isinstance(error, BrokenProcessPool):
                            raise _killed(config, entrants, in_flight) from error
                        elif error is not None:
                            raise error
                        else:
                            tally.finished(job, future.result())
            except BaseException:
                # Ctrl-C, a failed baseline or a broken pool: start nothing more (a run
                # handed out but not yet begun is cancelled). Leaving the block waits for
                # the runs in progress, which Ctrl-C interrupts too.
                for future in pending:
                    future.cancel()
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


_LINEUP: tuple[EngineBenchConfig | None, Sequence[EngineEntrant]] = (None, ())
#: What SIGINT did in the process a worker was forked from, restored while it runs a job.
_INTERRUPT: Any = None


def _install(config: EngineBenchConfig, entrants: Sequence[EngineEntrant]) -> None:
    global _LINEUP
    _LINEUP = (config, entrants)


def _install_worker(
    config: EngineBenchConfig, entrants: Sequence[EngineEntrant], scratch: str
) -> None:
    global _INTERRUPT
    _install(config, entrants)
    tempfile.tempdir = scratch  # removed by the process that forked this one (see _pooled)
    # Ctrl-C reaches every process of the terminal's process group. A worker waiting for
    # its next run ignores it, or it would die with a traceback of its own; one that is
    # running is interrupted, as this process is (see _work).
    _INTERRUPT = signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A SIGTERM sent to a worker ends it, whatever the command made of it for itself.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _work(w: int, e: int, seed: int) -> EngineRun:
    """:func:`_run` in a worker process, which Ctrl-C interrupts only while it runs."""
    if _INTERRUPT is None:  # the handler was set outside Python: the worker keeps ignoring it
        return _run(w, e, seed)
    signal.signal(signal.SIGINT, _INTERRUPT)
    try:
        return _run(w, e, seed)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # a sampler's SystemExit ends its run only
        message = (
            f"sampler {entrant.label!r} failed on engine workload {workload.name}, seed {seed}: "
            f"{shown(f'{type(error).__name__}: {error}')}{sampler_line(error)}; "
            f"{_rerun(config, entrant, workload, seed)}"
        )
        failure = RunFailure.of(entrant.label, workload.name, seed, message, error)
        raise _RunFailed(failure) from error


def _killed(
    config: EngineBenchConfig, entrants: Sequence[EngineEntrant], in_flight: Sequence[_Job]
) -> BenchError:
    """The error for a worker process ended from outside while ``in_flight`` ran."""
    runs = "; ".join(
        f"sampler {entrants[e].label!r} on engine workload {config.workloads[w].name}, seed {seed}"
        for w, e, seed in in_flight
    )
    return BenchError(
        f"a worker process was ended from outside (killed, or by the system when memory ran "
        f"out), so the bench stopped; it was running one of: {runs}. Rerun each alone with "
        f"--sampler, --workload, --first-seed and --seeds 1 to find which"
    )


def _rerun(
    config: EngineBenchConfig, entrant: EngineEntrant, workload: EngineWorkload, seed: int
) -> str:
    """How to rerun one run alone: by the command line for a sampler it can name, else by
    :func:`run_engine_bench`."""
    # A workload of your own (--from-run's, say), or a built-in one changed, has no name
    # --workload takes.
    named = ENGINE_WORKLOADS.get(workload.name) == workload
    reflector = config.reflector if config.reflector != REFLECTORS[0] else None
    spec = _spec(config, entrant)
    if spec is None:
        options = "".join(
            [
                f", reflector={reflector!r}" if reflector else "",
                ", asynchronous=True" if config.asynchronous else "",
                f", latency={config.latency}" if config.latency is not None else "",
            ]
        )
        given = f"your EngineEntrant {entrant.label!r} as extra"
        if not named:
            given += f" and the workload {workload.name!r} as you gave it"
        workloads = repr([workload.name]) if named else "[...]"
        return (
            f"it is not a registered sampler, so rerun it alone from Python, with {given}: "
            f"run_engine_bench(EngineBenchConfig(samplers=[], extra=[...], "
            f"workloads={workloads}, first_seed={seed}, seeds=1, ceilings=False{options}))"
        )
    options = "".join(
        [
            f" --reflector {reflector}" if reflector else "",
            " --async" if config.asynchronous else "",
            f" --latency {config.latency}" if config.latency is not None else "",
        ]
    )
    # Always quoted (shlex.quote leaves a plain name bare), as the shell reads it whatever it holds.
    quoted = "'" + spec.replace("'", "'\"'\"'") + "'"
    if named:
        return (
            f"rerun it alone with: agentdescent-sampling bench --engine --sampler {quoted} "
            f"--workload {workload.name} --first-seed {seed} --seeds 1{options}"
        )
    return (
        f"rerun it alone on the same workload, as you gave it, with --engine --sampler {quoted} "
        f"--first-seed {seed} --seeds 1{options}"
    )


def _spec(config: EngineBenchConfig, entrant: EngineEntrant) -> str | None:
    """The ``--sampler`` value that runs ``entrant``, or ``None`` for one of ``extra``."""
    if any(entrant is given for given in config.extra):
        return None
    spec = registered_spec(entrant)
    if spec is not None:
        # A wired entrant runs beside its sampler alone; a provider needs the mapping form.
        if spec.provider is None:
            return str(spec)
        mapping = {"name": spec.name, **spec.params, "provider": spec.provider}
        return json.dumps(mapping, default=str)
    return entrant.label  # round-robin, the engine's DifficultyWeighted and the ceilings


def _summary(
    w: int,
    workload: EngineWorkload,
    entrants: Sequence[tuple[int, EngineEntrant]],
    config: EngineBenchConfig,
    runs: Mapping[_Job, EngineRun],
) -> EngineWorkloadResult:
    seeds = range(config.first_seed, config.first_seed + config.seeds)
    by_entrant = [[runs[(w, e, seed)] for seed in seeds] for e, _ in entrants]
    baseline = by_entrant[0]  # engine_lineup puts round-robin first, and it never fails here
    first = baseline[0]
    return EngineWorkloadResult(
        workload,
        first.start,
        first.attainable,
        tuple(
            summarise_engine(entrant.label, entrant.role, entrant_runs, baseline, workload.budget)
            for (_, entrant), entrant_runs in zip(entrants, by_entrant, strict=True)
        ),
    )
