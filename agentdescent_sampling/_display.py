"""Show text that a plugin, its metadata or an exception controls, safely.

Such text can hold terminal escape sequences (that retitle the window, move the cursor
or erase rows), bidirectional overrides, or megabytes. :func:`shown` makes it one
bounded, printable line; :func:`safe_repr` shows a value without running its code.
:func:`aligned` is the one table layout of the CLI, the bench and ``benchmarks/``.
"""

from __future__ import annotations

import shutil
import sys
import types
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from typing import Any

__all__ = [
    "MAX_SHOWN",
    "a_type",
    "aligned",
    "ascii_name",
    "column_widths",
    "escaped_name",
    "one_of",
    "plain_text",
    "plural",
    "safe_repr",
    "screen_table",
    "shown",
    "shown_data",
    "shown_lines",
]

#: The widest a non-final cell of :func:`screen_table` is shown (a sampler name's limit);
#: the last one takes what the terminal leaves.
_CELL = 64
#: The narrowest :func:`screen_table` cuts a table to.
_NARROWEST = 40
#: The width output that is not a terminal is cut to: none, in practice.
_UNCUT = 1 << 20
#: The longest text shown for one value.
MAX_SHOWN = 300
#: The most lines :func:`shown_lines` shows.
_MAX_LINES = 200
#: Unicode categories escaped: controls, formats (bidi overrides, zero-width characters),
#: line and paragraph separators, surrogates and unassigned code points.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: Values of these exact types are shown by ``repr``, which runs no plugin code.
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
#: This package's describing types, whose ``repr`` is its own; a type counts as one only if
#: it is what the module holds under its name.
_OWN_MODULE = "agentdescent_sampling.params"
#: The modules whose type hints :func:`_hint` writes out itself.
_HINT_MODULES = ("typing", "types")
#: The most parts of a type hint written out; a larger one is shown by its type.
_HINT_BUDGET = 200
_BRACKETS: dict[type, tuple[str, str]] = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    dict: ("{", "}"),
    set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
}


def plain_text(text: object) -> object:
    """``text`` as a plain ``str`` if it is one of any kind, read by ``str``'s own method (a
    subclass's methods are a plugin's code); anything else as it is."""
    return str.__str__(text) if isinstance(text, str) else text


def one_of(cls: type, kinds: Iterable[type]) -> bool:
    """Whether ``cls`` is one of ``kinds``, by identity: ``in`` compares with ``==`` (and a
    set or dict with ``hash``), which a plugin's metaclass can define to run its code."""
    return any(cls is each for each in kinds)


def _held_by(cls: type) -> str | None:
    """The module ``cls`` says it is of, if that module holds it under its name: a plugin's
    class can say ``__module__ = "typing"``, but is not what ``typing`` holds. Read where
    Python keeps them, so no metaclass computes them."""
    module = type.__dict__["__module__"].__get__(cls, type)
    if type(module) is not str or module not in (_OWN_MODULE, *_HINT_MODULES):
        return None
    held = getattr(sys.modules.get(module), _type_name(cls), None) is cls
    return module if held else None


def _hint(value: object, budget: list[int]) -> str | None:
    """A type hint of ``typing``'s or ``types``' written out as its ``repr`` writes the
    common ones (``dict[str, typing.Any] | None``, ``typing.Optional[int]``), read only
    where Python keeps its parts, so that no code of a class it names runs (its
    ``__module__``, ``__qualname__`` or ``__repr__``); None for any other value, or one of
    more than :data:`_HINT_BUDGET` parts."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    cls = type(value)
    if value is None or value is type(None):
        return "None"
    if value is Ellipsis:
        return "..."
    if one_of(cls, (str, int, float, bool, bytes)):  # Literal's values
        return _plain_repr(value)
    if issubclass(cls, type):
        return _class_text(value)  # type: ignore[arg-type]  # a class
    if one_of(cls, (list, tuple)):  # Callable's parameters
        parts = [_hint(part, budget) for part in value]  # type: ignore[attr-defined]
        return None if None in parts else f"[{', '.join(parts)}]"  # type: ignore[arg-type]
    if one_of(cls, (types.GenericAlias, types.UnionType)):
        args = _parts(cls.__dict__["__args__"].__get__(value), budget)
        if args is None:
            return None
        if cls is types.UnionType:
            return " | ".join(args)
        origin = _hint(cls.__dict__["__origin__"].__get__(value), budget)
        return None if origin is None else f"{origin}[{', '.join(args) or '()'}]"
    if _held_by(cls) != "typing":
        return None
    return _typing_hint(value, _type_name(cls), budget)


def _typing_hint(value: object, kind: str, budget: list[int]) -> str | None:
    """:func:`_hint` of a hint of ``typing``'s, of the class named ``kind``."""
    try:
        fields = object.__getattribute__(value, "__dict__")
    except AttributeError:  # a special form with slots: typing.Any on 3.10, NoReturn
        fields = {}
    if type(fields) is not dict:
        return None
    name = fields.get("_name")
    if kind in ("_SpecialForm", "_LiteralSpecialForm", "_SpecialGenericAlias"):
        try:
            name = object.__getattribute__(value, "_name")
        except AttributeError:
            return None
        return f"typing.{name}" if type(name) is str else None
    if kind in ("TypeVar", "ParamSpec"):
        label = fields.get("__name__")
        return f"~{label}" if type(label) is str else None
    if kind == "ForwardRef":  # its parts are slots
        try:
            arg = object.__getattribute__(value, "__forward_arg__")
        except AttributeError:
            return None
        return f"ForwardRef({arg!r})" if type(arg) is str else None
    origin, args = fields.get("__origin__"), _parts(fields.get("__args__", ()), budget)
    if args is None:  # not a tuple, or a part not written out
        return None
    if kind == "_UnionGenericAlias":
        if len(args) == 2 and "None" in args:
            return f"typing.Optional[{args[args[0] == 'None']}]"
        return f"typing.Union[{', '.join(args)}]"
    if kind == "_LiteralGenericAlias":
        return f"typing.Literal[{', '.join(args)}]"
    if kind == "_CallableGenericAlias" and args:
        *taken, returned = args
        given = "..." if taken == ["..."] else f"[{', '.join(taken)}]"
        return f"typing.Callable[{given}, {returned}]"
    if kind == "_AnnotatedAlias":
        shown_origin = _hint(origin, budget)
        metadata = _parts(fields.get("__metadata__", ()), budget)
        if shown_origin is None or metadata is None:
            return None
        return f"typing.Annotated[{', '.join([shown_origin, *metadata])}]"
    if kind == "_GenericAlias":
        head = f"typing.{name}" if type(name) is str else _hint(origin, budget)
        return None if head is None else f"{head}[{', '.join(args)}]"
    return None


def _parts(values: object, budget: list[int]) -> list[str] | None:
    """:func:`_hint` of each of a hint's ``values`` (a tuple), or None if one has none."""
    if type(values) is not tuple:
        return None
    parts = [_hint(each, budget) for each in values]
    return None if None in parts else parts  # type: ignore[return-value]


def _class_text(cls: type) -> str | None:
    """A class as typing writes one in a hint (``int``, ``typing.Any``, ``mypkg.Knob``), read
    from its own slots: its ``__module__`` and ``__qualname__`` may be any object."""
    module = type.__dict__["__module__"].__get__(cls, type)
    qualname = type.__dict__["__qualname__"].__get__(cls, type)
    if type(module) is not str or type(qualname) is not str:
        return None
    return qualname if module == "builtins" else f"{module}.{qualname}"


def _plain_repr(value: object) -> str | None:
    """``repr`` of a plain value of an exact built-in type; None past 4,300 digits."""
    try:
        return repr(value)
    except ValueError:
        return None


def a_type(value: object) -> str:
    """``value``'s type name with its article: ``an int``, ``a str``."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def ascii_name(name: object, limit: int = 60) -> str:
    """``name`` quoted as ``repr`` quotes it, every non-ASCII character escaped (``ascii()``),
    cut to ``limit``: for a name compared with another, where a Cyrillic a (U+0430) would pass
    for a Latin one. An ASCII name shows as ``repr`` shows it."""
    try:
        text = ascii(name)
    except Exception:  # noqa: BLE001  # a message must not fail on the value it reports
        text = f"<{_type_name(type(name))} that cannot be shown>"
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def escaped_name(name: str) -> str:
    """A sampler's, a distribution's or an entry point's name with every character past
    ASCII, and every control character, escaped: no valid one has any, and a look-alike (a
    Cyrillic o, U+043E, in a name copying ``round-robin``) would read as the name it copies.
    Unquoted, but for a name holding whitespace, which could pass for a table's columns."""
    return ascii(name) if any(char.isspace() for char in name) else escaped_label(name)


def escaped_label(label: str) -> str:
    """An entry point as written, ``name = module:attr``, escaped as :func:`escaped_name`
    escapes a name, and unquoted: its spaces are its own."""
    return label if label.isascii() and label.isprintable() else ascii(label)[1:-1]


def plural(count: int, noun: str) -> str:
    """``1 seed``, ``2 seeds``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def shown(text: object, limit: int = MAX_SHOWN) -> str:
    """``text`` as one printable line: control characters escaped, cut to ``limit``.

    ``text`` that is not a ``str`` (a plugin's description, say) is shown by
    :func:`safe_repr`, and a ``str`` subclass is read as plain text, never through
    its own methods.
    """
    raw = str.__str__(text) if issubclass(type(text), str) else safe_repr(text, limit)
    cut = raw[: limit + 1]
    escaped = "".join(_escaped(char) for char in cut)
    return escaped if len(escaped) <= limit else escaped[: limit - 3] + "..."


def shown_lines(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` with each of its first 200 lines :func:`shown`: for multi-line reports."""
    lines = str.__str__(text).split("\n", _MAX_LINES)
    more = f"\n... ({lines.pop().count(chr(10)) + 1} more lines)" if len(lines) > _MAX_LINES else ""
    return "\n".join(shown(line, limit) for line in lines) + more


def shown_data(data: Any) -> Any:
    """JSON-ready ``data`` with every string in it :func:`shown`, for ``--json`` output."""
    if isinstance(data, str):
        return shown(data)
    if isinstance(data, dict):
        return {shown(key): shown_data(value) for key, value in data.items()}
    if isinstance(data, list):
        return [shown_data(item) for item in data]
    return data


def safe_repr(value: object, limit: int = MAX_SHOWN, depth: int = 0) -> str:
    """``repr(value)`` for plain data, ``<TypeName object>`` for anything else.

    Describing a plugin must not run its code, and a plugin's ``__repr__`` is its code:
    it may raise, never return, or print. Plain data (numbers, text, and lists, tuples,
    sets and dicts of them, up to 8 levels deep) is shown by the built-in ``repr``; a
    value of this package's own describing types by theirs, and a type hint of ``typing``'s
    or ``types``' written out as its ``repr`` would write it (:func:`_hint`).
    """
    cls = type(value)
    if issubclass(cls, type):  # not isinstance: it reads __class__, which a plugin can define
        return _type_name(value)  # type: ignore[arg-type]  # value is a class here
    module = _held_by(cls)
    hint = _hint(value, [_HINT_BUDGET]) if module in _HINT_MODULES else None
    if hint is not None:
        text = hint
    elif one_of(cls, _PLAIN) or module == _OWN_MODULE:
        try:
            text = repr(value)
        except ValueError:  # an int of over 4,300 digits
            text = f"<{_type_name(cls)} too large to show>"
        except KeyboardInterrupt:
            raise
        # A type hint's repr reads the names of the classes it holds, which a plugin's
        # metaclass may compute: whatever that raises, SystemExit too, is shown by type.
        except BaseException:  # noqa: BLE001
            text = f"<{_type_name(cls)} object>"
    elif one_of(cls, _BRACKETS):
        text = "..." if depth >= 8 else _container_repr(value, limit, depth + 1)
    else:
        text = f"<{_type_name(cls)} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _container_repr(value: Any, limit: int, depth: int) -> str:
    """A built-in container shown item by item, stopping once ``limit`` is reached."""
    if type(value) is dict:
        items: Iterable[str] = (
            f"{safe_repr(key, limit, depth)}: {safe_repr(item, limit, depth)}"
            for key, item in dict.items(value)
        )
    else:
        items = (safe_repr(item, limit, depth) for item in value)
    parts: list[str] = []
    for item in items:
        parts.append(item)
        if sum(map(len, parts)) > limit:
            break
    if type(value) is set and not parts:
        return "set()"
    opening, closing = _BRACKETS[type(value)]
    comma = "," if type(value) is tuple and len(parts) == 1 else ""
    return f"{opening}{', '.join(parts)}{comma}{closing}"


def _type_name(cls: type) -> str:
    # Read through type's own slot: a metaclass can make cls.__name__ a property.
    name = type.__dict__["__name__"].__get__(cls, type)
    return str.__str__(name) if isinstance(name, str) else "?"


def _escaped(char: str) -> str:
    if char.isprintable() and unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def aligned(
    rows: Sequence[Sequence[str]],
    *,
    numbers: bool = False,
    width: int | None = None,
    left: Collection[int] | None = None,
) -> list[str]:
    """``rows`` aligned in columns, one line each, with no trailing spaces.

    Text columns are left-aligned two spaces apart. With ``numbers``, the first column
    (the label) is left-aligned and the others right-aligned, three spaces apart. With
    ``left``, the columns it names are left-aligned and the others right-aligned, two spaces
    apart (the artifact bench's tables). With ``width``, the first column is narrowed so
    that a row fits in ``width`` characters, and a first cell longer than that gets a line
    of its own above its row. The cells are printed as given: show text a plugin controls
    with :func:`shown` first.
    """
    gap = "   " if numbers else "  "
    lefts = set(range(1 if numbers else len(rows[0]))) if left is None else set(left) | {0}
    widths = column_widths(rows, numbers=numbers, width=width)
    lines = []
    for first, *rest in rows:
        if len(first) > widths[0]:
            lines.append(first)
            first = ""
        cells = [
            cell.ljust(size) if column in lefts else cell.rjust(size)
            for column, (cell, size) in enumerate(zip(rest, widths[1:], strict=True), 1)
        ]
        lines.append(gap.join([first.ljust(widths[0]), *cells]).rstrip())
    return lines


def column_widths(
    rows: Sequence[Sequence[str]], *, numbers: bool = False, width: int | None = None
) -> list[int]:
    """The width of each column of :func:`aligned` (which it also takes)."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    if width is not None:
        rest = sum((3 if numbers else 2) + size for size in widths[1:])
        widths[0] = min(widths[0], max(width - rest, len(rows[0][0])))
    return widths


def screen_table(rows: Sequence[Sequence[str]]) -> str:
    """``rows`` as :func:`aligned` text columns, each cell shown safely, each line fitting the
    terminal (when output goes to one: a file or a pipe gets whole lines, each cell bounded)."""
    columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else _UNCUT
    cells = [[shown(cell, _CELL) for cell in row[:-1]] + [shown(row[-1])] for row in rows]
    width = max(columns, _NARROWEST)
    return "\n".join(
        line if len(line) <= width else line[: width - 3] + "..." for line in aligned(cells)
    )
