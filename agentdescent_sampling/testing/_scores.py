"""The bad-scores check: a score ``record()`` refuses changes nothing, and the note of the
bad scores it takes."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import attrs

from .._display import safe_repr
from ..loading import describe
from ._calls import _SHARD, _member, _scripted_picks, _show
from ._report import _NOT_APPLICABLE, Factory, Finding, Violation
from ._state import _difference

_BAD_SCORES: tuple[tuple[object, type[Exception]], ...] = (
    (math.nan, ValueError),
    (math.inf, ValueError),
    (-0.5, ValueError),
    (1.5, ValueError),
    ("0.5", TypeError),
    (None, TypeError),
)

#: The picks and records the bad-scores check makes before each bad score, and after it.
_BAD_SCORE_ROUNDS = 12


def _check_bad_scores(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    """A score ``record()`` refuses changes nothing the sampler shows: its ``stats()``, its
    ``state_dict()``, or, where the same records give the same picks, the picks that follow.
    Scores it takes are the notes' business (advice: the engine never passes one)."""
    changes: list[tuple[object, str]] = []
    observed = False
    for score, _ in _BAD_SCORES:
        trio = [factory(**params) for _ in range(3)]  # one given the bad score, two twins
        try:
            task = _member(_set_up(trio), _SHARD)
        except Exception:  # noqa: BLE001  # the checks of picks and records report it
            yield _NOT_APPLICABLE
            return
        sampler = trio[0]
        before = _observed(sampler)
        try:
            sampler.record(task, score)
        except Exception as error:  # noqa: BLE001  # refused, as it should be, whatever the type
            refused = f"record({task!r}, {score!r}) raised {type(error).__name__}"
        else:
            continue  # taken: the notes say so
        changed = _changed(before, _observed(sampler))
        if not changed:
            try:
                after = [_scripted_picks(each, _BAD_SCORE_ROUNDS + 1, 2 * _BAD_SCORE_ROUNDS)
                         for each in trio]  # fmt: skip
            except Exception:  # noqa: BLE001  # the other checks report it
                after = [[], [], []]
            if after[1] == after[2] and after[1]:  # picks that can show a change
                observed = True
                if after[0] != after[1]:
                    changed = (
                        f"the picks that followed were {_show(after[0][:6])}, and "
                        f"{_show(after[1][:6])} on an instance that made the same picks and "
                        f"records without it"
                    )
        observed = observed or bool(before)
        if changed:
            changes.append((score, f"{refused}, yet {changed}"))
    if not observed:  # it took every bad score, or nothing it shows could tell
        yield _NOT_APPLICABLE
        return
    if changes:
        (_, first), more = changes[0], [safe_repr(score) for score, _ in changes[1:]]
        also = f"; so did {', '.join(more)}" if more else ""
        yield Violation(
            "bad-scores",
            f"after {_BAD_SCORE_ROUNDS} picks and records, {first}{also}. A score record() "
            f"refuses must change nothing: check it before any update "
            f"(agentdescent_sampling.plugin.check_score(task_id, score) returns it as a float, or "
            f"raises)",
        )


def _set_up(samplers: list[Any]) -> object:
    """Give each of ``samplers`` the same :data:`_BAD_SCORE_ROUNDS` picks and records, then
    one more pick, whose result for the first is returned."""
    for sampler in samplers:
        _scripted_picks(sampler, 0, _BAD_SCORE_ROUNDS)
    picks = [sampler.pick(list(_SHARD), _BAD_SCORE_ROUNDS) for sampler in samplers]  # each
    return picks[0]


@attrs.frozen
class _Raised:
    """What a method that raised, read by :func:`_observed`, shows: the exception, described."""

    error: str


def _observed(sampler: Any) -> dict[str, object]:
    """What ``sampler`` shows of what it learned: ``{"stats()": ..., "state_dict()": ...}``,
    each of the two it has that returns the same on two calls in a row (a clock in one could
    show no change), a copy; a :class:`_Raised` for one that raised."""
    shown_now: dict[str, object] = {}
    for method in ("stats", "state_dict"):
        read = getattr(sampler, method, None)
        if not callable(read):
            continue
        try:
            first = copy.deepcopy(read())
            steady = _difference(first, read()) == ""
        except Exception as error:  # noqa: BLE001  # shown as what it raised
            first, steady = _Raised(describe(error)), True
        if steady:
            shown_now[f"{method}()"] = first
    return shown_now


def _changed(before: dict[str, object], after: dict[str, object]) -> str:
    """What differs from ``before`` in ``after`` (each from :func:`_observed`), or ``""``."""
    for method, was in before.items():
        now = after.get(method)
        if isinstance(now, _Raised) and not isinstance(was, _Raised):
            return f"{method} raised {now.error} after it, and returned {safe_repr(was)} before"
        difference = _difference(was, now, method, ("before", "after"))
        if difference:
            return difference
    return ""


def _bad_scores_taken(sampler: Any) -> str:
    """How ``record()`` met the bad scores it did not refuse as :func:`check_score` does,
    or ``""``. Advice, not a violation: the contract is the engine's, which never passes one."""
    accepted, mistaken = [], []
    task = _SHARD[0]
    for round_index, (score, expected) in enumerate(_BAD_SCORES):
        # The task it picks: a sampler may refuse to record one it never handed out. A bad
        # score taken may break its next pick (a str among floats): then the last task again.
        with suppress(Exception):
            task = _member(sampler.pick(list(_SHARD), round_index), _SHARD)
        try:
            sampler.record(task, score)
        except expected:
            continue
        except Exception as error:  # noqa: BLE001  # the wrong exception is what is noted
            mistaken.append(f"raised {describe(error)} for {score!r}")
        else:
            accepted.append(repr(score))
    return "; ".join(([f"accepted {', '.join(accepted)}"] if accepted else []) + mistaken[:2])
