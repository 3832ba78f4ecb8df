"""The one wrapper between a user and a sampler: a name, a lock, and (in a subclass) durability.

``create()`` returns the sampler its factory built, unwrapped, unless it must add one of
these; then it wraps it once, whatever it adds:

- **a name**: a hook may register a factory that is not a class (``functools.partial(LRT,
  shuffle=True)`` as ``lrt-shuffled``), and a class may report another name than the one it
  was selected by (a plugin's ``rr2`` reporting ``round-robin``). The sampler is served under
  the selected name, and so is its state: a ``state_dict()`` is marked as that name's and only
  a state so marked loads, so it never loads into the sampler whose name the wrapped one
  reports;
- **a lock**, for a class that declares ``thread_safe = False``, or by
  :func:`synchronized`: every method call holds one re-entrant lock;
- **durability**, ``create(spec, state=PATH)``: :class:`~agentdescent_sampling.DurableSampler`
  is this class with a log on disk.

Every other attribute and method (``stats()``, ``state_dict()``, ...) is the wrapped
sampler's, by one rule, :meth:`ServedSampler.__getattr__`.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .errors import StateError
from .protocol import TaskSampler, refuse_a_class, short_repr

__all__ = ["ServedSampler", "synchronized"]


class ServedSampler:
    """A sampler served under a name of its own, a lock, or both.

    Args:
        sampler: the sampler to serve.
        name: the name it answers to and its state is kept under, if not its own.
        lock: whether every method call holds one re-entrant lock.
    """

    def __init__(self, sampler: TaskSampler, *, name: str | None = None, lock: bool = False):
        self.wrapped = sampler
        self._renamed = name
        self.lock: threading.RLock | None = threading.RLock() if lock else None

    @property
    def name(self) -> str:
        """The name it was selected by, else the wrapped sampler's."""
        if self._renamed is not None:
            return self._renamed
        return str(getattr(self.wrapped, "name", type(self.wrapped).__name__))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The wrapped ``pick``, under the lock if there is one."""
        with self._held():
            return self.wrapped.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        """The wrapped ``record``, under the lock if there is one."""
        with self._held():
            self.wrapped.record(task_id, score)

    def __getattr__(self, attribute: str) -> Any:
        # Only reached for names not defined here: stats(), state_dict(), end_round(), ...
        # "wrapped" itself is missing only on an instance made without __init__ (copy,
        # pickle); looking it up here would recurse forever.
        if attribute == "wrapped":
            raise AttributeError(attribute)
        try:
            value = getattr(self.wrapped, attribute)
        except AttributeError as error:
            if error.name != attribute or error.obj is not self.wrapped:
                raise  # raised inside the sampler's own code (a property): its own
            raise AttributeError(self._missing(attribute), name=attribute, obj=self) from None
        if not callable(value):
            return value
        if self._renamed is not None and attribute == "state_dict":
            value = self._state_dict
        elif self._renamed is not None and attribute == "load_state_dict":
            value = self._load_state_dict
        return self._method(attribute, value)

    def _missing(self, attribute: str) -> str:
        """That neither this wrapper nor the sampler it serves has ``attribute``, and the
        name of either's meant, if one is close (``close`` for ``clsoe``)."""
        import difflib  # only on this error path: serving a sampler never needs it

        served = type(self.wrapped).__name__
        names: set[str] = set()
        for owner in (type(self), type(self.wrapped)):
            # A metaclass's __dir__ that raises leaves no suggestion, nothing worse.
            with contextlib.suppress(Exception):
                names.update(name for name in dir(owner) if not name.startswith("_"))
        meant = difflib.get_close_matches(attribute, sorted(names), n=1)
        return (
            f"{type(self).__name__} has no attribute {attribute!r}, and neither has the "
            f"{served} it serves" + (f"; did you mean {meant[0]!r}?" if meant else "")
        )

    def __copy__(self) -> ServedSampler:
        """A copy serving ``copy.copy`` of the sampler it serves, taken under the lock, with a
        lock of its own. A built-in's copy learns apart; a plugin's is what its own copying
        makes, and Python's default shallow copy shares the plugin's statistics (give it a
        ``__copy__``, or use ``copy.deepcopy``)."""
        with self._held():
            return ServedSampler(copy.copy(self.wrapped), name=self._renamed, lock=self._locked)

    def __deepcopy__(self, memo: dict[int, Any]) -> ServedSampler:
        """As :meth:`__copy__`, with a deep copy of the sampler it serves."""
        with self._held():
            wrapped = copy.deepcopy(self.wrapped, memo)
        return ServedSampler(wrapped, name=self._renamed, lock=self._locked)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with the sampler it serves, and a lock of its own when unpickled."""
        return (_served, (self.wrapped, self._renamed, self._locked))

    @property
    def _locked(self) -> bool:
        return self.lock is not None

    def __repr__(self) -> str:
        if self._renamed is None:
            return f"synchronized({self.wrapped!r})" if self.lock else repr(self.wrapped)
        lock = ", lock=True" if self.lock else ""
        return f"ServedSampler({self.wrapped!r}, name={self._renamed!r}{lock})"

    def _method(self, attribute: str, method: Callable[..., Any]) -> Callable[..., Any]:
        """``method`` as this wrapper serves it: under the lock, if there is one."""
        if self.lock is None:
            return method

        @functools.wraps(method)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._held():
                return method(*args, **kwargs)

        return locked

    def _held(self) -> contextlib.AbstractContextManager[Any]:
        return self.lock if self.lock is not None else contextlib.nullcontext()

    def _state_dict(self) -> Any:
        """The wrapped sampler's state, marked as this name's."""
        state = self.wrapped.state_dict()  # type: ignore[attr-defined]  # only if it has one
        return {**state, "sampler": self.name} if isinstance(state, dict) else state

    def _load_state_dict(self, state: Any) -> None:
        """Load ``state`` into the wrapped sampler if it is this name's, under its own name."""
        found = state.get("sampler") if isinstance(state, Mapping) else None
        if found != self.name:
            raise StateError(
                f"this state belongs to sampler {short_repr(found)}, not {self.name!r}; load it "
                f"into a {short_repr(found)} sampler or start {self.name!r} fresh"
            )
        own = getattr(self.wrapped, "name", None)
        self.wrapped.load_state_dict({**state, "sampler": own})  # type: ignore[attr-defined]


def _served(sampler: TaskSampler, name: str | None, lock: bool) -> ServedSampler:
    return ServedSampler(sampler, name=name, lock=lock)


def synchronized(sampler: TaskSampler) -> ServedSampler:
    """Wrap ``sampler`` so that concurrent workers call it one at a time.

    Use it for a sampler that keeps mutable state without a lock of its own. A
    sampler class that declares ``thread_safe = False`` is wrapped automatically
    when created through the registry. A sampler already served under a lock is
    returned as it is; one served under a name gets a lock in a new wrapper, not two.
    """
    if isinstance(sampler, ServedSampler):
        if sampler.lock is not None:
            return sampler
        return ServedSampler(sampler.wrapped, name=sampler._renamed, lock=True)
    refuse_a_class(sampler, "synchronized()")
    if not isinstance(sampler, TaskSampler):
        raise TypeError(
            f"synchronized() expects a sampler with pick() and record(), got "
            f"{type(sampler).__name__}"
        )
    return ServedSampler(sampler, lock=True)
