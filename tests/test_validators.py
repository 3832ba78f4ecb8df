"""The shared attrs validators word their errors as every parameter error does."""

from __future__ import annotations

import math

import attrs
import pytest

from agentdescent_sampling import SOLVED
from agentdescent_sampling.validators import number_in, seed_number, solved_threshold


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


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("0.5", "got str: write the number without quotes; try 0.2"),
        ("1e-1", "got str: write the number without quotes (in YAML, as 0.1: YAML 1.1 reads "
         "1e-1 as text); try 0.2"),
        # PyYAML reads 2.0e3 as text too: the form told must have a signed exponent, or none.
        ("2.0e3", "got str: write the number without quotes (in YAML, as 2000.0: YAML 1.1 "
         "reads 2.0e3 as text); try 0.2"),
        ("1e20", "got str: write the number without quotes (in YAML, as 1.0e+20: YAML 1.1 "
         "reads 1e20 as text); try 0.2"),
        ("2.0e+3", "got str: write the number without quotes; try 0.2"),  # YAML's own form
        ("fast", "got str; try 0.2"),
        ("\uff10.\uff12", "got str: write it in ASCII digits; try 0.2"),  # full-width 0.2
        ("\uff11e-1", "got str: write it in ASCII digits; try 0.2"),  # no full-width YAML form
        ("0.2\u00a0", "got str: write the number without quotes; try 0.2"),  # a no-break space
        # A spec string reads 1_000 as text (its numbers are digits only), with no quotes to drop.
        ("1_000", "got str: write the number without '_' or quotes, as 1000; try 0.2"),
        # TOML and YAML read 0x10 as 16, a spec string as text; an infinity was told "got str".
        ("0x10", "got str: write the number in decimal, as 16; try 0.2"),
        ("0b11", "got str: write the number in decimal, as 3; try 0.2"),
        ("inf", "got str: inf is no finite number; try 0.2"),
        ("NaN", "got str: NaN is no finite number; try 0.2"),
    ],
)  # fmt: skip
def test_a_number_given_as_a_string_is_told_to_drop_the_quotes(value: str, said: str) -> None:
    from agentdescent_sampling import DifficultyWeighted

    with pytest.raises(TypeError) as caught:
        DifficultyWeighted(c=value)  # type: ignore[arg-type]
    assert str(caught.value).endswith(said)


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"graded": "true"}, "got str: write true without quotes (True in Python); "),
        ({"graded": " False"}, "got str: write false without quotes (False in Python); "),
        ({"noise": "none"}, "got str: a text, not None; leave noise out for its default; "),
        ({"noise": "null"}, "got str: a text, not None; leave noise out for its default; "),
    ],
)
def test_a_boolean_or_none_given_as_a_text_is_told_what_to_write(
    params: dict[str, str], said: str
) -> None:
    from agentdescent_sampling import InformativeBand

    with pytest.raises(TypeError) as caught:
        InformativeBand(**params)  # type: ignore[arg-type]
    assert said in str(caught.value)


def test_a_numpy_scalar_is_named_by_its_module_and_told_the_python_type_to_give() -> None:
    numpy = pytest.importorskip("numpy", reason="numpy comes with the plot extra (matplotlib)")
    from agentdescent_sampling import DifficultyWeighted, InformativeBand

    int64, bool_ = numpy.int64, type(numpy.True_)  # numpy.bool in NumPy 2, bool_ in NumPy 1
    told = [
        ("got numpy.int64: give a Python int, int(value)", InformativeBand, {"window": int64(7)}),
        ("got numpy.int64: give a Python int, int(value)", Seeded, {"seed": int64(3)}),
        ("got numpy.float32: give a Python float, float(value)", DifficultyWeighted,
         {"c": numpy.float32(0.1)}),
        (f"got numpy.{bool_.__name__}: give a Python bool, bool(value)", DifficultyWeighted,
         {"spread_in_flight": numpy.True_}),
        # No conversion keeps 2.5 whole, or a complex number real: no advice.
        ("got numpy.float64; try 5", InformativeBand, {"window": numpy.float64(2.5)}),
        ("got numpy.complex128; the engine's", InformativeBand,
         {"pass_threshold": numpy.complex128(1)}),
    ]  # fmt: skip
    for said, build, params in told:
        with pytest.raises(TypeError) as caught:
            build(**params)
        assert said in str(caught.value)


@attrs.define
class Seeded:
    """A seed as the plugins declare one, by :func:`seed_number`."""

    seed: int = attrs.field(validator=seed_number("; for example seed=0"))


@pytest.mark.parametrize("seed", [-1, 2**53 + 1, 10**5000], ids=["negative", "past-2-53", "huge"])
def test_a_seed_that_would_pick_as_another_or_not_save_is_refused(seed: int) -> None:
    # random.seed(-1) picks as random.seed(1); past 2**53 no state file holds the seed, and
    # past 4,300 digits neither repr() nor a state file could show it.
    expected = "expected a whole number from 0 to 9,007,199,254,740,992"
    with pytest.raises(ValueError, match=expected) as caught:
        Seeded(seed)
    message = str(caught.value)
    assert message.endswith("; for example seed=0")
    assert len(message) < 300


def test_the_seeds_at_both_ends_are_taken() -> None:
    assert [Seeded(0).seed, Seeded(2**53).seed] == [0, 2**53]


def test_none_for_a_parameter_without_a_default_is_not_told_to_leave_it_out() -> None:
    # "leave rate out for its default" was told of a parameter that has none.
    @attrs.define
    class Rated:
        rate: float = attrs.field(validator=number_in(0, 1))

    with pytest.raises(TypeError) as refused:
        Rated(None)  # type: ignore[arg-type]
    assert str(refused.value).endswith("got None (null in JSON and YAML)")
