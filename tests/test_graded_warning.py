"""Graded scores that never reach pass_threshold warn once, naming both thresholds."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdescent_sampling import (
    DifficultyWeighted,
    FixableFirst,
    GradedScoreWarning,
    InformativeBand,
    create,
)
from agentdescent_sampling.plugin import synchronized

THRESHOLD_SAMPLERS = [
    pytest.param(DifficultyWeighted, id="difficulty-weighted"),
    pytest.param(InformativeBand, id="informative-band"),
    pytest.param(FixableFirst, id="fixable-first"),
]


def record_many(sampler: object, score: Callable[[int], float]) -> None:
    for i in range(60):
        sampler.record(f"t{i % 5}", score(i))  # type: ignore[attr-defined]


@pytest.mark.parametrize("factory", THRESHOLD_SAMPLERS)
def test_graded_scores_that_never_pass_warn_once_naming_both_thresholds(
    factory: Callable[..., object],
) -> None:
    with pytest.warns(GradedScoreWarning, match=r"pass_threshold=0\.999.*solved_threshold") as got:
        record_many(factory(), lambda i: 0.7)
    assert len(got) == 1


@pytest.mark.parametrize(
    ("sampler", "score"),
    [
        pytest.param(DifficultyWeighted(), lambda i: float(i % 2), id="binary"),
        pytest.param(DifficultyWeighted(pass_threshold=0.6), lambda i: 0.7, id="matching"),
        pytest.param(InformativeBand(pass_threshold=0.6), lambda i: 0.7, id="matching-band"),
        pytest.param(InformativeBand(graded=True), lambda i: 0.7, id="graded-mode"),
    ],
)
def test_binary_scores_matching_thresholds_and_graded_mode_do_not_warn(
    sampler: object, score: Callable[[int], float]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        record_many(sampler, score)


@pytest.mark.parametrize("factory", THRESHOLD_SAMPLERS)
def test_where_warnings_are_errors_the_warning_raises_once_and_counts_nothing_then(
    factory: Callable[..., object],
) -> None:
    sampler = factory()
    with warnings.catch_warnings():
        warnings.simplefilter("error", GradedScoreWarning)
        with pytest.raises(GradedScoreWarning, match="20 of 20 recorded scores"):
            record_many(sampler, lambda i: 0.7)
        counted = sampler.stats()  # type: ignore[attr-defined]
        assert sum(trials for _, trials in counted.values()) == 19  # the 20th raised
        record_many(sampler, lambda i: 0.7)  # its retry, and every record after it, counts
    assert sum(trials for _, trials in sampler.stats().values()) == 79  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["difficulty-weighted", "informative-band", "fixable-first"])
def test_a_state_whose_records_warned_reopens_where_warnings_are_errors_warning_no_more(
    tmp_path: Path, name: str
) -> None:
    # The replay of its log warned again, and where warnings are errors (-W error, pytest's
    # filterwarnings = error) the state could not be reopened: a StateError.
    path = tmp_path / "state.sqlite"
    sampler = create(name, state=path)
    with pytest.warns(GradedScoreWarning):
        record_many(sampler, lambda i: 0.7)
    sampler.close()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reopened = create(name, state=path)
    try:
        assert sum(trials for _, trials in reopened.stats().values()) == 60
    finally:
        reopened.close()


@pytest.mark.parametrize("wrap", [lambda s: s, synchronized], ids=["plain", "synchronized"])
@pytest.mark.parametrize("factory", THRESHOLD_SAMPLERS)
def test_the_graded_warning_points_at_the_line_that_called_record(
    factory: Callable[..., object], wrap: Callable[[object], object]
) -> None:
    with pytest.warns(GradedScoreWarning) as got:
        line = record_graded(wrap(factory()))
    assert (got[0].filename, got[0].lineno) == (__file__, line)


def record_graded(sampler: object) -> int:
    """Record 20 graded scores; return the line of the ``record()`` call."""
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    for i in range(20):
        sampler.record(f"t{i % 5}", 0.7)  # type: ignore[attr-defined]
    return line
