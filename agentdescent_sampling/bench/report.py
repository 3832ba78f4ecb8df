"""A bench result as text tables, or as JSON in the documented shape.

The JSON document (:func:`to_json`; :data:`JSON_SCHEMA` is its JSON Schema)::

    {
      "schema": "agentdescent-sampling/bench/3",
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
          "name": "stationary", "label": "stationary (clean)", "noise": 0.0, "tasks": 60,
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
      "skipped": [{"label": "some-sampler", "reason": "needs 'x' set; ..."}],
      "failures": [{"label": "my-sampler", "workload": "stationary", "seed": 3,
                    "message": "sampler 'my-sampler' failed on ...; reproduce it alone ..."}]
    }

Shares, and the ends of their 95% intervals, are fractions in [0, 1]. ``role`` is
``baseline`` (round-robin), ``sampler`` or ``ceiling`` (the oracle).
``failures`` lists the samplers left out of ``workloads`` because a run of theirs raised
or broke the contract, with the command that reruns that run alone.
``ratio_to_round_robin`` is ``null`` when round-robin's share is zero. ``curve``
gives the share of the first ``rollouts`` rollouts, for plotting the share against
the budget spent. Latencies are in microseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._display import aligned, column_widths, plural, shown
from ..errors import SamplerError
from ..registry import default_registry
from ..spec import parse_spec
from .core import (
    COUNT,
    FAILURES,
    NUMBER,
    failures_json,
    result_json,
    result_schema,
    schema_object,
    seed_range,
)
from .metrics import Latency, SamplerResult
from .runner import BenchResult, WorkloadResult
from .workloads import INFORMATIVE_BAND

__all__ = ["DEFAULT_MARK", "JSON_SCHEMA", "SCHEMA_ID", "WIDTH", "format_report", "to_json"]

#: The value of the document's ``schema`` key; the number changes when the shape does.
SCHEMA_ID = "agentdescent-sampling/bench/3"

_FRACTION: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
_PAIR: dict[str, Any] = {"type": "array", "items": _FRACTION, "minItems": 2, "maxItems": 2}


_LATENCY = schema_object(p50=NUMBER, p99=NUMBER)

#: The JSON Schema (draft 2020-12) of the document :func:`to_json` returns.
JSON_SCHEMA: dict[str, Any] = result_schema(
    "agentdescent-sampling bench result",
    SCHEMA_ID,
    {
        "budget": COUNT,
        "seeds": COUNT,
        "first_seed": {"type": "integer"},
        "n_workers": COUNT,
        "in_flight": COUNT,
        "asynchronous": {"type": "boolean"},
        "shared_shard": {"type": "boolean"},
    },
    {
        "label": {"type": "string"},
        "noise": _FRACTION,
        "tasks": COUNT,
    },
    dict(
        share=schema_object(
            mean=_FRACTION, ci95=_PAIR, p10=_FRACTION, p50=_FRACTION, p90=_FRACTION
        ),
        ratio_to_round_robin={"type": ["number", "null"]},
        duplicate_rate=_FRACTION,
        pick_latency_us=_LATENCY,
        record_latency_us=_LATENCY,
        seeds=COUNT,
        rollouts=COUNT,
        curve={
            "type": "array",
            "items": schema_object(rollouts=COUNT, mean=_FRACTION, ci95=_PAIR),
        },
    ),
    skipped={
        "type": "array",
        "items": schema_object(label={"type": "string"}, reason={"type": "string"}),
    },
    failures=FAILURES,
)


def to_json(result: BenchResult) -> dict[str, Any]:
    """The result as a JSON-ready document in the shape of :data:`JSON_SCHEMA`."""
    config = result.config
    return result_json(
        SCHEMA_ID,
        result,
        {
            "budget": config.loop.budget,
            "seeds": config.seeds,
            "first_seed": config.first_seed,
            "n_workers": config.loop.n_workers,
            "in_flight": config.loop.in_flight,
            "asynchronous": config.loop.asynchronous,
            "shared_shard": config.loop.shared_shard,
        },
        [
            {
                "name": workload.name,
                "label": workload.label,
                "noise": workload.noise,
                "tasks": workload.tasks,
                "samplers": [_sampler_json(sampler) for sampler in workload.samplers],
            }
            for workload in result.workloads
        ],
        skipped=[
            {"label": shown(skip.label), "reason": shown(skip.reason)} for skip in result.skipped
        ],
        failures=failures_json(result.failures),
    )


def format_report(result: BenchResult) -> str:
    """The result as text, at most 100 columns wide.

    First the summary (a row per sampler, a column per workload, the default setting of
    a swept sampler marked ``*``), then per workload the share's interval, percentiles,
    ratio to round-robin and duplicate rate, then pick and record latency.
    """
    config = result.config
    loop = config.loop
    low, high = INFORMATIVE_BAND
    path = "async" if loop.asynchronous else "sync"
    shard = "one shared shard" if loop.shared_shard else "split shards"
    labels = _marked_labels(result.workloads[0].samplers)
    lines = [
        f"Share of rollouts on informative tasks (true p in [{low}, {high}]), "
        f"mean over {plural(config.seeds, 'seed')} ({seed_range(config.first_seed, config.seeds)})",
        *(["too few for a 95% interval, which takes 2 seeds: none is shown"] * (config.seeds < 2)),
        f"budget {loop.budget} rollouts, {plural(loop.n_workers, 'worker')} ({shard}), "
        f"{path} path, up to {loop.in_flight} in flight",
        f"{result.seconds:.1f} s on {plural(result.machine.cpus, 'CPU')}, "
        f"Python {result.machine.python}",
        *_CANNOT_SHOW,
        "",
        *_summary(result.workloads, labels),
    ]
    if any(label.endswith(DEFAULT_MARK) for label in labels):
        lines.append(f"{DEFAULT_MARK.strip()} the sampler's default setting")
    for workload in result.workloads:
        heading = f"{workload.label}, {plural(workload.tasks, 'task')}"
        lines += ["", heading, *_details(workload, labels, config.seeds)]
    lines += ["", *_latencies(result.workloads, labels)]
    if result.skipped:
        lines += ["", "Not benched:"]
        lines += [f"  {shown(skip.label)}: {shown(skip.reason)}" for skip in result.skipped]
    if result.failures:
        lines += ["", "Left out of the tables above, with all its runs, for a run that failed:"]
        lines += [f"  {failure.message}" for failure in result.failures]
    return "\n".join(lines)


#: What the share cannot show, as the report says it.
_CANNOT_SHOW = (
    "This measures where rollouts go, not what they buy: it cannot show the artifact, the",
    "held-out reward the engine commits for them. A sampler that re-tests a task to learn",
    "whether its fix landed (fixable-first) spends share to buy fixes; measure the artifact",
    "with: agentdescent-sampling bench",
)

#: Appended to the label of the variant of a swept sampler that uses its defaults.
DEFAULT_MARK = " *"
#: The width the text report keeps to.
WIDTH = 100


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
            {"rollouts": point.spent, "mean": point.mean, "ci95": [point.low, point.high]}
            for point in sampler.curve
        ],
    }


def _marked_labels(samplers: Sequence[SamplerResult]) -> list[str]:
    """Each sampler's label; a swept sampler's default-setting variant gets :data:`DEFAULT_MARK`.

    A sampler is swept when the run has it in more than one variant (the default run
    sweeps difficulty-weighted's ``c``); a variant is its default setting when every
    parameter it sets equals that parameter's default.
    """
    names = [label.partition(":")[0] for label in (s.label for s in samplers)]
    marked = []
    for sampler, name in zip(samplers, names, strict=True):
        swept = names.count(name) > 1 and sampler.role != "ceiling"
        default = swept and _is_default_setting(sampler.label)
        marked.append(sampler.label + (DEFAULT_MARK if default else ""))
    return marked


def _is_default_setting(label: str) -> bool:
    try:
        spec = parse_spec(label.partition(" (")[0])  # drop a "(provider)" suffix
        info = default_registry().get(spec.name)
    except SamplerError:
        return False  # a run on another registry: no mark rather than a guess
    defaults = {p.name: p.default for p in info.signature.parameters if not p.required}
    return all(key in defaults and defaults[key] == value for key, value in spec.params.items())


def _summary(workloads: Sequence[WorkloadResult], labels: Sequence[str]) -> list[str]:
    """A row per sampler, a column per workload: the mean share."""
    rows = [["sampler", *(workload.name for workload in workloads)]]
    rows += [
        [label, *(_percent(workload.samplers[index].share.mean) for workload in workloads)]
        for index, label in enumerate(labels)
    ]
    return aligned(rows, numbers=True, width=WIDTH)


def _details(workload: WorkloadResult, labels: Sequence[str], seeds: int) -> list[str]:
    """Per sampler: the share, its interval, percentiles, ratio to round-robin and
    duplicate rate. ``seeds`` is the run's: a sampler with fewer than 2 of its own in a run
    of more says so in its row, which the report's heading does not explain."""
    rows = [["sampler", "share", "95% interval", "p10", "p50", "p90", "vs RR", "dup"]]
    for label, sampler in zip(labels, workload.samplers, strict=True):
        share = sampler.share
        ratio = sampler.ratio_to_round_robin
        # One seed gives no interval: its ends would be the mean.
        none = "-" if seeds < 2 else f"- ({plural(sampler.seeds, 'seed')})"
        rows.append(
            [
                label,
                _percent(share.mean),
                f"{_percent(share.low)}-{_percent(share.high)}" if sampler.seeds > 1 else none,
                _percent(share.p10),
                _percent(share.p50),
                _percent(share.p90),
                "-" if ratio is None else f"{ratio:.2f}x",
                _percent(sampler.duplicate_rate),
            ]
        )
    return aligned(rows, numbers=True, width=WIDTH)


def _latencies(workloads: Sequence[WorkloadResult], labels: Sequence[str]) -> list[str]:
    """Pick and record latency per workload, as many workloads side by side as fit."""
    lines = ["Latency per call in microseconds, p50/p99"]
    cells = [
        [_latency(latency) for w in workloads for latency in _both(w.samplers[index])]
        for index in range(len(labels))
    ]
    cell = max(len("record"), *(len(text) for row in cells for text in row))
    label_width = min(max(map(len, labels)), WIDTH // 3)
    per_table = max(1, (WIDTH - label_width) // (2 * (3 + cell)))
    for first in range(0, len(workloads), per_table):
        chunk = workloads[first : first + per_table]
        columns = slice(2 * first, 2 * (first + len(chunk)))
        rows = [["sampler", *(what for _ in chunk for what in ("pick", "record"))]]
        rows += [[label, *row[columns]] for label, row in zip(labels, cells, strict=True)]
        widths = column_widths(rows, numbers=True, width=WIDTH)
        ends = [sum(widths[: column + 1]) + 3 * column for column in range(len(widths))]
        heading = ""
        for index, workload in enumerate(chunk):
            # Centred over its two columns: from the end of the previous one to its record's.
            start, end = ends[2 * index] + 3, ends[2 + 2 * index]
            heading = heading.ljust(start) + workload.name.center(end - start).rstrip()
        lines += ["", heading, *aligned(rows, numbers=True, width=WIDTH)]
    return lines


def _both(sampler: SamplerResult) -> tuple[Latency, Latency]:
    return sampler.pick_latency, sampler.record_latency


def _latency(latency: Latency) -> str:
    return f"{latency.p50_us:.1f}/{latency.p99_us:.1f}"


def _percent(fraction: float) -> str:
    return f"{fraction:.1%}"
