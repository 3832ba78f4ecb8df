"""Find samplers through ``agentdescent.samplers`` entry points, load them lazily, build them.

Discovery reads installed metadata only. A plugin is imported when a config asks
for a name its entry point carries, or, for hook-form plugins, when a name is not
found otherwise or the full list is asked for. Every load failure is recorded as a
:class:`PluginFailure` and isolated from the other plugins.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

import attrs

from .errors import (
    InvalidSamplerConfig,
    PluginLoadError,
    SamplerConflictError,
    UnknownSamplerError,
)
from .params import Signature, signature_of
from .protocol import TaskSampler, check_name, short_repr
from .spec import SamplerSpec, SpecLike, parse_spec
from .sync import synchronized

if TYPE_CHECKING:
    import pluggy

__all__ = [
    "DISABLE_ENV",
    "GROUP",
    "ONLY_ENV",
    "STRICT_ENV",
    "PluginFailure",
    "Record",
    "Registry",
    "SamplerInfo",
    "available",
    "create",
    "default_registry",
    "normalize",
]

#: The entry-point group plugins register under.
GROUP = "agentdescent.samplers"
#: Comma-separated sampler or distribution names that never load.
DISABLE_ENV = "AGENTDESCENT_SAMPLERS_DISABLE"
#: Comma-separated distribution names whose plugins may load (built-ins always may).
ONLY_ENV = "AGENTDESCENT_SAMPLERS_ONLY"
#: Set to 1 to make any plugin load failure raise instead of being recorded.
STRICT_ENV = "AGENTDESCENT_SAMPLERS_STRICT"

_OWN_DISTRIBUTION = "agentdescent-sampling"
_UNKNOWN = "unknown"
#: The built-ins' entry points, exactly as pyproject.toml declares them. Known without
#: reading installed metadata, so selecting a built-in before anything else has been
#: looked up imports that one sampler's module and no plugin (see Registry._builtin).
_BUILTINS = {
    "round-robin": "agentdescent_sampling.samplers:RoundRobin",
    "difficulty-weighted": "agentdescent_sampling.samplers:DifficultyWeighted",
    "informative-band": "agentdescent_sampling.samplers:InformativeBand",
    "fixable-first": "agentdescent_sampling.samplers:FixableFirst",
}


def normalize(name: str) -> str:
    """The form names are compared in: case-folded, with ``_`` and ``.`` read as ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


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
    form: Literal["class", "hook"]
    signature: Signature
    #: Whether the registry wraps new instances in :func:`synchronized` because the
    #: factory declares ``thread_safe = False``.
    synchronized: bool
    status: Literal["ok", "conflict"] = "ok"

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


@attrs.frozen
class PluginFailure:
    """A plugin, or one of its registrations, that could not be used, and why.

    ``status`` is ``"failed"`` (it raised, or registered something invalid),
    ``"conflict"`` (it claimed a built-in's name) or ``"disabled"`` (blocked by
    ``AGENTDESCENT_SAMPLERS_DISABLE`` or ``AGENTDESCENT_SAMPLERS_ONLY``; never imported).
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


Record = SamplerInfo | PluginFailure


@attrs.frozen
class _EntryPoint:
    name: str
    value: str
    distribution: str
    version: str
    loader: Any = attrs.field(repr=False, eq=False)

    @property
    def label(self) -> str:
        return f"{self.name} = {self.value}"


class Registry:
    """The samplers installed in this environment, found through entry points.

    Most code uses the module-level :func:`create` and :func:`available`, which
    share one default registry. Build your own for embedding or tests; every
    argument left as ``None`` is read from its environment variable.

    Args:
        disable: sampler or distribution names that never load
            (``AGENTDESCENT_SAMPLERS_DISABLE``).
        only: distributions whose plugins may load; this package's built-ins
            always may (``AGENTDESCENT_SAMPLERS_ONLY``).
        strict: raise :class:`PluginLoadError` on any load failure instead of
            recording it (``AGENTDESCENT_SAMPLERS_STRICT=1``).
        group: the entry-point group to read.
    """

    def __init__(
        self,
        *,
        disable: Iterable[str] | None = None,
        only: Iterable[str] | None = None,
        strict: bool | None = None,
        group: str = GROUP,
    ) -> None:
        self.disable = frozenset(map(normalize, _from_env(DISABLE_ENV, disable)))
        only_names = _from_env(ONLY_ENV, only)
        self.only = frozenset(map(normalize, only_names)) if only_names else None
        self.strict = os.environ.get(STRICT_ENV, "") == "1" if strict is None else strict
        self.group = group
        self._lock = threading.RLock()
        self._discovered = False
        self._pending: list[_EntryPoint] = []
        self._samplers: dict[str, list[SamplerInfo]] = {}
        self._failures: list[PluginFailure] = []
        self._reserved: set[str] = set()

    @cached_property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The pluggy manager hook-form plugins register with, made when the first plugin loads."""
        import pluggy

        from . import hookspecs

        manager = pluggy.PluginManager(hookspecs.PROJECT)
        manager.add_hookspecs(hookspecs)
        return manager

    # -- public API ---------------------------------------------------------------

    def create(self, spec: SpecLike, *, state: str | os.PathLike[str] | None = None) -> TaskSampler:
        """Build a sampler from a name, a ``name:key=value`` string, a mapping or a spec.

        With ``state``, the sampler is a :class:`DurableSampler`: it loads that file if
        it exists and rewrites it atomically after every record.

        Raises:
            UnknownSamplerError: no sampler has that name.
            InvalidSamplerConfig: the spec or its parameters are wrong.
            SamplerConflictError: two distributions provide the name; set ``provider``.
            PluginLoadError: the plugin that provides the name failed to load or
                its factory did not return a sampler.
            StateError: the ``state`` file belongs to another sampler or other parameters.
        """
        parsed = parse_spec(spec)
        info = self.get(parsed.name, provider=parsed.provider)
        sampler = _build(info, parsed)
        if state is None:
            return sampler
        from .durable import DurableSampler  # only a durable sampler needs the state module

        return DurableSampler(sampler, state)

    def get(self, name: str, *, provider: str | None = None) -> SamplerInfo:
        """Return the record of the sampler that ``name`` selects (loading its plugin).

        Raises:
            UnknownSamplerError, SamplerConflictError, PluginLoadError: as for :meth:`create`.
        """
        key = normalize(name)
        with self._lock:
            if not self._discovered:
                builtin = self._builtin(key, provider)
                if builtin is not None:
                    return builtin
            self._discover()
            self._load(ep for ep in self._pending if normalize(ep.name) == key)
            candidates = self._candidates(key, provider)
            if not candidates:  # maybe a hook-form plugin registers it: load the rest
                self._load(list(self._pending))
                candidates = self._candidates(key, provider)
            if len(candidates) == 1:
                return candidates[0]
            if candidates:
                raise SamplerConflictError(_conflict_message(name, candidates))
            raise self._not_found(name, key, provider)

    def _builtin(self, key: str, provider: str | None) -> SamplerInfo | None:
        """The built-in ``key`` names, registered from :data:`_BUILTINS`; None if it names none.

        Built-in names are reserved, so no plugin could change the answer: there is no
        need to read every installed distribution's metadata to give it.
        """
        if (provider is not None and not _is_own(provider)) or _OWN_DISTRIBUTION in self.disable:
            return None
        for name, value in _BUILTINS.items():
            module, _, attribute = value.partition(":")
            keys = {normalize(name), normalize(attribute)}
            if key not in keys or self.disable & keys:
                continue
            if normalize(name) not in self._samplers:
                factory = getattr(importlib.import_module(module), attribute)
                ep = _EntryPoint(name, value, _OWN_DISTRIBUTION, _own_version(), None)
                self._register(ep, "class", factory, name, (), None)
            return self._samplers[normalize(name)][0]
        return None

    def _candidates(self, key: str, provider: str | None) -> list[SamplerInfo]:
        return [
            info
            for info in self._samplers.get(key, [])
            if provider is None or normalize(info.distribution) == normalize(provider)
        ]

    def available(self) -> list[Record]:
        """One record per sampler and one per failed, conflicting or disabled plugin.

        Loads every plugin that may load, so a plugin's failures show up here.
        """
        with self._lock:
            self._discover()
            self._load(list(self._pending))
            infos = {id(info): info for found in self._samplers.values() for info in found}
            shared = {
                id(info) for found in self._samplers.values() if len(found) > 1 for info in found
            }
            samplers = sorted(
                (
                    attrs.evolve(info, status="conflict") if key in shared else info
                    for key, info in infos.items()
                ),
                key=lambda info: (not _is_own(info.distribution), info.name, info.distribution),
            )
            return [*samplers, *self._failures]

    def failures(self) -> list[PluginFailure]:
        """The load failures, conflicts and disabled plugins seen so far (loads nothing)."""
        with self._lock:
            return list(self._failures)

    # -- discovery and loading ------------------------------------------------------

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        metadata = _metadata()
        try:
            found = metadata.entry_points(group=self.group)
        except Exception as error:  # noqa: BLE001  # broken metadata must not break the host
            found = metadata.EntryPoints(())
            self._fail(None, "failed", f"reading installed entry points failed: {error!r}", error)
        for entry in found:
            dist = entry.dist
            ep = _EntryPoint(
                entry.name,
                entry.value,
                dist.name if dist is not None else _UNKNOWN,
                dist.version if dist is not None else _UNKNOWN,
                entry,
            )
            if _is_own(ep.distribution) and normalize(ep.name) in self._samplers:
                continue  # a built-in that _builtin() has already registered
            blocked = self._blocked_by(ep)
            if blocked:
                self._fail(ep, "disabled", blocked)
            else:
                self._pending.append(ep)
        # Built-ins load first, so their names are reserved before any plugin registers.
        self._load([ep for ep in self._pending if _is_own(ep.distribution)])

    def _blocked_by(self, ep: _EntryPoint) -> str | None:
        if normalize(ep.name) in self.disable or normalize(ep.distribution) in self.disable:
            return f"disabled by {DISABLE_ENV}"
        only = self.only
        if (
            only is not None
            and not _is_own(ep.distribution)
            and normalize(ep.distribution) not in only
        ):
            return f"not in {ONLY_ENV} ({', '.join(sorted(only))})"
        return None

    def _load(self, entry_points: Iterable[_EntryPoint]) -> None:
        for ep in list(entry_points):
            if ep not in self._pending:
                continue
            self._pending.remove(ep)
            try:
                loaded = ep.loader.load()
            # A plugin is isolated from the host whatever it raises, even SystemExit.
            except (Exception, SystemExit) as error:  # noqa: BLE001
                self._fail(ep, "failed", f"import failed: {_describe(error)}", error)
                continue
            if self._is_hook_plugin(loaded):
                self._load_hooks(ep, loaded)
            elif callable(loaded):
                self._register(ep, "class", loaded, ep.name, (), None)
            else:
                self._fail(
                    ep,
                    "failed",
                    f"{ep.value} is {type(loaded).__name__} {short_repr(loaded)}, neither a "
                    f"sampler factory nor a module of @hookimpl functions",
                )

    def _is_hook_plugin(self, loaded: object) -> bool:
        if inspect.ismodule(loaded):
            return True
        try:
            names = dir(loaded)
        except Exception:  # noqa: BLE001  # a hostile __dir__ just means "not a hook plugin"
            return False
        return any(self.plugin_manager.parse_hookimpl_opts(loaded, name) for name in names)

    def _load_hooks(self, ep: _EntryPoint, plugin: object) -> None:
        manager = self.plugin_manager
        registrations: list[tuple[Callable[..., Any], str | None, tuple[str, ...], str | None]] = []

        def register(
            factory: Callable[..., Any],
            name: str | None = None,
            aliases: Iterable[str] = (),
            description: str | None = None,
        ) -> None:
            registrations.append((factory, name, tuple(aliases), description))

        try:
            manager.register(plugin, name=ep.label)
            manager.check_pending()
            others = [other for other in manager.get_plugins() if other is not plugin]
            caller = manager.subset_hook_caller("agentdescent_register_samplers", others)
            caller(register=register)
        except (Exception, SystemExit) as error:  # noqa: BLE001  # isolated, as in _load
            if manager.is_registered(plugin):
                manager.unregister(plugin)
            self._fail(ep, "failed", f"hook failed: {_describe(error)}", error)
            return
        if not registrations:
            self._fail(ep, "failed", "its hooks registered no sampler")
        for factory, name, aliases, description in registrations:
            self._register(ep, "hook", factory, name, aliases, description)

    def _register(
        self,
        ep: _EntryPoint,
        form: Literal["class", "hook"],
        factory: object,
        name: str | None,
        aliases: tuple[str, ...],
        description: str | None,
    ) -> None:
        problem = _factory_problem(factory)
        if problem is None:
            name = name if name is not None else getattr(factory, "name", None)
            problem = _name_problem(name, aliases)
        if problem is not None:
            claimed = (name,) if isinstance(name, str) else ()
            self._fail(ep, "failed", problem, names=claimed)
            return
        assert callable(factory)  # for mypy: _factory_problem checked it
        assert isinstance(name, str)  # for mypy: _name_problem checked it
        names = _all_names(factory, name, aliases)
        keys = {normalize(each) for each in names}
        if self.disable & keys:
            self._fail(ep, "disabled", f"disabled by {DISABLE_ENV}", names=names)
            return
        if not _is_own(ep.distribution) and keys & self._reserved:
            taken = ", ".join(sorted(keys & self._reserved))
            self._fail(
                ep,
                "conflict",
                f"claims the built-in name {taken}; built-in names are reserved, so the "
                f"built-in is used and this registration is ignored; rename it",
                names=names,
            )
            return
        mine = [
            info
            for key in keys
            for info in self._samplers.get(key, [])
            if info.distribution == ep.distribution
        ]
        if mine:
            self._fail(
                ep,
                "failed",
                f"registers {name!r}, a name its distribution already registered "
                f"(as {mine[0].name!r} from {mine[0].entry_point!r}); the first is kept",
                names=names,
            )
            return
        info = SamplerInfo(
            name=name,
            factory=factory,
            aliases=names[1:],
            description=description or _first_line(factory),
            distribution=ep.distribution,
            version=ep.version,
            entry_point=ep.label,
            form=form,
            signature=signature_of(factory),
            synchronized=getattr(factory, "thread_safe", True) is False,
        )
        for key in keys:
            self._samplers.setdefault(key, []).append(info)
        if _is_own(ep.distribution):
            self._reserved |= keys

    def _fail(
        self,
        ep: _EntryPoint | None,
        status: Literal["failed", "conflict", "disabled"],
        message: str,
        error: BaseException | None = None,
        names: tuple[str, ...] | None = None,
    ) -> None:
        failure = PluginFailure(
            entry_point=ep.label if ep else "",
            distribution=ep.distribution if ep else _UNKNOWN,
            version=ep.version if ep else _UNKNOWN,
            status=status,
            message=message,
            names=names if names is not None else ((ep.name,) if ep else ()),
            error=error,
        )
        self._failures.append(failure)
        if self.strict and status != "disabled":
            raise PluginLoadError(
                f"{_where(failure)}: {message} ({STRICT_ENV}=1 makes load failures raise)"
            ) from error

    def _not_found(self, name: str, key: str, provider: str | None) -> Exception:
        for failure in self._failures:
            if key in map(normalize, failure.names):
                if failure.status == "disabled":
                    return UnknownSamplerError(
                        f"sampler {name!r} is {failure.message} ({_where(failure)}); "
                        f"unset or change that variable to use it"
                    )
                if failure.status == "failed":
                    error = PluginLoadError(
                        f"sampler {name!r} comes from a plugin that failed to load: "
                        f"{_where(failure)}: {failure.message}"
                    )
                    error.__cause__ = failure.error
                    return error
        if key in self.disable:
            return UnknownSamplerError(f"sampler {name!r} is disabled by {DISABLE_ENV}")
        if provider is not None and key in self._samplers:
            providers = ", ".join(sorted({info.distribution for info in self._samplers[key]}))
            return UnknownSamplerError(
                f"sampler {name!r} is not provided by {provider!r}; it is provided by "
                f"{providers}; set provider to one of those or leave it out"
            )
        names = sorted({info.name for found in self._samplers.values() for info in found})
        every = sorted(self._samplers)
        close = difflib.get_close_matches(key, every, n=1, cutoff=0.6)
        message = f"no sampler named {name!r}."
        if close:
            message += f" Did you mean {self._samplers[close[0]][0].name!r}?"
        message += f" Available: {', '.join(names) or 'none'}."
        broken = [failure for failure in self._failures if failure.status == "failed"]
        if broken:
            message += " These plugins failed to load and might provide it: " + "; ".join(
                f"{_where(failure)}: {failure.message}" for failure in broken
            )
        message += " Run 'agentdescent-sampling list' for details."
        return UnknownSamplerError(message)


def _build(info: SamplerInfo, spec: SamplerSpec) -> TaskSampler:
    params = dict(spec.params)
    problems = info.signature.check(params)
    if problems:
        close = [
            difflib.get_close_matches(key, [p.name for p in info.signature.parameters], n=1)
            for key in params
        ]
        hints = "".join(f" Did you mean {match[0]!r}?" for match in close if match)
        raise InvalidSamplerConfig(
            f"sampler {info.name!r}: {'; '.join(problems)}.{hints} "
            f"Valid parameters: {info.signature.describe()}"
        )
    try:
        sampler = info.factory(**params)
    except (TypeError, ValueError) as error:
        raise InvalidSamplerConfig(
            f"sampler {info.name!r} rejected {short_repr(str(spec))}: "
            f"{short_repr(str(error), 300)}. "
            f"Valid parameters: {info.signature.describe()}"
        ) from error
    except Exception as error:
        raise PluginLoadError(
            f"sampler {info.name!r} ({info.distribution} {info.version}) raised while being "
            f"built from {short_repr(str(spec))}: {short_repr(_describe(error), 300)}"
        ) from error
    if not isinstance(sampler, TaskSampler):
        raise PluginLoadError(
            f"sampler {info.name!r} ({info.distribution} {info.version}): its factory returned "
            f"{type(sampler).__name__}, which has no pick() and record() methods"
        )
    return synchronized(sampler) if info.synchronized else sampler


def _factory_problem(factory: object) -> str | None:
    if not callable(factory):
        return f"registered {type(factory).__name__} {short_repr(factory)}, which is not callable"
    if inspect.isclass(factory):
        missing = [m for m in ("pick", "record") if not callable(getattr(factory, m, None))]
        if missing:
            return f"registered class {factory.__name__}, which has no {' or '.join(missing)}()"
    return None


def _name_problem(name: object, aliases: tuple[str, ...]) -> str | None:
    if name is None:
        return "registered a factory without a name: pass name= or give it a 'name' attribute"
    for each in (name, *aliases):
        try:
            check_name(each)
        except ValueError as error:
            return str(error)
    return None


def _all_names(factory: Callable[..., Any], name: str, aliases: tuple[str, ...]) -> tuple[str, ...]:
    names = [name]
    extra = list(aliases)
    if inspect.isclass(factory):
        extra.append(factory.__name__)  # the class name is always an alias
    for alias in extra:
        if normalize(alias) not in map(normalize, names):
            try:
                names.append(check_name(alias))
            except ValueError:
                continue  # a private class name such as _Sampler is simply not an alias
    return tuple(names)


def _first_line(factory: object) -> str:
    doc = inspect.getdoc(factory) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _conflict_message(name: str, candidates: list[SamplerInfo]) -> str:
    listed = "; ".join(
        f"{info.distribution} {info.version} ({info.entry_point})" for info in candidates
    )
    first = candidates[0].distribution
    return (
        f"sampler {name!r} is provided by {len(candidates)} distributions: {listed}. "
        f"Pick one with provider, for example {{'name': {name!r}, 'provider': {first!r}}}, "
        f"or uninstall one of them"
    )


def _where(failure: PluginFailure) -> str:
    return f"{failure.distribution} {failure.version} (entry point {failure.entry_point!r})"


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _is_own(distribution: str) -> bool:
    return normalize(distribution) == _OWN_DISTRIBUTION


def _metadata() -> ModuleType:
    """importlib.metadata, imported on first discovery: selecting a built-in never needs it."""
    if sys.version_info >= (3, 12):
        from importlib import metadata
    else:
        # The backport gives 3.10 and 3.11 the 3.12 API this module is written against:
        # an immutable EntryPoint that carries its distribution (on 3.10 it is a named
        # tuple whose equality ignores the distribution) and EntryPoints.select().
        import importlib_metadata as metadata
    return metadata


def _own_version() -> str:
    from ._version import __version__  # pyproject.toml reads the version from here too

    return __version__


def _from_env(variable: str, given: Iterable[str] | None) -> list[str]:
    if given is not None:
        return [name for name in given if name]
    return [part.strip() for part in os.environ.get(variable, "").split(",") if part.strip()]


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


_default: Registry | None = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The registry behind :func:`create` and :func:`available`, built on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Registry()
        return _default


def create(
    spec: SpecLike | Mapping[str, Any], *, state: str | os.PathLike[str] | None = None
) -> TaskSampler:
    """Build a sampler from a config value, using the default registry.

    ``spec`` is a name (``"difficulty-weighted"``), a string with parameters
    (``"difficulty-weighted:c=0.1"``), a mapping as read from TOML or JSON
    (``{"name": "difficulty-weighted", "c": 0.1}``, with an optional
    ``"provider"``) or a :class:`SamplerSpec`. ``state`` is a file that keeps the
    sampler's statistics across runs (see :class:`DurableSampler`). See
    :meth:`Registry.create`.
    """
    return default_registry().create(spec, state=state)


def available() -> list[Record]:
    """Every installed sampler and every plugin that failed, from the default registry."""
    return default_registry().available()
