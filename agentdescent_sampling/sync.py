"""``synchronized()``: make any sampler safe to share between worker threads."""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any

from .protocol import TaskSampler

__all__ = ["Synchronized", "synchronized"]


class Synchronized:
    """A sampler whose every method call holds one re-entrant lock.

    Attribute reads are forwarded to the wrapped sampler; method calls (``pick``,
    ``record`` and any other, such as ``stats()``) run under the lock.
    """

    def __init__(self, sampler: TaskSampler) -> None:
        self.wrapped = sampler
        self.lock = threading.RLock()

    @property
    def name(self) -> str:
        """The wrapped sampler's name."""
        return str(getattr(self.wrapped, "name", type(self.wrapped).__name__))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The wrapped ``pick``, under the lock."""
        with self.lock:
            return self.wrapped.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        """The wrapped ``record``, under the lock."""
        with self.lock:
            self.wrapped.record(task_id, score)

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self.wrapped, attribute)
        if not callable(value):
            return value

        @functools.wraps(value)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return value(*args, **kwargs)

        return locked

    def __repr__(self) -> str:
        return f"synchronized({self.wrapped!r})"


def synchronized(sampler: TaskSampler) -> Synchronized:
    """Wrap ``sampler`` so that concurrent workers call it one at a time.

    Use it for a sampler that keeps mutable state without a lock of its own. A
    sampler class that declares ``thread_safe = False`` is wrapped automatically
    when created through the registry. Wrapping twice returns the same wrapper.
    """
    if isinstance(sampler, Synchronized):
        return sampler
    if not isinstance(sampler, TaskSampler):
        raise TypeError(
            f"synchronized() expects a sampler with pick() and record(), got "
            f"{type(sampler).__name__}"
        )
    return Synchronized(sampler)
