"""Save and restore a sampler's statistics, so a resumed run picks as if never stopped.

A sampler that supports this has ``state_dict()`` (a JSON-ready dict carrying the
sampler's name and a format version) and ``load_state_dict(state)``, which checks
the whole state before changing anything.

Durable state, ``create(spec, state=PATH)``, lives in an SQLite database (see
:mod:`agentdescent_sampling.durable`). :func:`save_state` and :func:`load_state` are the
portable form: one JSON document, the same shape ``agentdescent-sampling state export``
prints::

    {"format": "agentdescent-sampling/state", "sampler": NAME,
     "records": N, "rounds": R, "state": STATE_DICT}

``records`` and ``rounds`` are what a durable state counted (0 for a sampler that never
kept one). The owner is checked once, by :func:`check_owner`, wherever a state is read.
:func:`save_state` writes atomically: a temporary file in the same directory, created
with the final file's permissions (0600 for a new one), flushed to disk, renamed over
the target, and the directory flushed too; a temporary file left by a process killed
mid-save carries that process's id, and the next save of the same file removes it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from . import _display
from .errors import StateError
from .protocol import (
    MAX_COUNT,
    Sampler,
    Stateful,
    _half_stateful,
    is_count,
    is_stateful,
    refuse_a_class,
    short_repr,
)

__all__ = [
    "CONTAINS_ITSELF",
    "FORMAT",
    "PLAIN_JSON",
    "check_document",
    "check_owner",
    "find_in_state",
    "load_state",
    "read_state_file",
    "sampler_name",
    "save_state",
    "state_dict_of",
    "state_document",
    "state_json",
    "write_state_file",
]

#: Marks a file as sampler state; checked on load.
FORMAT = "agentdescent-sampling/state"

#: A state file of a million ``fixable-first`` tasks is some 40 MB, and each shape of
#: ``benchmarks/state_limit.py`` at the readers' count of values at most 168 MB. What the count
#: does not bound is the length of a few values: a parse costs up to eight bytes of memory a
#: byte of text (one string that a character of the file makes four bytes a character, with
#: the text itself), so this bounds a read to about 2.2 GB and 8 s (``--size-limit``). At
#: 1 GiB, one string that an escape widens (six bytes a byte of text) had taken 6.4 GB.
_MAX_FILE_BYTES = 1 << 28

#: What a state that could not be written as JSON is told to be.
PLAIN_JSON = (
    "state_dict() must return plain JSON data (dicts, lists, str, numbers, no NaN or infinity)"
)


def sampler_name(sampler: object) -> str:
    """The name a state is saved under: ``sampler.name``, else the class's name."""
    name = getattr(sampler, "name", None)
    return name if isinstance(name, str) else type(sampler).__qualname__


def check_owner(owner: object, name: str, where: str) -> None:
    """Raise unless a state saved by sampler ``owner`` may be loaded into sampler ``name``.

    Raises:
        StateError: ``owner`` is another sampler's name (or missing); ``where`` names the file.
    """
    if not isinstance(owner, str) or not owner:
        raise StateError(
            f'{where!r} names no sampler its state belongs to (its "sampler" is '
            f"{short_repr(owner)}, not a name), so it cannot be loaded into {name!r}: it was not "
            f"written by save_state() or a state file; give this sampler another state path "
            f"(the file was left as it is)"
        )
    if owner != name:
        raise StateError(
            f"{where!r} holds the state of sampler {short_repr(owner)}, not {name!r}; "
            f"select {short_repr(owner)} to continue it, or give this sampler another state "
            f"path (the file was left as it is)"
        )


def state_document(name: str, records: int, rounds: int, state: Any) -> dict[str, Any]:
    """The one shape of a state document: what :func:`save_state` writes and export prints."""
    return {"format": FORMAT, "sampler": name, "records": records, "rounds": rounds, "state": state}


def check_document(document: Mapping[str, Any], name: str, where: str) -> tuple[Any, int, int]:
    """``(state, records, rounds)`` of a state document for sampler ``name``, else raise.

    Raises:
        StateError: the document is another sampler's, or its counts are not whole numbers.
    """
    check_owner(document.get("sampler"), name, where)
    records, rounds = document.get("records"), document.get("rounds")
    if not (is_count(records) and is_count(rounds)):
        raise StateError(
            f"{where!r}: 'records' and 'rounds' must be whole numbers >= 0, got "
            f"{short_repr(records)} and {short_repr(rounds)} (the file was left as it is)"
        )
    return document.get("state"), records, rounds


def save_state(sampler: Stateful | Sampler, path: str | PathLike[str]) -> None:
    """Write the sampler's state to ``path`` as a JSON document, atomically.

    A durable sampler (``create(spec, state=...)``) writes its record and round counts
    too. A symlink at ``path`` is kept: its target is written, since the path is yours
    to give. An existing file keeps its permissions; a new one is made 0600. Temporary
    files that earlier saves of ``path`` left behind when killed are removed. A pipe, a
    terminal or a device such as ``/dev/null`` is written into, not replaced (not
    atomically: a pipe with no reader waits for one), and ``/dev/stdout`` through the
    process's own standard output.

    Raises:
        TypeError: ``sampler`` is a class, or has no ``state_dict()`` and
            ``load_state_dict()``; or ``path`` is not a file path.
        StateError: the directory is missing or not writable, ``path`` is a directory, a
            block device, a socket, an SQLite database (a durable sampler's state) or a file
            SQLite keeps beside one, the sampler's ``state_dict()`` raised, or the state
            holds what :func:`load_state` would refuse (over 2**24 values, each key counted
            as four: some 1.5 million ``fixable-first`` tasks; over 256 MiB; nested over 32
            levels; keys JSON writes alike); any existing regular file at ``path`` is left as
            it was.
    """
    from .durable import DurableSampler  # imported here: the plain path never needs SQLite

    sampler = _stateful(sampler, path, "save_state()", f"be saved to {str(path)!r}")
    if isinstance(sampler, DurableSampler):
        document = sampler.document()
    else:
        name = sampler_name(sampler)
        cannot = (
            f"cannot save the state of sampler {short_repr(name)} to {short_repr(str(path), 1000)}"
        )
        document = state_document(name, 0, 0, state_dict_of(sampler, cannot))
    write_state_file(path, document)


def state_dict_of(sampler: Stateful, cannot: str) -> Any:
    """``sampler.state_dict()``; if it raises, a :class:`StateError` that says what could
    not be done (``cannot``: "cannot keep the state of sampler 'x' in 'a.sqlite'"), then
    what it raised.

    Raises:
        StateError: ``state_dict()`` raised; its error is the cause.
    """
    try:
        return sampler.state_dict()
    # A plugin's state_dict() may raise anything: it is the sampler's failure, not the
    # caller's, and is said as the state's problem, as a state that is not JSON is.
    except Exception as error:
        from .loading import describe  # imported here: only this error needs it

        raise StateError(f"{cannot}: its state_dict() raised {describe(error)}") from error


def _stateful(sampler: object, path: object, call: str, doing: str) -> Stateful:
    """``sampler``, if it is a sampler with state and ``path`` a file path, for ``call``.

    Raises:
        TypeError: ``sampler`` is a class or has no state methods (``doing`` says what it
            could then not do), or ``path`` is not a file path.
    """
    from ._files import refuse_no_path

    refuse_a_class(sampler, call)
    refuse_no_path(path, call)
    if not is_stateful(sampler):
        raise TypeError(not_stateful(sampler, doing))
    return sampler


def not_stateful(sampler: object, doing: str, first: str = "") -> str:
    """Why ``sampler``, which has no ``state_dict()`` / ``load_state_dict()``, cannot be
    ``doing`` something with a state, and what to do (``first``, then the usual fixes)."""
    half = _half_stateful(sampler)
    lacks = "no state_dict() and load_state_dict() methods"
    if half is not None:  # one of the two: which it has, and which it lacks
        lacks = f"{half[0]}() but no {half[1]}() method"
    return (
        f"sampler {sampler_name(sampler)!r} ({type(sampler).__name__}) cannot {doing}: it has "
        f"{lacks}. {first}Use a sampler that has them "
        f"(every built-in does), or give it both (agentdescent_sampling.plugin.Stateful: a "
        f"JSON-ready state_dict() and a load_state_dict(state) that raises StateError on a "
        f"state it cannot take)"
    )


def write_state_file(path: str | PathLike[str], document: Mapping[str, Any]) -> None:
    """Write ``document`` as JSON to ``path`` atomically: a flushed temporary file, renamed.

    Keeps a symlink at ``path``, an existing file's permissions, and removes the temporary
    files of killed earlier saves, and writes into a pipe, a terminal or a device, as
    :func:`save_state` describes.

    Raises:
        StateError: the directory is missing or not writable, ``path`` cannot take it (as
            :func:`save_state` lists), or ``document`` is not JSON or holds what
            :func:`read_state_file` would refuse (:func:`state_json`); any existing regular
            file at ``path`` is left as it was.
    """
    import secrets  # imported here: a sampler that is never saved never needs it

    from ._files import checked_path, no_room_beside, write_refused

    cannot = f"cannot write sampler state to {short_repr(str(path), 1000)}"
    try:
        given = checked_path(path)
        target = Path(os.path.realpath(given))
    except ValueError as error:
        raise StateError(f"{cannot}: {error}") from None
    text = state_json(document, cannot)
    try:
        kind: int | None = os.stat(given).st_mode
    except OSError:
        kind = None  # a new file, or one that cannot be looked up: told below
    if kind is not None and stat.S_ISDIR(kind):  # "" too: Path("") is "."
        raise StateError(f"{cannot}: it is a directory, not a file; name a file, such as "
                         f"{str(Path(given, 'state.json'))!r}")  # fmt: skip
    descriptor = _descriptor_of(given)
    if descriptor is not None or (kind is not None and not stat.S_ISREG(kind)):
        _write_through(given, text, kind, cannot, descriptor)
        return
    if not target.parent.is_dir():
        raise StateError(f"{cannot}: there is no directory {str(target.parent)!r}; create it, "
                         f"or name a file in a directory that exists")  # fmt: skip
    _refuse_database(path, target)
    no_room = no_room_beside(
        target, _TEMPORARY_ADDS, "it is written first to a temporary file beside it"
    )
    if no_room is not None:
        raise StateError(f"{cannot}: {no_room}")
    _remove_abandoned(target)
    temporary = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o600
    try:
        # O_EXCL: never write through a file someone else placed there. Made 0600, then
        # given the final mode before a byte is written: the state is never more readable
        # than the file it replaces.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise StateError(f"{cannot}: {write_refused(error)}") from error
    try:
        os.chmod(temporary, mode)  # by path: Windows has no fchmod
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
        _sync_directory(target.parent)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise StateError(f"{cannot}: {write_refused(error)}") from error
        raise


def state_json(document: Mapping[str, Any], cannot: str) -> str:
    """``document`` as the JSON text of a state file, whole before a byte is written,
    if :func:`read_state_file` takes it: so no save is unreadable. ``cannot`` starts each
    message ("cannot write sampler state to 'x.json'").

    Raises:
        StateError: ``document`` is not JSON, holds what :func:`refuse_unreadable` refuses,
            or its text is more than the readers take: over 256 MiB, over their count of values
            or nested over 32 levels deep.
    """
    from ._files import MAX_DEPTH, MAX_VALUES, count_values, nesting

    refuse_unreadable(document, cannot)
    if nesting(document, shared=True) > MAX_DEPTH:  # before the dump, which recurses
        raise StateError(
            f"{cannot}: it nests lists or mappings more than {MAX_DEPTH} levels deep, which "
            f"load_state() refuses; {PLAIN_JSON}, nested no deeper"
        )
    try:
        text = json.dumps(document, allow_nan=False)
    except (ValueError, TypeError) as error:
        raise StateError(f"{cannot}: {not_json(document.get('state'), error)}") from error
    durable = (
        "a durable state file (create(spec, state=PATH)) has no such limit: keep the state "
        "there, and read it with 'agentdescent-sampling state show'"
    )
    values = count_values(text)
    if values > MAX_VALUES:
        raise StateError(
            f"{cannot}: it holds {values:,} values (a string counts three, a key four), over "
            f"the {MAX_VALUES:,} that load_state() reads; {durable}"
        )
    # ASCII: json.dumps escapes every other character. A byte is left for the line break
    # that 'state export' writes after it to standard output, which a file it goes to keeps.
    if len(text) >= _MAX_FILE_BYTES:
        raise StateError(
            f"{cannot}: it is {len(text):,} bytes as JSON, over the {_MAX_FILE_BYTES - 1:,} "
            f"that load_state() reads with a line break after them (long task ids?); {durable}"
        )
    return text


def _write_through(
    path: Path, text: str, kind: int | None, cannot: str, descriptor: int | None
) -> None:
    """Write ``text`` into the special file at ``path`` (a pipe, a terminal, /dev/null),
    which a rename would replace with a regular file; never a block device (a disk) or a
    socket. A name of one of this process's descriptors (``/dev/stdout``, ``/dev/fd/N``) is
    written through that descriptor, so that a file it appends to (``>> run.log``) keeps what
    it holds. A pipe with no reader waits for one, as a shell's ``> pipe`` does."""
    from ._files import kind_of, write_refused

    if kind is not None and (stat.S_ISBLK(kind) or stat.S_ISSOCK(kind)):
        raise StateError(f"{cannot}: it is {kind_of(kind)}; name a file")
    try:
        if descriptor is None:
            handle = open(path, "w", encoding="utf-8")  # noqa: SIM115  # closed below
        else:
            for stream in (sys.stdout, sys.stderr):  # what was printed before goes first
                with contextlib.suppress(Exception):
                    if stream is not None and stream.fileno() == descriptor:
                        stream.flush()
            handle = os.fdopen(os.dup(descriptor), "w", encoding="utf-8")
        with handle:
            handle.write(text)
    except OSError as error:
        raise StateError(f"{cannot}: {write_refused(error)}") from error


#: A name of a descriptor of this process: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
_DESCRIPTOR_NAME = re.compile(r"/dev/(?:std(out|err)|fd/(\d+))|/proc/self/fd/(\d+)")


def _descriptor_of(path: Path) -> int | None:
    """The descriptor of this process that ``path`` names, or None."""
    found = _DESCRIPTOR_NAME.fullmatch(os.fspath(path))
    if found is None:
        return None
    standard, number = found[1], found[2] or found[3]
    return (1 if standard == "out" else 2) if standard else int(number)


def _refuse_database(path: str | PathLike[str], target: Path) -> None:
    """Refuse to replace an SQLite database, or a file SQLite keeps beside one, with JSON: a
    durable state's records would be lost, and the run holding it would fail."""
    from ._statedb import is_database, sidecar_of  # imported here: only a save needs SQLite

    cannot = f"cannot write sampler state to {short_repr(str(path), 1000)}"
    if is_database(target):
        raise StateError(
            f"{cannot}: it is an SQLite database (a durable sampler's state?), and the JSON "
            f"export would replace it, losing its records and failing a run that holds it. "
            f"Give another path for the export"
        )
    sidecar = sidecar_of(target)
    if sidecar is not None:
        database, kind = sidecar
        raise StateError(
            f"{cannot}: it is the {kind} file SQLite keeps beside the database {database!r}, "
            f"which reads it as part of that database. Give another path for the export"
        )


def refuse_unreadable(document: Mapping[str, Any], cannot: str) -> None:
    """Refuse to write what the loaders refuse, so no save is unreadable: a whole number over
    :data:`MAX_COUNT`, keys that JSON writes alike; and a document that holds itself, which
    JSON cannot (refused here, where the walk meets it). ``cannot`` starts the message.

    Raises:
        StateError: ``document`` holds one of them, named by where it is.
    """
    found = find_in_state(document, _unreadable, "document")
    if found is not None:
        where, problem = found
        advice = f"; {PLAIN_JSON}" if problem == CONTAINS_ITSELF else ""
        raise StateError(f"{cannot}: {where} {problem}{advice}")


def _unreadable(value: object) -> str:
    """Why ``value`` makes a state file its readers refuse: a whole number over
    :data:`MAX_COUNT`, or a mapping of keys that JSON writes alike (``1`` and ``"1"``,
    ``True`` and ``"true"``, a ``str`` subclass and the ``str``), which a reader takes for one
    key given twice; or ``""``. Only ``int``'s and ``str``'s own methods run on a subclass."""
    if isinstance(value, int) and int.__abs__(value) > MAX_COUNT:
        number = _too_many_digits(value) or f"the whole number {_digits(value)}"
        return (
            f"is {number}, over the {MAX_COUNT:,} a state file holds (its readers may refuse "
            f"it); start the sampler fresh"
        )
    if isinstance(value, dict) and not all(type(key) is str for key in value):
        written: dict[object, object] = {}
        for key in value:
            as_json = str.__str__(key) if isinstance(key, str) else _json_key(key)
            try:
                again = as_json in written  # a key JSON refuses may hash as it likes
            except Exception as error:  # noqa: BLE001  # told as the state's fault
                from .loading import describe  # imported here: only this error needs it

                return f"has a key whose hash or comparison raised {describe(error)}; {_DISTINCT}"
            if again:
                return (
                    f"has the keys {short_repr(written[as_json], 40)} and "
                    f"{short_repr(key, 40)}, which JSON writes alike, as "
                    f"{short_repr(as_json, 40)} (its readers would refuse that key as given "
                    f"twice); {_DISTINCT}"
                )
            written[as_json] = key
    return ""


#: What to give a state's mapping instead of keys that JSON cannot tell apart.
_DISTINCT = "give each key as a distinct str"


def _json_key(key: object) -> object:
    """``key`` as :func:`json.dumps` writes a mapping's key that is not a ``str``; a key it
    refuses (a tuple, a whole number of over 4,300 digits), as it is: the dump says so."""
    try:
        return json.dumps(key) if key is None or isinstance(key, (bool, int, float)) else key
    except ValueError:
        return key


def not_json(state: object, error: BaseException) -> str:
    """Why json.dumps refused ``state``, with ``error``, its own words: where in the state
    the value it stopped at is (``state['seen'] is a set``), found in the order it writes,
    and what to return. A state nested too deeply to encode (``RecursionError``) is not
    walked; nor is anything of the sampler's run, as json.dumps runs none."""
    found = None
    if not isinstance(error, RecursionError):
        # A dict subclass may raise as it is walked: the words are then json.dumps's alone.
        with contextlib.suppress(Exception):
            found = find_in_state(state, _no_json_value, in_order=True)
    return f"{found[0]} {found[1]} ({error}); {PLAIN_JSON}" if found else f"{error}; {PLAIN_JSON}"


def _no_json_value(value: object) -> str:
    """Why json.dumps refuses ``value`` itself (its type, a number JSON has not, a key it
    cannot write), or ``""``; by type and the built-in ``repr`` of floats only."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"is {float.__repr__(value)}"
    if isinstance(value, int) and (digits := _too_many_digits(value)):
        return f"is {digits}"
    if isinstance(value, dict):
        for key in value:
            if not (key is None or isinstance(key, (str, int, float))):
                return f"has the key {_display.safe_repr(key)} ({_display.a_type(key)})"
            if isinstance(key, int) and (digits := _too_many_digits(key)):
                return f"has a key that is {digits}"
        return ""
    if value is None or isinstance(value, (list, tuple, str, int, float)):
        return ""
    return f"is {_display.a_type(value)}"


def _too_many_digits(number: int) -> str:
    """``"a whole number of over 4,300 digits"`` for an int Python will not write in decimal
    (json.dumps neither), else ``""``."""
    limit = sys.get_int_max_str_digits()
    # A digit takes over three bits: a number of no more bits has fewer digits than the limit.
    if limit == 0 or int.bit_length(number) <= 3 * limit:
        return ""
    try:
        int.__repr__(number)
    except ValueError:
        return f"a whole number of over {limit:,} digits"
    return ""


def _digits(number: int) -> str:
    """``number`` in decimal, cut after 40 digits with how many it has."""
    text = int.__repr__(number)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text):,} digits)"


#: What :func:`find_in_state` says of a dict or list that holds itself.
CONTAINS_ITSELF = "contains itself, which JSON cannot hold"


def find_in_state(
    state: object, problem: Callable[[object], str], root: str = "state", *, in_order: bool = False
) -> tuple[str, str] | None:
    """The first value in ``state`` that ``problem`` says something of: ``(its path, what
    problem said)``, the path as code reaching it (``state['stats']['task-1'][0]``); or None.
    See :func:`problems_in_state`, the walk it stops at its first find."""
    first = next(problems_in_state(state, problem, root, in_order=in_order), None)
    return None if first is None else first[:2]


def problems_in_state(
    state: object, problem: Callable[[object], str], root: str = "state", *, in_order: bool = False
) -> Iterator[tuple[str, str, object]]:
    """Each value in ``state`` that ``problem`` says something of: ``(its path, what problem
    said, the value)``, the path as code reaching it (``state['stats']['task-1'][0]``).

    The one walk of a state: ``state`` itself first, then what its dicts, lists and tuples
    hold, depth first, last item first (``in_order``: first item first, as json.dumps goes),
    each container before what it holds and once however often it is shared; a container
    found is not entered. A dict or list that holds itself is found too, as
    :data:`CONTAINS_ITSELF`: JSON cannot hold it.
    """
    items = _items_in_order if in_order else _items_last_first
    containers = (dict, list, tuple)
    seen: set[int] = set()
    # The containers being walked, innermost last, each as its (key, item) pairs, last
    # first; the key of each; and their ids, so that meeting one again inside itself is a
    # cycle, and meeting one again elsewhere is sharing. A path is spelled out only for the
    # value found; still, a walk is a Python step a value, where json.dumps runs in C: 1.8x
    # its time on difficulty-weighted's state of 2.4 million tasks, 60x on 5.6 million empty
    # lists (helper-134, 2026-12-07).
    walking: list[Iterator[tuple[Any, object]]] = [iter(((None, state),))]
    keys: list[Any] = []
    open_ids: list[int] = []
    is_open: set[int] = set()  # open_ids, for lookup
    while walking:
        for key, value in walking[-1]:
            if isinstance(value, containers):
                if id(value) in seen:  # json.dumps refuses a circular one; a shared one is fine
                    if id(value) in is_open:
                        yield _spelled(root, [*keys, key]), CONTAINS_ITSELF, value
                    continue
                seen.add(id(value))
            found = problem(value)
            if found:
                yield _spelled(root, [*keys, key]), found, value
            elif isinstance(value, containers):
                keys.append(key)
                open_ids.append(id(value))
                is_open.add(id(value))
                walking.append(items(value))
                break  # walk what it holds, then go on with this container's other items
        else:
            walking.pop()
            if keys:
                keys.pop()
                is_open.discard(open_ids.pop())


def _items_in_order(container: Any) -> Iterator[tuple[Any, object]]:
    """The ``(key, item)`` pairs of a dict, or ``(index, item)`` of a list or tuple."""
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def _items_last_first(container: Any) -> Iterator[tuple[Any, object]]:
    """The ``(key, item)`` pairs of a dict, or ``(index, item)`` of a list or tuple, last first."""
    if isinstance(container, dict):
        return reversed(container.items())
    return zip(range(len(container) - 1, -1, -1), reversed(container), strict=True)


def _spelled(root: str, keys: list[Any]) -> str:
    """``root['key'][0]``: the path of the value :func:`find_in_state` reached by ``keys``,
    the first of which, ``state``'s own, is None."""
    from ._display import safe_repr  # imported here: only a value found is spelled out

    return root + "".join(f"[{safe_repr(key)}]" for key in keys[1:])


def load_state(sampler: Stateful | Sampler, path: str | PathLike[str]) -> None:
    """Read a file written by :func:`save_state` into ``sampler``.

    Into a durable sampler, the state and its counts become the durable state's, at once.

    Raises:
        TypeError: ``sampler`` is a class, or has no ``state_dict()`` and
            ``load_state_dict()``; or ``path`` is not a file path.
        StateError: the file is missing, truncated, corrupt, not a regular file, over
            256 MiB, of another version or of another sampler; ``sampler`` is left unchanged.
    """
    from .durable import DurableSampler  # imported here: the plain path never needs SQLite

    sampler = _stateful(sampler, path, "load_state()", f"load the state in {str(path)!r}")
    where = str(path)
    state, records, rounds = check_document(read_state_file(path), sampler_name(sampler), where)
    try:
        if isinstance(sampler, DurableSampler):
            sampler.adopt(state, records, rounds)
        else:
            sampler.load_state_dict(state)
    except StateError as error:
        raise StateError(f"{where!r}: {error}") from None


def read_state_file(path: str | PathLike[str]) -> dict[str, Any]:
    """Read the JSON document of a state file and check its format marker.

    Raises:
        StateError: the file is missing, truncated, not JSON (an SQLite database: a
            durable state), not a regular file, over 256 MiB, or has no format marker.
    """
    # Imported here: a fresh sampler reads no file.
    from ._files import FileTooLarge, NotRegular, load_document, reason_of, strict_json
    from ._statedb import is_database

    source = Path(path)
    if is_database(source):
        raise StateError(
            f"cannot read sampler state from {str(source)!r}: it is an SQLite database (a "
            f"durable state, made by create(spec, state=PATH)?), not a save_state export. Open "
            f"it with create(spec, state={str(source)!r}), or export it first with "
            f"'agentdescent-sampling state export {shlex.quote(str(source))} -o OUT.json'"
        )
    try:
        document = load_document(source, strict_json, _MAX_FILE_BYTES)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        if isinstance(error, NotRegular):  # a pipe (/dev/stdin) could block, or never end
            fault = "give a regular file (save_state() writes one, as 'state export -o FILE' does)"
        elif isinstance(error, (OSError, UnicodeDecodeError, json.JSONDecodeError)) and not (
            isinstance(error, FileTooLarge)
        ):
            fault = "the file is missing, truncated or not JSON"
        else:  # too large, too deep, a key given twice: no save_state() wrote it as it is
            fault = "save_state() and 'state export' write no such file; was it edited?"
        raise StateError(
            f"cannot read sampler state from {str(source)!r}: {reason_of(error)}; {fault}"
        ) from error
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise StateError(
            f"{str(source)!r} is not an agentdescent-sampling state file (no "
            f"'format': {FORMAT!r} marker)"
        )
    return document


def _sync_directory(directory: Path) -> None:
    """Flush a directory's entries, so a rename in it survives a power loss (POSIX only)."""
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


#: What a temporary file's name adds to the state's: ``.NAME.PID-0123abcd.tmp``, for a pid
#: of up to seven digits (Linux's largest is 4,194,304).
_TEMPORARY_ADDS = len("..") + 7 + len("-0123abcd.tmp")


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
    from ._files import process_ended

    # Another thread of ours may be mid-save.
    return pid == os.getpid() or not process_ended(pid)
