"""The ``agentdescent-sampling`` command: argument parsing only; the library does the work."""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import shlex
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from . import loading, testing
from ._display import safe_repr, shown, shown_data, shown_lines
from ._files import parse_bounded, reason_of, strict_json, user_file_path, user_path
from ._version import __version__
from .bench.command import add_bench_arguments
from .errors import (
    InvalidSamplerConfig,
    PluginLoadError,
    SamplerConflictError,
    SamplerError,
    StateError,
)
from .listing import Listing, describe_sampler, sampler_json
from .policy import normalize
from .protocol import SAVED_WITH
from .records import PluginFailure, SamplerInfo
from .registry import PROVIDER_IN_STRING, available, create, default_registry, wrong_parameters
from .scaffold import write_plugin
from .spec import SamplerSpec, parse_spec
from .testing import check_installed, check_sampler, checking

__all__ = ["main"]

#: The longest error message shown.
_MESSAGE = 2000

#: The exit status of a command whose reader closed the pipe (``... | head -1``),
#: as for a command that SIGPIPE ended.
_PIPE_CLOSED = 141
#: The exit status of a command the user interrupted (Ctrl-C), as for one SIGINT ended.
_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with stdout closed (>&-): print() would drop everything
        _error("standard output is closed; run it with output to a file or a pipe")
        return 2
    for stream in (sys.stdout, sys.stderr):
        # An output that cannot encode a name (PYTHONIOENCODING=ascii, a C locale) shows
        # it escaped, as \xe4, rather than ending the command with a traceback.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    # A SIGTERM (kill, timeout, a cancelled CI job) ends a command as Ctrl-C does: the bench
    # then stops its worker processes and removes its scratch files, which the default
    # action, ending this process at once, leaves behind.
    terminate = _on_terminate()
    try:
        # What a plugin prints while it loads goes to stderr: it would break --json output.
        loading.plugin_output = sys.stderr
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _warning
                status: int = args.run(args)
        except SamplerError as error:
            _error(_in_flags(str(error), args))
            status = 2
        finally:
            loading.plugin_output = None
        sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not at exit
    except KeyboardInterrupt as interrupt:
        # A plugin's load or check says which, since the plugin itself may have raised it.
        said = f" {shown(str(interrupt))}" if type(interrupt) is loading.PluginInterrupt else ""
        _error(f"interrupted{said}")
        return _INTERRUPTED
    except BrokenPipeError:
        # The reader has all it wanted. Point stdout at /dev/null so the interpreter's
        # own flush at exit does not raise again and print a traceback.
        _silence_stdout()
        return _PIPE_CLOSED
    except OSError as error:  # a full disk (> /dev/full), a closed descriptor
        _silence_stdout()
        _error(f"cannot write the output: {reason_of(error)}; check where it goes")
        return 1
    finally:
        terminate()
    return status


def _on_terminate() -> Callable[[], object]:
    """Have SIGTERM raise ``KeyboardInterrupt`` where it would end the process at once;
    return what restores its handler."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
    ):
        return lambda: None
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    return lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _error(message: str) -> None:
    """Print ``message`` as this command's error, shown safely: it may quote a plugin."""
    print(f"agentdescent-sampling: error: {shown_lines(message, _MESSAGE)}", file=sys.stderr)


def _warning(message: Warning | str, *_: object, **__: object) -> None:
    """Print a warning as this command's one line, not Python's two naming its source line."""
    print(f"agentdescent-sampling: warning: {shown_lines(str(message), _MESSAGE)}", file=sys.stderr)


def _usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Without a command (or a ``state`` action), what the commands are, as ``--help`` says."""
    parser.print_help(sys.stderr)
    return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit raises no traceback."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no descriptor left to point: nothing flushes at exit
        sys.stdout = None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentdescent-sampling",
        description="Task samplers for agentdescent's evolve(): list, inspect, check, "
        "measure and scaffold them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.set_defaults(run=functools.partial(_usage, parser))

    listing = commands.add_parser("list", help="every installed sampler and every failed plugin")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if any plugin failed to load or conflicts (disabled plugins do not "
        "count); for scripts and CI",
    )
    listing.add_argument(
        "--tracebacks",
        action="store_true",
        help="print each failed plugin's whole error with its traceback (in JSON, as 'traceback')",
    )
    listing.set_defaults(run=_list)

    show = commands.add_parser("show", help="one sampler's description and parameters")
    show.add_argument(
        "name",
        type=_run_spec_spec,
        help="a sampler name or alias, or 'name:key=value,...' with parameters, or a JSON "
        "object, as check takes it",
    )
    show.add_argument(
        "--provider", metavar="DIST", help="the distribution to take it from, if two provide it"
    )
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(run=_show)

    check = commands.add_parser(
        "check",
        help="run the conformance kit against installed samplers",
        description="Run the conformance kit (agentdescent_sampling.testing.check_sampler) "
        "against a sampler, or every installed one. Exits 1 on a contract violation or a "
        "plugin that failed to load (a wrong pick() signature, an import error), 2 on a bad "
        "name or parameter, or a name two distributions provide without --provider.",
    )
    target = check.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "spec",
        nargs="?",
        type=_run_spec_spec,
        help="a sampler name, or 'name:key=value,...' with parameters, or a JSON object such "
        'as \'{"name": "fixable-first", "failure_cost": 2}\'',
    )
    target.add_argument(
        "--all",
        action="store_true",
        help="check every installed sampler at its defaults; a plugin that failed to load "
        "or conflicts also makes the exit status 1",
    )
    check.add_argument(
        "--provider",
        metavar="DIST",
        help="the distribution to take the sampler from, if two provide it",
    )
    check.add_argument(
        "--seconds",
        type=_seconds,
        metavar="S",
        help=f"how long one check may run before it is reported as a hang (default: "
        f"{testing.CHECK_SECONDS:g}; 'inf' for no limit); raise it on a loaded machine or for "
        f"a slow sampler",
    )
    check.set_defaults(run=_check)

    scaffold = commands.add_parser(
        "new-plugin",
        help="write a new plugin distribution whose own tests pass",
        description="Write a pip-installable plugin distribution: pyproject.toml with the "
        "agentdescent.samplers entry point, a sampler, a README and tests that run the "
        "conformance kit. Then: pip install -e 'DIR[test]' && python -m pytest DIR.",
    )
    scaffold.add_argument("name", help="the sampler's name, for example 'easiest-first'")
    scaffold.add_argument(
        "--hooks",
        action="store_true",
        help="write a hook-form plugin (a module of @hookimpl functions) instead of the class form",
    )
    scaffold.add_argument(
        "--directory",
        type=user_path,
        metavar="DIR",
        help="where to write it (default: ./agentdescent-sampling-NAME); must not exist",
    )
    scaffold.set_defaults(run=_new_plugin)

    state = commands.add_parser(
        "state",
        help="show a sampler state file, export it as JSON, or import an export into a new one",
        description="show and export read a state file of create(spec, state=PATH), even "
        "while a run holds it; nothing is written to it, and no file is made beside it. "
        "import writes a new state file from an export.",
    )
    actions = state.add_subparsers(dest="action", metavar="ACTION")
    state.set_defaults(run=functools.partial(_usage, state))
    shown = actions.add_parser("show", help="the sampler, its counts and who holds the file")
    shown.add_argument("path", type=user_path, help="the state file")
    shown.add_argument("--json", action="store_true", help="print JSON instead of text")
    shown.set_defaults(run=_state_show)
    export = actions.add_parser(
        "export",
        help="the state as the JSON document save_state() writes and load_state() reads",
    )
    export.add_argument("path", type=user_path, help="the state file")
    export.add_argument(
        "-o",
        "--output",
        type=user_file_path,
        metavar="FILE",
        help="write it to FILE instead of stdout",
    )
    export.set_defaults(run=_state_export)
    imported = actions.add_parser(
        "import",
        help='make a new state file from an export, for a run spec\'s "state"',
        description="Write a new state file (what create(spec, state=PATH) and a run spec's "
        "\"state\" open) holding the state of an export of 'state export' or save_state(), "
        "as load_state(create(SPEC, state=OUTPUT), EXPORT) does in Python. The export is "
        "only read.",
    )
    imported.add_argument("export", type=user_path, help="the JSON export")
    imported.add_argument(
        "-o",
        "--output",
        type=user_file_path,
        required=True,
        metavar="STATE",
        help="the state file to write; it must not exist yet",
    )
    imported.add_argument(
        "--spec",
        required=True,
        type=_run_spec_spec,
        help="the sampler and parameters the export was saved with, as the run spec's "
        "\"spec\" gives them: 'name', 'name:key=value,...' or a JSON object such as "
        '\'{"name": "difficulty-weighted", "c": 0.1}\'',
    )
    imported.set_defaults(run=_state_import)

    add_bench_arguments(
        commands.add_parser(
            "bench",
            help="measure what a sampler buys: the held-out reward in the real evolve() "
            "(quick; --engine in full), or with 'share' the share of informative rollouts",
        )
    )
    return parser


def _state_show(args: argparse.Namespace) -> int:
    from ._stateview import describe_state, state_summary  # only this command needs SQLite

    summary = state_summary(args.path)
    print(json.dumps(summary, indent=2) if args.json else describe_state(summary))
    return 0


def _state_export(args: argparse.Namespace) -> int:
    from ._stateview import export_state, export_target_error  # only this command needs SQLite
    from .state import state_json, write_state_file

    if args.output is not None and (refused := export_target_error(args.path, args.output)):
        _error(refused)
        return 2
    document = export_state(args.path)
    if args.output is None:  # as -o writes it, so that what is piped to a file imports too
        print(state_json(document, f"cannot export {str(args.path)!r}"))  # a line break: space
    else:
        write_state_file(args.output, document)
    return 0


def _state_import(args: argparse.Namespace) -> int:
    from ._statedb import is_database  # only this command reads an export
    from .state import load_state, sampler_name

    if os.path.lexists(args.output):
        _error(
            f"the output {str(args.output)!r} already exists: import writes a new state file "
            f"and replaces none. Give a new path for -o, or delete that file if its state is "
            f"not wanted"
        )
        return 2
    if is_database(args.export):  # load_state's advice for it is a Python call
        _error(
            f"{str(args.export)!r} is a state file already (SQLite), not an export: a run spec "
            f'takes it as its "state" as it is. To copy it, export it first: '
            f"agentdescent-sampling state export {shlex.quote(str(args.export))} -o OUT.json"
        )
        return 2
    # A new file, removed again if the export cannot be loaded: a sampler opened and
    # closed unused leaves nothing.
    with create(args.spec, state=args.output) as sampler:
        try:
            load_state(sampler, args.export)
        except StateError as error:
            # load_state's advice (build it otherwise) is for Python; here --spec decides.
            saved = _saved_spec(args.export)
            selected = sampler_name(sampler)
            if saved is None or (saved[0] == selected and SAVED_WITH not in str(error)):
                raise
            name, spec = saved
            which = (
                f"an export of sampler {shown(name)}, not {selected!r}"
                if name != selected
                else "an export saved with other parameters than --spec gives"
            )
            _error(
                f"{str(args.export)!r} is {which}: give --spec {shown(shlex.quote(spec))}, the "
                f"sampler and parameters it was saved with"
            )
            return 2
        records, rounds = sampler.records, sampler.rounds
    state = os.path.abspath(args.output)
    spec = args.spec if isinstance(args.spec, str) else json.dumps(args.spec)
    # save_state of a plain sampler writes 0 for both: only a durable state counts them.
    counts = (
        "its statistics whole (the export counts no records or rounds: a plain sampler's "
        "has none), the new file's counts from 0"
        if not records and not rounds
        else f"{records:,} records, next round {rounds:,}"
    )
    print(
        f"wrote {shown(state, 4096)}: the state of {shown(spec, 4096)}, {counts}. "
        f'A run spec continues it with "state": {json.dumps(state)} and "spec": '
        f"{json.dumps(args.spec)}"
    )
    return 0


def _saved_spec(export: str | os.PathLike[str]) -> tuple[str, str] | None:
    """The sampler an export was saved by, and the ``--spec`` that selects it with the
    parameters it was saved with (JSON where the string form cannot hold them); None if the
    export cannot be read."""
    from .state import read_state_file

    try:
        document = read_state_file(export)
    except StateError:
        return None
    saved, kept = document.get("sampler"), document.get("state")
    if not isinstance(saved, str):
        return None
    params = kept.get("params") if isinstance(kept, dict) else None
    wanted = SamplerSpec(saved, params if isinstance(params, dict) else {})
    text = str(wanted)
    try:
        same = parse_spec(text) == wanted
    except SamplerError:  # a value ('[1, 2]', 'a,b') or a name the form breaks
        same = False
    return saved, text if same else json.dumps({"name": saved, **wanted.params})


def _run_spec_spec(value: str) -> str | dict[str, Any]:
    """``--spec`` as a run spec's ``"spec"`` gives it: a string, or a JSON object."""
    if not value.lstrip().startswith("{"):
        return value
    try:
        # As every JSON config is read: a key given twice, or nesting past the depth limit,
        # is refused (json.loads kept the last 'name' and raised RecursionError).
        spec = parse_bounded(value, strict_json)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"{shown(value)} starts with '{{' but cannot be read as a JSON object ({error}); give "
            f"'name:key=value' or a JSON object such as '{{\"name\": \"fixable-first\"}}'"
        ) from None
    if not isinstance(spec, dict):
        raise argparse.ArgumentTypeError(f"{shown(value)} is not a JSON object")
    return spec


def _list(args: argparse.Namespace) -> int:
    listing = Listing(available())
    if args.json:
        print(json.dumps(listing.json(args.tracebacks), indent=2))
    else:
        print(listing.text(args.tracebacks), end="")
    return 1 if args.strict and listing.faults else 0


def _spec_with_provider(given: str | dict[str, Any], flag: str | None) -> SamplerSpec:
    """The spec ``given`` on the command line, with ``--provider``'s distribution, if given.

    Raises:
        InvalidSamplerConfig: the spec names another provider than the flag.
    """
    spec = parse_spec(given)
    if flag is None:
        return spec
    if spec.provider is not None and spec.provider != flag:
        raise InvalidSamplerConfig(
            f"the spec's provider {shown(repr(spec.provider))} and --provider "
            f"{shown(repr(flag))} differ; give one of them"
        )
    return SamplerSpec(spec.name, spec.params, flag)


def _show(args: argparse.Namespace) -> int:
    spec = _spec_with_provider(args.name, args.provider)
    try:
        info = default_registry().get(spec.name, provider=spec.provider)
    except SamplerConflictError as error:  # the name is ambiguous: the command's to fix
        _error(_pick_a_provider(error, "show", args.name))
        return 2
    except PluginLoadError as error:  # the name is right, the plugin is at fault: as check
        _error(str(error))
        return 1
    given = dict(spec.params)
    # The names only: show builds nothing (it imports a plugin to read its parameters), and
    # the values are checked when the sampler is built (check builds it).
    wrong = wrong_parameters(info.name, info.signature, given) if given else None
    if wrong is not None:
        _error(_in_flags(wrong, args))
        return 2
    if args.json:
        document = sampler_json(info)
        if given:
            document["given"] = shown_data(given)
        print(json.dumps(document, indent=2))
        return 0
    print(describe_sampler(info))
    if given:
        pairs = ", ".join(f"{key}={safe_repr(value)}" for key, value in given.items())
        print(f"  given:       {shown(pairs)} (check builds it with them, which checks the values)")
    return 0


#: The registry's words for its ``provider`` key, where this command line gives --provider.
_PROVIDER_WORDS = (
    ("Leave provider out", "Leave --provider out"),
    ("set provider to", "set --provider to"),
)


def _in_flags(message: str, args: argparse.Namespace) -> str:
    """``message``, the registry's, with its advice on ``provider`` as the flag's on a
    command that takes --provider."""
    if not hasattr(args, "provider"):
        return message
    if args.provider is not None:
        for said, flag in _PROVIDER_WORDS:
            message = message.replace(said, flag)
    if PROVIDER_IN_STRING in message:  # provider=... in the spec string
        flag = "drop it: --provider gives it" if args.provider else "give --provider DIST"
        message = message.replace(PROVIDER_IN_STRING, f" 'provider' is no parameter: {flag}.")
    return message


def _pick_a_provider(error: SamplerConflictError, command: str, name: str | dict[str, Any]) -> str:
    """The conflict ``error``, with how to pick a distribution on this command line."""
    given = name if isinstance(name, str) else json.dumps(name)
    again = shlex.join(["agentdescent-sampling", command, given])
    return f"{error}. Here, pick one with --provider: {again} --provider DIST, DIST one of those"


def _seconds(value: str) -> float:
    """``--seconds``: a time above 0, in seconds, ``inf`` too."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:  # NaN fails this comparison too
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds above 0, got {safe_repr(value, 40)}; for example "
            f"--seconds 600, or --seconds inf for no limit"
        )
    return seconds


def _check(args: argparse.Namespace) -> int:
    if args.seconds is None:
        return _checked(args)
    before = testing.CHECK_SECONDS
    testing.CHECK_SECONDS = args.seconds
    try:
        return _checked(args)
    finally:
        testing.CHECK_SECONDS = before


def _checked(args: argparse.Namespace) -> int:
    if args.all:
        if args.provider is not None:
            _error("--provider selects one sampler's distribution: give the sampler's name, "
                   "not --all (check NAME --provider DIST)")  # fmt: skip
            return 2
        return _check_all()
    spec = _spec_with_provider(args.spec, args.provider)
    try:
        info = default_registry().get(spec.name, provider=spec.provider)
        # A bad parameter raises here, before anything is printed: a config error (exit 2).
        report = check_sampler(spec)
    except SamplerConflictError as error:  # the name is ambiguous: the command's to fix
        _error(_pick_a_provider(error, "check", args.spec))
        return 2
    except PluginLoadError as error:  # the plugin's failure, as check --all counts it
        _error(f"not checked: {error}")
        return 1
    print(checking(info, spec))
    print(report)
    claims = _claims_on(info) if info.form == "built-in" else []
    for claim in claims:  # its author, checking the name it chose, checked the built-in
        if claim.status == "disabled":  # the user's choice: said, and no failure
            print(f"  note: {info.name} is the built-in; {shown(claim.where)} claims it too: "
                  f"{shown(claim.message)}")  # fmt: skip
        else:
            print(f"{info.name} is the built-in; {shown(claim.where)} claims it too, refused: "
                  f"{shown(claim.message)}")  # fmt: skip
    failed = [claim for claim in claims if claim.status != "disabled"]
    return 0 if report.ok and not failed else 1


def _claims_on(builtin: SamplerInfo) -> list[PluginFailure]:
    """The installed plugins refused by their metadata for claiming one of ``builtin``'s
    names, read without importing any: the user selected the built-in, not them. Those the
    user disabled too are among them, with the status ``disabled``."""
    return [
        failure
        for failure in default_registry()._refused_by_metadata()
        if failure.status in ("conflict", "disabled")
        and builtin.keys & set(map(normalize, failure.names))
    ]


def _check_all() -> int:
    found = []
    for each in check_installed():
        print(each.heading)
        if each.report is not None:
            print(each.report)
        found.append(each)
    failed = sum(each.failed for each in found)
    unbuilt = sum(each.failed and each.report is None for each in found)
    skipped = sum(not each.failed and each.report is None for each in found)
    # A plugin that failed to load or shares a name is a failure its row calls "not checked";
    # the count says which failures those are, apart from the samplers left for a parameter.
    of_them = f" ({unbuilt} of them could not be loaded, or share a name)" if unbuilt else ""
    print(f"{len(found)} in all: {len(found) - failed - skipped} passed, {failed} failed"
          f"{of_them}, {skipped} not checked")  # fmt: skip
    return 1 if failed else 0


def _new_plugin(args: argparse.Namespace) -> int:
    written = write_plugin(args.name, directory=args.directory, hooks=args.hooks)
    print(f"wrote {shown(str(written), 4096)}")
    print(
        f"next: python -m pip install -e {shlex.quote(f'{written}[test]')} && "
        f"python -m pytest {shlex.quote(str(written))}\n"
        f"then: agentdescent-sampling show {args.name}"
    )
    return 0
