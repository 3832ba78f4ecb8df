"""Read a config or state file that a user names, within bounds.

A path in a config can be anything: a FIFO that never ends (opening it for reading
would wait for a writer forever), ``/dev/zero`` (reading it fills memory), a file of
gigabytes or a document nested thousands of levels deep (the parsers recurse). Each is
refused with a short ``OSError`` or ``ValueError`` that the caller wraps in its own error.
"""

from __future__ import annotations

import errno
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from .protocol import short_repr

__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "NAME_MAX",
    "SEPARATORS",
    "FileTooLarge",
    "NotRegular",
    "check_toml_nesting",
    "checked_path",
    "count_values",
    "kind_of",
    "load_document",
    "name_too_long",
    "nesting",
    "no_room_beside",
    "open_regular",
    "parse_bounded",
    "read_bytes",
    "read_only_mount",
    "reason_of",
    "strict_json",
    "too_deep",
    "unique_keys",
    "write_refused",
]

#: Deeper documents are refused. The deepest one this package writes (a state file) is 6.
MAX_DEPTH = 32
#: A document holding more values, counted as :data:`VALUE_MARKS` says, is refused before
#: it is parsed: parsing costs at most 64 bytes a counted value beyond the text and the
#: characters of its strings, whatever the document's shape (``benchmarks/state_limit.py``),
#: so this bounds a parse to a gibibyte of objects. A million ``fixable-first`` tasks, each a
#: key and a list of six numbers, count 11 million.
MAX_VALUES = 1 << 24
#: A config file holding more values, each dot counted as one too (each part of a TOML dotted
#: key or header makes a table), is refused before it is parsed: a sampler's table holds a
#: few, in a file that may be a whole pyproject.toml, and a 1 MiB file of tiny values or
#: dotted headers would take the parsers seconds and hundreds of megabytes.
MAX_CONFIG_VALUES = 1 << 15
#: What :func:`parse_bounded` counts, and as how many values: each value of a JSON document
#: but the first follows one of ``,[{``, and what costs a parse more counts more: each ``"``
#: and ``:`` once and ``[`` and ``{`` twice, so a string and the comma before it count three,
#: a key four and a list's or an object's opening two (a line break is only white space).
#: Each counted once, a string had cost 83 bytes a counted value, one object of distinct keys
#: 183 and lists of one list 94 (``benchmarks/state_limit.py``).
VALUE_MARKS: Mapping[str, int] = {",": 1, "[": 2, "{": 2, '"': 1, ":": 1}
#: The same, for a config file: each of ``,[{`` and a line break (which ends a value there)
#: once, and each dot.
CONFIG_MARKS: Mapping[str, int] = {",": 1, "[": 1, "{": 1, "\n": 1, ".": 1}
#: The same, for a YAML config file, which breaks a line at a carriage return, NEL, LS and PS
#: too: each is counted (CRLF twice), or a file of them read as one line passed the limit;
#: and each colon, since YAML 1.1 reads ``1:1:1`` as a number in base 60, a part a colon
#: (PyYAML's scan of 1 MiB of one took 75 MB).
YAML_MARKS: Mapping[str, int] = {
    **CONFIG_MARKS, ":": 1, "\r": 1, "\x85": 1, "\u2028": 1, "\u2029": 1
}  # fmt: skip
#: What ends a directory's path: a path ending in one names no file.
SEPARATORS = tuple(sep for sep in (os.sep, os.altsep) if sep)
#: Files are read in pieces of this size, up to their limit.
_CHUNK = 1 << 20
#: What :func:`check_toml_nesting` looks at; everything else is skipped in C.
_TOML_MARK = re.compile(r"[\"'#.=,\n\[\]{}]")


def load_document(
    path: Path,
    parse: Callable[[str], Any],
    max_bytes: int,
    *,
    max_values: int | None = None,
    marks: Mapping[str, int] = VALUE_MARKS,
) -> Any:
    """Read the regular UTF-8 file at ``path`` (a leading BOM allowed) and ``parse`` it.

    Raises:
        OSError: the file is missing or unreadable, is not a regular file, or is
            larger than ``max_bytes``.
        UnicodeDecodeError: the file is not UTF-8.
        ValueError: ``parse`` refused the text, it holds over ``max_values`` values
            (:data:`MAX_VALUES` if None; as :func:`count_values` counts them), or the
            document nests deeper than :data:`MAX_DEPTH`.
    """
    text = _read_text(path, max_bytes)
    return parse_bounded(text, parse, max_values=max_values, marks=marks)


def parse_bounded(
    text: str,
    parse: Callable[[str], Any],
    *,
    max_values: int | None = None,
    marks: Mapping[str, int] = VALUE_MARKS,
) -> Any:
    """``parse(text)``, refusing a text of over ``max_values`` values (:data:`MAX_VALUES` if
    None; as :func:`count_values` counts them with ``marks``) before parsing, and a document
    nested deeper than :data:`MAX_DEPTH` without a ``RecursionError``.

    Raises:
        ValueError: as :func:`load_document` describes.
    """
    max_values = MAX_VALUES if max_values is None else max_values
    values = count_values(text, marks)
    if values > max_values:
        raise ValueError(
            f"it holds up to {values:,} values, over the limit of {max_values:,} that bounds "
            f"what parsing it may cost"
        )
    try:
        document = parse(text)
    except RecursionError:
        raise ValueError(too_deep()) from None
    if nesting(document) > MAX_DEPTH:
        raise ValueError(too_deep())
    return document


def count_values(text: str, marks: Mapping[str, int] = VALUE_MARKS) -> int:
    """How many values ``text`` holds at most, counting each of ``marks`` as it says: what
    :func:`parse_bounded` compares with its limit, and a writer with the same limit, so that
    nothing it writes is refused when read."""
    return sum(weight * text.count(mark) for mark, weight in marks.items()) + 1


def refuse_no_path(path: object, call: str) -> None:
    """Raise a TypeError naming ``call`` unless ``path`` is a file path: a ``str`` or an
    ``os.PathLike`` of one (``bytes`` paths are not taken)."""
    if isinstance(path, str) or (
        isinstance(path, os.PathLike) and isinstance(os.fspath(path), str)
    ):
        return
    raise TypeError(
        f"{call} takes a file path, a str or a pathlib.Path; got {type(path).__name__} "
        f"{short_repr(path)}"
    )


def checked_path(path: str | os.PathLike[str]) -> Path:
    """``path`` with ``~`` expanded, if a file there can be looked up.

    Raises:
        ValueError: it holds a NUL character, names an unknown user's home
            (``~nosuchuser``), lies under a directory that cannot be searched, is longer
            than the system allows a name or a path (``Path.is_dir()`` would raise), or ends
            with a separator where there is no directory (``Path`` would drop it, and a
            file would be made by the directory's name); any other trouble (a missing
            file) is left to the caller.
    """
    text = os.fspath(path)
    if "\0" in str(text):
        raise ValueError("the path holds a NUL character, which no file name can")
    try:
        expanded = expand_user(text)
    except RuntimeError:  # Python's word for an unknown user in '~user'
        raise ValueError(unknown_user(text)) from None
    try:
        expanded.stat()
    except PermissionError as error:
        raise ValueError(
            f"it cannot be looked up ({error.strerror}): check that every directory on "
            f"the way to it exists and can be searched (chmod +x)"
        ) from None
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            reason = name_too_long(expanded) or (
                f"it is {len(os.fsencode(expanded)):,} bytes, longer than this system allows a path"
            )
            raise ValueError(f"{reason}; give a shorter path") from None
        # A new file, say: the caller reports it in its own words.
    if str(text).endswith(SEPARATORS) and not os.path.isdir(expanded):  # never raises
        raise ValueError(
            f"it ends with {str(text)[-1]!r}, so it names a directory, and no directory is "
            f"there; to name a file, leave the {str(text)[-1]!r} off"
        )
    return expanded


#: The longest file name file systems take, in bytes.
NAME_MAX = 255


def name_too_long(path: Path) -> str | None:
    """Why no file system takes ``path``, if one of its names is over 255 bytes (``the name
    'nnn...' is 307 bytes, and file systems take at most 255``), else ``None``."""
    too_long = next((part for part in path.parts if len(os.fsencode(part)) > NAME_MAX), None)
    if too_long is None:
        return None
    return (
        f"the name {short_repr(too_long, 40)} is {len(os.fsencode(too_long))} bytes, and file "
        f"systems take at most {NAME_MAX}"
    )


def no_room_beside(path: Path, added: int, beside: str) -> str | None:
    """Why ``path``'s name leaves no room for the file named with up to ``added`` bytes more
    that ``beside`` says is kept beside it, or ``None``."""
    size = len(os.fsencode(path.name))
    if size + added <= NAME_MAX:
        return None
    return (
        f"its name is {size} bytes, and {beside} named with up to {added} bytes more, over "
        f"the {NAME_MAX} file systems take; give a name of at most {NAME_MAX - added} bytes"
    )


def open_regular(path: Path, max_bytes: int) -> BinaryIO:
    """Open the regular file at ``path`` for binary reading, if it is at most ``max_bytes``.

    Raises:
        OSError: the file is missing or unreadable, is not a regular file (a FIFO is
            refused without waiting for a writer), or is larger than ``max_bytes``.
    """
    # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; the
    # fstat below then refuses it. It changes nothing for a regular file.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:  # the checks come first: a directory's fdopen() raises, naming the descriptor
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(f"it is {kind_of(status.st_mode)}, not a regular file")
        if status.st_size > max_bytes:
            raise FileTooLarge(_too_large(max_bytes))
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The regular file at ``path``, if it is at most ``max_bytes``.

    Raises:
        OSError: as :func:`open_regular` says, or the file grew past ``max_bytes`` since.
    """
    chunks: list[bytes] = []
    total = 0
    with open_regular(path, max_bytes) as handle:
        # In chunks: read(max_bytes + 1) would allocate the whole limit for a small file.
        # Up to the limit + 1: a file that grew since fstat is caught too.
        while total <= max_bytes and (chunk := handle.read(_CHUNK)):
            chunks.append(chunk)
            total += len(chunk)
    if total > max_bytes:
        raise FileTooLarge(_too_large(max_bytes))
    return b"".join(chunks)


def _read_text(path: Path, max_bytes: int) -> str:
    # utf-8-sig drops a byte-order mark, which some Windows editors write.
    return read_bytes(path, max_bytes).decode("utf-8-sig")


class FileTooLarge(OSError):
    """A file refused unread: it is larger than its limit."""


class NotRegular(OSError):
    """A path refused unread: it names a pipe, a device or a directory, not a regular file."""


def _too_large(max_bytes: int) -> str:
    return f"it is larger than the limit of {max_bytes:,} bytes"


def reason_of(error: BaseException) -> str:
    """Why ``error`` happened, for a message: an ``OSError``'s ``strerror`` when it has one,
    without the path (which may be huge) or file descriptor Python appends; else its text,
    but Python's advice for a whole number of over 4,300 digits, which is for programmers."""
    text = (error.strerror if isinstance(error, OSError) else None) or str(error)
    if isinstance(error, ValueError) and "set_int_max_str_digits" in text:
        digits = sys.get_int_max_str_digits()
        return f"it holds a whole number of over {digits:,} digits, more than any value here"
    return text


def write_refused(error: OSError) -> str:
    """Why a write was refused, and what to try, for a message: a read-only file system
    (``EROFS``, Errno 30) or a permission this user lacks (``EACCES``, ``EPERM``) said in
    words with the fix; any other error as :func:`reason_of` gives it."""
    if error.errno == errno.EROFS:
        return (
            "its file system is mounted read-only (Errno 30); remount it read-write, or give "
            "a path on a writable file system"
        )
    if error.errno in (errno.EACCES, errno.EPERM):
        return (
            f"this user may not write there ({reason_of(error)}); make it writable for this "
            f"user, or give a path this user can write"
        )
    return reason_of(error)


def read_only_mount(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is on a file system mounted read-only, where no mode can help."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # AttributeError: Windows has no statvfs
        return False


#: Why a path starting with ``~user`` cannot be used.
_UNKNOWN_USER = (
    "it starts with '~user' for a user this system does not know; write the home directory "
    "out, or use '~/' for your own"
)


def expand_user(text: str | os.PathLike[str]) -> Path:
    """``text`` as a path, a leading ``~`` or ``~user`` expanded. Only a leading one: a file
    named ``./~x.toml`` comes back absolute, since Path drops its ``./``, and a later expansion
    would read what is left as the home of a user ``x.toml``.

    Raises:
        RuntimeError: it starts with ``~user`` for an unknown user (Path's own error).
    """
    path = Path(text)
    if os.fspath(text).startswith("~"):
        return path.expanduser()
    return Path.cwd() / path if str(path).startswith("~") else path


def unknown_user(path: str | os.PathLike[str]) -> str:
    """Why ``path``, starting with ``~user``, cannot be used, and how to name a file of that
    name in this directory instead, if there is one (``~x.toml``)."""
    text = os.fspath(path)
    if not os.path.lexists(text):
        return _UNKNOWN_USER
    here = os.path.join(os.getcwd(), text)
    return f"{_UNKNOWN_USER}; for the file {text!r} in this directory, write {here!r}"


def user_path(value: str) -> Path:
    """A command-line path, with ``~`` expanded as in a config or run spec (a quoted ``~``
    reaches the program as typed).

    Raises:
        argparse.ArgumentTypeError: it is empty, or starts with ``~user`` for an unknown
            user.
    """
    import argparse  # what a type= function raises for argparse to report

    if not value:
        raise argparse.ArgumentTypeError("an empty path; give the file or directory meant")
    try:
        return expand_user(value)
    except RuntimeError:  # Python's word for an unknown user in '~user'
        raise argparse.ArgumentTypeError(f"{value!r}: {unknown_user(value)}") from None


def user_file_path(value: str) -> Path:
    """A command-line path of a file to write, checked as :func:`checked_path` checks a
    library path: one ending with a separator where no directory is (``-o runs/``) is refused,
    as ``save_state`` and ``create(spec, state=...)`` refuse it.

    Raises:
        argparse.ArgumentTypeError: as :func:`user_path`, or :func:`checked_path` refuses it.
    """
    import argparse  # what a type= function raises for argparse to report

    user_path(value)  # its own words for an empty path or an unknown user
    try:
        return checked_path(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{value!r}: {error}") from None


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, for a message: \"a directory\", \"a FIFO (named pipe)\", ..."""
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO (named pipe)",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
        stat.S_ISREG: "a regular file",
        stat.S_ISLNK: "a symbolic link",
    }
    return next((kind for test, kind in kinds.items() if test(mode)), "a special file")


def nesting(document: Any, *, shared: bool = False) -> int:
    """How deeply lists (and tuples) and mappings nest in ``document`` (counted past
    :data:`MAX_DEPTH` by one at most), level by level without recursion, holding only the
    containers of one level: a million numbers in one list cost no memory beyond the list.
    With ``shared`` (a document built in memory, not parsed), a container held in several
    places is walked once a level: ``x = [x, x]`` 32 times over would be 2**32 otherwise."""
    containers = (dict, list, tuple)  # a tuple: a list, once written as JSON
    level = [document] if isinstance(document, containers) else []
    depth = 0
    while level and depth <= MAX_DEPTH:
        depth += 1
        level = [
            child
            for value in level
            for child in (dict.values(value) if isinstance(value, dict) else value)
            if isinstance(child, containers)
        ]
        if shared:
            level = list({id(child): child for child in level}.values())
    return depth


def too_deep() -> str:
    """Why a document nesting too deeply is refused."""
    return f"it nests lists or tables more than {MAX_DEPTH} levels deep"


def strict_json(text: str, parse_float: Callable[[str], Any] | None = None) -> Any:
    """Parse JSON, refusing what :func:`json.loads` lets through: ``NaN``, ``Infinity``
    (not numbers), a number past the largest float (``1e999``, which it reads as infinity)
    and an object giving one key twice (which would silently take the last).

    ``parse_float``, if given, reads each float instead (a config keeps one past the largest
    float, to refuse it naming its key).

    Raises:
        ValueError: the text is not JSON, or has one of the above.
    """
    import json  # imported here: a TOML config never needs it

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not a JSON number")

    return json.loads(
        text,
        parse_constant=refuse,
        parse_float=parse_float or finite_float,
        object_pairs_hook=unique_keys,
    )


def finite_float(text: str) -> float:
    """``float(text)`` for a number written out, refusing one past the largest float
    (``1e400``), which ``float`` reads as infinity: an error would quote ``inf``, a value
    never written.

    Raises:
        ValueError: ``text`` is such a number.
    """
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:40]} {PAST_LARGEST_FLOAT}")
    return value


#: Why a number that ``float`` reads as infinity (``1e400``) is refused, after the number.
PAST_LARGEST_FLOAT = "is past the largest number a float holds (about 1.8e308); write a smaller one"


def unique_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A mapping of ``pairs``, or a ``ValueError`` naming the first key given twice."""
    mapping = dict(pairs)
    if len(mapping) < len(pairs):
        seen: set[Any] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {short_repr(key)} is given twice; give each key once")
            seen.add(key)
    return mapping


def check_toml_nesting(text: str) -> None:
    """Refuse TOML whose keys or inline values nest deeper than :data:`MAX_DEPTH`, unparsed.

    The parser's cost grows faster than the number of parts in a dotted key
    (``a.a.a...a = 1``: 39 s at 64 KB), so the parts are counted here, in one pass that
    reads strings and comments as the parser does.

    Raises:
        ValueError: a dotted key or a table header has more than :data:`MAX_DEPTH` parts,
            or inline tables and arrays nest deeper than that.
    """
    dots = brackets = 0
    position = 0
    while match := _TOML_MARK.search(text, position):
        char, position = match[0], match.end()
        if char in "\"'":
            position = _after_string(text, match.start())
        elif char == "#":
            newline = text.find("\n", position)
            position = len(text) if newline < 0 else newline
        elif char == ".":
            dots += 1
        elif char in "[{":
            brackets, dots = brackets + 1, 0
        elif char in "]}":
            brackets, dots = max(brackets - 1, 0), 0
        else:  # "=", "," or a newline ends a key
            dots = 0
        if dots >= MAX_DEPTH or brackets > MAX_DEPTH:
            raise ValueError(too_deep())


def _after_string(text: str, start: int) -> int:
    """Where the TOML string opening at ``start`` ends (the end of ``text`` if unclosed)."""
    quote = text[start]
    multiline = text.startswith(quote * 3, start)
    delimiter = quote * 3 if multiline else quote
    position = start + len(delimiter)
    close = -1
    while True:
        # Each search starts where the last one stopped, and a one-line string's end of line
        # is looked for in its own text only: a string of many escapes, or a line of many
        # strings, is read in one pass (searching on from each took 7 s and 2 s at 1 MiB).
        if close < position:
            close = text.find(delimiter, position)
            if close < 0 or (not multiline and text.find("\n", position, close) >= 0):
                return len(text)  # unclosed: the parser refuses it here, reading no further
        escape = text.find("\\", position, close) if quote == '"' else -1
        if escape < 0:
            break
        position = escape + 2
    end = close + len(delimiter)
    if multiline:  # its text may end with one or two quotes, right before the delimiter
        end += next((extra for extra in (2, 1) if text.startswith(quote * extra, end)), 0)
    return end


def process_ended(pid: int) -> bool:
    """Whether process ``pid`` of this host has surely ended: it does not exist (or no
    process can have its id). Where that cannot be told, no: another user's process, or
    Windows, whose ``os.kill(pid, 0)`` would send Ctrl-C instead of probing."""
    if os.name != "posix":
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: no process has that id
        return True
    except OSError:  # it exists, run by another user
        return False
    return False
