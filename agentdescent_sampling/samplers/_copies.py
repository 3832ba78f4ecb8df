"""Copies of a built-in sampler by its parameters and its ``state_dict()``: :class:`CopiedByState`.

A sampler holds a lock, which neither ``pickle`` nor ``copy`` can take, and a shard index it
rebuilds on its own; what it learnt is its ``state_dict()``. So ``copy.copy``,
``copy.deepcopy`` and ``pickle`` (to send a sampler to a worker process) build a new sampler
with the same parameters and load that state into it: a copy learns apart from the original,
and, as a restored state does, it holds no picks in flight.
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["CopiedByState"]


class CopiedByState:
    """Gives an attrs sampler with ``state_dict()`` and ``load_state_dict()`` its copies."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        """A new sampler of the same parameters, with this one's ``state_dict()`` loaded."""
        sampler: Any = self  # an attrs class with state_dict(), which the subclass is
        fields = attrs.fields(type(sampler))
        params = {field.alias: getattr(self, field.name) for field in fields if field.init}
        return (_restored, (type(self), params, sampler.state_dict()))


def _restored(cls: type[Any], params: dict[str, Any], state: Any) -> Any:
    sampler = cls(**params)
    sampler.load_state_dict(state)
    return sampler
