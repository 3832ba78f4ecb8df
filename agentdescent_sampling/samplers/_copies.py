"""Copies of a built-in sampler by its parameters and its ``state_dict()``: :class:`CopiedByState`.

A sampler holds a lock, which neither ``pickle`` nor ``copy`` can take, and a shard index it
rebuilds on its own; what it learnt is its ``state_dict()``. So ``copy.copy``,
``copy.deepcopy`` and ``pickle`` (to send a sampler to a worker process) build a new sampler
with the same parameters and load that state into it: a copy learns apart from the original,
and, as a restored state does, it holds no picks in flight, and a ``fixable-first`` copy
forgets the failures of a round that ``end_round()`` has not closed.

A subclass is copied as Python copies any object: its own fields and ``__init__`` are not
known here.
"""

from __future__ import annotations

from typing import Any, SupportsIndex

import attrs

__all__ = ["CopiedByState"]


class CopiedByState:
    """Gives an attrs sampler with ``state_dict()`` and ``load_state_dict()`` its copies."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        """A new sampler of the same parameters, with this one's ``state_dict()`` loaded; a
        subclass's, as Python makes it."""
        if CopiedByState not in type(self).__bases__:
            return super().__reduce_ex__(protocol)
        sampler: Any = self  # an attrs class with state_dict(), which the built-ins are
        fields = attrs.fields(type(sampler))
        params = {field.alias: getattr(self, field.name) for field in fields if field.init}
        return (_restored, (type(self), params, sampler.state_dict()))


def _restored(cls: type[Any], params: dict[str, Any], state: Any) -> Any:
    sampler = cls(**params)
    sampler.load_state_dict(state)
    return sampler
