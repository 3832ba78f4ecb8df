"""The sampler contract's types and checks: what ``evolve()`` calls, what a state holds.

A plugin author imports these from :mod:`agentdescent_sampling.plugin`, whose docstring is
the whole contract. A sampler has ``pick(keys, round_index)``
and ``record(task_id, score)`` (:class:`TaskSampler`); one whose statistics survive a
restart also has ``state_dict()`` and ``load_state_dict(state)`` (:class:`Stateful`).
The checks word their errors as every built-in does:

- :func:`check_pick` at the top of ``pick``: the shard (:func:`check_keys`, whose task ids
  :func:`check_task_id` checks when a sampler reads them) and the round index
  (:func:`check_round_index`);
- :func:`check_score` at the top of ``record``;
- :func:`check_state` at the top of ``load_state_dict``, then :func:`is_count`,
  :func:`is_real` and :func:`is_tally` for the numbers in it, raising
  :class:`~agentdescent_sampling.errors.StateError` for anything else;
- :func:`check_name` for a sampler name.
"""

from __future__ import annotations

import inspect
import math
import numbers
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Protocol,
    SupportsIndex,
    TypeGuard,
    cast,
    runtime_checkable,
)

from ._display import safe_repr
from .errors import StateError

if TYPE_CHECKING:
    import random

__all__ = [
    "MAX_COUNT",
    "SOLVED",
    "Sampler",
    "Stateful",
    "TaskSampler",
    "check_keys",
    "check_name",
    "check_pick",
    "check_round_index",
    "check_score",
    "check_state",
    "check_task_id",
    "check_task_ids",
    "declares_thread_unsafe",
    "is_count",
    "is_real",
    "is_stateful",
    "is_tally",
    "method_problem",
    "restore_rng",
    "rng_state",
    "short_repr",
    "unbindable",
]

#: The reward at or above which a rollout counts as a pass. Mirrors
#: ``agentdescent.SOLVED`` (the default of ``evolve(solved_threshold=...)``); it is
#: repeated here, rather than imported, so that this package never imports the engine.
#: An integration test checks that the two agree.
SOLVED = 0.999
#: The largest count a sampler state may hold: larger ones are refused on load, and a
#: state holding one is not saved: picks
#: compute with floats, which hold whole numbers exactly up to 2**53, and no run records
#: that many rollouts (a million a second for 285 years).
MAX_COUNT = 2**53

# ASCII only: under re.IGNORECASE alone, [a-z] also matches look-alikes such as the
# dotless i (U+0131), the long s (U+017F) and the Kelvin sign (U+212A), so a name with a
# dotless i in place of an i would pass as another name.
_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*\Z", re.IGNORECASE | re.ASCII)
#: The arguments evolve() passes, which a sampler's methods must accept positionally.
_CALLS = {"pick": (["task-0"], 0), "record": ("task-0", 1.0)}
_MAX_NAME = 64


@runtime_checkable
class TaskSampler(Protocol):
    """Chooses which task in a worker's shard gets the next rollout, and learns from it.

    Two methods and no base class: any object that has them can be passed to
    ``evolve(task_sampler=...)``. A sampler also carries a ``name`` class attribute,
    the name configs select it by. It is not part of the runtime ``isinstance``
    check, which the engine's own protocol does not make either.
    """

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return one task id from ``keys``, the worker's shard, without mutating it."""
        ...

    def record(self, task_id: str, score: float) -> None:
        """Report the reward in [0, 1] that a rollout of ``task_id`` achieved."""
        ...


def check_keys(keys: object) -> Sequence[str]:
    """Return ``keys`` if it is a non-empty shard, else raise.

    Raises:
        TypeError: ``keys`` is not a sequence, or is a string (a string is a
            sequence of characters, never a shard).
        ValueError: the shard is empty.
    """
    if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence):
        raise TypeError(
            f"pick() expects the shard as a sequence of task ids (a list or tuple), "
            f"got {type(keys).__name__} {short_repr(keys)}; pass list(keys)"
        )
    if not keys:
        raise ValueError(
            "pick() got an empty shard: there is no task to roll out; "
            "give every worker at least one task id"
        )
    return keys


def check_round_index(round_index: SupportsIndex) -> int:
    """Return ``round_index`` as an ``int`` if it is an integer: ``evolve()`` passes 0, 1, 2,
    ... (a durable sampler continues them from its state; a negative one is taken too).

    Raises:
        TypeError: ``round_index`` is not an integer (``operator.index`` refuses it), or is
            a bool: ``True`` is an int to Python, and a flag passed where the round goes.
    """
    try:
        if isinstance(round_index, bool):
            raise TypeError(round_index)
        return operator.index(round_index)
    except TypeError:
        raise TypeError(
            f"pick(keys, round_index) expects round_index as a whole number, the round "
            f"evolve() is in (0, 1, 2, ...); got {type(round_index).__name__} "
            f"{short_repr(round_index)}"
        ) from None


def refuse_a_class(sampler: object, call: str) -> None:
    """Raise a TypeError naming ``call`` if ``sampler`` is a class, not a sampler: a class
    has the methods too, so every other check would take it."""
    if isinstance(sampler, type):
        raise TypeError(
            f"{call} takes a sampler, not the class {sampler.__name__}: pass an instance, "
            f"{sampler.__name__}()"
        )


def check_pick(keys: object, round_index: SupportsIndex) -> tuple[Sequence[str], int]:
    """Return ``(keys, round_index)`` if they are what ``pick()`` may be given, else raise.

    The first line of every ``pick``: ``keys, round_index = check_pick(keys, round_index)``.

    Raises:
        TypeError, ValueError: as :func:`check_keys` and :func:`check_round_index`.
    """
    return check_keys(keys), check_round_index(round_index)


def check_task_id(task_id: object) -> str:
    """Return ``task_id`` if it is a string, as every task id in a shard must be, else raise.

    Raises:
        TypeError: ``task_id`` is not a ``str``.
    """
    if not isinstance(task_id, str):
        raise TypeError(
            f"pick() expects the shard's task ids as strings, got {type(task_id).__name__} "
            f"{short_repr(task_id)}; pass the tasks' ids, not the tasks"
        )
    return task_id


def check_task_ids(keys: Sequence[object]) -> Sequence[str]:
    """Return ``keys`` if every id in it is a string, else raise as :func:`check_task_id`
    does for the first that is not: one pass in C over the types when they are, as they
    nearly always are.

    Raises:
        TypeError: an id is not a ``str``.
    """
    if set(map(type, keys)) != {str}:
        for key in keys:
            check_task_id(key)
    return cast("Sequence[str]", keys)


def check_score(task_id: object, score: object) -> float:
    """Return ``score`` as a float if it is a valid reward for ``task_id``, else raise.

    Any real number is taken: ``int``, ``float``, ``fractions.Fraction``,
    ``decimal.Decimal`` and NumPy's numbers (``numpy.float32``, ``numpy.int64``) included.

    Raises:
        TypeError: ``task_id`` is not a string, or ``score`` is not a real number
            (``bool`` and complex numbers included: pass ``float(score)`` if you mean 0.0
            or 1.0).
        ValueError: ``score`` is NaN, infinite or outside [0, 1].
    """
    if not isinstance(task_id, str):
        raise TypeError(
            f"record() expects task_id as a str, got {type(task_id).__name__} {short_repr(task_id)}"
        )
    value = _real_float(score)
    if value is None:
        raise _not_a_number(task_id, score)
    if not 0.0 <= value <= 1.0:  # NaN fails this comparison too
        raise ValueError(
            f"record({short_repr(task_id)}, {short_repr(score)}): the score must be a finite "
            f"number in [0, 1]; normalise the reward (for example accuracy / 100) before "
            f"recording it"
        )
    return value


def _not_a_number(task_id: str, score: object) -> TypeError:
    return TypeError(
        f"record({short_repr(task_id)}, ...) expects the score as a number in [0, 1], got "
        f"{type(score).__name__} {short_repr(score)}; pass the reward the rollout achieved"
    )


def _real_float(value: object) -> float | None:
    """``value`` as a float if it is a real number, not a bool (:func:`_is_real_number`): an
    int too large for a float as an infinity, ``Decimal("sNaN")`` as NaN; ``None`` for
    anything else, a number whose ``float()`` gives none included."""
    if type(value) is float:
        return value
    if not _is_real_number(value):
        return None
    try:
        return float(value)  # type: ignore[arg-type]  # a real number, checked above
    except OverflowError:  # an int too large for a float
        return math.inf
    except ValueError:  # Decimal("sNaN")
        return math.nan
    except TypeError:  # a number whose float() does not give one
        return None


def _is_real_number(value: object) -> bool:
    """Whether ``value`` is a real number, not a bool: a :class:`numbers.Real` (NumPy's
    registered there too), or a :class:`decimal.Decimal` (a number that is not complex)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float, numbers.Real)) or (
        isinstance(value, numbers.Number) and not isinstance(value, numbers.Complex)
    )


class Sampler(TaskSampler, Protocol):
    """What ``create()`` returns: a :class:`TaskSampler` with its ``name``, and every other
    method the sampler has (``stats()``, ``state_dict()``, ``end_round()``, ...), typed ``Any``
    since which sampler a config selects is only known when it runs. It is for type checkers:
    at run time ask ``isinstance(obj, TaskSampler)``, which this type cannot answer. Annotate
    a parameter that takes any sampler as :class:`TaskSampler`: a sampler class, a built-in's
    included, lacks this type's ``__getattr__``, so a type checker refuses it here."""

    @property
    def name(self) -> str:
        """The name the sampler was selected by."""
        ...

    def __getattr__(self, attribute: str) -> Any:
        """The selected sampler's own attribute."""
        ...


@runtime_checkable
class Stateful(Protocol):
    """A sampler whose statistics can be saved and restored."""

    def state_dict(self) -> dict[str, Any]:
        """Return the statistics as a JSON-ready dict."""
        ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the statistics with ``state``; raise :class:`StateError` if it is invalid."""
        ...


def is_stateful(sampler: object) -> TypeGuard[Stateful]:
    """Whether ``sampler`` has callable ``state_dict()`` and ``load_state_dict()`` methods,
    looked up as a call looks them up.

    Use it instead of ``isinstance(sampler, Stateful)``: from Python 3.12 that looks the
    methods up statically, and misses those a wrapper hands on through ``__getattr__``, as a
    durable or a locked sampler does.
    """
    return all(callable(getattr(sampler, name, None)) for name in _STATE_METHODS)


#: The two methods a sampler keeps its state with.
_STATE_METHODS = ("state_dict", "load_state_dict")


def _half_stateful(sampler: object) -> tuple[str, str] | None:
    """``(the one it has, the one it lacks)`` of ``state_dict`` and ``load_state_dict``,
    looked up as :func:`is_stateful` looks them up, when ``sampler`` has one of the two;
    else ``None``."""
    has = [name for name in _STATE_METHODS if callable(getattr(sampler, name, None))]
    if len(has) != 1:
        return None
    (half,) = has
    return half, next(name for name in _STATE_METHODS if name != half)


#: How :func:`check_state` says that a state was saved with other parameters, which the
#: command line and a run spec's ref find in it to give their own advice.
SAVED_WITH = "the state was saved with"


def check_state(
    state: object, name: str, version: int, params: Mapping[str, Any] | None = None
) -> Mapping[str, Any]:
    """Return ``state`` if it is a state dict of sampler ``name`` at ``version``, else raise.

    Samplers call this first in ``load_state_dict``. ``params``, when given, must equal
    the state's ``"params"``: statistics gathered under other parameters (another
    ``pass_threshold``, say) would mean something else.
    """
    if not isinstance(state, Mapping):
        raise StateError(
            f"{name}: sampler state must be a mapping (the {name!r} sampler's state_dict()), "
            f"got {short_repr(state)}; give the state a state_dict() returned, or start "
            f"{name!r} fresh"
        )
    if "sampler" not in state:
        raise StateError(
            f"{name}: this state names no sampler (no 'sampler' key; it has "
            f"{short_repr(sorted(map(str, state))[:8])}), so it is no state_dict() of a "
            f"sampler; give the state a {name} sampler's state_dict() returned, or start it "
            f"fresh"
        )
    owner = short_repr(state.get("sampler"))
    if state.get("sampler") != name:
        raise StateError(
            f"this state belongs to sampler {owner}, not {name!r}; "
            f"load it into a {owner} sampler or start {name!r} fresh"
        )
    version_given = state.get("version")
    if isinstance(version_given, bool) or version_given != version:
        raise StateError(
            f"{name}: state version {short_repr(version_given)} is not supported (this "
            f"version of agentdescent-sampling reads version {version}); start fresh or use the "
            f"release that wrote it"
        )
    if params is not None and state.get("params") != params:
        raise StateError(
            f"{name}: {SAVED_WITH} {short_repr(state.get('params'), 200)}, this "
            f"sampler has {dict(params)}; build it with the saved parameters to resume, or "
            f"start fresh"
        )
    return state


def is_count(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a whole number in [0, 2**53] (not a bool), as state counts must be."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def is_tally(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real in [0, 2**53] (not a bool), as a weighted or discounted
    count must be: a larger one (``1e308``) would overflow or stall the arithmetic."""
    return is_real(value) and 0 <= value <= MAX_COUNT


def is_real(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a finite number (not a bool), as state measurements must be.

    An int too large for a float (``10**400``) is not: it would overflow in arithmetic.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def check_name(name: object) -> str:
    """Return ``name`` if it is a valid sampler name, else raise ``ValueError``.

    A name is 1 to 64 ASCII characters: a letter, then letters and digits, in words
    joined by single ``-`` or ``_`` (``difficulty-weighted``, ``hardest_first``). Dots,
    colons and slashes are refused, so a name can never look like an import path, and
    non-ASCII letters are refused, so no name can look like another.
    """
    if not isinstance(name, str) or len(name) > _MAX_NAME or not _NAME.match(name):
        from ._display import ascii_name  # a look-alike of a name shows as one

        raise ValueError(
            f"invalid sampler name {ascii_name(name, 80)}: expected up to {_MAX_NAME} ASCII "
            f"letters, digits and single '-' or '_' between words, starting with a letter "
            f"(for example 'difficulty-weighted'){_quoted(name)}"
        )
    return name


def _quoted(name: object) -> str:
    """``"; it is written in quotes: drop them"`` for a valid name in quotes (``"'plr'"``, or
    ``"'plr"``, a spec string's name cut at its ':'); else ``""``."""
    if not isinstance(name, str) or name[:1] not in ("'", '"'):
        return ""
    unquoted = name.strip("'\"")
    valid = 0 < len(unquoted) <= _MAX_NAME and _NAME.match(unquoted) is not None
    return "; it is written in quotes: drop them" if valid else ""


def declares_thread_unsafe(factory: object) -> bool:
    """Whether ``factory`` declares ``thread_safe = False``: its samplers are served under a lock.

    ``evolve(max_concurrency > 1)`` calls one sampler from several threads. A sampler that
    keeps mutable state without a lock of its own says so with this class attribute, and
    the registry wraps each one it builds in ``synchronized()``.
    """
    return getattr(factory, "thread_safe", True) is False


def method_problem(sampler: object) -> str | None:
    """Say what keeps ``sampler`` (a sampler or a sampler class) from being called, or ``None``.

    ``evolve()`` calls ``pick(keys, round_index)`` and ``record(task_id, score)`` with
    positional arguments; a method missing, or whose signature can't take those, is
    named with its signature. A signature that can't be read is given the benefit of
    the doubt.
    """
    for method, arguments in _CALLS.items():
        found = getattr(sampler, method, None)
        if not callable(found):
            return f"it has no {method}() method"
        takes_self = inspect.isclass(sampler) and not isinstance(
            inspect.getattr_static(sampler, method, None), (staticmethod, classmethod)
        )
        bare = unbindable(found, *((None,) if takes_self else ()), *arguments)
        if bare is not None:
            expected = "(keys, round_index)" if method == "pick" else "(task_id, score)"
            return f"its {method}{bare} can't be called as {method}{expected}"
    return None


def unbindable(method: Callable[..., object], *arguments: object) -> inspect.Signature | None:
    """``method``'s signature, without its annotations, if it cannot be called with
    ``arguments`` positionally; ``None`` if it can, or if its signature can't be read (the
    benefit of the doubt)."""
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*arguments)
    except TypeError:
        return signature.replace(
            parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
            return_annotation=signature.empty,
        )
    return None


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters so a huge input can't flood a message.

    A value whose ``repr`` fails (an int of over 4,300 digits, a list nested too deeply
    to walk, a raising ``__repr__``) is shown by its type.
    """
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001  # a message must not fail on the value it reports
        text = f"<{type(value).__name__} that cannot be shown>"
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


#: How many numbers a ``random.Random``'s state holds (the Mersenne Twister's 624 and its
#: index).
_RNG_WORDS = 625


def rng_state(rng: random.Random) -> list[Any]:
    """A ``random.Random``'s state as JSON-ready lists, for a seeded sampler's
    ``state_dict()``; :func:`restore_rng` reads it back."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def restore_rng(name: str, value: object) -> random.Random:
    """A generator in the state :func:`rng_state` saved, for ``load_state_dict()``.

    Raises:
        StateError: ``value`` is not such a state; ``name`` (the sampler's) begins the message.
    """
    import random  # only a seeded sampler's load needs it

    rng = random.Random()
    if (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[1], list)
        and len(value[1]) == _RNG_WORDS  # before walking a list of any length
        and all(is_count(word) and word < 1 << 32 for word in value[1])  # 32-bit words
        and (value[1][0] & 1 << 31 or any(value[1][1:-1]))  # all zero: 0.0 for ever
        and (value[2] is None or is_real(value[2]))
    ):
        try:
            rng.setstate((value[0], tuple(value[1]), value[2]))
        except (TypeError, ValueError):
            pass
        else:
            return rng
    raise StateError(
        f"{name}: bad generator state {safe_repr(value, 60)}; expected the 'rng' list that "
        f"state_dict() wrote"
    )
