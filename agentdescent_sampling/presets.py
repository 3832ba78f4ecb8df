"""``Preset``: a sampler served under the name a preset was registered by."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .protocol import TaskSampler

__all__ = ["Preset"]


class Preset:
    """A sampler built by a preset factory, answering to the preset's name.

    A hook may register a factory that is not a class (``functools.partial(LRT,
    shuffle=True)`` as ``lrt-shuffled``). The registry serves what it builds wrapped
    in a ``Preset`` when the built sampler carries another name, so ``name`` is the one
    the config selected and ``repr()`` shows the preset. Every other attribute and
    method (``stats()``, ``state_dict()``) is the wrapped sampler's.
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
        return getattr(self.wrapped, attribute)

    def __repr__(self) -> str:
        return f"preset({self.name!r}, {self.wrapped!r})"
