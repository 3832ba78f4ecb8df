"""Measure what a sampler buys: simulated workloads, the engine's rollout loop, and reports.

>>> from agentdescent_sampling.bench import BenchConfig, RolloutLoop, WORKLOADS, run_bench
>>> result = run_bench(BenchConfig(
...     samplers=["difficulty-weighted"], workloads=[WORKLOADS["stationary"]],
...     loop=RolloutLoop(budget=80), seeds=3))
>>> result.workloads[0].sampler("round-robin").share.mean
0.15

``agentdescent-sampling bench share`` runs the same from the command line. The artifact bench,
:mod:`agentdescent_sampling.bench.engine` (``agentdescent-sampling bench``, quick, and
``bench --engine``, in full), measures what the share cannot: the held-out reward each sampler
buys in the real ``evolve()``, per rollout and per agent call.
"""

from .core import CurvePoint, Machine, RunFailure
from .driver import Rollout, RolloutLoop, drive
from .lineup import DEFAULT_SWEEP, LINEUPS, Skipped, lineup_specs
from .metrics import Latency, SamplerResult, Share
from .oracle import Oracle
from .plot import plot_shares
from .report import JSON_SCHEMA, SCHEMA_ID, format_report, to_json
from .runner import BenchConfig, BenchResult, WorkloadResult, run_bench
from .workloads import (
    INFORMATIVE_BAND,
    WORKLOADS,
    Drift,
    FromLog,
    Scenario,
    Stationary,
    Workload,
    is_informative,
    read_log,
)

__all__ = [
    "DEFAULT_SWEEP",
    "INFORMATIVE_BAND",
    "JSON_SCHEMA",
    "LINEUPS",
    "SCHEMA_ID",
    "WORKLOADS",
    "BenchConfig",
    "BenchResult",
    "CurvePoint",
    "Drift",
    "FromLog",
    "Latency",
    "Machine",
    "Oracle",
    "Rollout",
    "RolloutLoop",
    "RunFailure",
    "SamplerResult",
    "Scenario",
    "Share",
    "Skipped",
    "Stationary",
    "Workload",
    "WorkloadResult",
    "drive",
    "format_report",
    "is_informative",
    "lineup_specs",
    "plot_shares",
    "read_log",
    "run_bench",
    "to_json",
]
