"""The state and instances-apart checks: a state that survives JSON and restores the picks,
a damaged state refused, and nothing one instance learns shared with another."""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

from .._display import a_type, safe_repr, shown
from ..errors import StateError
from ..loading import describe
from ..protocol import MAX_COUNT, _half_stateful, is_count, is_stateful, short_repr
from ..state import CONTAINS_ITSELF, problems_in_state
from ._calls import _SCRIPTED, _failed_call, _scripted_picks, _show, _where
from ._report import _NOT_APPLICABLE, Factory, Finding, Violation

#: The picks and records made before a state is saved, and after, in the state check.
_STATE_ROUNDS = 30


def _check_state(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    """For a sampler with ``state_dict()`` and ``load_state_dict()``: the state is plain
    JSON, and a fresh instance given it saves the same state and picks as the original."""
    original = factory(**params)
    if not is_stateful(original):
        if (halves := _half_stateful(original)) is not None:
            half, other = halves
            yield (
                f"state: not checked: it has {half}() but no {other}(), so it is not Stateful "
                f"and its state can be neither saved nor restored (create(spec, state=...) and "
                f"save_state() refuse it); add {other}() or rename {half}()"
            )
        yield _NOT_APPLICABLE
        return
    try:
        original.state_dict()
    except Exception as error:  # noqa: BLE001  # the violation
        yield Violation(
            "state",
            f"state_dict() of a fresh instance, before any pick or record, raised "
            f"{describe(error)}{_where(error)}; create(spec, state=PATH) saves a sampler's "
            f"state as soon as it is built, so state_dict() must work on one that has learned "
            f"nothing",
        )
        return
    twin = factory(**params)  # the same records as the original: does it pick as it does?
    history = f"{_STATE_ROUNDS} picks and records"
    for sampler in (original, twin):
        _scripted_picks(sampler, 0, _STATE_ROUNDS)
    try:
        saved = original.state_dict()
    except Exception as error:  # noqa: BLE001  # the violation
        yield Violation(
            "state", f"state_dict() after {history} raised {describe(error)}{_where(error)}"
        )
        return
    problem = _not_plain_json(saved)
    if problem:
        yield Violation(
            "state",
            f"state_dict() after {history} is not plain JSON: {problem}. It is saved as JSON "
            f"(save_state(), create(spec, state=...)) and loaded back from it: return dicts "
            f"with str keys, lists, str, finite numbers, bools and None",
        )
        return
    try:
        unsteady = _difference(saved, original.state_dict(), "state", _IN_A_ROW)
    except Exception as error:  # noqa: BLE001  # the violation
        yield Violation(
            "state", f"a second state_dict() in a row raised {describe(error)}{_where(error)}"
        )
        return
    if unsteady:
        yield _unsteady("state", "state_dict()", unsteady)
        return
    restored = factory(**params)
    given = f"the state_dict() of one that made {history}"
    try:
        restored.load_state_dict(json.loads(json.dumps(saved)))
    except Exception as error:  # noqa: BLE001  # the violation
        # Refused as not its own: its state_dict() lacks what its check_state() reads.
        own = (
            "; state_dict() must return what check_state() reads: 'sampler' (its name) and "
            "'version' beside the statistics"
            if isinstance(error, StateError)
            and isinstance(saved, dict)
            and not {"sampler", "version"} <= saved.keys()
            else ""
        )
        yield Violation(
            "state",
            f"load_state_dict(state) of a fresh instance, given {given} as JSON reads it "
            f"back, raised {describe(error)}{_where(error)}{own}",
        )
        return
    try:
        again = restored.state_dict()
    except Exception as error:  # noqa: BLE001  # the violation
        yield Violation(
            "state",
            f"state_dict() of a fresh instance that loaded {given} raised "
            f"{describe(error)}{_where(error)}",
        )
        return
    difference = _difference(saved, again)
    if difference:
        yield Violation(
            "state",
            f"a fresh instance given load_state_dict(state), the state_dict() of one that "
            f"made {history}, returns another state_dict(): {difference}. load_state_dict() "
            f"must restore everything state_dict() saves",
        )
        return
    picks, twins, resumed = (
        _scripted_picks(each, _STATE_ROUNDS, 2 * _STATE_ROUNDS)
        for each in (original, twin, restored)
    )
    if picks == twins and resumed != picks:  # the same records give the same picks, but not it
        yield Violation(
            "state",
            f"after load_state_dict(), the next picks differ from the original's: "
            f"{_show(resumed[:6])} vs {_show(picks[:6])}, though two instances that made the "
            f"same records pick alike; the state leaves out something pick() depends on "
            f"(a generator's state?)",
        )  # how it takes a damaged state is another fault, told too
    refused = _refuses_damage(factory, params, json.loads(json.dumps(saved)))
    if refused is not None:
        yield Violation("state", refused)


#: How many of a state's numbers :func:`_refuses_damage` replaces, one at a time.
_DAMAGED_NUMBERS = 8


def _refuses_damage(factory: Factory, params: dict[str, Any], saved: Any) -> str | None:
    """What is wrong with how ``load_state_dict()`` takes damaged copies of ``saved`` (a state
    that loads): a state that is not its own (not a mapping, another sampler's or version's)
    must raise :class:`StateError`, as :func:`check_state` does; one with a number turned into
    text may be taken only if the sampler still picks and records after it. ``None`` if all
    is well."""
    if not isinstance(saved, dict) or not {"sampler", "version"} <= saved.keys():
        return (
            f"state_dict() returns {short_repr(saved, 120)}, which holds no 'sampler' (its "
            f"name) and 'version' (its format) for check_state() to read, so a state of "
            f"another sampler, or of an older release, loads as if it were this one's; return "
            f"{{'sampler': self.name, 'version': 1, ...}} and start load_state_dict() with "
            f"check_state(state, self.name, 1)"
        )
    other = saved["sampler"] + "-other" if isinstance(saved["sampler"], str) else "other"
    version = saved["version"] + 1000 if is_count(saved["version"]) else 1000
    damage: list[tuple[str, Any, bool]] = [
        ("a list holding its state", [saved], False),
        (f"its state marked as sampler {other!r}'s", {**saved, "sampler": other}, False),
        (f"its state marked as version {version}", {**saved, "version": version}, False),
    ]
    for where in itertools.islice(_number_paths(saved), _DAMAGED_NUMBERS):
        damage.append((f"its state with {_path_text(where)} = 'oops'", _with(saved, where), True))
    for told, state, may_take in damage:
        sampler = factory(**params)
        try:
            sampler.load_state_dict(state)
        except StateError:
            continue
        except Exception as error:  # noqa: BLE001  # the violation
            return (
                f"load_state_dict() given {told} raised {describe(error)}{_where(error)}, not "
                f"StateError; start it with check_state() and raise StateError for a value it "
                f"cannot take (is_count, is_real and is_tally check numbers)"
            )
        if not may_take:
            return (
                f"load_state_dict() took {told}; start it with check_state(state, self.name, "
                f"VERSION), which raises StateError for a state that is not this sampler's"
            )
        try:
            _scripted_picks(sampler, 0, 4)
        except Exception as error:  # noqa: BLE001  # the violation
            return (
                f"load_state_dict() took {told}, and then {_failed_call(error) or describe(error)}"
                f"; check each value as it is loaded (is_count, is_real, is_tally) and raise "
                f"StateError, so a damaged file is refused when it is loaded, not a run later"
            )
    return None


def _number_paths(state: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The paths to the numbers in ``state`` (not bools), depth first, 'sampler' and
    'version' left out (checked on their own)."""
    if isinstance(state, dict):
        for key, value in state.items():
            if not (path == () and key in ("sampler", "version")):
                yield from _number_paths(value, (*path, key))
    elif isinstance(state, list):
        for index, value in enumerate(state):
            yield from _number_paths(value, (*path, index))
    elif isinstance(state, (int, float)) and not isinstance(state, bool):
        yield path


def _with(state: Any, path: tuple[str | int, ...]) -> Any:
    """A deep copy of ``state`` with the value at ``path`` replaced by ``'oops'``."""
    damaged = copy.deepcopy(state)
    holder = damaged
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = "oops"
    return damaged


def _path_text(path: tuple[str | int, ...]) -> str:
    """``state['trials']['a']`` for ``('trials', 'a')``."""
    return "state" + "".join(f"[{step!r}]" for step in path)


#: What :func:`_difference` calls two reads of one method, made one after the other.
_IN_A_ROW = ("on one call", "on the next")


def _unsteady(check: str, method: str, difference: str) -> Violation:
    """The violation of a ``method`` whose two calls in a row, with nothing between, differ."""
    return Violation(
        check,
        f"two calls of {method} in a row, with no pick or record between, returned different "
        f"values: {difference}. Return only what the sampler learned from its picks and records "
        f"(no clock, no count of its own calls, no random id), so that one that learned "
        f"nothing new reports the same",
    )


#: How many kinds of value that JSON would not give back :func:`_not_plain_json` names.
_KINDS_NAMED = 3


def _not_plain_json(state: object) -> str:
    """What in ``state`` would not come back as itself from JSON, by its path, or ``""``:
    the first value of each kind (a tuple, a set, a key that is no ``str``, ...), so that an
    author fixes them all in one go, not one per run; the others counted, not worded."""
    if not isinstance(state, dict):
        return f"it is {type(state).__name__} {safe_repr(state)}, not a dict"
    named: dict[str, str] = {}
    more = 0

    def problem(value: object) -> str:
        nonlocal more
        fault = _json_fault(value)
        if not fault or (fault not in named and len(named) < _KINDS_NAMED):
            return fault
        more += 1
        return ""

    for path, fault, value in problems_in_state(state, problem):
        words = fault if fault == CONTAINS_ITSELF else _json_words(value, fault)
        named[fault] = f"{shown(path, 200)} {words}"
    return "; ".join(named.values()) + (f" (and {more:,} more)" if more else "")


def _json_fault(value: object) -> str:
    """What keeps ``value`` itself from coming back from JSON as it is: ``"key"``,
    ``"number"``, ``"tuple"`` or its type's name; ``""`` if nothing does."""
    if isinstance(value, dict):
        return "" if all(isinstance(key, str) for key in value) else "key"
    if isinstance(value, (list, str, bool)) or value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isfinite(value) else "number"
    if isinstance(value, int):
        return "" if abs(value) <= MAX_COUNT else "number"
    return "tuple" if isinstance(value, tuple) else type(value).__name__


def _json_words(value: Any, fault: str) -> str:
    """Why ``value``, of :func:`_json_fault` ``fault``, would not come back from JSON."""
    if fault == "key":
        key = next(key for key in value if not isinstance(key, str))
        return f"has the key {safe_repr(key)} ({a_type(key)}), which JSON turns into a string"
    if fault == "number" and isinstance(value, float):
        return f"is {float.__repr__(value)}, which JSON cannot hold"
    if fault == "number":
        return f"is {safe_repr(value)}, over the 2**53 a state file holds"
    if fault == "tuple":
        return (
            f"is a tuple, {safe_repr(value)}: JSON has no tuples, so a state saved and loaded "
            f"back gives load_state_dict() a list there, {safe_repr(list(value))}, not the "
            f"tuple: return a list"
        )
    return f"is {a_type(value)}, {safe_repr(value)}"


#: The longest list of plain values :func:`_difference` shows whole, as a ``(passes,
#: trials)`` pair is; of a longer one, or one holding lists or dicts, the first item that
#: differs.
_WHOLE_LIST = 8


def _difference(
    first: object,
    then: object,
    path: str = "state",
    sides: tuple[str, str] = ("when saved", "after loading"),
    depth: int = 0,
) -> str:
    """Where ``then`` first differs from ``first``, or ``""`` if they are equal; ``sides``
    say when each was read, in the message."""
    if first == then:
        return ""
    if isinstance(first, dict) and isinstance(then, dict) and depth < 20:
        for key in [*first, *(key for key in then if key not in first)]:
            if key not in then or key not in first:
                where = sides[0] if key in first else sides[1]
                return f"{shown(path, 200)}[{key!r}] is there only {where}"
            found = _difference(first[key], then[key], f"{path}[{key!r}]", sides, depth + 1)
            if found:
                return found
    if (
        isinstance(first, (list, tuple))
        and isinstance(then, (list, tuple))
        and len(first) == len(then)
        and (len(first) > _WHOLE_LIST or any(isinstance(item, (list, dict)) for item in first))
        and depth < 20
    ):  # a generator's 625 numbers, say
        for index, (was, now) in enumerate(zip(first, then, strict=True)):
            found = _difference(was, now, f"{path}[{index}]", sides, depth + 1)
            if found:
                return found
    return f"{shown(path, 200)} was {safe_repr(first)} {sides[0]}, {safe_repr(then)} {sides[1]}"


def _check_instances_apart(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    """Records made on one instance change nothing another instance reports (its
    ``state_dict()``, else its ``stats()``): no two instances share what they learn."""
    first, other = factory(**params), factory(**params)
    for method in ("state_dict", "stats"):
        report = getattr(other, method, None)
        if callable(report):
            break
    else:  # nothing to see another instance's learning by: a note says so (_without_stats)
        yield _NOT_APPLICABLE
        return
    try:
        before = copy.deepcopy(report())
        unsteady = _difference(before, report(), f"{method}()", _IN_A_ROW)
        _scripted_picks(first)
        after = report()
    except Exception:  # noqa: BLE001  # the checks of those calls report it
        yield _NOT_APPLICABLE  # it saw nothing, so it did not pass
        return
    if unsteady:  # it changes by itself, so no change another instance made can be told
        if method == "stats":  # optional, never read by the engine: a clock there is no fault
            yield (
                f"instances-apart: not checked: two calls of stats() in a row, with no pick or "
                f"record between, returned different values: {unsteady}; so whether records "
                f"on one instance change another could not be seen (a state_dict() is read "
                f"for that first)"
            )
            yield _NOT_APPLICABLE
        elif is_stateful(other):
            yield _NOT_APPLICABLE  # the state check reports it
        else:
            yield _unsteady("instances-apart", f"{method}()", unsteady)
        return
    difference = _difference(before, after, f"{method}()", ("before", "after"))
    if difference:
        yield Violation(
            "instances-apart",
            f"{_SCRIPTED} picks and records on one instance changed the {method}() of another: "
            f"{difference}. Keep what record() learns on the instance: a mutable default "
            f"argument (weights={{}}) or a class attribute is shared by every instance",
        )
