"""The registry's records: a :class:`SamplerInfo` per sampler, a :class:`PluginFailure` per failure.

Listing, :meth:`~agentdescent_sampling.registry.Registry.get` and plugin loading use
them; creating a built-in imports none of this.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal

import attrs

from ._display import escaped_name, one_of, safe_repr, shown
from .params import Signature
from .policy import normalize

__all__ = ["WIRING", "Form", "PluginFailure", "Record", "SamplerInfo", "summary"]

#: Where a sampler comes from: this package, an entry point of either form, or
#: :func:`~agentdescent_sampling.registry.register`.
Form = Literal["built-in", "class", "hook", "in-process"]
#: The opt-in methods through which a sampler is told more than outcomes, and what each tells.
WIRING = {
    "evidence": "each evidence card's self-verify gain and whether it was committed (evidence)",
    "end_round": "each round's commit count (end_round)",
    "repeated": "whether a card proposes again what its task's card before did (repeated)",
}


@attrs.frozen
class SamplerInfo:
    """One registered sampler: where it comes from and how to configure it."""

    name: str
    factory: Callable[..., Any] = attrs.field(repr=False)
    aliases: tuple[str, ...]
    description: str
    distribution: str
    version: str
    entry_point: str
    form: Form
    signature: Signature
    #: Whether the registry wraps new instances in ``synchronized()`` because the
    #: factory declares ``thread_safe = False``.
    synchronized: bool
    status: Literal["ok", "conflict"] = "ok"

    @property
    def keys(self) -> set[str]:
        """Every normalized name that selects it."""
        return {normalize(each) for each in (self.name, *self.aliases)}

    @property
    def wiring(self) -> tuple[str, ...]:
        """The :data:`WIRING` methods its class has, read without running plugin code."""
        if not issubclass(type(self.factory), type):  # isinstance would read its __class__
            return ()
        return tuple(
            method
            for method in WIRING
            if callable(inspect.getattr_static(self.factory, method, None))
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record, the shape ``list --json`` prints."""
        return {
            "kind": "sampler",
            "name": self.name,
            "aliases": list(self.aliases),
            "description": self.description,
            "distribution": self.distribution,
            "version": self.version,
            "entry_point": self.entry_point,
            "form": self.form,
            "parameters": [
                {
                    "name": parameter.name,
                    "default": None if parameter.required else _jsonable(parameter.default),
                    "required": parameter.required,
                    "type": parameter.annotation,
                }
                for parameter in self.signature.parameters
            ],
            "accepts_any_parameter": self.signature.accepts_any,
            "synchronized": self.synchronized,
            "status": self.status,
        }


#: How the failure of a hook-form plugin whose hooks ran and registered nothing begins: it
#: may have meant any name, as a plugin whose code raised may.
_REGISTERED_NOTHING = "its hooks registered no sampler"


@attrs.frozen
class PluginFailure:
    """A plugin, or one of its registrations, that could not be used, and why.

    ``status`` is ``"failed"`` (it raised, or registered something invalid),
    ``"conflict"`` (it claimed a built-in's name or this package's identity) or
    ``"disabled"`` (blocked by ``AGENTDESCENT_SAMPLERS_DISABLE`` or
    ``AGENTDESCENT_SAMPLERS_ONLY``; a claim on a built-in's name, too, when ``DISABLE``
    names its distribution). An entry point refused as ``"conflict"`` or ``"disabled"`` was
    never imported; a registration a hook made is refused after its plugin was imported,
    whatever its status.
    """

    entry_point: str
    distribution: str
    version: str
    status: Literal["failed", "conflict", "disabled"]
    message: str
    names: tuple[str, ...] = ()
    error: BaseException | None = attrs.field(default=None, repr=False, eq=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record, the shape ``list --json`` prints."""
        return {
            "kind": "failure",
            "entry_point": self.entry_point,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "names": list(self.names),
            "error": self.message,
        }

    @property
    def title(self) -> str:
        """``== names: dist 1.0, entry point 'name = module:attr' (status)``, shown safely."""
        names = shown(", ".join(map(escaped_name, self.names)) or "?")
        return (
            f"== {names}: {shown(escaped_name(self.distribution))} {shown(self.version)}, "
            f"entry point {shown(ascii(self.entry_point))} ({self.status})"
        )

    @property
    def where(self) -> str:
        """``dist 1.0 (entry point 'name = module:attr')``, for messages."""
        return (
            f"{escaped_name(self.distribution)} {self.version} (entry point {self.entry_point!a})"
        )


#: What :func:`~agentdescent_sampling.registry.available` lists.
Record = SamplerInfo | PluginFailure


def summary(text: str | None) -> str:
    """The first line of ``text``, cut to a length a table can show."""
    line = (text or "").strip().split("\n", 1)[0].strip()
    return line if len(line) <= 200 else line[:197] + "..."


def _jsonable(value: Any) -> Any:
    if value is None or one_of(type(value), (str, int, float, bool)):
        return value if type(value) is not int or abs(value) < 2**53 else safe_repr(value)
    return safe_repr(value)
