"""What each parameter of a sampler factory means, read from its Google-style docstring.

``show`` prints it next to each parameter's type and default. A plugin author gets the
same by documenting the factory's parameters the way the built-ins do, in an
``Args:`` section of the class docstring (or of ``__init__``'s, or of a factory
function's)::

    class Hardest:
        '''Roll out the task whose last score was lowest.

        Args:
            floor: scores below this count as 0.
        '''
"""

from __future__ import annotations

import functools
import inspect
import re
import types
from typing import Any

__all__ = ["parameter_help"]

# One way to match each part (the spaces before a ``(type)`` belong to it), so a run of
# spaces costs linear time: two adjacent ``\s*`` made it quadratic.
_ENTRY = re.compile(
    r"(?P<name>\*{0,2}[A-Za-z_][A-Za-z0-9_]*)(?:\s*\([^)]*\))?\s*:(?P<text>.*)", re.DOTALL
)


def parameter_help(factory: Any) -> dict[str, str]:
    """Map each parameter named in ``factory``'s ``Args:`` section to its description.

    A class is read from its own docstring, then from ``__init__``'s if its own has no
    ``Args:`` section; a :func:`functools.partial` from what it wraps. Continuation lines
    are joined with spaces. A factory without a readable docstring gives ``{}``.
    """
    # Read where Python keeps each part, so that no property or metaclass of the plugin's
    # runs: this describes a plugin for show, outside its isolation.
    while issubclass(type(factory), functools.partial):  # a preset: its function documents it
        factory = functools.partial.__dict__["func"].__get__(factory)
    sources = [factory]
    if issubclass(type(factory), type):
        sources.append(type.__dict__["__dict__"].__get__(factory, type).get("__init__"))
    for source in sources:
        doc = _own_doc(source)
        found = _args_section(doc) if doc is not None else {}
        if found:
            return found
    return {}


def _own_doc(source: object) -> str | None:
    """``source``'s docstring as :func:`inspect.getdoc` finds it, read from the dicts of a
    class and its bases (not ``object``'s) or a function's slot; None for any other object,
    or a docstring that is no plain text."""
    if issubclass(type(source), type):
        for each in type.__dict__["__mro__"].__get__(source, type):
            if each is object:
                break
            doc = type.__dict__["__dict__"].__get__(each, type).get("__doc__")
            if type(doc) is str:
                return inspect.cleandoc(doc)
        return None
    if type(source) is types.FunctionType:
        doc = types.FunctionType.__dict__["__doc__"].__get__(source)
        return inspect.cleandoc(doc) if type(doc) is str else None
    return None


def _args_section(doc: str) -> dict[str, str]:
    lines = doc.expandtabs().splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Args:")
    except StopIteration:
        return {}
    header_indent = _indent(lines[start])
    entry_indent: int | None = None
    found: dict[str, str] = {}
    current: str | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break  # the next section, or the end of this one
        if entry_indent is None:
            entry_indent = indent
        if indent == entry_indent:
            match = _ENTRY.fullmatch(line.strip())
            if match is None:
                current = None
                continue
            current = match["name"].lstrip("*")
            found[current] = match["text"].strip()
        elif current is not None:
            found[current] = f"{found[current]} {line.strip()}".strip()
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
