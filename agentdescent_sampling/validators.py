"""attrs validators for sampler parameters, shared by the built-ins and open to plugins
(which import them from :mod:`agentdescent_sampling.plugin`).

Each error names the class, the parameter and the value, says what was expected and,
given a ``hint``, what to try: ``DifficultyWeighted(c=inf): expected a finite number in
[0, 1e+06]; try 0.2``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import attrs

from .protocol import MAX_COUNT, SOLVED, short_repr

__all__ = [
    "boolean",
    "number_in",
    "seed_number",
    "solved_if_none",
    "solved_threshold",
    "whole_number_in",
]

#: What each function here returns: an attrs validator, called as ``validate(instance,
#: attribute, value)`` when a sampler is built, raising ``TypeError`` or ``ValueError``.
Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def number_in(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    hint: str = "",
) -> Validator:
    """An attrs validator: the value is a finite real number inside the given bounds.

    Args:
        low: smallest allowed value, or ``None`` for no lower bound.
        high: largest allowed value (inclusive), or ``None`` for no upper bound.
        low_open: exclude ``low`` itself (``0 < x`` rather than ``0 <= x``).
        hint: what to try instead, appended to the error message (``"; try 0.2"``).

    The validator raises ``TypeError`` for a non-number (``bool`` included) and
    ``ValueError`` for a number out of range, NaN, an infinity, or an int too large
    to be a float (a 400-digit ``c`` would overflow at the first pick).
    """
    expected = f"a finite number{_describe(low, high, low_open)}"

    def validate(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(_message(instance, attribute, value, expected, hint, typed=True))
        try:
            real = float(value)
        except OverflowError:
            real = math.inf
        below = low is not None and (real <= low if low_open else real < low)
        above = high is not None and real > high
        if below or above or not math.isfinite(real):
            raise ValueError(_message(instance, attribute, value, expected, hint))

    return validate


def solved_if_none(value: float | None) -> float:
    """An attrs converter for a ``pass_threshold``: ``None`` is the engine's
    :data:`~agentdescent_sampling.protocol.SOLVED`, as ``DifficultyWeighted(pass_threshold=None)``
    is in agentdescent; anything else is left for :func:`solved_threshold` to check."""
    return SOLVED if value is None else value


def solved_threshold() -> Validator:
    """An attrs validator for a ``pass_threshold`` parameter: a finite number in (0, 1].

    The same check as ``number_in(0.0, 1.0, low_open=True)``; its error also names the
    engine's default (:data:`~agentdescent_sampling.protocol.SOLVED`) as what to try.
    """
    return number_in(0.0, 1.0, low_open=True, hint=f"; the engine's default is {SOLVED}")


def whole_number_in(low: int, high: int, *, hint: str = "") -> Validator:
    """An attrs validator: the value is an ``int`` (not a ``bool``) in ``[low, high]``.

    Args:
        low: smallest allowed value.
        high: largest allowed value.
        hint: what to try instead, appended to the error message.

    The validator raises ``TypeError`` for a non-int and ``ValueError`` for an int
    out of range.
    """
    expected = f"a whole number from {low:,} to {high:,}"

    def validate(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(_message(instance, attribute, value, expected, hint, typed=True))
        if not low <= value <= high:
            raise ValueError(_message(instance, attribute, value, expected, hint))

    return validate


def seed_number(hint: str = "") -> Validator:
    """An attrs validator for a seed: an ``int`` (not a ``bool``) from 0 to
    :data:`~agentdescent_sampling.protocol.MAX_COUNT` (2**53).

    Past 2**53 a state file cannot hold the seed (nor, past 4,300 digits, can ``repr()``);
    below 0, Python's ``random`` takes ``-n`` as ``n``, so seeds ``-1`` and ``1`` would pick
    alike. The same check as ``whole_number_in(0, 2**53, hint=hint)``.

    Args:
        hint: what to try instead, appended to the error message (``"; for example seed=0"``).
    """
    return whole_number_in(0, MAX_COUNT, hint=hint)


def boolean(hint: str = "") -> Validator:
    """An attrs validator: the value is ``True`` or ``False`` (not 1, 0 or ``"true"``).

    Args:
        hint: what to try instead, appended to the error message.

    The validator raises ``TypeError`` for anything else.
    """

    def validate(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, bool):
            raise TypeError(_message(instance, attribute, value, "true or false", hint, True))

    return validate


def _message(
    instance: object,
    attribute: attrs.Attribute[Any],
    value: object,
    expected: str,
    hint: str,
    typed: bool = False,
) -> str:
    where = f"{type(instance).__name__}({attribute.alias}={short_repr(value)})"
    got = f", got {_type_name(value)}" if typed else ""
    if typed and isinstance(value, str):
        word = value.strip().lower()
        if expected == "true or false" and word in ("true", "false"):
            got += f": write {word} without quotes ({word.title()} in Python)"
        elif word in ("none", "null"):
            got += f": a text, not None; leave {attribute.alias} out for its default"
    elif typed and value is None:  # null in JSON; in YAML, null or a key with no value
        got = ", got None (null in JSON and YAML)"
        if attribute.default is not attrs.NOTHING:
            got += f": leave {attribute.alias} out for its default"
    elif typed and type(value).__module__ != "builtins":
        got += _converted(value, expected)
    text = value if typed and "number" in expected and isinstance(value, str) else ""
    based, number = _based(text), _as_float(text)
    if based is not None:  # TOML and YAML read 0x10; a spec string does not
        got += f": write the number in decimal, as {based}"
    elif number is not None and not math.isfinite(number):
        got += f": {text.strip()} is no finite number"
    if number is not None and math.isfinite(number):
        # float() reads other scripts' digits (full-width U+FF10 to U+FF19) too; no config does.
        # Whitespace around it (a no-break space, which float() strips too) is not a digit.
        written = text.strip()
        plain = written.isascii()
        if plain and "_" in written:  # Python, TOML and YAML read 1_000; a spec string does not
            got += f": write the number without '_' or quotes, as {written.replace('_', '')}"
        else:
            got += ": write the number without quotes" if plain else ": write it in ASCII digits"
        # YAML 1.1 reads 1e-1 and 2.0e3 as strings, 1.0e-1 and 2.0e+3 as numbers.
        if plain and "e" in written.lower():
            from .spec_file import yaml_number_hint  # an error's path only

            if yaml := yaml_number_hint(written.replace("_", "")):
                got += f" (in YAML, as {yaml}: YAML 1.1 reads {written} as text)"
    return f"{where}: expected {expected}{got}{hint}"


def _converted(value: object, expected: str) -> str:
    """For a value of a type not built in (a NumPy scalar from a sweep's table: numpy.int64
    is no int, numpy.bool no bool), the conversion that gives what ``expected`` names
    without changing the value, if one does."""
    if expected == "true or false":
        kind = "bool" if type(value).__name__ in ("bool", "bool_") else None
    elif "whole" in expected:
        kind = "int" if isinstance(value, numbers.Integral) else None
    else:
        kind = "float" if isinstance(value, numbers.Real) else None
    return f": give a Python {kind}, {kind}(value)" if kind else ""


def _type_name(value: object) -> str:
    """The name of ``value``'s type, with its module unless built in (``numpy.bool``, whose
    own name is ``bool``)."""
    kind = type(value)
    return (
        kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    )


def _based(text: str) -> int | None:
    """``text`` as a whole number if it is a short one in hexadecimal, octal or binary
    (``0x10``, ``0o17``, ``0b11``), else ``None``."""
    text = text.strip()
    if len(text) > 40 or not text.isascii() or text[1:2].lower() not in ("x", "o", "b"):
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def _as_float(text: str) -> float | None:
    """``text`` (short) read as a float, infinities and NaN included, else ``None``."""
    try:
        return float(text) if text and len(text) <= 40 else None
    except ValueError:
        return None


def _describe(low: float | None, high: float | None, low_open: bool) -> str:
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low:g}, {high:g}]"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f" <= {high:g}"
    return ""
