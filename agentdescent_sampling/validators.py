"""attrs validators for sampler parameters, shared by the built-ins and open to plugins."""

from __future__ import annotations

from typing import Any

import attrs

from .protocol import short_repr

__all__ = ["number_in"]


def number_in(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    hint: str = "",
) -> Any:
    """An attrs validator: the value is a real number inside the given bounds.

    Args:
        low: smallest allowed value, or ``None`` for no lower bound.
        high: largest allowed value (inclusive), or ``None`` for no upper bound.
        low_open: exclude ``low`` itself (``0 < x`` rather than ``0 <= x``).
        hint: what to try instead, appended to the error message.

    The validator raises ``TypeError`` for a non-number (``bool`` included) and
    ``ValueError`` for a number out of range (NaN included); both messages name
    the class, the parameter, the value and the expected range.
    """
    expected = _describe(low, high, low_open)

    def validate(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        where = f"{type(instance).__name__}({attribute.alias}={short_repr(value)})"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{where}: expected a number {expected}, got {type(value).__name__}")
        below = low is not None and (value <= low if low_open else value < low)
        above = high is not None and value > high
        if below or above or value != value:  # value != value: NaN
            raise ValueError(f"{where}: expected a number {expected}{hint}")

    return validate


def _describe(low: float | None, high: float | None, low_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}]"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"<= {high:g}"
    return "(any finite value)"
