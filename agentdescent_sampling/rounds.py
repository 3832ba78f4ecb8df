"""Tell a sampler what the engine committed each round, through ``evolve(on_round=...)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["on_round_for"]


def on_round_for(
    sampler: Any, then: Callable[[Any], object] | None = None
) -> Callable[[Any], None]:
    """Return an ``on_round`` callback that passes each round's commit count to ``sampler``.

    >>> from agentdescent_sampling import create, on_round_for
    >>> sampler = create("fixable-first")
    >>> # evolve(tasks, reward, agent=..., task_sampler=sampler,
    >>> #        on_round=on_round_for(sampler, then=print))

    The callback calls ``sampler.end_round(info.committed)``, then ``then(info)`` if given,
    so it composes with your own ``on_round``. Only ``fixable-first`` uses the commits (a
    ``DurableSampler`` wrapping it passes them on); the engine's run spec has no way to wire
    ``on_round``, so there the sampler works from outcomes alone. Wire it on the synchronous
    path only: under ``evolve(asynchronous=True)`` a merger sweep may report before it has
    merged the fixes of failures already recorded, so its count says nothing about them.

    Raises:
        TypeError: ``sampler`` has no ``end_round(committed)`` method, or ``then`` is not
            callable.
    """
    end_round = getattr(sampler, "end_round", None)
    if not callable(end_round):
        name = getattr(sampler, "name", type(sampler).__name__)
        raise TypeError(
            f"sampler {name!r} has no end_round(committed) method, so it cannot use the "
            f"engine's commit counts; select fixable-first, or pass your own on_round to "
            f"evolve() without on_round_for()"
        )
    if then is not None and not callable(then):
        raise TypeError(f"then must be your on_round callback or None; got {then!r}")

    def on_round(info: Any) -> None:
        end_round(info.committed)
        if then is not None:
            then(info)

    return on_round
