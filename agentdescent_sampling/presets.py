"""``Preset``: a sampler served under the name a preset was registered by."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .protocol import TaskSampler, short_repr

__all__ = ["Preset"]


class Preset:
    """A sampler built by a preset factory, answering to the preset's name.

    A hook may register a factory that is not a class (``functools.partial(LRT,
    shuffle=True)`` as ``lrt-shuffled``), and a class may report another name than the
    one it was registered by (a plugin's ``rr2`` reporting ``round-robin``). The registry
    serves what such a factory builds wrapped in a ``Preset``, so ``name`` is the one the
    config selected and ``repr()`` shows the preset. Its state names that owner too: a
    ``state_dict()`` is marked as the preset's and only a state so marked loads, so it
    never loads into the sampler whose name the wrapped one reports. Every other
    attribute and method (``stats()``) is the wrapped sampler's.
    """

    def __init__(self, name: str, sampler: TaskSampler) -> None:
        self.name = name
        self.wrapped = sampler

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The wrapped ``pick``."""
        return self.wrapped.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        """The wrapped ``record``."""
        self.wrapped.record(task_id, score)

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self.wrapped, attribute)
        if attribute == "state_dict":
            return functools.partial(_owned_state, self.name, value)
        if attribute == "load_state_dict":
            return functools.partial(_load_owned, self.name, self.wrapped, value)
        return value

    def __repr__(self) -> str:
        return f"preset({self.name!r}, {self.wrapped!r})"


def _owned_state(owner: str, state_dict: Callable[[], Any]) -> Any:
    """The wrapped sampler's state, marked as ``owner``'s."""
    state = state_dict()
    return {**state, "sampler": owner} if isinstance(state, dict) else state


def _load_owned(
    owner: str, wrapped: object, load_state_dict: Callable[[Any], None], state: Any
) -> None:
    """Load ``state`` into the wrapped sampler if it is ``owner``'s, under its own name."""
    from .errors import StateError

    found = state.get("sampler") if isinstance(state, Mapping) else None
    if found != owner:
        raise StateError(
            f"this state belongs to sampler {short_repr(found)}, not {owner!r}; load it into "
            f"a {short_repr(found)} sampler or start {owner!r} fresh"
        )
    load_state_dict({**state, "sampler": getattr(wrapped, "name", None)})
