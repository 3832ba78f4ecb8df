"""The rules every lookup starts from, read from code and the environment, never from metadata.

The built-ins' table, the reserved names, how names compare, and which plugins the
environment lets load. The built-ins are written here, not read from installed metadata,
so no distribution can pass itself off as one by writing a metadata field
(:mod:`~agentdescent_sampling.discovery` refuses such entry points). Selecting a
built-in needs this module and no plugin machinery.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from ._version import __version__
from .errors import InvalidSamplerConfig
from .protocol import short_repr

__all__ = [
    "BUILTINS",
    "DISABLE_ENV",
    "GROUP",
    "ONLY_ENV",
    "OWN_DISTRIBUTION",
    "RESERVED",
    "STRICT_ENV",
    "VERSION",
    "EntryPoint",
    "Policy",
    "builtin_of",
    "known_apart",
    "normalize",
    "of_provider",
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


def of_provider(distribution: str, provider: str | None) -> bool:
    """Whether ``distribution`` is ``provider`` (by :func:`normalize`); any is, if
    ``provider`` is None."""
    return provider is None or normalize(distribution) == normalize(provider)


class EntryPoint(NamedTuple):
    """One ``agentdescent.samplers`` entry point, with the distribution that declared it.

    The built-ins are class-form entry points too, declared in :data:`BUILTINS` in code,
    not in installed metadata, so that no distribution can write one.
    """

    name: str
    #: ``module:attribute`` (class form) or ``module`` (hook form).
    value: str
    distribution: str
    version: str
    #: The installed entry point that imports it; ``None`` for a built-in.
    loader: Any = None
    #: Further names that select it; only a built-in declares them in its entry point.
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``name = module:attr``, as written in the distribution's metadata."""
        return f"{self.name} = {self.value}"

    @property
    def form(self) -> Literal["class", "hook"]:
        """Hook form names a module (no ``:``); class form names an object in one."""
        return "class" if ":" in self.value else "hook"

    @property
    def keys(self) -> frozenset[str]:
        """Every normalized name its metadata says selects it."""
        return frozenset(normalize(each) for each in (self.name, *self.aliases))

    def load(self) -> Any:
        """Import what it names and return it: a sampler factory, or a module of hooks."""
        if self.loader is not None:
            return self.loader.load()
        module, _, attribute = self.value.partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded


def _builtin(name: str, target: str) -> EntryPoint:
    """A sampler this package ships: its name, the engine's class name as alias, its class."""
    alias = target.rpartition(":")[2]
    value = f"agentdescent_sampling.samplers.{target}"
    return EntryPoint(name, value, OWN_DISTRIBUTION, VERSION, aliases=(alias,))


#: The built-ins, imported only when one is selected or listed.
BUILTINS: tuple[EntryPoint, ...] = (
    _builtin("round-robin", "round_robin:RoundRobin"),
    _builtin("difficulty-weighted", "difficulty_weighted:DifficultyWeighted"),
    _builtin("informative-band", "informative_band:InformativeBand"),
    _builtin("fixable-first", "fixable_first:FixableFirst"),
)
#: Normalized built-in names and aliases. Reserved whatever the environment says.
RESERVED: frozenset[str] = frozenset().union(*(builtin.keys for builtin in BUILTINS))


def builtin_of(name: str) -> str | None:
    """The built-in that ``name`` selects, in any of its spellings and aliases (``RoundRobin``
    is ``round-robin``), or ``None``."""
    key = normalize(name)
    return next((builtin.name for builtin in BUILTINS if key in builtin.keys), None)


def known_apart(first: str, second: str) -> bool:
    """Whether the sampler names ``first`` and ``second`` are known, without importing
    anything, to select different samplers: one of them is a built-in's name (any of them:
    ``RoundRobin`` is ``round-robin``), and the other is not that built-in's. A plugin's
    aliases are known only once it is imported."""
    built_ins = [builtin_of(first), builtin_of(second)]
    return any(built_ins) and built_ins[0] != built_ins[1]


class Policy(NamedTuple):
    """Which plugins may load, from ``Registry`` arguments or the environment.

    Args:
        disable: normalized sampler or distribution names that never load.
        only: normalized distribution names whose plugins may load, or ``None`` for all.
        strict: whether a plugin failure raises instead of being recorded.
        disable_by: where ``disable`` came from, as messages name it.
        only_by: where ``only`` came from, as messages name it.
    """

    disable: frozenset[str]
    only: frozenset[str] | None
    strict: bool
    disable_by: str = DISABLE_ENV
    only_by: str = ONLY_ENV

    @classmethod
    def read(
        cls, disable: Iterable[str] | None, only: Iterable[str] | None, strict: bool | None
    ) -> Policy:
        """Take each argument given, else its environment variable.

        ``only=[]``, ``ONLY=","`` and ``ONLY=" , "`` allow no plugin; an unset or empty
        ``ONLY`` allows every plugin.

        Raises:
            InvalidSamplerConfig: ``AGENTDESCENT_SAMPLERS_STRICT`` is not a yes or a no.
            TypeError: ``disable`` or ``only`` is a string (which would be read as its
                characters), or ``strict`` is not a bool.
        """
        for argument, given in (("disable", disable), ("only", only)):
            if isinstance(given, (str, bytes, bytearray)):
                text = given if isinstance(given, str) else bytes(given).decode(errors="replace")
                # As its environment variable would read it: comma-separated names.
                names = [name.strip() for name in text.split(",") if name.strip()]
                raise TypeError(
                    f"Registry({argument}=...) takes a list of names (str), not "
                    f"{type(given).__name__} {short_repr(given)}, which would be read as its "
                    f"characters: write {argument}={short_repr(names)}"
                )
        if strict is not None and not isinstance(strict, bool):
            raise TypeError(
                f"Registry(strict=...) takes True, False or None (the environment decides); "
                f"got {type(strict).__name__} {short_repr(strict)}"
            )
        disabled = _names(disable) if disable is not None else _env_names(DISABLE_ENV)
        allowed: frozenset[str] | None
        if only is not None:
            allowed = _names(only)
        else:
            allowed = _env_names(ONLY_ENV) if os.environ.get(ONLY_ENV, "").strip() else None
        return cls(
            disabled,
            allowed,
            _strict() if strict is None else strict,
            DISABLE_ENV if disable is None else "Registry(disable=...)",
            ONLY_ENV if only is None else "Registry(only=...)",
        )

    def disabled_builtin(self, builtin: EntryPoint) -> bool:
        """Whether ``builtin`` is disabled, by one of its names or by this package's name."""
        return bool(self.disable & (builtin.keys | {OWN_DISTRIBUTION}))

    def blocked(self, entry_point: EntryPoint) -> str | None:
        """Why ``entry_point`` may not load, or ``None`` if it may."""
        dist = normalize(entry_point.distribution)
        if normalize(entry_point.name) in self.disable or dist in self.disable:
            return f"disabled by {self.disable_by}"
        if self.only is not None and dist not in self.only:
            names = sorted(self.only)
            # Cut: the variable is the user's, and this reason is kept per entry point. A
            # non-ASCII name is escaped: it would read as the distribution it is shown beside.
            allowed = ", ".join(_listed(name) for name in names[:5]) or "no plugin"
            if len(names) > 5:
                allowed += f" and {len(names) - 5} more"
            return f"not in {self.only_by} ({allowed})"
        return None


def _listed(name: str) -> str:
    """``name`` cut to 60 characters, as is if ASCII, else quoted with the rest escaped."""
    if name.isascii():
        return name[:60]
    from ._display import ascii_name

    return ascii_name(name)


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
