"""What the ``agentdescent-sampling state`` commands show and export of a state file.

Read-only: a state file (:mod:`agentdescent_sampling.durable`) or a JSON export of
:func:`~agentdescent_sampling.save_state` is read, summed up for a person or exported as JSON,
and never written to.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from ._statedb import SIDECARS, opens_as_json, sidecar_of
from .durable import read_durable_state, state_path
from .errors import InvalidSamplerConfig, StateError, UnknownSamplerError
from .protocol import is_stateful, short_repr
from .state import FORMAT, _descriptor_of, check_document, state_document


def export_target_error(path: str | PathLike[str], output: str | PathLike[str]) -> str | None:
    """Why ``output`` may not receive the export of the state at ``path``: it is that
    file (by any name: a symlink, a hard link) or one of SQLite's files beside it or
    beside any other database (:func:`~agentdescent_sampling._statedb.sidecar_of`, which
    refuses such a state path too); None if it may.

    ``agentdescent-sampling state export`` writes nothing to the state it reads: replacing
    it with JSON would lose it, and fail the run holding it. Nor does it replace a file that
    is no earlier export (a run spec given for ``-o`` by mistake)."""
    state, target = os.fspath(path), os.fspath(output)
    written = os.path.realpath(target)  # what write_state_file replaces
    for suffix in ("", *SIDECARS):
        name = f"{state}{suffix}"
        same = os.path.realpath(name) == written
        with contextlib.suppress(OSError, ValueError):
            same = same or os.path.samefile(name, target)
        if same:
            what = "the state file itself" if not suffix else f"the state's {suffix[1:]} file"
            return (
                f"the output {target!r} is {what} ({state!r}): the state commands read a "
                f"state and never write to it, and this would replace it with its export. "
                f"Give another file for -o"
            )
    sidecar = sidecar_of(written)
    if sidecar is not None:
        database, kind = sidecar
        return (
            f"the output {target!r} is the {kind} file SQLite keeps beside the database "
            f"{database!r}: SQLite reads it as part of that database, and would overwrite the "
            f"export or be damaged by it. Give another file for -o"
        )
    if _descriptor_of(Path(target)) is None and not _replaceable(written):
        return (
            f"the output {target!r} is a file that is no earlier export of a sampler state, "
            f"or cannot be read to tell: export writes a new file, or replaces an earlier "
            f"export, never another file (a run spec, say). Give another file for -o, or "
            f"delete that one if it is not wanted"
        )
    return None


def _replaceable(path: str) -> bool:
    """Whether an export may be written at ``path``: no regular file is there, or an empty
    one, or an earlier export (a JSON object whose first key is this package's state
    ``"format"``, as every export writes it). A file that cannot be read may not be."""
    try:
        # Not blocking: a FIFO with no writer would hold the open.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return True  # a pipe or a device is written through, never replaced
        head = os.read(descriptor, 4096)
    except OSError:
        return False
    finally:
        os.close(descriptor)
    return not head or _EXPORT_START.match(head) is not None


#: How every export begins: ``{"format": "agentdescent-sampling/state"``, after a BOM.
_EXPORT_START = re.compile(
    rb'(?:\xef\xbb\xbf)?\s*\{\s*"format"\s*:\s*"' + re.escape(FORMAT.encode()) + rb'"'
)


#: Why a state file holds no state yet.
_NO_STATE_YET = "it is a new file being made, or one whose making a killed run left undone"


def export_state(path: str | PathLike[str]) -> dict[str, Any]:
    """The state at ``path`` as the JSON document :func:`~agentdescent_sampling.save_state`
    writes (``agentdescent-sampling state export``); read-only.

    Raises:
        StateError: as :func:`read_durable_state`, or the file holds no record yet.
    """
    saved = read_durable_state(path)
    if saved["state"] is None:
        raise StateError(f"{os.fspath(path)!r} holds no state yet: {_NO_STATE_YET}")
    return state_document(saved["sampler"], saved["records"], saved["rounds"], saved["state"])


def state_summary(path: str | PathLike[str]) -> dict[str, Any]:
    """What ``agentdescent-sampling state show`` prints: :func:`read_durable_state` without
    the state itself, and how many tasks it has statistics for (when it says). A JSON
    export (:func:`~agentdescent_sampling.save_state`'s) is shown too, with no spec, log or
    holder."""
    path = state_path(path)
    export = _is_json(path)
    saved = _read_export(path) if export else read_durable_state(path)
    state = saved.pop("state")
    tasks = next(
        (
            len(state[key])
            for key in ("tasks", "stats")
            if isinstance(state, dict) and isinstance(state.get(key), dict)
        ),
        None,
    )
    return {"path": str(path), **saved, "tasks": tasks, "export": export}


def _is_json(path: str | PathLike[str]) -> bool:
    """Whether ``path`` is a regular file whose first character is ``{``, after a BOM."""
    with contextlib.suppress(OSError):
        if Path(path).is_file() and not Path(path).is_symlink():
            with open(path, "rb") as file:
                return opens_as_json(file.read(64))
    return False


def _read_export(path: str | PathLike[str]) -> dict[str, Any]:
    """A :func:`~agentdescent_sampling.save_state` export in :func:`read_durable_state`'s
    shape, checked as :func:`~agentdescent_sampling.load_state` would check it when its
    sampler is installed."""
    from .registry import create  # imported here: the registry imports this module
    from .state import read_state_file
    from .testing._time import _finishes

    document = read_state_file(path)
    name = document.get("sampler")
    if not isinstance(name, str):
        raise StateError(
            f"{str(path)!r} names no sampler (its 'sampler' is {short_repr(name)}); it is not "
            f"an export of save_state"
        )
    state, records, rounds = check_document(document, name, str(path))
    # Built as the state says it was (an export keeps no spec), as a state file's spec is;
    # never by another distribution than the name selects, and bounded in time.
    params = state.get("params") if isinstance(state, dict) else None
    given = dict(params) if isinstance(params, dict) else {}
    given.pop("provider", None)
    built: list[Any] = []
    try:
        finished, _ = _finishes(lambda: built.append(create({**given, "name": name})))
    except UnknownSamplerError:
        finished = False  # not installed here: shown, but its state is not checked
    except InvalidSamplerConfig as error:
        raise StateError(f"{str(path)!r}: its parameters are not the sampler's: {error}") from None
    if finished and is_stateful(built[0]):
        try:
            built[0].load_state_dict(state)  # as load_state would: a state it cannot take
        except StateError as error:
            raise StateError(f"{str(path)!r}: {error}") from None
    return {
        "sampler": name,
        "spec": None,
        "records": records,
        "rounds": rounds,
        "log": 0,
        "held_by": None,
        "state": state,
    }


def describe_state(summary: Mapping[str, Any]) -> str:
    """:func:`state_summary` as lines for a person. What the file says (the sampler's name,
    its spec, the holder's host) is shown escaped: a line break or a terminal escape in it
    can neither fake a line nor reach the terminal."""
    from ._display import shown  # imported here: only the command prints a state

    log = summary["log"]
    # save_state of a plain sampler writes 0 for both: only a durable state counts them.
    uncounted = (
        " (a durable state counts them; a plain sampler's export has none)"
        if summary["export"] and not summary["records"] and not summary["rounds"]
        else ""
    )
    rows = [
        ("state file", shown(summary["path"])),
        (
            "sampler",
            f"none yet: {_NO_STATE_YET}"
            if summary["sampler"] is None
            else shown(summary["sampler"])
            + (
                " (a JSON export, of save_state or state export: no spec, log or holder)"
                if summary["export"]
                else f" (spec {shown(json.dumps(summary['spec']))})"
            ),
        ),
        ("records", f"{summary['records']:,}{uncounted}"),
        ("next round", f"{summary['rounds']:,}{uncounted}"),
        ("tasks", "not said" if summary["tasks"] is None else f"{summary['tasks']:,}"),
    ]
    if not summary["export"]:
        rows += [
            ("log", f"{log:,} {'entry' if log == 1 else 'entries'} since the last snapshot"),
            ("held by", shown(summary["held_by"] or "nobody (no run has it open)")),
        ]
    return "\n".join(f"{label:<12}{value}" for label, value in rows)
