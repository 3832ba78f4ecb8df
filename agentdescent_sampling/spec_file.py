"""Read a sampler spec from a config file: a TOML, JSON or YAML table, by its key.

The table becomes a :class:`~agentdescent_sampling.spec.SamplerSpec` as a mapping does; what
the file gives and what it is parsed as (a YAML 1.1 number, a float past the largest, a key
written dotted) is checked here, each error naming the file and the key.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import re
import sys
from collections.abc import Callable, Mapping
from os import PathLike, fspath
from pathlib import Path
from typing import Any

import attrs

from .errors import InvalidSamplerConfig
from .protocol import short_repr
from .spec import (
    SamplerSpec,
    _first_dotted_key,
    _listed,
    _past_float,
    _sampler_table,
    closest_name,
    cut_read,
    parse_spec,
)

__all__ = ["spec_from_file"]
#: The longest ``key`` (a dotted table name) :func:`spec_from_file` takes.
_MAX_KEY = 200
#: How much of a file's path a message quotes.
_SHOWN_PATH = 200
#: A config file is a few kilobytes; this bound keeps a wrong path (a log, a disk image) cheap.
_MAX_FILE_BYTES = 1 << 20


#: The suffixes of a YAML config file.
_YAML = (".yaml", ".yml")


def _toml(text: str) -> dict[str, Any]:
    """Parse TOML, importing the parser only now: create() by name never needs it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # tomllib arrived in 3.11; tomli is the same parser, published for 3.10
        import tomli as tomllib
    from ._files import check_toml_nesting

    check_toml_nesting(text)  # before the parser, whose cost grows faster than a key's parts
    try:
        document: dict[str, Any] = tomllib.loads(text, parse_float=_config_float)
    except tomllib.TOMLDecodeError as error:
        twice = _TOML_TWICE.fullmatch(str(error))
        if twice is None:
            raise
        # The parser names the line alone; JSON and YAML name the key, and so does this.
        line = text.split("\n", int(twice["line"]))[int(twice["line"]) - 1]
        table = line.strip().startswith("[")
        written = line.strip() if table else line.partition("=")[0].strip()
        raise ValueError(
            f"the {'table' if table else 'key'} {short_repr(written, 80)} is given twice (at "
            f"line {twice['line']}); give each {'table' if table else 'key'} once"
        ) from None
    return document


#: tomllib's words for a key or a table given twice, and where.
_TOML_TWICE = re.compile(r"Cannot (?:overwrite a value|declare .*) \(at line (?P<line>\d+), .*\)")


def spec_from_file(path: str | PathLike[str], key: str | None = "task_sampler") -> SamplerSpec:
    """Read a spec stored under ``key`` in a TOML, JSON or YAML file.

    A ``path`` starting with ``~`` is under your home. The format follows the suffix:
    ``.json``, ``.yaml`` or ``.yml`` (which need the ``yaml`` extra, PyYAML), anything else
    TOML. ``key`` may be dotted
    (``"tool.agentdescent.task_sampler"``), or None for a file that holds the spec alone. The
    value under it is a table (``[task_sampler]`` with ``name = ...`` and parameters) or, but at
    a TOML file's top level, a spec string. The spec
    keeps where it was read (``source``), so that ``create()`` names the file when the
    name, a parameter or a value in it is wrong, keeping its error's class. A key pointed at
    the wrong entry may have read a secret, so a message quotes a text read from the file
    only up to its first 20 characters if it has a name's form, whole if it is a number
    written as text (or reads as one meant: ``1,5``, ``0o10``), and not at all otherwise
    (``<43 characters, not shown>``); so is each piece the spec string form cuts from it at
    ``:``, ``,`` and ``=``, and any piece after one not shown whole, which may be the rest of
    a secret that holds a comma.

    Raises:
        InvalidSamplerConfig: the file can't be read or parsed, is not a regular file,
            is over 1 MiB or nested over 32 levels deep, the key is missing, the spec
            under it is malformed, or (YAML) it holds a number YAML 1.1 and YAML 1.2 read
            apart, such as ``010`` or ``1:30``.
        TypeError: ``path`` is not a file path (a ``str`` or a ``pathlib.Path``).
    """
    return _spec_from_file(path, key, _python_key)


#: How far a key read from a file is shown in advice to read it with: whole for any key a
#: config nests, yet bounded (a table's key may be anything, a secret too).
_SHOWN_KEY = 200


def _python_key(key: str | None) -> str:
    """``key=...``, as a call of :func:`spec_from_file` gives it."""
    return f"key={short_repr(key, _SHOWN_KEY)}"


def _spec_from_file(
    path: str | PathLike[str], key: str | None, key_text: Callable[[str | None], str]
) -> SamplerSpec:
    """:func:`spec_from_file`, its advice giving a key as ``key_text`` writes it (a run
    spec's ref writes ``"key": null`` where a Python call writes ``key=None``)."""
    # Imported here: create() by name reads no file.
    from ._files import (
        CONFIG_MARKS,
        MAX_CONFIG_VALUES,
        YAML_MARKS,
        checked_path,
        load_document,
        reason_of,
        refuse_no_path,
    )

    if key is not None and (not isinstance(key, str) or not 0 < len(key) <= _MAX_KEY):
        raise InvalidSamplerConfig(
            f"key must be the name of a table, such as 'task_sampler' or "
            f"'tool.agentdescent.task_sampler' (at most {_MAX_KEY} characters), or None for a "
            f"file that holds the spec alone; got {type(key).__name__} {short_repr(key)}"
        )
    if key is not None and "" in key.split("."):
        raise InvalidSamplerConfig(
            f"key {short_repr(key)} has an empty part (two dots in a row, or a dot at an end); "
            f"write each table's name between single dots, such as "
            f"'tool.agentdescent.task_sampler'"
        )
    refuse_no_path(path, "spec_from_file()")
    if not fspath(path):
        raise InvalidSamplerConfig(
            "spec_from_file() was given an empty path; give the config file's, such as 'run.toml'"
        )
    try:
        file = checked_path(path)  # ~ is your home, as in create(state=...)
    except ValueError as error:
        shown = short_repr(fspath(path), _SHOWN_PATH)
        raise InvalidSamplerConfig(f"cannot read a sampler spec from {shown}: {error}") from None
    where = short_repr(str(file), _SHOWN_PATH)
    try:
        marks = YAML_MARKS if file.suffix.lower() in _YAML else CONFIG_MARKS
        document = load_document(
            file, _parser(file), _MAX_FILE_BYTES, max_values=MAX_CONFIG_VALUES, marks=marks
        )
    except (OSError, UnicodeDecodeError, ValueError) as error:
        # ValueError covers JSONDecodeError, TOMLDecodeError and the YAML errors we convert;
        # an OSError's strerror, since its text repeats the path, which may be huge.
        reason = reason_of(error)
        raise InvalidSamplerConfig(
            f"cannot read a sampler spec from {where}: {reason}; expected "
            f"{_expected_file(file, key)}"
        ) from error
    value = document if key is None else _entry(document, key, file, where, key_text)
    if isinstance(value, Mapping) and "name" not in value:
        if key is None:
            table = (
                "task_sampler"
                if "task_sampler" in value
                else _dotted_key_ending(document, "task_sampler") or _sampler_table(value, "")
            )
            looked = f"at its top level, read with {key_text(None)}"
        else:
            inner = _sampler_table(value, "")
            table = None if inner is None else f"{key}.{inner}"
            looked = f"under {key!r}"
        if table is not None:
            raise InvalidSamplerConfig(
                f"{where} holds no sampler's table {looked} (found keys: {_listed(value)}); "
                f"read the one it has: {key_text(table)}"
            )
    _refuse_misread(value, where, key or "")
    source = where if key is None else f"{where} under {key!r}"
    try:
        return attrs.evolve(parse_spec(value), source=source)
    except InvalidSamplerConfig as error:
        raise InvalidSamplerConfig(f"in {source}: {cut_read(str(error), value)}") from None


def _entry(
    document: Any, key: str, file: Path, where: str, key_text: Callable[[str | None], str]
) -> Any:
    """The value under the dotted ``key`` in ``document``, read from ``file`` (``where``),
    advice giving a key as ``key_text`` writes it.

    Raises:
        InvalidSamplerConfig: the key is missing: naming the keys found, what it is probably
            misspelt as or the key that reads the table found, and the entry to add.
    """
    value = document
    parts = key.split(".")
    for depth, part in enumerate(parts):
        if not isinstance(value, Mapping) or part not in value:
            holder = repr(".".join(parts[:depth])) if depth else "the file"
            found = (
                f"found keys: {_listed(value)}"
                if isinstance(value, Mapping)
                else f"{holder} holds {_a_kind(value)}, not a table"
            )
            meant = _meant_key(value, part) if isinstance(value, Mapping) else None
            if meant is not None and "." in meant:  # no dotted key can name it
                raise InvalidSamplerConfig(
                    f"{where} has no {key!r} entry (missing {part!r}; {found}); if "
                    f"{short_repr(meant)} is the table meant, rename it {short_repr(part)}: no "
                    f"key reads a table whose name holds a dot"
                )
            if meant is not None:
                spelt = ".".join([*parts[:depth], meant, *parts[depth + 1 :]])
                # Renaming the file's table is offered for the documented keys alone: a key of
                # the caller's own is the likelier slip.
                rename = f" or rename it {short_repr(part)}" if key in _DOCUMENTED_KEYS else ""
                raise InvalidSamplerConfig(
                    f"{where} has no {key!r} entry (missing {part!r}; {found}); if "
                    f"{short_repr(meant)} is the table meant, read it with {key_text(spelt)}"
                    f"{rename}"
                )
            elsewhere = _dotted_key_ending(document, key) or _sampler_table(document, key)
            read = (
                f"read the one it has: {key_text(elsewhere)}"
                if elsewhere is not None
                else "give the key of the table to read (key)"
            )
            if isinstance(value, Mapping) and isinstance(value.get("name"), str):
                alone = ".".join(parts[:depth]) if depth else None
                if elsewhere in (None, alone):  # no other table to read: that one, then
                    raise InvalidSamplerConfig(
                        f"{where} has no {key!r} entry (missing {part!r}; {found}); {holder} "
                        f"holds a spec: read it with {key_text(alone)}"
                    )
                fix = f"if {holder} holds the spec alone, read it with {key_text(alone)}"
            else:
                fix = f"add {_example_entry(file, key)}"
            raise InvalidSamplerConfig(
                f"{where} has no {key!r} entry (missing {part!r}; {found}); {fix}, or {read}"
            )
        value = value[part]
    return value


#: The keys the docs give a sampler's table: a file's table spelt otherwise is the slip.
_DOCUMENTED_KEYS = ("task_sampler", "tool.agentdescent.task_sampler")


def _expected_file(file: Path, key: str | None) -> str:
    """What a config file of ``file``'s format should hold, for a message."""
    suffix = file.suffix.lower()
    if key is None:
        table = "a sampler's table, with its name and parameters"
        return table if suffix not in (".json", *_YAML) else f"{table}, or a spec string"
    if suffix == ".json":
        return f"a JSON object with a {key!r} entry"
    if suffix in _YAML:
        return f"a YAML mapping with a {key!r} entry"
    return f"a TOML file (or a .json or .yaml file) with a [{key}] table"


def _dotted_key_ending(document: Any, key: str) -> str | None:
    """The first dotted key other than ``key`` under which ``document`` holds an entry named
    as ``key``'s last part: where a table nested one level more than asked is."""
    last = key.rsplit(".", 1)[-1]
    return _first_dotted_key(document, lambda name, _: name == last, key)


def _example_entry(file: Path, key: str) -> str:
    """An entry under ``key`` selecting fixable-first, written in ``file``'s format."""
    suffix = file.suffix.lower()
    nested = ", each part of the dotted key a level of its own" if "." in key else ""
    # A part that is not a bare key is quoted, with JSON's escapes (TOML and YAML read them
    # too), so that a control character in it cannot reach the terminal.
    written = ".".join(
        p if re.fullmatch(r"[A-Za-z0-9_-]+", p) else json.dumps(p) for p in key.split(".")
    )
    if suffix == ".json":
        return f'{json.dumps(key)}: {{"name": "fixable-first"}}{nested}'
    if suffix in _YAML:
        return f"{written}: {{name: fixable-first}}{nested}"
    return f'a [{written}] table with name = "fixable-first"'


def _meant_key(table: Mapping[Any, Any], part: str) -> str | None:
    """The key of ``table`` that ``part`` was probably written as (``task-sampler``,
    ``TaskSampler``, ``tasksampler``), among its first 64; None if none is near."""
    keys = [k for k in itertools.islice(table, 64) if isinstance(k, str) and len(k) <= _MAX_KEY]
    return closest_name(part, keys, cutoff=0.8)


def _parser(file: Path) -> Callable[[str], Any]:
    from ._files import strict_json

    suffix = file.suffix.lower()
    if suffix == ".json":
        return functools.partial(strict_json, parse_float=_config_float)
    if suffix in _YAML:
        return _yaml_parser(file)
    return _toml


def _yaml_parser(file: Path) -> Callable[[str], Any]:
    from ._files import MAX_DEPTH, too_deep, unique_keys

    try:
        import yaml  # the optional 'yaml' extra
    except ImportError:
        raise InvalidSamplerConfig(
            f"{str(file)!r} is a YAML file, and reading YAML needs PyYAML: install it with "
            f"python -m pip install '.[yaml]' in a clone of agentdescent-sampling (or "
            f"python -m pip install pyyaml), or write the config as TOML or JSON"
        ) from None

    class Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type hints
        """The safe loader (plain data only), refusing aliases: a config needs none, and
        a few nested aliases can expand to billions of nodes."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise ValueError("YAML aliases (*name) are not supported in a sampler config")
            return super().compose_node(parent, index)

        def fetch_flow_collection_start(self, token_class: Any) -> None:
            # The scanner's cost grows with the square of the flow depth ("[{" * 2000 took
            # 35 s), so depth is refused as it is met, long before the composer would.
            if self.flow_level >= MAX_DEPTH:
                raise ValueError(too_deep())
            super().fetch_flow_collection_start(token_class)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            # PyYAML keeps the last of two equal keys; TOML and JSON configs refuse them.
            keys = [self.construct_object(key, deep=True) for key, _ in node.value]
            with contextlib.suppress(TypeError):  # an unhashable key: PyYAML's own error follows
                unique_keys([(key, None) for key in keys])
            return super().construct_mapping(node, deep)

        def construct_yaml_int(self, node: Any) -> Any:
            return _long_base_60(node) or _yaml_1_1_only(node, super().construct_yaml_int(node))

        def construct_yaml_float(self, node: Any) -> Any:
            return _long_base_60(node) or _yaml_1_1_only(node, super().construct_yaml_float(node))

        def construct_yaml_str(self, node: Any) -> Any:
            return _yaml_1_1_only(node, super().construct_yaml_str(node))

    for tag in ("int", "float", "str"):  # PyYAML's table holds the SafeLoader's own functions
        Loader.add_constructor(f"tag:yaml.org,2002:{tag}", getattr(Loader, f"construct_yaml_{tag}"))

    def parse(text: str) -> Any:
        try:
            return yaml.load(text, Loader=Loader)  # Loader is a SafeLoader: plain data only
        except yaml.MarkedYAMLError as error:
            raise ValueError(_yaml_reason(error)) from None
        except yaml.YAMLError as error:
            raise ValueError(str(error)) from None

    return parse


def _yaml_reason(error: Any) -> str:
    """What PyYAML says of a YAML error, on one line, with where it is by line and column but
    none of the file's text: its own message quotes the line, and a line of a wrong file (or
    of the next entry) may hold a secret."""
    said = [
        f"{words} at line {mark.line + 1}, column {mark.column + 1}" if mark else str(words)
        for words, mark in (
            (error.context, error.context_mark),
            (error.problem, error.problem_mark),
        )
        if words
    ]
    return "; ".join(said) or "it is not valid YAML"


class _Misread:
    """A value in a config file that its parser reads otherwise than it was meant, kept as
    written, so that a spec holding one is refused naming its key rather than given that
    reading without a word; neither a number nor a text, so that nothing takes it for one,
    shown and compared as its text. A plain class: an attrs class costs start-up time to
    define."""

    __slots__ = ("line", "read", "text")

    def __init__(self, text: str, read: object, line: int | None = None) -> None:
        self.text, self.read, self.line = text, read, line

    def __repr__(self) -> str:
        if len(self.text) <= _SHOWN:
            return self.text
        return f"{self.text[:_SHOWN]}... ({len(self.text):,} characters)"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


class _Yaml11Number(_Misread):
    """A plain YAML scalar that YAML 1.1, which PyYAML follows, reads otherwise than YAML 1.2,
    or than Python and TOML: ``010`` (octal, 8; 10 in YAML 1.2), ``1:30`` (base 60, 90; the
    text ``'1:30'`` in YAML 1.2), ``0o10`` (the text ``'0o10'``; octal 8 in YAML 1.2) and
    ``1__0`` (10; Python and TOML refuse it)."""

    __slots__ = ()


class _PastFloat(_Misread):
    """A number past the largest float (``1e400``), which every parser reads as infinity: an
    error would quote ``inf``, a value never written."""

    __slots__ = ()


def _config_float(text: str) -> float | _PastFloat:
    """A JSON or TOML float, or a :class:`_PastFloat` for one past the largest float."""
    value = float(text)
    return _PastFloat(text, value) if _past_float(text, value) else value


#: The most characters of a misread scalar a message quotes.
_SHOWN = 40


def _long_base_60(node: Any) -> _Yaml11Number | None:
    """A :class:`_Yaml11Number` for a base-60 scalar (``1:30``) too long to show, left unread:
    PyYAML reads one in time that grows with the square of its length (55 s at 1 MiB), and
    past 4,300 digits its number cannot be shown; None for any other scalar."""
    if ":" in node.value and len(node.value) > _SHOWN:
        return _Yaml11Number(node.value, None, node.start_mark.line + 1)
    return None


def _yaml_1_1_only(node: Any, read: Any) -> Any:
    """``read``, what PyYAML made of the scalar ``node``, unless YAML 1.2, or Python and TOML,
    read its text otherwise: then a :class:`_Yaml11Number`. Hex, binary and ``1_000`` are left
    as read: Python and TOML read them so too."""
    value = node.value
    line = node.start_mark.line + 1
    if isinstance(read, str):
        if node.style is not None:  # quoted, or a block of text: text in every version
            return read
        if _OCTAL_0O.fullmatch(value):  # text to YAML 1.1, octal to YAML 1.2
            return _Yaml11Number(value, read, line)
        if _YAML_1_2_FLOAT.fullmatch(value):
            # 2e3, 2.0e3, -.5 and 08 (no octal, with its 8): text to YAML 1.1, numbers to 1.2
            number = float(value)
            if _past_float(value, number):
                return _PastFloat(value, number, line)
            return _Yaml11Number(value, read, line)
        return read
    if _past_float(value, read):
        return _PastFloat(value, read, line)
    text = value.replace("_", "")
    octal = re.fullmatch(r"[-+]?0[0-7]+", text) is not None and int(text, 8) != int(text, 10)
    if octal or ":" in text or ("_" in value and not _python_number(value)):
        return _Yaml11Number(value, read, line)
    return read


#: YAML 1.2's octal, which YAML 1.1 reads as text.
_OCTAL_0O = re.compile(r"0o[0-7]+")


def _python_number(text: str) -> bool:
    """Whether Python reads ``text`` as an int or a float literal (underscores only between
    digits, as TOML has them too)."""
    for read in (functools.partial(int, base=0), float):
        try:
            read(text)
        except ValueError:
            continue
        return True
    return False


def _refuse_misread(value: Any, where: str, key: str) -> None:
    """Refuse a :class:`_Misread` in ``value``, read from ``where`` under ``key`` (``""``: at
    the file's top level), naming its key, its text and what to write instead.

    Raises:
        InvalidSamplerConfig: ``value``, or a list or table in it, holds one.
    """
    level: list[tuple[str, Any]] = [(key, value)]  # key "": the file's top level
    for _ in range(8):  # deeper than any parameter a sampler takes
        deeper: list[tuple[str, Any]] = []
        for path, item in level:
            if isinstance(item, _Misread):
                raise InvalidSamplerConfig(_misread_message(item, where, path))
            if isinstance(item, Mapping):
                for name, inner in itertools.islice(item.items(), 64):
                    inside = f"{path}.{name}" if path else str(name)
                    if isinstance(name, _Misread):  # a key: named as a key of its table
                        raise InvalidSamplerConfig(_misread_message(name, where, inside))
                    deeper.append((inside, inner))
            elif isinstance(item, list):
                deeper += [(f"{path}[{index}]", inner) for index, inner in enumerate(item[:64])]
        level = deeper[:256]  # a hostile file: a bounded walk


def _named(path: str) -> str:
    """A key's dotted ``path``, for a message: quoted, or "the file" for ``""``."""
    return short_repr(path, 120) if path else "the file"


def _misread_message(number: _Misread, where: str, path: str) -> str:
    """What is ambiguous about ``number`` at ``path`` (``""``: the whole file) in ``where``,
    and what to write."""
    text, read = number.text, number.read
    at = f" at line {number.line}" if number.line is not None else ""
    if isinstance(number, _PastFloat):
        return (
            f"in {where}: {_named(path)} is {text[:_SHOWN]}{at}, past the largest number a "
            f"float holds (about 1.8e308), which would be read as infinity; write a smaller one"
        )
    if len(text) > _SHOWN:  # no parameter takes a number so long: its readings would be too
        return (
            f"in {where}: {_named(path)} is {number!r}{at}, "
            f"which YAML 1.1 (PyYAML, which reads this file) reads otherwise than YAML 1.2, "
            f"Python and TOML do; write the number meant in decimal, or the text in quotes"
        )
    if isinstance(read, str) and _OCTAL_0O.fullmatch(text):
        octal = int(text, 0)
        readings = f"as the text {text!r}, and YAML 1.2 as octal {octal}"
        fix = f'write {octal} for the number, or "{text}" in quotes for the text'
    elif isinstance(read, str) and text.lstrip("+-").isdigit():  # 08
        readings = f"as the text {text!r}, and YAML 1.2 as the number {int(text)}"
        fix = f'write {int(text)} for the number, or "{text}" in quotes for the text'
    elif isinstance(read, str):
        as_float = _yaml_1_1_float(float(text))
        readings = f"as the text {text!r}, and YAML 1.2 as the number {as_float}"
        # 2e3, written without a point, may be a whole-number parameter's, which refuses 2000.0.
        whole = float(text).is_integer() and "." not in text
        shown = f"{int(float(text))} (or {as_float})" if whole else as_float
        fix = f'write {shown} for the number, or "{text}" in quotes for the text'
    elif ":" in text:
        readings = f"as {read!r}, in base 60 as a time, and YAML 1.2 as the text {text!r}"
        fix = f'write {read!r} for the number, or "{text}" in quotes for the text'
    elif not _python_number(text):
        readings = f"as {read!r}, which Python and TOML refuse (an underscore goes between digits)"
        fix = f"write {read!r}"
    else:
        decimal = int(text.replace("_", ""), 10)
        readings = f"as octal {read}, and YAML 1.2 as {decimal}"
        fix = f"write {decimal}, or {read} if octal was meant"
    return (
        f"in {where}: {_named(path)} is {text}{at}, which YAML 1.1 (PyYAML, which "
        f"reads this file) reads {readings}; {fix}"
    )


def _a_kind(value: object) -> str:
    """What a config document holds in place of a table, in words: ``a list``, ``a number``,
    ``nothing`` (null), as written (``0o10``) or by its type (``a date``)."""
    if value is None or isinstance(value, _Misread):
        return "nothing" if value is None else repr(value)
    kinds = ((list, "a list"), (bool, "a boolean"), ((int, float), "a number"), (str, "a text"))
    from ._display import a_type  # only on this error path

    return next((kind for types, kind in kinds if isinstance(value, types)), a_type(value))


#: YAML 1.2's (core schema) float, and YAML 1.1's (PyYAML's), which needs a digit before the
#: dot if signed, a dot, and a sign on any exponent (``2.0e+3``; ``2e3`` is text to it).
_YAML_1_2_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_YAML_1_1_FLOAT = re.compile(r"([-+]?[0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?")


def _yaml_1_1_float(number: float) -> str:
    """``number`` as YAML 1.1 reads it as a float: with a dot and a signed exponent
    (``1e-05`` is text to it; ``1.0e-05`` a number)."""
    mantissa, e, exponent = repr(number).partition("e")
    if not e:
        return mantissa
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent if exponent[0] in '+-' else '+' + exponent}"


def yaml_number_hint(written: str) -> str:
    """For the text of a number that YAML 1.1 reads as text (``1e-1``), the form it reads as
    that number (``0.1``); ``""`` when it reads ``written`` as a number already."""
    if _YAML_1_1_FLOAT.fullmatch(written) or not _YAML_1_2_FLOAT.fullmatch(written):
        return ""
    return _yaml_1_1_float(float(written))
