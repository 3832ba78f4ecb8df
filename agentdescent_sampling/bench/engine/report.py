"""An engine bench result as text tables, or as JSON in the documented shape.

The JSON document (:func:`engine_to_json`; :data:`ENGINE_JSON_SCHEMA` is its JSON Schema)::

    {
      "schema": "agentdescent-sampling/bench-engine/9",
      "config": {"samplers": ["round-robin", "informative-band", "oracle"],
                 "workloads": ["lessons"], "seeds": 30, "first_seed": 0,
                 "reflector": "llm-like", "asynchronous": false, "latency": 0.0},
      "engine": "0.7.0", "agentdescent_sampling": "0.1.0",
      "lineup": [
        {"label": "round-robin", "role": "baseline", "distribution": "agentdescent-sampling",
         "version": "0.1.0"}, ...
      ],
      "machine": {"python": "3.11.7", "implementation": "CPython", "cpus": 2,
                  "system": "Linux-..."},
      "processes": 2, "seconds": 95.2,
      "workloads": [
        {
          "name": "lessons", "summary": "...", "budget": 80, "rounds": 40, "workers": 2,
          "max_concurrency": 1, "shared_shard": false, "pass_threshold": 0.999,
          "start": 0.333, "attainable": 0.667, "fixable": 6,
          "make_up": {"lessons": 6, "failures_needed": [1, 2, 3], "flaky": 0, "luck": 0.5,
                      "always": 6, "never": 6, "regressions": 0, "graded": false},
          "notes": [],
          "samplers": [
            {
              "label": "informative-band", "role": "sampler", "seeds": 30, "no_rounds": 0,
              "reach": [
                {"fraction": 0.75, "median_rollouts": 48, "median_censored": false,
                 "not_reached": 0,
                 "ratio_to_round_robin": {"median": 0.92, "ci95": [0.85, 1.0]}}, ...
              ],
              "calls_reach": [
                {"fraction": 0.75, "median_calls": 410, "median_censored": false,
                 "not_reached": 0,
                 "ratio_to_round_robin": {"median": 1.05, "ci95": [0.97, 1.1]}}, ...
              ],
              "area": {"mean": 0.64, "ci95": [0.62, 0.66]},
              "area_vs_round_robin": {"mean": -0.02, "ci95": [-0.04, 0.0]},
              "final": {...}, "final_vs_round_robin": {...},
              "equal_calls_vs_round_robin": {"mean": 0.01, "ci95": [-0.01, 0.03]},
              "useful": {...}, "taught": {...}, "calls": {...},
              "curve": [{"rollouts": 0, "mean": 0.0, "ci95": [0.0, 0.0]}, ...],
              "call_curve": [{"calls": 0, "mean": 0.0, "ci95": [0.0, 0.0]}, ...]
            }
          ]
        }
      ],
      "failures": [
        {"label": "mine", "workload": "lessons", "seed": 3,
         "message": "sampler 'mine' failed on engine workload lessons, seed 3: ..."}
      ],
      "verdict": {
        "label": "informative-band", "fraction": 0.75, "paired_runs": 30,
        "not_reached": 0, "round_robin_not_reached": 0,
        "rollouts": {"ratio_to_round_robin": {"median": 1.09, "ci95": [1.0, 1.2]},
                     "bound": "exact"},
        "calls": {"ratio_to_round_robin": {"median": 1.02, "ci95": [0.95, 1.1]},
                  "bound": "exact"},
        "next": {"label": "fixable-first",
                 "rollouts": {"ratio_to_next": {"median": 1.01, "ci95": [0.9, 1.1]},
                              "bound": "exact"},
                 "calls": {...}},
        "text": "Verdict: informative-band reached 75% of the attainable held-out gain ..."
      },
      "across": {
        "judged_by": "interval",
        "samplers": [
          {"label": "informative-band",
           "medians": [{"fraction": 0.75, "rollouts": 1.09, "calls": 1.02}, ...],
           "lowest": {"fraction": 0.75, "rollouts": {"ratio": 0.92, "workload": "flaky"},
                      "calls": {"ratio": 0.97, "workload": "flaky"}},
           "final_lower_on": [], "equal_calls_lower_on": []}, ...
        ]
      }
    }

``reflector`` is what the simulated agent proposed on a failure, ``asynchronous``
whether the runs went by ``evolve(asynchronous=True)``, and ``latency`` the seconds each
agent call took: the one given, or the path's default (0.002 asynchronously, 0
synchronously). ``engine`` is the agentdescent version that ran, ``agentdescent_sampling``
this package's. ``lineup`` lists every sampler that ran, those in ``failures`` too: its
``label``, ``role``, and the ``distribution`` it comes from with that distribution's
``version`` (``agentdescent`` for ``agentdescent.DifficultyWeighted``, a plugin's own for a
plugin's sampler; ``null`` for an ``EngineEntrant`` of your own that names none).
``make_up`` is what the workload's train tasks are (each has a held-out twin): ``lessons``
fixable tasks, whose rule comes on one of ``failures_needed`` failures; ``flaky`` of them
pass by ``luck`` while unfixed; ``always``- and ``never``-pass tasks; ``regressions`` rules
that break a passing task; ``graded`` scores. For ``bench --from-run``, the run's estimate,
and ``notes`` what the make-up report says of the run's ``rounds.jsonl`` when its rounds are
a floor (missing, empty, unreadable, a line cut short or not a round, or the last rounds
lacking); ``notes`` is empty for every other workload.
``role`` is ``baseline`` (round-robin), ``sampler`` or ``ceiling`` (the oracle).
``no_rounds`` counts the runs in which ``evolve()`` recorded no round (the asynchronous path
records one only for a merger sweep that had proposals to merge): such a run's held-out
reward stays at the start, and its agent calls count as 0.
``reach`` has one entry per fraction of the attainable gain (0.5, 0.75, 0.9):
``median_rollouts`` counts a run that never got there as the budget,
``not_reached`` says how many runs that was, and ``median_censored`` is true when
at least half were (the true median is above the budget). ``ratio_to_round_robin``
is the median over seeds of round-robin's rollouts over the sampler's (above 1 is
fewer rollouts) with a percentile-bootstrap 95% interval. ``calls_reach`` is the same
in agent calls (``median_calls``; a run that never got there counts as the most calls
any run of the sampler or round-robin made on the workload). ``area`` is the mean
fraction of the attainable gain held over the budget; ``final`` the held-out reward
after the last round; ``*_vs_round_robin`` the mean of per-seed differences from
round-robin, and ``equal_calls_vs_round_robin`` that of the held-out reward after as many
agent calls as round-robin made in its run on the seed (at its end, for a run that made
fewer) from round-robin's ``final``; ``useful`` the share of rollouts that failed on a fixable task;
``taught`` the distinct fixable tasks that got one (out of ``fixable``); ``calls``
the agent calls per run. Every ``ci95`` is a 95% interval (Student t over seeds,
except the bootstrap one above); with fewer than 6 seeds it means little, and the text
report leaves it out. ``curve`` is the fraction of the attainable gain
held after ``rollouts``, and ``call_curve`` after ``calls``, for plots.
``failures`` lists the samplers left out of ``workloads`` because a run of theirs raised
(empty when none was): the sampler's label, the workload and seed of its first failed run,
and the message, which says how to rerun it alone.
``verdict`` is :func:`engine_verdict`'s judgement (``null`` when no sampler ran besides
round-robin and the ceilings): the sampler (``label``) that reached ``fraction`` of the
attainable gain for the fewest rollouts against round-robin, over ``paired_runs`` (every
workload's seeds, pooled); how many of its runs and of round-robin's never got there
(``not_reached``, ``round_robin_not_reached``); for ``rollouts`` and ``calls``, the median
of its per-run ratios to round-robin with a bootstrap 95% interval (which the text leaves
out below 6 paired runs), and ``bound``: ``exact`` when every run of both got there,
``upper`` when only the sampler's runs fell short (the true ratio is at most this), ``lower``
when only round-robin's did (at least this), ``neither`` when both did; ``next``, the same
of it against the sampler with the next most rollouts saved, paired by seed (``label``, and
``ratio_to_next``: the next one's cost over its own), ``null`` when it ran alone; and
``text``, the lines the text report ends with.
``across`` is the summary across workloads the text prints (``null`` with one workload):
per sampler, the ``medians`` over the workloads of its ``ratio_to_round_robin`` at 75% and
90% of the gain, in rollouts and in calls; its ``lowest`` at 75% and the workload it fell on
(``null`` for round-robin); the workloads where its final reward is lower than
round-robin's (``final_lower_on``), and those where its reward after as many agent calls
as round-robin made is (``equal_calls_lower_on``), each judged by the 95% interval, or by
the mean with fewer than 6 seeds (``judged_by``).
"""

from __future__ import annotations

import statistics
import textwrap
from collections.abc import Sequence
from typing import Any

import attrs

from ..._display import aligned, plural
from ..core import (
    COUNT,
    FAILURES,
    NUMBER,
    failures_json,
    result_json,
    result_schema,
    schema_object,
    seed_range,
)
from ..report import WIDTH
from .metrics import (
    FEWEST_FOR_INTERVAL,
    MEASURES,
    EngineSamplerResult,
    Interval,
    Measure,
    Reach,
    median_ratio,
    paired_ratio,
)
from .run import agent_latency
from .runner import EngineBenchResult, EngineWorkloadResult
from .workloads import REFLECTOR_SUMMARIES

__all__ = [
    "ENGINE_JSON_SCHEMA",
    "ENGINE_SCHEMA_ID",
    "engine_to_json",
    "engine_verdict",
    "format_engine_report",
]

#: The value of the document's ``schema`` key; the number changes when the shape does.
ENGINE_SCHEMA_ID = "agentdescent-sampling/bench-engine/9"

#: The fraction of the attainable gain the verdict judges the samplers at.
_JUDGED_AT = 0.75

_WHOLE: dict[str, Any] = {"type": "integer", "minimum": 0}

_PAIR: dict[str, Any] = {"type": "array", "items": NUMBER, "minItems": 2, "maxItems": 2}


_MEAN = schema_object(mean=NUMBER, ci95=_PAIR)


def _reach_schema(measure: Measure) -> dict[str, Any]:
    return {
        "type": "array",
        "items": schema_object(
            fraction=NUMBER,
            **{f"median_{measure}": NUMBER},
            median_censored={"type": "boolean"},
            not_reached=_WHOLE,
            ratio_to_round_robin=schema_object(median=NUMBER, ci95=_PAIR),
        ),
    }


def _curve_schema(measure: Measure) -> dict[str, Any]:
    return {"type": "array", "items": schema_object(**{measure: _WHOLE}, mean=NUMBER, ci95=_PAIR)}


_TEXT: dict[str, Any] = {"type": "string"}
_KNOWN: dict[str, Any] = {"type": ["string", "null"]}


def _versus_schema(to: str) -> dict[str, Any]:
    """A ratio's JSON Schema: its median and interval, and which way it is a bound."""
    return schema_object(
        **{f"ratio_to_{to}": schema_object(median=NUMBER, ci95=_PAIR)},
        bound={"enum": ["exact", "upper", "lower", "neither"]},
    )


_VERSUS, _VERSUS_NEXT = _versus_schema("round_robin"), _versus_schema("next")


#: The JSON Schema (draft 2020-12) of the document :func:`engine_to_json` returns.
ENGINE_JSON_SCHEMA: dict[str, Any] = result_schema(
    "agentdescent-sampling engine bench result",
    ENGINE_SCHEMA_ID,
    {
        "seeds": COUNT,
        "first_seed": {"type": "integer"},
        "reflector": _TEXT,
        "asynchronous": {"type": "boolean"},
        "latency": {"type": "number", "minimum": 0, "maximum": 1},
    },
    {
        "summary": {"type": "string"},
        "budget": COUNT,
        "rounds": COUNT,
        "workers": COUNT,
        "max_concurrency": COUNT,
        "shared_shard": {"type": "boolean"},
        "pass_threshold": NUMBER,
        "start": NUMBER,
        "attainable": NUMBER,
        "fixable": _WHOLE,
        "make_up": schema_object(
            lessons=_WHOLE,
            failures_needed={"type": "array", "items": COUNT},
            flaky=_WHOLE,
            luck=NUMBER,
            always=_WHOLE,
            never=_WHOLE,
            regressions=_WHOLE,
            graded={"type": "boolean"},
        ),
        "notes": {"type": "array", "items": _TEXT},
    },
    dict(
        seeds=COUNT,
        no_rounds=_WHOLE,
        reach=_reach_schema("rollouts"),
        calls_reach=_reach_schema("calls"),
        area=_MEAN,
        area_vs_round_robin=_MEAN,
        final=_MEAN,
        final_vs_round_robin=_MEAN,
        equal_calls_vs_round_robin=_MEAN,
        useful=_MEAN,
        taught=_MEAN,
        calls=_MEAN,
        curve=_curve_schema("rollouts"),
        call_curve=_curve_schema("calls"),
    ),
    engine=_TEXT,
    agentdescent_sampling=_TEXT,
    lineup={
        "type": "array",
        "items": schema_object(
            label=_TEXT,
            role={"enum": ["baseline", "sampler", "ceiling"]},
            distribution=_KNOWN,
            version=_KNOWN,
        ),
    },
    processes=COUNT,
    failures=FAILURES,
    verdict={
        **schema_object(
            label=_TEXT,
            fraction=NUMBER,
            paired_runs=COUNT,
            not_reached=_WHOLE,
            round_robin_not_reached=_WHOLE,
            rollouts=_VERSUS,
            calls=_VERSUS,
            next={
                **schema_object(label=_TEXT, rollouts=_VERSUS_NEXT, calls=_VERSUS_NEXT),
                "type": ["object", "null"],
            },
            text=_TEXT,
        ),
        "type": ["object", "null"],
    },
    across={
        **schema_object(
            judged_by={"enum": ["interval", "mean"]},
            samplers={
                "type": "array",
                "items": schema_object(
                    label=_TEXT,
                    medians={
                        "type": "array",
                        "items": schema_object(fraction=NUMBER, rollouts=NUMBER, calls=NUMBER),
                    },
                    lowest={
                        **schema_object(
                            fraction=NUMBER,
                            rollouts=schema_object(ratio=NUMBER, workload=_TEXT),
                            calls=schema_object(ratio=NUMBER, workload=_TEXT),
                        ),
                        "type": ["object", "null"],
                    },
                    final_lower_on={"type": "array", "items": _TEXT},
                    equal_calls_lower_on={"type": "array", "items": _TEXT},
                ),
            },
        ),
        "type": ["object", "null"],
    },
)


def engine_to_json(result: EngineBenchResult) -> dict[str, Any]:
    """The result as a JSON-ready document in the shape of :data:`ENGINE_JSON_SCHEMA`."""
    config = result.config
    return result_json(
        ENGINE_SCHEMA_ID,
        result,
        {
            "seeds": config.seeds,
            "first_seed": config.first_seed,
            "reflector": config.reflector,
            "asynchronous": config.asynchronous,
            "latency": agent_latency(config.asynchronous, config.latency),
        },
        [_workload_json(workload) for workload in result.workloads],
        engine=result.engine,
        agentdescent_sampling=result.sampling,
        lineup=[
            _fields(entrant, "label", "role", "distribution", "version")
            for entrant in result.lineup
        ],
        processes=result.processes,
        failures=failures_json(result.failures),
        verdict=_verdict_json(_judge(result)),
        across=(
            _across_json(result.workloads, result.config.seeds >= FEWEST_FOR_INTERVAL)
            if len(result.workloads) > 1
            else None
        ),
    )


def _fields(item: object, *names: str) -> dict[str, Any]:
    """The attributes ``names`` of ``item``, as a JSON object."""
    return {name: getattr(item, name) for name in names}


def format_engine_report(result: EngineBenchResult) -> str:
    """The result as text: three tables per workload, a summary across workloads, the samplers
    left out because a run raised (each with the message that says how to rerun it), then the
    :func:`engine_verdict`, wrapped to 100 columns, if any sampler ran besides round-robin and
    the ceilings. With fewer than 6 seeds, no 95% interval is shown, and the text says why."""
    config, machine = result.config, result.machine
    path = "evolve(asynchronous=True)" if config.asynchronous else "evolve()"
    latency = agent_latency(config.asynchronous, config.latency)
    default = " (the asynchronous path's default)" if config.latency is None else ""
    lines = [
        f"Held-out reward bought in agentdescent {result.engine}'s {path}: "
        f"{plural(config.seeds, 'seed')} ({seed_range(config.first_seed, config.seeds)}), "
        "paired with round-robin",
        f"reflector {config.reflector}: {REFLECTOR_SUMMARIES[config.reflector]}",
        *([f"each agent call takes {latency:g} s{default}"] if latency or default == "" else []),
        f"{result.seconds:.0f} s in {result.processes} process"
        f"{'es' if result.processes > 1 else ''} on {plural(machine.cpus, 'CPU')}, "
        f"Python {machine.python}",
        "",
        "Gain: how far the held-out reward rose from the empty artifact's toward the attainable",
        "(every rule committed). 'to 50/75/90%': median rollouts to first reach that fraction of",
        "the gain, a run that never did counting as the budget ('missed' runs; '>' when at least",
        "half missed). 'RR/it': round-robin's rollouts over the sampler's, the median of",
        "per-seed ratios (>1 is fewer), with a bootstrap 95% interval. 'calls to': the same in",
        "agent calls (rollouts, proposals, self-verify re-runs and held-out measurements), what",
        "a user pays for. 'final': mean held-out reward after the last round. 'vs RR': mean",
        "paired difference from round-robin with its 95% interval. 'at RR calls': the held-out",
        "reward after as many agent calls as round-robin made in its run on the same seed (at",
        "the end, for a run that made fewer), less round-robin's final: what the same money",
        "buys. 'area': mean share of the gain held over the budget. 'useful': share of",
        "rollouts that failed on a fixable task; 'taught': distinct fixable tasks that got",
        "one. 'calls': mean agent calls a run made.",
    ]
    interval = config.seeds >= FEWEST_FOR_INTERVAL
    if not interval:
        lines += textwrap.wrap(
            f"With {plural(config.seeds, 'seed')}, too few for a 95% "
            f"interval, none is shown in the tables; one takes {FEWEST_FOR_INTERVAL} seeds "
            f"or more (--seeds {FEWEST_FOR_INTERVAL}). The verdict pools the workloads' runs.",
            WIDTH,
        )
    for workload in result.workloads:
        lines += ["", *_workload_lines(workload, interval)]
    if len(result.workloads) > 1:
        lines += ["", *_across(result.workloads, interval)]
    if result.failures:
        lines += ["", *_failure_lines(result)]
    if any(sampler.role == "sampler" for sampler in result.workloads[0].samplers):
        lines += ["", *textwrap.wrap(engine_verdict(result), WIDTH, break_on_hyphens=False)]
    elif result.failures:
        lines += ["", "No verdict: every sampler compared with round-robin was left out above."]
    return "\n".join(lines)


def _failure_lines(result: EngineBenchResult) -> list[str]:
    """Which samplers were left out, and why: each message on a line of its own, unwrapped,
    so that its rerun command can be copied whole."""
    each = "each " if len(result.failures) > 1 else ""
    head = f"Left out of the tables above, {each}with all its runs, for a run that raised:"
    return [head, *(f"  {failure.message}" for failure in result.failures)]


def engine_verdict(result: EngineBenchResult, fraction: float = _JUDGED_AT) -> str:
    """The sampler that reached ``fraction`` of the attainable held-out gain for the fewest
    rollouts against round-robin, and what it saved in rollouts and in agent calls; then, if
    another sampler ran, the same of it against the one that saved the next most, paired by
    seed (a run that never got there censored at the larger of the two budgets), saying when
    the interval cannot tell the two apart.

    Each figure is the median of the per-seed ratios (to round-robin, then to the other)
    pooled over every workload (one paired run per workload and seed), with its bootstrap
    95% interval when there are at least 6 paired runs (fewer give no interval worth the
    name). A run that never reached ``fraction`` counts as the whole budget, so when any did
    the line says how many, and the ratio is a bound: "at least 1.95x more rollouts" when only the
    sampler's runs fell short, "at least 1.20x fewer" when only round-robin's did. A ratio
    of 1.00x is "as many". The JSON document's ``verdict`` holds the same judgement.

    Raises:
        ValueError: the run has no sampler besides the baseline and the ceilings.
    """
    verdict = _judge(result, fraction)
    if verdict is None:
        raise ValueError("no sampler besides round-robin and the ceilings ran; nothing to judge")
    return _worded(verdict)


@attrs.frozen
class _Versus:
    """The judged sampler against round-robin in one measure: the pooled ratio, and the runs
    of each that never got there, each counted as the whole budget."""

    ratio: Interval
    short: int
    behind: int

    @property
    def bound(self) -> str:
        """``exact``; ``upper`` when only the sampler's runs fell short, so that it is
        counted as cheaper than it was; ``lower`` when only round-robin's did; or
        ``neither`` when both did."""
        if self.short:
            return "neither" if self.behind else "upper"
        return "lower" if self.behind else "exact"


@attrs.frozen
class _Next:
    """The sampler that saved the next most rollouts against round-robin, and the judged one
    against it, paired by seed (``short``: the judged one's runs that never got there,
    ``behind``: this one's)."""

    label: str
    rollouts: _Versus
    calls: _Versus


@attrs.frozen
class _Verdict:
    """What :func:`engine_verdict` judges, before it is worded: the sampler, the fraction of
    the gain, the paired runs pooled, and the sampler against round-robin in each measure."""

    label: str
    fraction: float
    runs: int
    rollouts: _Versus
    calls: _Versus
    #: The sampler next to it, and it against that one, paired by seed; None if it ran alone.
    next: _Next | None = None


def _judge(result: EngineBenchResult, fraction: float = _JUDGED_AT) -> _Verdict | None:
    """The verdict on ``result``, or ``None`` if no sampler ran besides the baseline and the
    ceilings."""
    workloads = result.workloads
    samplers = workloads[0].samplers
    pooled = [
        (median_ratio(_ratios(workloads, index, fraction, "rollouts")), index)
        for index, sampler in enumerate(samplers)
        if sampler.role == "sampler"
    ]
    if not pooled:
        return None
    ranked = [index for _, index in sorted(pooled, key=lambda row: -row[0].value)]
    best = ranked[0]
    baseline = next(index for index, sampler in enumerate(samplers) if sampler.role == "baseline")

    def versus(measure: Measure, other: int) -> _Versus:
        ratios: list[float] = []
        short = behind = 0
        for workload in workloads:
            mine, its = (workload.samplers[i].at(fraction, measure) for i in (best, other))
            short, behind = short + mine.not_reached, behind + its.not_reached
            if other == baseline:
                ratios += mine.ratios
                continue
            # Seed by seed, a run that never got there censored where both can be compared:
            # each sampler's budget in agent calls is its own.
            cut = max(mine.budget, its.budget)
            ratios += [
                paired_ratio(cut if theirs is None else theirs, cut if own is None else own)
                for own, theirs in zip(mine.costs, its.costs, strict=True)
            ]
        return _Versus(median_ratio(ratios), short, behind)

    rollouts = versus("rollouts", baseline)
    second = (
        None
        if len(ranked) < 2
        else _Next(
            samplers[ranked[1]].label, versus("rollouts", ranked[1]), versus("calls", ranked[1])
        )
    )
    runs = len(_ratios(workloads, best, fraction, "rollouts"))
    return _Verdict(
        samplers[best].label, fraction, runs, rollouts, versus("calls", baseline), second
    )


def _worded(verdict: _Verdict) -> str:
    interval = verdict.runs >= FEWEST_FOR_INTERVAL
    compared = _compared(
        [
            _versus(versus, what, interval)
            for versus, what in ((verdict.rollouts, "rollouts"), (verdict.calls, "agent calls"))
        ]
    )
    runs = plural(verdict.runs, "run")  # "1 run", "6 runs"
    paired = plural(verdict.runs, "paired run") + (
        "" if interval else f"; too few for a 95% interval, which takes {FEWEST_FOR_INTERVAL}"
    )
    label, gain = verdict.label, f"{verdict.fraction:.0%} of the attainable held-out gain"
    short, behind = verdict.rollouts.short, verdict.rollouts.behind
    if short:
        also = f" (round-robin in {behind})" if behind else ""
        text = (
            f"Verdict: {label} did not reach {gain} in {short} of {runs}{also}; counting "
            f"each run that did not as the whole budget, it took {compared} ({paired})"
        )
    elif behind:
        text = (
            f"Verdict: {label} reached {gain} with {compared}, counting the {behind} of {runs} "
            f"in which round-robin did not as its whole budget ({paired})"
        )
    else:
        text = f"Verdict: {label} reached {gain} with {compared} ({paired})"
    if verdict.next is None:
        return text
    # What a plugin's author asks: is it better than the other samplers, not only than RR.
    other = verdict.next
    against = _compared(
        [
            _versus(other.rollouts, "rollouts", interval),
            _versus(other.calls, "agent calls", interval),
        ],
        other.label,
    )
    ratio = other.rollouts.ratio
    apart = (
        f"; {runs} cannot tell the two apart in rollouts (more seeds narrow the interval)"
        if interval and ratio.low < ratio.high and ratio.low <= 1 <= ratio.high
        else ""
    )
    return (
        f"{text}. Against {other.label}, which saved the next most against round-robin, "
        f"paired by seed: {against}{apart}"
    )


def _verdict_json(verdict: _Verdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None

    def versus(side: _Versus, to: str = "round_robin") -> dict[str, Any]:
        ratio = side.ratio
        return {
            f"ratio_to_{to}": {"median": ratio.value, "ci95": [ratio.low, ratio.high]},
            "bound": side.bound,
        }

    other = verdict.next

    return {
        "label": verdict.label,
        "fraction": verdict.fraction,
        "paired_runs": verdict.runs,
        "not_reached": verdict.rollouts.short,
        "round_robin_not_reached": verdict.rollouts.behind,
        "rollouts": versus(verdict.rollouts),
        "calls": versus(verdict.calls),
        "next": None
        if other is None
        else {
            "label": other.label,
            "rollouts": versus(other.rollouts, "next"),
            "calls": versus(other.calls, "next"),
        },
        "text": _worded(verdict),
    }


def _ratios(
    workloads: Sequence[EngineWorkloadResult], index: int, fraction: float, measure: Measure
) -> list[float]:
    """The per-seed ratios to round-robin of the sampler at ``index``, over every workload."""
    return [r for w in workloads for r in w.samplers[index].at(fraction, measure).ratios]


def _versus(versus: _Versus, what: str, interval: bool) -> tuple[str, str]:
    """'1.42x fewer rollouts (95% CI 1.20-1.60)', 'more' with the ratio turned over below 1,
    or 'as many rollouts' at 1.00x, with 'at most' or 'at least' when the ratio is a bound
    (see :attr:`_Versus.bound`); and the word that compares it, 'than' or 'as'."""
    upper, lower = versus.bound == "upper", versus.bound == "lower"

    def bound(cheaper: bool) -> str:
        if upper:
            return "at most " if cheaper else "at least "
        return ("at least " if cheaper else "at most ") if lower else ""

    ratio = versus.ratio
    value = ratio.value
    shown = f" (95% CI {ratio.low:.2f}-{ratio.high:.2f})" if interval else ""
    if value >= 1 and f"{value:.2f}" != "1.00":
        return f"{bound(True)}{value:.2f}x fewer {what}{shown}", "than"
    if value < 1 and f"{1 / value:.2f}" != "1.00":
        turned = f" (95% CI {1 / ratio.high:.2f}-{1 / ratio.low:.2f})" if interval else ""
        return f"{bound(False)}{1 / value:.2f}x more {what}{turned}", "than"
    return f"{bound(False)}as many {what}{shown}", "as"


def _compared(phrases: Sequence[tuple[str, str]], whom: str = "round-robin") -> str:
    """The phrases joined, sharing 'than round-robin' (or 'as'; ``whom``) when they can."""
    (first, joins_first), (second, joins_second) = phrases
    if joins_first == joins_second:
        return f"{first} and {second} {joins_first} {whom}"
    return f"{first} {joins_first} {whom} and {second} {joins_second} {whom}"


def _workload_json(workload: EngineWorkloadResult) -> dict[str, Any]:
    spec = workload.workload
    return {
        "name": spec.name,
        "summary": spec.summary,
        "budget": spec.budget,
        "rounds": spec.rounds,
        "workers": spec.workers,
        "max_concurrency": spec.max_concurrency,
        "shared_shard": spec.shared_shard,
        "pass_threshold": spec.solved_threshold,
        "start": workload.start,
        "attainable": workload.attainable,
        "fixable": workload.samplers[0].fixable,
        "make_up": {
            "lessons": spec.lessons,
            "failures_needed": list(spec.failures_needed),
            "flaky": spec.flaky,
            "luck": spec.luck,
            "always": spec.always,
            "never": spec.never,
            "regressions": spec.regressions,
            "graded": spec.graded,
        },
        "notes": list(spec.notes),
        "samplers": [_sampler_json(sampler) for sampler in workload.samplers],
    }


def _sampler_json(sampler: EngineSamplerResult) -> dict[str, Any]:
    return {
        "label": sampler.label,
        "role": sampler.role,
        "seeds": sampler.seeds,
        "no_rounds": sampler.no_rounds,
        "reach": [_reach_json(reach, "rollouts") for reach in sampler.reach],
        "calls_reach": [_reach_json(reach, "calls") for reach in sampler.calls_reach],
        "area": _mean_json(sampler.area),
        "area_vs_round_robin": _mean_json(sampler.area_vs_round_robin),
        "final": _mean_json(sampler.final),
        "final_vs_round_robin": _mean_json(sampler.final_vs_round_robin),
        "equal_calls_vs_round_robin": _mean_json(sampler.equal_calls_vs_round_robin),
        "useful": _mean_json(sampler.useful),
        "taught": _mean_json(sampler.taught),
        "calls": _mean_json(sampler.calls),
        "curve": [
            {"rollouts": point.spent, "mean": point.mean, "ci95": [point.low, point.high]}
            for point in sampler.curve
        ],
        "call_curve": [
            {"calls": point.spent, "mean": point.mean, "ci95": [point.low, point.high]}
            for point in sampler.call_curve
        ],
    }


def _reach_json(reach: Reach, measure: Measure) -> dict[str, Any]:
    ratio = reach.ratio_to_round_robin
    return {
        "fraction": reach.fraction,
        f"median_{measure}": reach.median,
        "median_censored": reach.median_censored,
        "not_reached": reach.not_reached,
        "ratio_to_round_robin": {"median": ratio.value, "ci95": [ratio.low, ratio.high]},
    }


def _mean_json(interval: Interval) -> dict[str, Any]:
    return {"mean": interval.value, "ci95": [interval.low, interval.high]}


def _workload_lines(result: EngineWorkloadResult, interval: bool = True) -> list[str]:
    spec = result.workload
    shard = "one shared shard" if spec.shared_shard else "split shards"
    fixable = result.samplers[0].fixable
    lines = [
        f"{spec.name}: {spec.summary}",
        f"  {spec.budget} rollouts a run: {spec.rounds} rounds x {spec.workers} workers, "
        f"{spec.max_concurrency} in flight, {shard}; {fixable} fixable train tasks",
        f"  held-out reward {result.start:.3f} at the start, {result.attainable:.3f} attainable",
    ]
    empty = [f"{r.no_rounds} of {plural(r.seeds, 'run')} of {r.label}"
             for r in result.samplers if r.no_rounds]  # fmt: skip
    if empty:
        lines += textwrap.wrap(
            f"No round was recorded in {', '.join(empty)}: such a run's held-out reward stays "
            f"at the start, so it reaches no share of the gain, and its agent calls count as 0 "
            f"(evolve(asynchronous=True) records a round only for a merger sweep that had "
            f"proposals to merge)",
            WIDTH,
            initial_indent="  ",
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
    lines.append("")
    ratios = [f"RR/it {f:.0%}" + (" [95% CI]" if interval else "") for f in (0.75, 0.9)]
    speed = [["sampler", "to 50/75/90%", "missed", *ratios]]
    calls = [["sampler", "calls to 50/75/90%", *ratios]]
    for sampler in result.samplers:
        speed.append(
            [
                sampler.label,
                "/".join(_median(reach, spec.budget) for reach in sampler.reach),
                "/".join(str(reach.not_reached) for reach in sampler.reach),
                *(_ratio_interval(sampler.at(f), interval) for f in (0.75, 0.9)),
            ]
        )
        calls.append(
            [
                sampler.label,
                "/".join(_median(reach, None) for reach in sampler.calls_reach),
                *(_ratio_interval(sampler.at(f, "calls"), interval) for f in (0.75, 0.9)),
            ]
        )
    artifact = [
        ["sampler", "final", "vs RR", "at RR calls", "area", "vs RR", "useful", "taught", "calls"]
    ]
    for sampler in result.samplers:
        artifact.append(
            [
                sampler.label,
                f"{sampler.final.value:.3f}",
                _difference(sampler.final_vs_round_robin, interval),
                _difference(sampler.equal_calls_vs_round_robin, interval),
                f"{sampler.area.value:.3f}",
                _difference(sampler.area_vs_round_robin, interval),
                f"{sampler.useful.value:.0%}",
                f"{sampler.taught.value:.1f}/{sampler.fixable}",
                f"{sampler.calls.value:.0f}",
            ]
        )
    return [
        *lines,
        *aligned(speed, left=()),
        "",
        *aligned(calls, left=()),
        "",
        *aligned(artifact, left=(), width=WIDTH),
    ]


def _across_json(workloads: Sequence[EngineWorkloadResult], interval: bool) -> dict[str, Any]:
    """The summary across workloads as data: per sampler, the median over the workloads of
    its ratios to round-robin, its lowest at 75% of the gain and where, and the workloads
    where its final reward is lower than round-robin's, judged by the 95% interval, or by
    the mean with too few seeds for one (``judged_by``)."""
    samplers = []
    for index, sampler in enumerate(workloads[0].samplers):
        results = [(w.name, w.samplers[index]) for w in workloads]
        medians = [
            {"fraction": fraction}
            | {
                measure: statistics.median(
                    r.at(fraction, measure).ratio_to_round_robin.value for _, r in results
                )
                for measure in MEASURES
            }
            for fraction in (0.75, 0.9)
        ]
        lowest: dict[str, Any] | None = None
        if sampler.role != "baseline":
            lowest = {"fraction": 0.75}
            for measure in MEASURES:
                ratio, name = min(
                    (r.at(0.75, measure).ratio_to_round_robin.value, name) for name, r in results
                )
                lowest[measure] = {"ratio": ratio, "workload": name}
        samplers.append(
            {
                "label": sampler.label,
                "medians": medians,
                "lowest": lowest,
                "final_lower_on": _lower_on(
                    [(name, r.final_vs_round_robin) for name, r in results], interval
                ),
                "equal_calls_lower_on": _lower_on(
                    [(name, r.equal_calls_vs_round_robin) for name, r in results], interval
                ),
            }
        )
    return {"judged_by": "interval" if interval else "mean", "samplers": samplers}


def _lower_on(differences: Sequence[tuple[str, Interval]], interval: bool) -> list[str]:
    """The workloads whose paired difference from round-robin is below 0: its 95% interval
    wholly, or, with too few seeds for one (``interval`` false), its mean."""
    return [name for name, difference in differences
            if (difference.high if interval else difference.value) < 0]  # fmt: skip


def _across(workloads: Sequence[EngineWorkloadResult], interval: bool = True) -> list[str]:
    """:func:`_across_json` as text: per sampler, its ratios over the workloads, the lowest,
    and where its final reward fell short: by its 95% interval, or, with too few seeds for
    one (``interval`` false), by its mean, and the text says so."""
    below = (
        "(its 95% interval below 0)"
        if interval
        else f"(its mean below 0: with too few seeds for a 95% interval, a difference no "
        f"interval bears out; --seeds {FEWEST_FOR_INTERVAL} or more to judge it)"
    )
    lines = [
        f"Across the {len(workloads)} workloads: RR/it in rollouts and in calls at 75% and 90% "
        f"of the gain",
        *textwrap.wrap(
            f"(the median over the workloads), and where the final reward is lower than "
            f"round-robin's {below}; then the lowest RR/it at 75% and its workload; then "
            f"where the reward after round-robin's agent calls is lower than round-robin's final",
            WIDTH,
            break_on_hyphens=False,
        ),
        "",
    ]
    medians = [["sampler", "RR/it 75%", "90%", "calls 75%", "90%", "final lower on"]]
    lowest = [["sampler", "lowest RR/it 75%", "lowest calls 75%"]]
    spent = [["sampler", "at RR calls lower on"]]
    for sampler in _across_json(workloads, interval)["samplers"]:
        medians.append(
            [
                sampler["label"],
                *(_ratio(m[measure]) for measure in MEASURES for m in sampler["medians"]),
                _count_of(sampler["final_lower_on"], len(workloads)),
            ]
        )
        worst = sampler["lowest"]
        lowest.append(
            [
                sampler["label"],
                *(
                    "-"
                    if worst is None
                    else f"{_ratio(worst[measure]['ratio'])} {worst[measure]['workload']}"
                    for measure in MEASURES
                ),
            ]
        )
        spent.append([sampler["label"], _count_of(sampler["equal_calls_lower_on"], len(workloads))])
    return [
        *lines,
        *_wrapped_last(medians, left=(5,)),
        "",
        *aligned(lowest, left=(1, 2)),
        "",
        *_wrapped_last(spent, left=(1,)),
    ]


def _count_of(lower: Sequence[str], workloads: int) -> str:
    """``2 of 9: lessons, flaky``: how many of the workloads are listed, and which."""
    return f"{len(lower)} of {workloads}" + (f": {', '.join(lower)}" if lower else "")


def _wrapped_last(rows: list[list[str]], left: tuple[int, ...]) -> list[str]:
    """``rows`` aligned, with the last column, a list of workloads that can run long,
    wrapped under itself."""
    table = aligned(rows, left=left)
    indent = len(table[0]) - len(rows[0][-1])
    wrapped = []
    for line in table:
        cell = textwrap.wrap(
            line[indent:], WIDTH - indent, break_on_hyphens=False, break_long_words=False
        )
        head, *rest = cell or [""]
        wrapped.append(line[:indent] + head)
        wrapped += [" " * indent + more for more in rest]
    return wrapped


def _median(reach: Reach, budget: int | None) -> str:
    """The median cost, or '>budget' when censored ('>median' for calls, whose budget is the
    most calls a run made)."""
    if reach.median_censored:
        return f">{reach.median:g}" if budget is None else f">{budget}"
    return f"{reach.median:g}"


def _ratio_interval(reach: Reach, interval: bool = True) -> str:
    ratio = reach.ratio_to_round_robin
    if not interval:
        return _ratio(ratio.value)
    return f"{_ratio(ratio.value)} [{ratio.low:.2f}-{ratio.high:.2f}]"


def _ratio(value: float) -> str:
    return f"{value:.2f}x"


def _difference(interval: Interval, shown: bool = True) -> str:
    if not shown:
        return f"{interval.value:+.3f}"
    return f"{interval.value:+.3f}±{(interval.high - interval.low) / 2:.3f}"
