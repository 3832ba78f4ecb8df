"""Which sampler plugins exist, whose they are, and which may load: the trust decisions.

Nothing here imports a plugin. The built-ins are a table in this module, never read
from installed metadata, so no distribution can pass itself off as one by writing a
metadata field: an entry point whose distribution calls itself ``agentdescent-sampling``
is refused, and so is any entry point whose name is a built-in's. :func:`scan` reads
the other distributions' ``agentdescent.samplers`` entry points, one distribution at a
time, and sorts each into "may load" or a :class:`PluginFailure` saying why not.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any, Literal

import attrs

from ._version import __version__
from .errors import InvalidSamplerConfig
from .protocol import check_name

__all__ = [
    "BUILTINS",
    "DISABLE_ENV",
    "GROUP",
    "ONLY_ENV",
    "OWN_DISTRIBUTION",
    "STRICT_ENV",
    "VERSION",
    "Builtin",
    "EntryPoint",
    "PluginFailure",
    "Policy",
    "normalize",
    "scan",
]

#: The entry-point group plugins register under.
GROUP = "agentdescent.samplers"
#: Comma-separated sampler or distribution names that never load.
DISABLE_ENV = "AGENTDESCENT_SAMPLERS_DISABLE"
#: Comma-separated distribution names whose plugins may load (built-ins always may).
ONLY_ENV = "AGENTDESCENT_SAMPLERS_ONLY"
#: ``1``/``true``/``yes``/``on`` make any plugin load failure raise instead of being recorded.
STRICT_ENV = "AGENTDESCENT_SAMPLERS_STRICT"

#: This package's distribution name. No plugin may use it.
OWN_DISTRIBUTION = "agentdescent-sampling"
#: This package's version, as the built-ins report it: read from code (a test checks it
#: against the installed metadata) so that selecting a built-in reads no metadata.
VERSION = __version__

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def normalize(name: str) -> str:
    """The form names are compared in: lower case, with ``_`` and ``.`` read as ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@attrs.frozen
class Builtin:
    """A sampler this package ships: its name, the engine's class name as alias, its class."""

    name: str
    aliases: tuple[str, ...]
    #: ``module:attribute``, imported only when this built-in is selected or listed.
    target: str

    @property
    def keys(self) -> frozenset[str]:
        """Every normalized name that selects it."""
        return frozenset(normalize(each) for each in (self.name, *self.aliases))


BUILTINS: tuple[Builtin, ...] = (
    Builtin(
        "round-robin", ("RoundRobin",), "agentdescent_sampling.samplers.round_robin:RoundRobin"
    ),
    Builtin(
        "difficulty-weighted",
        ("DifficultyWeighted",),
        "agentdescent_sampling.samplers.difficulty_weighted:DifficultyWeighted",
    ),
    Builtin(
        "informative-band",
        ("InformativeBand",),
        "agentdescent_sampling.samplers.informative_band:InformativeBand",
    ),
    Builtin(
        "fixable-first",
        ("FixableFirst",),
        "agentdescent_sampling.samplers.fixable_first:FixableFirst",
    ),
)
#: Normalized built-in names and aliases. Reserved whatever the environment says.
RESERVED: frozenset[str] = frozenset().union(*(builtin.keys for builtin in BUILTINS))


@attrs.frozen
class PluginFailure:
    """A plugin, or one of its registrations, that could not be used, and why.

    ``status`` is ``"failed"`` (it raised, or registered something invalid),
    ``"conflict"`` (it claimed a built-in's name or this package's identity) or
    ``"disabled"`` (blocked by ``AGENTDESCENT_SAMPLERS_DISABLE`` or
    ``AGENTDESCENT_SAMPLERS_ONLY``). Only ``"failed"`` plugins were ever imported.
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
    def where(self) -> str:
        """``dist 1.0 (entry point 'name = module:attr')``, for messages."""
        return f"{self.distribution} {self.version} (entry point {self.entry_point!r})"


@attrs.frozen
class EntryPoint:
    """One installed entry point that may load, with the distribution that declared it."""

    name: str
    value: str
    distribution: str
    version: str
    loader: Any = attrs.field(repr=False, eq=False)

    @property
    def label(self) -> str:
        """``name = module:attr``, as written in the distribution's metadata."""
        return f"{self.name} = {self.value}"

    @property
    def form(self) -> Literal["class", "hook"]:
        """Hook form names a module (no ``:``); class form names an object in one."""
        return "class" if ":" in self.value else "hook"


@attrs.frozen
class Policy:
    """Which plugins may load, from ``Registry`` arguments or the environment.

    Args:
        disable: normalized sampler or distribution names that never load.
        only: normalized distribution names whose plugins may load, or ``None`` for all.
        strict: whether a plugin failure raises instead of being recorded.
    """

    disable: frozenset[str]
    only: frozenset[str] | None
    strict: bool

    @classmethod
    def read(
        cls, disable: Iterable[str] | None, only: Iterable[str] | None, strict: bool | None
    ) -> Policy:
        """Take each argument given, else its environment variable.

        ``only=[]``, ``ONLY=","`` and ``ONLY=" , "`` allow no plugin; an unset or empty
        ``ONLY`` allows every plugin.

        Raises:
            InvalidSamplerConfig: ``AGENTDESCENT_SAMPLERS_STRICT`` is not a yes or a no.
        """
        disabled = _names(disable) if disable is not None else _env_names(DISABLE_ENV)
        allowed: frozenset[str] | None
        if only is not None:
            allowed = _names(only)
        else:
            allowed = _env_names(ONLY_ENV) if os.environ.get(ONLY_ENV, "").strip() else None
        return cls(disabled, allowed, _strict() if strict is None else strict)

    def disabled_builtin(self, builtin: Builtin) -> bool:
        """Whether ``builtin`` is disabled, by one of its names or by this package's name."""
        return bool(self.disable & (builtin.keys | {OWN_DISTRIBUTION}))

    def blocked(self, entry_point: EntryPoint) -> str | None:
        """Why ``entry_point`` may not load, or ``None`` if it may."""
        dist = normalize(entry_point.distribution)
        if normalize(entry_point.name) in self.disable or dist in self.disable:
            return f"disabled by {DISABLE_ENV}"
        if self.only is not None and dist not in self.only:
            allowed = ", ".join(sorted(self.only)) or "no plugin"
            return f"not in {ONLY_ENV} ({allowed})"
        return None


def scan(group: str, policy: Policy) -> tuple[list[EntryPoint], list[PluginFailure]]:
    """Read every installed distribution's entry points in ``group``; import none of them.

    A distribution whose metadata can't be read is refused alone, and the others are
    still read. Returns the entry points that may load, and one failure per refused one.
    """
    loadable: list[EntryPoint] = []
    refused: list[PluginFailure] = []
    for found in _distributions(group):
        if isinstance(found, PluginFailure):
            refused.append(found)
            continue
        problem = _refusal(found, policy)
        if problem is None:
            loadable.append(found)
        else:
            status, message = problem
            refused.append(
                PluginFailure(
                    found.label, found.distribution, found.version, status, message, (found.name,)
                )
            )
    return loadable, refused


def _refusal(
    ep: EntryPoint, policy: Policy
) -> tuple[Literal["failed", "conflict", "disabled"], str] | None:
    if normalize(ep.distribution) == OWN_DISTRIBUTION:
        return "conflict", (
            f"its distribution calls itself {OWN_DISTRIBUTION!r}, but that package declares no "
            f"entry points: its built-ins are defined in its code. Refused and never imported; "
            f"uninstall the distribution that installed this entry point"
        )
    if normalize(ep.name) in RESERVED:
        return "conflict", (
            f"its entry point is named {ep.name!r}, which selects a built-in; built-in names are "
            f"reserved, so it was refused and never imported. Rename it"
        )
    if ep.form == "class":
        try:
            check_name(ep.name)
        except ValueError as error:
            return "failed", f"{error}. Refused and never imported"
    blocked = policy.blocked(ep)
    return ("disabled", blocked) if blocked else None


def _distributions(group: str) -> Iterator[EntryPoint | PluginFailure]:
    # Imported here, not at the top: selecting a built-in never reads installed metadata,
    # and importing the metadata machinery costs more than a built-in's whole module.
    if sys.version_info >= (3, 12):
        from importlib import metadata
    else:
        # The backport gives 3.10 and 3.11 the 3.12 API this is written against.
        import importlib_metadata as metadata

    seen: set[str] = set()
    for dist in metadata.distributions():
        location = str(getattr(dist, "_path", "an unknown location"))
        try:
            name, version = dist.name, dist.version
            if not (isinstance(name, str) and name and isinstance(version, str)):
                raise ValueError("METADATA has no Name or Version")
        except Exception as error:  # noqa: BLE001  # one unreadable dist-info must not hide the rest
            if _declares(dist, group):
                yield PluginFailure(
                    location, "unknown", "unknown", "failed",
                    f"the distribution at {location} has no readable metadata "
                    f"({type(error).__name__}), so whose entry points these are is unknown; "
                    f"refused and never imported. Reinstall or remove it",
                )  # fmt: skip
            continue
        if normalize(name) in seen:  # as importlib.metadata does: the first on sys.path wins
            continue
        seen.add(normalize(name))
        try:
            declared = list(dist.entry_points.select(group=group))
        except Exception as error:  # noqa: BLE001  # a malformed entry_points.txt spoils only its own dist
            yield PluginFailure(
                location, name, version, "failed",
                f"its entry_points.txt can't be parsed ({type(error).__name__}: "
                f"{str(error)[:200]}); none of its plugins load. Reinstall or fix it",
            )  # fmt: skip
            continue
        for entry in declared:
            yield EntryPoint(entry.name, entry.value, name, version, entry)


def _declares(dist: Any, group: str) -> bool:
    try:
        text = dist.read_text("entry_points.txt") or ""
    except Exception:  # noqa: BLE001  # unreadable means "declares nothing we can use"
        return False
    return f"[{group}]" in text


def _names(given: Iterable[str]) -> frozenset[str]:
    return frozenset(normalize(name.strip()) for name in given if name.strip())


def _env_names(variable: str) -> frozenset[str]:
    return _names(os.environ.get(variable, "").split(","))


def _strict() -> bool:
    value = os.environ.get(STRICT_ENV, "")
    if value.strip().lower() in _TRUE:
        return True
    if value.strip().lower() in _FALSE:
        return False
    raise InvalidSamplerConfig(
        f"{STRICT_ENV}={value[:40]!r} is neither yes nor no: expected one of 1, true, yes, on "
        f"(strict) or 0, false, no, off, or unset (not strict)"
    )
