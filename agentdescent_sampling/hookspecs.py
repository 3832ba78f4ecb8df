"""The pluggy hooks a plugin can implement, and the marker for implementing them.

A hook-form plugin is a module named by an ``agentdescent.samplers`` entry point
(``name = "package.module"``, with no ``:attribute``), holding functions marked with
:data:`hookimpl`::

    from agentdescent_sampling.plugin import hookimpl

    @hookimpl
    def agentdescent_register_samplers(register):
        register(EpochShuffle, aliases=("epoch",), description="Each epoch in a new order.")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import pluggy

__all__ = ["PROJECT", "Register", "hookimpl", "hookspec"]

#: The pluggy project name shared by the hookspecs and the :data:`hookimpl` marker.
PROJECT = "agentdescent"

hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin function as an implementation of one of the hooks below.
hookimpl = pluggy.HookimplMarker(PROJECT)


class Register(Protocol):
    """The callback handed to :func:`agentdescent_register_samplers`."""

    def __call__(
        self,
        factory: Callable[..., Any],
        name: str | None = None,
        aliases: Iterable[str] = (),
        description: str | None = None,
    ) -> None:
        """Register ``factory`` (a sampler class, or a callable taking keyword parameters).

        Args:
            factory: called with the config's parameters to build a sampler.
            name: the name configs select it by; defaults to ``factory.name``. When
                ``factory`` is not a class (a preset such as ``functools.partial``), the
                samplers it builds answer to this name.
            aliases: further names that select it: a tuple or list, never one string.
            description: one line for ``list`` and ``show``; defaults to the first
                line of the factory's docstring (a preset's: of what it wraps).
        """


@hookspec
def agentdescent_register_samplers(register: Register) -> None:
    """Register this plugin's samplers by calling ``register`` once per sampler.

    A failure here (an exception, or a registration that is not a sampler factory)
    is recorded against the plugin's distribution and never affects other plugins.
    """
