"""Save and restore a sampler's statistics, so a resumed run picks as if never stopped.

A sampler that supports this has ``state_dict()`` (a JSON-ready dict carrying the
sampler's name and a format version) and ``load_state_dict(state)``, which checks
the whole state before changing anything. :func:`save_state` writes atomically: a
temporary file in the same directory, flushed to disk, then renamed over the target,
so a crash or a full disk never leaves a half-written file or loses the last good one.
A temporary file left by a process killed mid-save carries that process's id, and the
next save of the same file removes it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Protocol, TypeGuard, runtime_checkable

from .errors import SamplerError
from .protocol import short_repr

__all__ = [
    "FORMAT",
    "StateError",
    "Stateful",
    "check_state",
    "is_count",
    "is_real",
    "is_tally",
    "load_state",
    "read_state_file",
    "save_state",
    "write_state_file",
]

#: Marks a file as sampler state; checked on load.
FORMAT = "agentdescent-sampling/state"

#: Counts above this are refused on load, and a state holding one is not saved: picks
#: compute with floats, which hold whole numbers exactly up to 2**53, and no run records
#: that many rollouts (a million a second for 285 years).
_MAX_COUNT = 2**53
#: A state file of a million tasks is a few hundred megabytes; larger is not one.
_MAX_FILE_BYTES = 1 << 30


class StateError(SamplerError, ValueError):
    """A state file or dict is unreadable, corrupt, of another version or of another sampler."""


@runtime_checkable
class Stateful(Protocol):
    """A sampler whose statistics can be saved and restored."""

    def state_dict(self) -> dict[str, Any]:
        """Return the statistics as a JSON-ready dict."""
        ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the statistics with ``state``; raise :class:`StateError` if it is invalid."""
        ...


def check_state(
    state: object, name: str, version: int, params: Mapping[str, Any] | None = None
) -> Mapping[str, Any]:
    """Return ``state`` if it is a state dict of sampler ``name`` at ``version``, else raise.

    Samplers call this first in ``load_state_dict``. ``params``, when given, must equal
    the state's ``"params"``: statistics gathered under other parameters (another
    ``pass_threshold``, say) would mean something else.
    """
    if not isinstance(state, Mapping):
        raise StateError(f"{name}: sampler state must be a mapping, got {type(state).__name__}")
    owner = short_repr(state.get("sampler"))
    if state.get("sampler") != name:
        raise StateError(
            f"this state belongs to sampler {owner}, not {name!r}; "
            f"load it into a {owner} sampler or start {name!r} fresh"
        )
    if state.get("version") != version:
        raise StateError(
            f"{name}: state version {short_repr(state.get('version'))} is not supported (this "
            f"version of agentdescent-sampling reads version {version}); start fresh or use the "
            f"release that wrote it"
        )
    if params is not None and state.get("params") != params:
        raise StateError(
            f"{name}: the state was saved with {short_repr(state.get('params'), 200)}, this "
            f"sampler has {dict(params)}; build it with the saved parameters to resume, or "
            f"start fresh"
        )
    return state


def is_count(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a whole number in [0, 2**53] (not a bool), as state counts must be."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT


def is_tally(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real in [0, 2**53] (not a bool), as a weighted or discounted
    count must be: a larger one (``1e308``) would overflow or stall the arithmetic."""
    return is_real(value) and 0 <= value <= _MAX_COUNT


def is_real(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a finite number (not a bool), as state measurements must be.

    An int too large for a float (``10**400``) is not: it would overflow in arithmetic.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def save_state(sampler: Stateful, path: str | PathLike[str]) -> None:
    """Write ``sampler.state_dict()`` to ``path`` atomically.

    A symlink at ``path`` is kept: its target is written. An existing file keeps its
    permissions; a new one gets the usual ones (0666 less the umask). Temporary files
    that earlier saves of ``path`` left behind when killed are removed.

    Raises:
        StateError: the directory is missing or not writable; any existing file at
            ``path`` is left as it was.
    """
    write_state_file(path, {"format": FORMAT, "state": sampler.state_dict()})


def write_state_file(path: str | PathLike[str], document: Mapping[str, Any]) -> None:
    """Write ``document`` as JSON to ``path`` atomically: a flushed temporary file, renamed.

    Keeps a symlink at ``path``, an existing file's permissions, and removes the temporary
    files of killed earlier saves, as :func:`save_state` describes.

    Raises:
        StateError: the directory is missing or not writable, ``document`` is not JSON,
            or it holds a count over 2**53 (which :func:`read_state_file`'s readers
            refuse); any existing file at ``path`` is left as it was.
    """
    import secrets  # imported here: a sampler that is never saved never needs it

    from ._files import checked_path

    try:
        target = Path(os.path.realpath(checked_path(path)))
    except ValueError as error:
        raise StateError(
            f"cannot write sampler state to {short_repr(str(path))}: {error}"
        ) from None
    _refuse_huge_counts(path, document)
    _remove_abandoned(target)
    temporary = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        # O_EXCL: never write through a file someone else placed there; the mode 0o666 is
        # reduced by the umask, as for any new file.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:
        raise StateError(f"cannot write sampler state to {str(path)!r}: {error}") from error
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(document, handle, allow_nan=False)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):  # a new file keeps the umask's mode
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temporary, target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, (OSError, ValueError, TypeError)):  # TypeError: not JSON
            raise StateError(
                f"cannot write sampler state to {short_repr(str(path))}: {error}; "
                f"state_dict() must return plain JSON data (dicts, lists, str, numbers)"
            ) from error
        raise


def _refuse_huge_counts(path: str | PathLike[str], document: Mapping[str, Any]) -> None:
    """Refuse to write a whole number the loaders refuse, so no save is unreadable."""
    stack: list[Any] = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, int) and abs(value) > _MAX_COUNT:
            raise StateError(
                f"cannot write sampler state to {short_repr(str(path))}: it holds the whole "
                f"number {short_repr(value, 40)}, over the {_MAX_COUNT:,} a state file holds "
                f"(its readers would refuse it); start the sampler fresh"
            )


def load_state(sampler: Stateful, path: str | PathLike[str]) -> None:
    """Read a file written by :func:`save_state` into ``sampler``.

    Raises:
        StateError: the file is missing, truncated, corrupt, not a regular file, over
            1 GiB, of another version or of another sampler; ``sampler`` is left unchanged.
    """
    document = read_state_file(path)
    state: Any = document.get("state")
    try:
        sampler.load_state_dict(state)
    except StateError as error:
        raise StateError(f"{str(path)!r}: {error}") from None


def read_state_file(path: str | PathLike[str]) -> dict[str, Any]:
    """Read the JSON document of a state file and check its format marker.

    Raises:
        StateError: the file is missing, truncated, not JSON, not a regular file, over
            1 GiB, or has no format marker.
    """
    from ._files import load_document, strict_json  # imported here: a fresh sampler reads no file

    source = Path(path)
    try:
        document = load_document(source, strict_json, _MAX_FILE_BYTES)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise StateError(
            f"cannot read sampler state from {str(source)!r}: {error}; "
            f"the file is missing, truncated or not JSON"
        ) from error
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise StateError(
            f"{str(source)!r} is not an agentdescent-sampling state file (no "
            f"'format': {FORMAT!r} marker)"
        )
    return document


def _remove_abandoned(target: Path) -> None:
    """Remove temporary files of ``target`` whose saving process no longer runs."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.([0-9]{{1,12}})-[0-9a-f]{{8}}\.tmp\Z")
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return  # the save itself reports an unusable directory
    for entry in entries:
        match = pattern.match(entry.name)
        if match and not _running(int(match[1])):
            # Best effort: whatever stops the removal, the save itself goes on.
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _running(pid: int) -> bool:
    """Whether process ``pid`` may still be saving; when unsure, yes."""
    if pid == os.getpid() or os.name != "posix":
        # Another thread of ours may be mid-save; and on Windows os.kill(pid, 0)
        # would send Ctrl-C instead of probing.
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: no process has that id
        return False
    except OSError:
        return True  # it exists, run by another user
    return True
