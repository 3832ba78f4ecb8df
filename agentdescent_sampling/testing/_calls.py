"""How the kit calls a sampler (its shard, its scripted picks), and how it tells a call that
failed: the call, its arguments, and the line of the sampler's own code it raised at."""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Sequence
from types import FrameType
from typing import Any

from .._display import a_type, one_of, safe_repr, shown
from ..loading import code_lines, describe
from ..params import Signature, signature_of
from ._report import Factory

#: The kit's shard; a tuple, so a sampler that reorders what it is given cannot change it.
_SHARD = tuple(f"task-{i}" for i in range(12))

#: How many picks and records the kit's scripted run makes, unless told otherwise.
_SCRIPTED = 40


def _scripted_picks(sampler: Any, start: int = 0, stop: int = _SCRIPTED) -> list[str]:
    picks = []
    for round_index in range(start, stop):
        picked = sampler.pick(list(_SHARD), round_index)
        picks.append(picked)
        recorded = _member(picked, _SHARD)
        sampler.record(recorded, float(len(recorded) % 2 == round_index % 2))
    return picks


def _member(picked: object, shard: Sequence[str]) -> str:
    """``picked`` if it is in ``shard``, else the shard's first task: the kit records only
    members, so that a bad pick is reported once, as itself, and not as ``record()``'s error."""
    return picked if isinstance(picked, str) and picked in shard else shard[0]


def _not_a_str(picked: object) -> str:
    return "" if isinstance(picked, str) else f" ({a_type(picked)}, not a task id)"


def _show(shard: Sequence[str]) -> str:
    """``shard`` as a report shows it, its first four keys: a tuple as a tuple (``('task-0',
    ...)``), anything else as a list, so that a message names the type the sampler was given."""
    items = list(shard)
    if isinstance(shard, tuple):
        text = safe_repr(tuple(items[:4]))
        return text[:-1] + ", ...)" if len(items) > 4 else text
    text = safe_repr(items[:4])
    return text[:-1] + ", ...]" if len(items) > 4 else text


#: The sampler's methods a failure is named by, with how many arguments the kit passes each.
_CALLED = {"pick": 2, "record": 2, "stats": 0}

#: The top-level name of this package's modules, whose lines are never the sampler's own.
_PACKAGE = __name__.partition(".")[0]


def _failed_call(error: BaseException) -> str | None:
    """``pick(['task-0', ...], 3) raised RuntimeError: boom (at plugin.py:12)``: the call of
    the sampler's ``pick()``, ``record()`` or ``stats()`` that ``error`` came out of, read
    from its traceback, or ``None`` if it came out of none (a constructor's)."""
    for frame, _ in traceback.walk_tb(error.__traceback__):
        arity = _CALLED.get(frame.f_code.co_name)
        if arity is not None:
            hint = _tuple_hint(frame, error) or _score_hint(frame)
            return f"{_call(frame, arity)} raised {describe(error)}{_where(error)}{hint}"
    return None


def _call(frame: FrameType, arity: int) -> str:
    """The call ``frame`` runs, as ``pick(['task-0', ...], 3)``: its first ``arity``
    arguments after ``self``, shortened, as they were when it raised."""
    shown_values = [
        _show(value) if one_of(type(value), (list, tuple)) else safe_repr(value, 80)
        for value in _arguments(frame)[:arity]
    ]
    return f"{frame.f_code.co_name}({', '.join(shown_values)})"


def _arguments(frame: FrameType) -> list[Any]:
    """The arguments of the call ``frame`` runs, after ``self``, as they were when it raised."""
    arguments = inspect.getargvalues(frame)
    values: list[Any] = [arguments.locals.get(name) for name in arguments.args]
    if arguments.args[:1] == ["self"]:
        values = values[1:]
    extra = arguments.locals.get(arguments.varargs) if arguments.varargs else None
    if type(extra) is tuple:  # pick(self, *args)
        values += extra
    return values


def _tuple_hint(frame: FrameType, error: BaseException) -> str:
    """Advice for a ``pick()`` that raised ``AttributeError`` or ``TypeError`` on a tuple
    shard, as one that calls ``keys.copy()`` or ``keys.sort()`` does; else ``""``."""
    if frame.f_code.co_name != "pick" or not isinstance(error, (AttributeError, TypeError)):
        return ""
    if type(next(iter(_arguments(frame)), None)) is not tuple:
        return ""
    return (
        "; keys may be any sequence of task ids, a tuple too, so read it without changing "
        "it, and copy it with list(keys) to sort or change the copy"
    )


def _score_hint(frame: FrameType) -> str:
    """Advice for a ``record()`` that raised on a score between 0 and 1, as one that takes
    pass and fail alone does; else ``""``."""
    if frame.f_code.co_name != "record":
        return ""
    score = next(iter(_arguments(frame)[1:]), None)
    if type(score) is not float or not 0.0 < score < 1.0:
        return ""
    return (
        f"; a score is any number in [0, 1], {score!r} too (a graded reward), and record() "
        f"must take each: a sampler that counts passes compares it with a pass_threshold"
    )


def _where(error: BaseException) -> str:
    """`` (at plugin.py:12)``: the innermost line of the sampler's own code that ``error``
    came through, or ``""``. Its own code is the package of the first frame the kit's call
    reached outside this one (the sampler's method): not this package's (a ``check_score()``
    that refused a score), the standard library's (a ``random.choice()`` of nothing) or
    another library's (an attrs validator) that the sampler called."""
    where, own = "", None
    for top, file, line in code_lines(error):
        if own is None and top != _PACKAGE:
            own = top
        if top == own and not file.startswith("<"):  # not code made at run time (attrs')
            where = f" (at {shown(file, 200)}:{line})"
    return where


def _fault_of(error: BaseException) -> str:
    """The fault ``error`` shows, whichever call raised it: ``raised Type (at plugin.py:12)``,
    its type at the line of the sampler's it raised at, whatever its message says (``boom on
    task-3``); where no line of the sampler's is known, ``raised Type: text``."""
    where = _where(error)
    return f"raised {safe_repr(type(error))}{where}" if where else f"raised {describe(error)}"


def _signature(factory: Factory) -> Signature:
    """The parameters ``factory`` takes. A sampler checked by name is built through the
    registry, whose ``build(**given)`` hides the sampler's own: the registry's description
    of them is the one to read."""
    signature = getattr(factory, "signature", None)
    return signature if isinstance(signature, Signature) else signature_of(factory)


def _building(factory: Factory, params: dict[str, Any]) -> str:
    """The call that builds a sampler, as a report shows it: ``MySampler(seed=1)``, or
    ``create('name')`` for a sampler checked by name."""
    given = ", ".join(f"{key}={safe_repr(value, 40)}" for key, value in params.items())
    selected = getattr(factory, "selected", None)
    if isinstance(selected, str):
        return f"create({selected!r})" if not given else f"create({selected!r}) with {given}"
    name = getattr(factory, "__name__", None)
    called = name if isinstance(name, str) and name.isidentifier() else "its factory"
    return f"{called}({given})"
