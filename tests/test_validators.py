"""The shared attrs validators word their errors as every parameter error does."""

from __future__ import annotations

import math

import attrs
import pytest

from agentdescent_sampling import SOLVED
from agentdescent_sampling.validators import solved_threshold


@attrs.define
class Thresholded:
    pass_threshold: float = attrs.field(default=SOLVED, validator=solved_threshold())


@pytest.mark.parametrize("value", [1e-9, 0.5, SOLVED, 1.0, 1])
def test_solved_threshold_takes_a_number_in_zero_excluded_to_one(value: float) -> None:
    assert Thresholded(value).pass_threshold == value


@pytest.mark.parametrize(
    ("value", "error"),
    [(0.0, ValueError), (1.5, ValueError), (math.nan, ValueError), ("0.8", TypeError),
     (True, TypeError)],
)  # fmt: skip
def test_solved_threshold_names_the_value_and_the_engines_default(
    value: object, error: type[Exception]
) -> None:
    with pytest.raises(error) as raised:
        Thresholded(value)  # type: ignore[arg-type]
    message = str(raised.value)
    assert "pass_threshold" in message
    assert repr(value) in message or str(value) in message
    assert f"the engine's default is {SOLVED}" in message
