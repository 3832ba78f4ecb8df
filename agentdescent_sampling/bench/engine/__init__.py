"""The engine bench: samplers measured by the artifact they buy in the real ``evolve()``.

>>> from agentdescent_sampling.bench.engine import EngineBenchConfig, run_engine_bench
>>> result = run_engine_bench(EngineBenchConfig(workloads=["lessons"], seeds=3))
>>> result.workloads[0].sampler("oracle").at(0.75).ratio_to_round_robin.value > 1
True

``agentdescent-sampling bench --engine`` runs the same from the command line, and
``agentdescent-sampling bench`` the quick bench, :meth:`EngineBenchConfig.quick`. It needs
the ``engine`` extra (agentdescent); importing this package does not import it.
``bench --from-run RUN_DIR`` benches the make-up of your own ``agentdescent evolve`` run:
:func:`read_run` reads it (with the standard library) and :meth:`RecordedRun.workload` is
its workload.
"""

from .fromrun import MakeUp, RecordedRun, estimate_make_up, read_run
from .lineup import ENGINE_DIFFICULTY_WEIGHTED, ORACLE, EngineEntrant
from .metrics import FRACTIONS, EngineSamplerResult, Interval, Reach
from .oracle import EngineOracle
from .plot import plot_gains
from .report import (
    ENGINE_JSON_SCHEMA,
    ENGINE_SCHEMA_ID,
    engine_to_json,
    engine_verdict,
    format_engine_report,
)
from .run import EngineRun, Wiring, run_engine
from .runner import (
    EngineBenchConfig,
    EngineBenchResult,
    EngineWorkloadResult,
    require_engine,
    run_engine_bench,
)
from .workloads import ENGINE_WORKLOADS, REFLECTORS, Built, EngineWorkload, SharedShard, build

__all__ = [
    "ENGINE_DIFFICULTY_WEIGHTED",
    "ENGINE_JSON_SCHEMA",
    "ENGINE_SCHEMA_ID",
    "ENGINE_WORKLOADS",
    "FRACTIONS",
    "ORACLE",
    "REFLECTORS",
    "Built",
    "EngineBenchConfig",
    "EngineBenchResult",
    "EngineEntrant",
    "EngineOracle",
    "EngineRun",
    "EngineSamplerResult",
    "EngineWorkload",
    "EngineWorkloadResult",
    "Interval",
    "MakeUp",
    "Reach",
    "RecordedRun",
    "SharedShard",
    "Wiring",
    "build",
    "engine_to_json",
    "engine_verdict",
    "estimate_make_up",
    "format_engine_report",
    "plot_gains",
    "read_run",
    "require_engine",
    "run_engine",
    "run_engine_bench",
]
