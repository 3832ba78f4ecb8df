"""Read a config or state file that a user names, within bounds.

A path in a config can be anything: a FIFO that never ends (opening it for reading
would wait for a writer forever), ``/dev/zero`` (reading it fills memory), a file of
gigabytes or a document nested thousands of levels deep (the parsers recurse). Each is
refused with a short ``OSError`` or ``ValueError`` that the caller wraps in its own error.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MAX_DEPTH", "kind_of", "load_document"]

#: Deeper documents are refused. The deepest one this package writes (a state file) is 6.
MAX_DEPTH = 32


def load_document(path: Path, parse: Callable[[str], Any], max_bytes: int) -> Any:
    """Read the regular UTF-8 file at ``path`` (a leading BOM allowed) and ``parse`` it.

    Raises:
        OSError: the file is missing or unreadable, is not a regular file, or is
            larger than ``max_bytes``.
        UnicodeDecodeError: the file is not UTF-8.
        ValueError: ``parse`` refused the text, or the document nests deeper than
            :data:`MAX_DEPTH`.
    """
    text = _read_text(path, max_bytes)
    try:
        document = parse(text)
    except RecursionError:
        raise ValueError(_too_deep()) from None
    if _depth(document) > MAX_DEPTH:
        raise ValueError(_too_deep())
    return document


def _read_text(path: Path, max_bytes: int) -> str:
    # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; the
    # fstat below then refuses it. It changes nothing for a regular file.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    with os.fdopen(os.open(path, flags), "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"it is {kind_of(mode)}, not a regular file")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OSError(f"it is larger than the limit of {max_bytes:,} bytes")
    # utf-8-sig drops a byte-order mark, which some Windows editors write.
    return data.decode("utf-8-sig")


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, for a message: \"a directory\", \"a FIFO (named pipe)\", ..."""
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO (named pipe)",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((kind for test, kind in kinds.items() if test(mode)), "a special file")


def _depth(document: Any) -> int:
    """How deeply lists and mappings nest in ``document``, counted without recursion."""
    deepest = 0
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            children = value.values() if isinstance(value, dict) else value
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _too_deep() -> str:
    return f"it nests lists or tables more than {MAX_DEPTH} levels deep"
