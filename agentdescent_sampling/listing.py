"""What ``agentdescent-sampling list`` and ``show`` print: the registry's records as text
and JSON, every cell a plugin controls shown safely (see ``_display.py``)."""

from __future__ import annotations

import json
import textwrap
import traceback
from collections.abc import Sequence
from typing import Any

from ._display import (
    escaped_label,
    escaped_name,
    plural,
    safe_repr,
    screen_table,
    shown,
    shown_data,
    shown_lines,
)
from .loading import describe
from .paramdoc import parameter_help
from .policy import normalize
from .records import WIRING, PluginFailure, SamplerInfo

__all__ = ["Listing", "describe_sampler", "sampler_json"]

#: How many of a sampler's shared names its row of ``list`` explains, and of the
#: distributions sharing each.
_CLASHES_SHOWN = 3
#: The longest help text and traceback line shown.
_HELP = 2000
_TRACEBACK_LINE = 1000


class Listing:
    """Every record of the registry, as ``list`` prints them.

    Args:
        records: what ``available()`` returns.
    """

    def __init__(self, records: Sequence[SamplerInfo | PluginFailure]) -> None:
        self.records = list(records)
        #: Plugins that failed to load or to be described, and entry points in conflict.
        self.failures = [
            record
            for record in self.records
            if isinstance(record, PluginFailure) and record.status in ("failed", "conflict")
        ]
        #: Names two distributions provide: each is listed as a conflict, create() refuses it.
        self.shared = [
            record
            for record in self.records
            if isinstance(record, SamplerInfo) and record.status == "conflict"
        ]
        self._owners: dict[str, list[SamplerInfo]] = {}
        for info in self.shared:
            for key in info.keys:
                self._owners.setdefault(key, []).append(info)

    def clashes(self, info: SamplerInfo) -> dict[str, list[str]]:
        """Each of ``info``'s names that another record's sampler goes by too, with the
        distributions of those others: what makes ``info`` a conflict."""
        found: dict[str, list[str]] = {}
        for name in (info.name, *info.aliases):
            others = [o for o in self._owners.get(normalize(name), ()) if o is not info]
            if others:
                found[name] = sorted({other.distribution for other in others})
        return found

    def _clash_text(self, info: SamplerInfo) -> str:
        """Why ``info`` is a conflict, for its row: each name it shares, with whom, and how
        to select it by that name."""
        clashes = list(self.clashes(info).items())
        text = "; ".join(
            f"{escaped_name(name)} is also "
            f"{', '.join(map(escaped_name, others[:_CLASHES_SHOWN]))}"
            f"{' and more' if len(others) > _CLASHES_SHOWN else ''}'s: select this one with "
            f"{json.dumps({'name': name, 'provider': info.distribution})}"
            for name, others in clashes[:_CLASHES_SHOWN]
        )
        more = len(clashes) - _CLASHES_SHOWN
        return text + (f"; and {more:,} more of its names" if more > 0 else "")

    @property
    def faults(self) -> int:
        """How many records ``list --strict`` fails on."""
        return len(self.failures) + len(self.shared)

    def json(self, tracebacks: bool = False) -> list[dict[str, Any]]:
        """Each record as a JSON-ready mapping, with its whole error if ``tracebacks``."""
        documents = []
        for record in self.records:
            data: dict[str, Any] = shown_data(record.to_dict())
            if isinstance(record, SamplerInfo) and record.status == "conflict":
                data["shared"] = shown_data(self.clashes(record))
            if tracebacks and isinstance(record, PluginFailure):
                data["traceback"] = _traceback(record)
            documents.append(data)
        return documents

    def text(self, tracebacks: bool = False) -> str:
        """The table, fitted to the terminal, then each failure's whole error if
        ``tracebacks``, or else a line that counts the faults."""
        rows: list[tuple[str, ...]] = [("NAME", "DISTRIBUTION", "VERSION", "STATUS", "DESCRIPTION")]
        for record in self.records:
            if isinstance(record, SamplerInfo):
                status = record.status + (", synchronized" if record.synchronized else "")
                rows.append(
                    (
                        escaped_name(record.name),
                        escaped_name(record.distribution),
                        record.version,
                        status,
                        self._clash_text(record)
                        if record.status == "conflict"
                        else record.description,
                    )
                )
            else:
                names = ", ".join(map(escaped_name, record.names))
                rows.append(
                    (
                        names or escaped_label(record.entry_point or "?"),
                        escaped_name(record.distribution),
                        record.version,
                        record.status,
                        record.message,
                    )
                )
        text = screen_table(rows) + "\n"
        if tracebacks:
            text += "".join(
                f"\n{failure.title}\n{_traceback(failure)}" for failure in self.failures
            )
        elif self.failures:
            text += (
                f"\n{plural(len(self.failures), 'plugin registration')} failed or "
                f"{'was' if len(self.failures) == 1 else 'were'} refused; "
                f"'agentdescent-sampling list --tracebacks' prints each whole error.\n"
            )
        if self.shared:
            text += (
                f"\n{plural(len(self.shared), 'sampler')} in conflict share a name with "
                f"another's: create() refuses that name unless given the provider, and the "
                f"other names select each as before.\n"
            )
        return text


def sampler_json(info: SamplerInfo) -> dict[str, Any]:
    """What ``show --json`` prints: the record, its wiring and each parameter's help."""
    meanings = parameter_help(info.factory)
    data = info.to_dict()
    data["wiring"] = list(info.wiring)
    shown_json: dict[str, Any] = shown_data(data)
    for parameter in shown_json["parameters"]:  # as long as show prints it, not cut at 300
        parameter["help"] = shown(meanings.get(parameter["name"], ""), _HELP)
    return shown_json


def describe_sampler(info: SamplerInfo) -> str:
    """What ``show`` prints: the sampler's origin, aliases, entry point, wiring and
    parameters with their help."""
    meanings = parameter_help(info.factory)
    lines = [
        f"{info.name} ({shown(info.distribution)} {shown(info.version)})",
        f"  {shown(info.description)}" if info.description else "",
        f"  aliases:     {', '.join(info.aliases) or '-'}",
        f"  entry point: {shown(escaped_label(info.entry_point))} ({info.form} form)",
    ]
    if info.synchronized:
        lines.append("  threads:     declares thread_safe = False; wrapped in synchronized()")
    if info.wiring:
        told = _and([WIRING[method] for method in info.wiring])
        wiring = (
            f"wiring:      opt-in: it can be told {told}; wire it with "
            f"agentdescent_sampling.wire(sampler, **your_evolve_kwargs), or in a run spec "
            f'with a "link" joining its task_sampler ref to the evidence_acceptance and '
            f'evidence_promotion refs (docs/engine.md, "From a run spec")'
        )
        lines += textwrap.wrap(wiring, width=100, initial_indent="  ", subsequent_indent=" " * 15)
    elif info.form == "built-in":
        lines.append("  wiring:      none: it needs only pick() and record()")
    lines.append("  parameters:" + ("" if info.signature.parameters else " none"))
    for parameter in info.signature.parameters:
        default = "(required)" if parameter.required else f"= {safe_repr(parameter.default)}"
        annotation = f": {shown(parameter.annotation)}" if parameter.annotation else ""
        lines.append(f"    {parameter.name}{annotation} {shown(default)}")
        if parameter.name in meanings:
            help_text = shown(meanings[parameter.name], _HELP)
            lines += textwrap.wrap(
                help_text, width=100, initial_indent=" " * 8, subsequent_indent=" " * 8
            )
    if info.signature.accepts_any:
        lines.append("    **kwargs (any other keyword)")
    return "\n".join(line for line in lines if line)


def _and(items: Sequence[str]) -> str:
    return " and ".join(filter(None, [", ".join(items[:-1]), items[-1]]))


def _traceback(failure: PluginFailure) -> str:
    """The failure's whole error: its traceback and chained causes, or its message."""
    error = failure.error
    if error is None:
        return shown(failure.message) + "\n"
    try:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    except KeyboardInterrupt:
        raise
    # A hostile __str__ or __notes__ must not break the listing, whatever it raises.
    except BaseException:  # noqa: BLE001
        text = describe(error) + "\n"
    return shown_lines(text, _TRACEBACK_LINE)
