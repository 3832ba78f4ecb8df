"""Tell a sampler what the engine saw: each round's commits, through ``evolve(on_round=...)``,
and each failure's proposal, through ``evolve(propose=...)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["on_round_for", "propose_for"]


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
    end_round = _method(sampler, "end_round(committed)", "the engine's commit counts", "on_round")
    if then is not None and not callable(then):
        raise TypeError(f"then must be your on_round callback or None; got {then!r}")

    def on_round(info: Any) -> None:
        end_round(info.committed)
        if then is not None:
            then(info)

    return on_round


def propose_for(sampler: Any, propose: Callable[..., Any]) -> Callable[[str, Any, str, float], Any]:
    """Return a ``propose`` for ``evolve()`` that calls yours and tells ``sampler`` what it did.

    >>> from agentdescent_sampling import create, on_round_for, propose_for
    >>> sampler = create("fixable-first")
    >>> # evolve(tasks, reward, agent=agent, task_sampler=sampler,
    >>> #        propose=propose_for(sampler, agent.propose),
    >>> #        on_round=on_round_for(sampler))

    The engine calls ``propose(rendered, task, output, reward)`` on each failure, after it has
    recorded the failure with the sampler. The returned callable calls yours with the same
    arguments and returns its answer unchanged, then calls ``sampler.reflected(task.id,
    proposed)``, where ``proposed`` says whether the answer is a proposal (the engine treats
    ``None`` and ``""`` as none). If your ``propose`` raises, the exception goes to the engine
    as before and the sampler is told nothing. Only ``fixable-first`` uses it (a
    ``DurableSampler`` wrapping it passes it on); the engine's run spec has no way to wire
    ``propose``, so there the sampler works from outcomes alone. Unlike ``on_round_for``, it
    suits both engine paths: each path records a failure before it asks the reflector. Do not
    wire it with ``evolve(extra_artifacts=...)``: the engine asks the same ``propose`` about
    the extra artifacts' rollouts, which the sampler never records, and cannot tell them apart.

    Raises:
        TypeError: ``sampler`` has no ``reflected(task_id, proposed)`` method, or ``propose``
            is not callable.
    """
    reflected = _method(
        sampler, "reflected(task_id, proposed)", "what the reflector proposed", "propose"
    )
    if not callable(propose):
        raise TypeError(
            f"propose must be your reflector, propose(rendered, task, output, reward) -> "
            f"str | None, for example agent.propose; got {propose!r}"
        )

    def told(rendered: str, task: Any, output: str, reward: float) -> Any:
        proposal = propose(rendered, task, output, reward)
        reflected(task.id, bool(proposal))
        return proposal

    return told


def _method(sampler: Any, signature: str, what: str, hook: str) -> Callable[..., Any]:
    """The sampler's method named by ``signature``, or a TypeError saying what to do instead."""
    method: Callable[..., Any] | None = getattr(sampler, signature.split("(")[0], None)
    if not callable(method):
        name = getattr(sampler, "name", type(sampler).__name__)
        raise TypeError(
            f"sampler {name!r} has no {signature} method, so it cannot use {what}; select "
            f"fixable-first, or pass your own {hook} to evolve() without {hook}_for()"
        )
    return method
