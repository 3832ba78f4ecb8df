"""A bench result as text tables, or as JSON in the documented shape.

The JSON document (:func:`to_json`; :data:`JSON_SCHEMA` is its JSON Schema)::

    {
      "schema": "agentdescent-sampling/bench/1",
      "config": {
        "samplers": ["difficulty-weighted:c=0.2", "round-robin", "oracle"],
        "workloads": ["stationary", "noisy"],
        "budget": 200, "seeds": 100, "first_seed": 0,
        "n_workers": 1, "in_flight": 1, "asynchronous": false, "shared_shard": false
      },
      "machine": {"python": "3.11.7", "implementation": "CPython", "cpus": 2,
                  "system": "Linux-..."},
      "seconds": 17.9,
      "workloads": [
        {
          "name": "stationary", "label": "stationary (clean)", "noise": 0.0,
          "samplers": [
            {
              "label": "difficulty-weighted:c=0.2", "role": "sampler",
              "share": {"mean": 0.77, "ci95": [0.76, 0.78],
                        "p10": 0.71, "p50": 0.78, "p90": 0.83},
              "ratio_to_round_robin": 5.14,
              "duplicate_rate": 0.0,
              "pick_latency_us": {"p50": 21.0, "p99": 40.2},
              "record_latency_us": {"p50": 2.1, "p99": 4.0},
              "seeds": 100, "rollouts": 20000,
              "curve": [{"rollouts": 10, "mean": 0.15, "ci95": [0.13, 0.17]}, ...]
            }
          ]
        }
      ],
      "skipped": [{"label": "some-sampler", "reason": "needs 'x' set; ..."}]
    }

Shares, and the ends of their 95% intervals, are fractions in [0, 1]. ``role`` is
``baseline`` (round-robin), ``sampler`` or ``ceiling`` (the oracle).
``ratio_to_round_robin`` is ``null`` when round-robin's share is zero. ``curve``
gives the share of the first ``rollouts`` rollouts, for plotting the share against
the budget spent. Latencies are in microseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .metrics import SamplerResult
from .runner import BenchResult, WorkloadResult
from .workloads import INFORMATIVE_BAND

__all__ = ["JSON_SCHEMA", "SCHEMA_ID", "format_report", "to_json"]

#: The value of the document's ``schema`` key; the number changes when the shape does.
SCHEMA_ID = "agentdescent-sampling/bench/1"

_NUMBER: dict[str, Any] = {"type": "number"}
_FRACTION: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 1}
_PAIR: dict[str, Any] = {"type": "array", "items": _FRACTION, "minItems": 2, "maxItems": 2}


def _object(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties),
        "additionalProperties": False,
    }


_LATENCY = _object(p50=_NUMBER, p99=_NUMBER)

#: The JSON Schema (draft 2020-12) of the document :func:`to_json` returns.
JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "agentdescent-sampling bench result",
    **_object(
        schema={"const": SCHEMA_ID},
        config=_object(
            samplers={"type": "array", "items": {"type": "string"}, "minItems": 1},
            workloads={"type": "array", "items": {"type": "string"}, "minItems": 1},
            budget=_COUNT,
            seeds=_COUNT,
            first_seed={"type": "integer"},
            n_workers=_COUNT,
            in_flight=_COUNT,
            asynchronous={"type": "boolean"},
            shared_shard={"type": "boolean"},
        ),
        machine=_object(
            python={"type": "string"},
            implementation={"type": "string"},
            cpus=_COUNT,
            system={"type": "string"},
        ),
        seconds={"type": "number", "minimum": 0},
        workloads={
            "type": "array",
            "items": _object(
                name={"type": "string"},
                label={"type": "string"},
                noise=_FRACTION,
                samplers={
                    "type": "array",
                    "items": _object(
                        label={"type": "string"},
                        role={"enum": ["baseline", "sampler", "ceiling"]},
                        share=_object(
                            mean=_FRACTION, ci95=_PAIR, p10=_FRACTION, p50=_FRACTION, p90=_FRACTION
                        ),
                        ratio_to_round_robin={"type": ["number", "null"]},
                        duplicate_rate=_FRACTION,
                        pick_latency_us=_LATENCY,
                        record_latency_us=_LATENCY,
                        seeds=_COUNT,
                        rollouts=_COUNT,
                        curve={
                            "type": "array",
                            "items": _object(rollouts=_COUNT, mean=_FRACTION, ci95=_PAIR),
                        },
                    ),
                },
            ),
        },
        skipped={
            "type": "array",
            "items": _object(label={"type": "string"}, reason={"type": "string"}),
        },
    ),
}


def to_json(result: BenchResult) -> dict[str, Any]:
    """The result as a JSON-ready document in the shape of :data:`JSON_SCHEMA`."""
    config, machine = result.config, result.machine
    return {
        "schema": SCHEMA_ID,
        "config": {
            "samplers": [sampler.label for sampler in result.workloads[0].samplers],
            "workloads": [workload.name for workload in result.workloads],
            "budget": config.loop.budget,
            "seeds": config.seeds,
            "first_seed": config.first_seed,
            "n_workers": config.loop.n_workers,
            "in_flight": config.loop.in_flight,
            "asynchronous": config.loop.asynchronous,
            "shared_shard": config.loop.shared_shard,
        },
        "machine": {
            "python": machine.python,
            "implementation": machine.implementation,
            "cpus": machine.cpus,
            "system": machine.system,
        },
        "seconds": round(result.seconds, 3),
        "workloads": [
            {
                "name": workload.name,
                "label": workload.label,
                "noise": workload.noise,
                "samplers": [_sampler_json(sampler) for sampler in workload.samplers],
            }
            for workload in result.workloads
        ],
        "skipped": [{"label": skip.label, "reason": skip.reason} for skip in result.skipped],
    }


def format_report(result: BenchResult) -> str:
    """The result as text: the doc's table (workloads by samplers), then one detail table each."""
    config = result.config
    loop = config.loop
    low, high = INFORMATIVE_BAND
    path = "async" if loop.asynchronous else "sync"
    shard = "one shared shard" if loop.shared_shard else "split shards"
    lines = [
        f"Share of rollouts on informative tasks (true p in [{low}, {high}]), "
        f"mean over {config.seeds} seeds",
        f"budget {loop.budget} rollouts, {_plural(loop.n_workers, 'worker')} ({shard}), "
        f"{path} path, up to {loop.in_flight} in flight; {result.seconds:.1f} s on "
        f"{_plural(result.machine.cpus, 'CPU')}, Python {result.machine.python}",
        "",
        *_summary(result.workloads),
    ]
    for workload in result.workloads:
        lines += ["", workload.label, *_details(workload)]
    if result.skipped:
        lines += ["", "Not benched:"]
        lines += [f"  {skip.label}: {skip.reason}" for skip in result.skipped]
    return "\n".join(lines)


def _sampler_json(sampler: SamplerResult) -> dict[str, Any]:
    share = sampler.share
    return {
        "label": sampler.label,
        "role": sampler.role,
        "share": {
            "mean": share.mean,
            "ci95": [share.low, share.high],
            "p10": share.p10,
            "p50": share.p50,
            "p90": share.p90,
        },
        "ratio_to_round_robin": sampler.ratio_to_round_robin,
        "duplicate_rate": sampler.duplicate_rate,
        "pick_latency_us": {"p50": sampler.pick_latency.p50_us, "p99": sampler.pick_latency.p99_us},
        "record_latency_us": {
            "p50": sampler.record_latency.p50_us,
            "p99": sampler.record_latency.p99_us,
        },
        "seeds": sampler.seeds,
        "rollouts": sampler.rollouts,
        "curve": [
            {"rollouts": point.rollouts, "mean": point.mean, "ci95": [point.low, point.high]}
            for point in sampler.curve
        ],
    }


def _summary(workloads: Sequence[WorkloadResult]) -> list[str]:
    """The doc's shape: a row per workload, a column per sampler, variants grouped by name."""
    samplers = [sampler.label for sampler in workloads[0].samplers]
    groups = [label.partition(":")[0] for label in samplers]
    variants = [label.partition(":")[2] for label in samplers]
    rows = [
        [workload.label, *(_percent(sampler.share.mean) for sampler in workload.samplers)]
        for workload in workloads
    ]
    widths = [max(len(row[0]) for row in rows)]
    widths += [
        max(len(variants[column]), *(len(row[column + 1]) for row in rows))
        for column in range(len(samplers))
    ]
    # A sampler name heads the run of columns that are its variants; widen the last
    # column of the run when the name is longer than the columns under it.
    spans: list[tuple[str, list[int]]] = []
    for column, group in enumerate(groups, start=1):
        if spans and spans[-1][0] == group:
            spans[-1][1].append(column)
        else:
            spans.append((group, [column]))
    for group, columns in spans:
        spanned = sum(widths[column] for column in columns) + 3 * (len(columns) - 1)
        widths[columns[-1]] += max(0, len(group) - spanned)
    header = " " * widths[0] + "".join(
        "   " + group.ljust(sum(widths[c] for c in columns) + 3 * (len(columns) - 1))
        for group, columns in spans
    )
    lines = [header.rstrip()]
    if any(variants):
        lines.append(_row(["", *variants], widths))
    lines += [_row(row, widths) for row in rows]
    return lines


def _details(workload: WorkloadResult) -> list[str]:
    header = [
        "sampler",
        "share",
        "95% interval",
        "p10",
        "p50",
        "p90",
        "vs RR",
        "dup",
        "pick us p50/p99",
        "record us p50/p99",
    ]
    rows = [header]
    for sampler in workload.samplers:
        share = sampler.share
        ratio = sampler.ratio_to_round_robin
        rows.append(
            [
                sampler.label,
                _percent(share.mean),
                f"{_percent(share.low)}-{_percent(share.high)}",
                _percent(share.p10),
                _percent(share.p50),
                _percent(share.p90),
                "-" if ratio is None else f"{ratio:.2f}x",
                _percent(sampler.duplicate_rate),
                f"{sampler.pick_latency.p50_us:.1f}/{sampler.pick_latency.p99_us:.1f}",
                f"{sampler.record_latency.p50_us:.1f}/{sampler.record_latency.p99_us:.1f}",
            ]
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    return [_row(row, widths) for row in rows]


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """The first cell left-aligned, the others right-aligned, three spaces apart."""
    first, *rest = cells
    return (
        first.ljust(widths[0])
        + "".join("   " + cell.rjust(width) for cell, width in zip(rest, widths[1:], strict=True))
    ).rstrip()


def _percent(fraction: float) -> str:
    return f"{fraction:.1%}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
