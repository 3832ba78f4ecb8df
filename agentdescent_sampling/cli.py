"""The ``agentdescent-sampling`` command: argument parsing only; the library does the work."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .bench.command import add_bench_arguments
from .errors import SamplerError
from .registry import PluginFailure, SamplerInfo, available, default_registry
from .testing import check_sampler

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except SamplerError as error:
        print(f"agentdescent-sampling: error: {error}", file=sys.stderr)
        return 2
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentdescent-sampling",
        description="Task samplers for agentdescent's evolve(): list, inspect and check them.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    listing = commands.add_parser("list", help="every installed sampler and every failed plugin")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(run=_list)

    show = commands.add_parser("show", help="one sampler's description and parameters")
    show.add_argument("name", help="a sampler name or alias")
    show.add_argument("--provider", help="the distribution to take it from, if two provide it")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(run=_show)

    check = commands.add_parser(
        "check", help="run the conformance kit against an installed sampler"
    )
    check.add_argument("spec", help="a sampler name, or 'name:key=value,...' with parameters")
    check.set_defaults(run=_check)

    add_bench_arguments(
        commands.add_parser(
            "bench",
            help="measure what a sampler buys on simulated or logged workloads",
            description="Measure the share of rollouts each sampler spends on informative tasks.",
        )
    )
    return parser


def _list(args: argparse.Namespace) -> int:
    records = available()
    if args.json:
        print(json.dumps([record.to_dict() for record in records], indent=2))
        return 0
    rows: list[tuple[str, ...]] = [("NAME", "DISTRIBUTION", "VERSION", "STATUS", "DESCRIPTION")]
    for record in records:
        if isinstance(record, SamplerInfo):
            status = record.status + (", synchronized" if record.synchronized else "")
            rows.append(
                (record.name, record.distribution, record.version, status, record.description)
            )
        else:
            rows.append(_failure_row(record))
    print(_table(rows))
    return 0


def _show(args: argparse.Namespace) -> int:
    info = default_registry().get(args.name, provider=args.provider)
    if args.json:
        print(json.dumps(info.to_dict(), indent=2))
        return 0
    lines = [
        f"{info.name} ({info.distribution} {info.version})",
        f"  {info.description}" if info.description else "",
        f"  aliases:     {', '.join(info.aliases) or '-'}",
        f"  entry point: {info.entry_point} ({info.form} form)",
    ]
    if info.synchronized:
        lines.append("  threads:     declares thread_safe = False; wrapped in synchronized()")
    lines.append("  parameters:" + ("" if info.signature.parameters else " none"))
    for parameter in info.signature.parameters:
        default = "(required)" if parameter.required else f"= {parameter.default!r}"
        annotation = f": {parameter.annotation}" if parameter.annotation else ""
        lines.append(f"    {parameter.name}{annotation} {default}")
    if info.signature.accepts_any:
        lines.append("    **kwargs (any other keyword)")
    print("\n".join(line for line in lines if line))
    return 0


def _check(args: argparse.Namespace) -> int:
    report = check_sampler(args.spec)
    print(report)
    return 0 if report.ok else 1


def _failure_row(failure: PluginFailure) -> tuple[str, ...]:
    name = ", ".join(failure.names) or failure.entry_point or "?"
    return (name, failure.distribution, failure.version, failure.status, failure.message)


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True))
        + "  "
        + row[-1]
        for row in rows
    )
