"""Look samplers up by name, load plugins lazily and in isolation, build samplers.

Every sampler is an entry point. The built-ins are class-form entry points declared in
code, :data:`~agentdescent_sampling.policy.BUILTINS`, so that selecting one reads no
installed metadata, takes no lock and imports no plugin machinery, and no installed
distribution can write one. Any other name goes through
:mod:`~agentdescent_sampling.discovery`, which decides which entry points may load, and
:mod:`~agentdescent_sampling.loading`, which loads them: only the class-form plugin whose
entry point carries the name is imported, or, if none does, the hook-form plugins. Every
failure is recorded as a :class:`PluginFailure` and isolated from the other plugins.
Whatever the name selects, :func:`_build` calls its factory once, and words a failure from
that call.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, cast, overload

import attrs

from .errors import (
    InvalidSamplerConfig,
    PluginLoadError,
    RegistrationError,
    SamplerConflictError,
    SamplerError,
    StateError,
    UnknownSamplerError,
)
from .policy import (
    BUILTINS,
    DISABLE_ENV,
    GROUP,
    ONLY_ENV,
    OWN_DISTRIBUTION,
    STRICT_ENV,
    EntryPoint,
    Policy,
    normalize,
    of_provider,
)
from .protocol import (
    Sampler,
    TaskSampler,
    check_name,
    declares_thread_unsafe,
    short_repr,
    unbindable,
)
from .spec import (
    SamplerSpec,
    SpecLike,
    closest_name,
    cut_read,
    parse_spec,
    table_text,
    typo_of,
)

if TYPE_CHECKING:
    from pathlib import Path

    from .durable import DurableSampler
    from .loading import Plugins
    from .params import Signature
    from .records import PluginFailure, Record, SamplerInfo

__all__ = [
    "DISABLE_ENV",
    "GROUP",
    "IN_PROCESS",
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
    "register",
]

#: The ``distribution`` of samplers registered with :meth:`Registry.register`; the
#: parentheses keep it apart from every installable distribution name.
IN_PROCESS = "(in-process)"
_BUILTIN_BY_KEY = {key: builtin for builtin in BUILTINS for key in builtin.keys}
# Caps that keep a message about hundreds of plugins readable.
_MAX_LISTED = 20
_MAX_FAILURES_QUOTED = 3
_RECORDS = ("PluginFailure", "Record", "SamplerInfo")


# Hidden from type checkers, which read the imports above: a misspelt name stays an error.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        # The records are imported on first use (PEP 562): creating a built-in needs none.
        if name in _RECORDS:
            from . import records

            return getattr(records, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Registry:
    """The samplers of this environment: the built-ins, installed plugins and in-process ones.

    Most code uses the module-level :func:`create`, :func:`available` and
    :func:`register`, which share one default registry. Build your own for embedding
    or tests; every argument left as ``None`` is read from its environment variable.

    Args:
        disable: sampler or distribution names that never load
            (``AGENTDESCENT_SAMPLERS_DISABLE``). A disabled built-in's name stays reserved.
        only: distributions whose plugins may load; built-ins always may
            (``AGENTDESCENT_SAMPLERS_ONLY``). An empty list allows no plugin.
        strict: raise :class:`PluginLoadError` on any plugin failure instead of
            recording it (``AGENTDESCENT_SAMPLERS_STRICT``: 1, true, yes or on).
        group: the entry-point group to read.

    Raises:
        InvalidSamplerConfig: ``AGENTDESCENT_SAMPLERS_STRICT`` is neither a yes nor a no.
        TypeError: ``disable`` or ``only`` is a string rather than a list of them, or
            ``strict`` is not a bool.
    """

    def __init__(
        self,
        *,
        disable: Iterable[str] | None = None,
        only: Iterable[str] | None = None,
        strict: bool | None = None,
        group: str = GROUP,
    ) -> None:
        self.policy = Policy.read(disable, only, strict)
        self._group = group
        self._builtins: dict[str, SamplerInfo] = {}
        # Held while plugins load, so each loads once; never taken for a built-in.
        self._lock = threading.RLock()
        self._loaded: Plugins | None = None

    def __repr__(self) -> str:
        # As the call that would build it, with the environment's settings filled in
        # (names in their compared form); never the entry points, which may be hundreds.
        import reprlib

        policy = self.policy
        only = "None" if policy.only is None else reprlib.repr(sorted(policy.only))
        group = "" if self._group == GROUP else f", group={self._group!r}"
        return (
            f"{type(self).__name__}(disable={reprlib.repr(sorted(policy.disable))}, "
            f"only={only}, strict={policy.strict!r}{group})"
        )

    # -- public API ---------------------------------------------------------------

    @overload
    def create(self, spec: SpecLike, *, state: None = None) -> Sampler: ...
    @overload
    def create(self, spec: SpecLike, *, state: str | os.PathLike[str]) -> DurableSampler: ...
    def create(
        self, spec: SpecLike, *, state: str | os.PathLike[str] | None = None
    ) -> Sampler | DurableSampler:
        """Build a sampler from a name, a ``name:key=value`` string, a mapping or a spec.

        With ``state``, the sampler is a :class:`DurableSampler`: its state lives in the
        SQLite database at that path, loaded if it exists and committed at every record.

        Raises:
            UnknownSamplerError: no sampler has that name.
            InvalidSamplerConfig: the spec or its parameters are wrong.
            SamplerConflictError: two distributions provide the name; set ``provider``.
            PluginLoadError: the plugin that provides the name failed to load, or its
                factory did not return a sampler or raised on its own account (not a
                ``TypeError`` or ``ValueError`` refusing the parameters given).
            StateError: the ``state`` file belongs to another sampler or other parameters,
                is held by another process, or is not a sampler state.
            TypeError: ``state`` is neither None nor a path (a ``str`` or an
                ``os.PathLike`` of one); nothing is built.
        """
        parsed = parse_spec(spec)
        path = None if state is None else _state_path(state)
        try:
            selected = self._select(parsed.name, parsed.provider)
            sampler = _build(parsed, selected)
        except SamplerError as error:
            if isinstance(error, SamplerConflictError):  # a provider given, but misspelt?
                for key in parsed.params:
                    if key == "provider":
                        error.args = (f"{error}.{PROVIDER_IN_STRING}",)
                    elif _meant_provider(key):
                        error.args = (f"{error}. {key!r}: did you mean {_PROVIDER}?",)
            if parsed.source is not None:
                # A spec read from a file names it, as spec_from_file's own errors do; the
                # error keeps its class, cause and traceback.
                read = {"name": parsed.name, "provider": parsed.provider, **parsed.params}
                error.args = (f"in {parsed.source}: {cut_read(str(error), read)}",)
            raise
        if path is None:
            return cast("Sampler", sampler)  # Sampler says only: its other methods are Any
        from .durable import DurableSampler  # only a durable sampler needs the state module

        # Under the name it is registered by, however selected ('FixableFirst', 'fixable_first'):
        # a run selecting it in other words keeps the file's spec.
        mapping = {"name": selected.name, **parsed.params}
        if parsed.provider is not None:
            mapping["provider"] = parsed.provider
        return DurableSampler(sampler, path, spec=mapping)

    def get(self, name: str, *, provider: str | None = None) -> SamplerInfo:
        """Return the record of the sampler that ``name`` selects (loading its plugin).

        Raises:
            UnknownSamplerError, SamplerConflictError, PluginLoadError: as for :meth:`create`.
            InvalidSamplerConfig: ``name`` is not a valid sampler name.
        """
        key = _key(name)
        builtin = _BUILTIN_BY_KEY.get(key)
        if builtin is not None:  # no lock, no metadata, no plugin: nothing can delay it
            return self._builtin(name, builtin, provider)
        with self._lock:
            self._plugins.load_named(key, provider)
            candidates = self._candidates(key, provider)
            # No class-form plugin has the name: maybe a hook-form plugin registers it. A
            # name registered in-process alone is carried by no entry point either, so it
            # meets a hook-form plugin's claim on it at once, not after the next lookup
            # that loads them (one call would give the registration, and the same call
            # later a conflict).
            if not (
                any(found.form != "in-process" for found in candidates)
                or self._plugins.carries(key, provider)
            ):
                self._plugins.load_hooks(provider)
                candidates = self._candidates(key, provider)
            self._raise_if_strict()
            if len(candidates) == 1:
                return candidates[0]
            if candidates:
                raise SamplerConflictError(_conflict_message(name, candidates))
            raise self._not_found(name, key, provider)

    def available(self) -> list[Record]:
        """One record per sampler and one per failed, conflicting or disabled plugin.

        Loads every plugin that may load, so a plugin's failures show up here.
        """
        with self._lock:
            self._plugins.load_all()
            self._raise_if_strict()
            builtins: list[Record] = []
            for builtin in BUILTINS:
                if self.policy.disabled_builtin(builtin):
                    builtins.append(_disabled_builtin(builtin, self.policy.disable_by))
                else:
                    builtins.append(self._builtin(builtin.name, builtin, None))
            samplers = self._plugins.samplers
            shared = {id(info) for found in samplers.values() if len(found) > 1 for info in found}
            plugins = sorted(
                {
                    id(info): attrs.evolve(info, status="conflict") if id(info) in shared else info
                    for found in samplers.values()
                    for info in found
                }.values(),
                key=lambda info: (info.name, info.distribution),
            )
            return [*builtins, *plugins, *self._plugins.failures]

    def failures(self) -> list[PluginFailure]:
        """The load failures, refusals and disabled plugins seen so far (loads nothing).

        A refusal (status ``"conflict"``) is a registration claiming a built-in's name or this
        package's identity. Two distributions providing one name are not failures: each
        sampler is in :meth:`available`, marked ``"conflict"``, and selecting that name
        raises :class:`~agentdescent_sampling.errors.SamplerConflictError`.
        """
        with self._lock:
            return list(self._plugins.failures)

    def _refused_by_metadata(self) -> list[PluginFailure]:
        """:meth:`failures`, once the installed entry points are read: those refused by their
        metadata alone (a built-in's name) are among them. Imports no plugin."""
        with self._lock:
            self._plugins.scan()
            return list(self._plugins.failures)

    def register(
        self,
        factory: Callable[..., Any],
        name: str | None = None,
        *,
        aliases: Iterable[str] = (),
        description: str | None = None,
    ) -> SamplerInfo:
        """Make ``factory`` selectable by name in this process, as a plugin would be.

        For a sampler written in a notebook or a script. The name rules and conflict
        rules are a plugin's: built-in names are reserved, and a name an installed
        plugin also provides needs ``provider`` (this one is ``"(in-process)"``).
        Registering a name again in-process replaces the earlier registration, so a
        re-run notebook cell works. Configs still only name samplers; they never import.

        Args:
            factory: a sampler class, or a callable taking keyword parameters.
            name: the name configs select it by; defaults to ``factory.name``.
            aliases: further names that select it.
            description: one line for ``list`` and ``show``; defaults to the first
                line of the factory's docstring.

        Returns:
            The new record, as :meth:`get` returns it.

        Raises:
            RegistrationError: the factory, a name or the description is invalid, the
                name is disabled, or the call comes from a plugin while it is loaded.
            SamplerConflictError: the name is a built-in's.
        """
        from .loading import Refused, running_plugin, vet

        label = _qualified_name(factory)
        plugin = running_plugin()
        if plugin is not None:
            raise RegistrationError(
                f"register({short_repr(label.rpartition(':')[2], 60)}) was called by the plugin "
                f"{short_repr(plugin, 120)} while it was being loaded; in-process registration "
                f"is for your own code. A plugin makes samplers selectable through its entry "
                f"point, or a hook's register callback"
            )
        with self._lock:
            try:
                info = vet(
                    factory,
                    name,
                    aliases,
                    description,
                    policy=self.policy,
                    distribution=IN_PROCESS,
                    version="-",
                    entry_point=label,
                    form="in-process",
                )
            except Refused as refused:
                error_type = (
                    SamplerConflictError if refused.status == "conflict" else RegistrationError
                )
                raise error_type(
                    f"register({label.rpartition(':')[2]}): {refused.message}"
                ) from None
            samplers = self._plugins.samplers
            earlier = {  # replaced: a re-run notebook cell registers its names again
                id(other): other
                for key in info.keys
                for other in samplers.get(key, [])
                if other.form == "in-process"
            }
            for other in earlier.values():
                self._plugins.remove(other)
            self._plugins.add(info)
            return info

    # -- plugins and built-ins ------------------------------------------------------

    @property
    def _plugins(self) -> Plugins:
        """What this registry has seen of the installed plugins; callers hold the lock.

        Made on first use, so that selecting a built-in never imports the plugin loader.
        """
        if self._loaded is None:
            from .loading import Plugins

            self._loaded = Plugins(self._group, self.policy)
        return self._loaded

    def _select(self, name: str, provider: str | None) -> _Selected:
        """The factory ``name`` selects, and how to describe it if building it fails.

        A built-in is a class-form entry point declared in code: found in
        :data:`~agentdescent_sampling.policy.BUILTINS` with no lock, no metadata and no
        plugin, loaded by the same :meth:`EntryPoint.load` as a plugin's, and described (by
        the same :func:`~agentdescent_sampling.loading.vet`) only when listed, shown or
        refused. Any other name's plugin is loaded and described by :meth:`get`.
        """
        builtin = _BUILTIN_BY_KEY.get(_key(name))
        if builtin is None:
            info = self.get(name, provider=provider)
            return _Selected(info.name, info.factory, info.synchronized, lambda: info)
        self._check_builtin(name, builtin, provider)
        factory = builtin.load()
        return _Selected(
            builtin.name,
            factory,
            declares_thread_unsafe(factory),
            lambda: self._builtin(name, builtin, provider),
        )

    def _builtin(self, name: str, builtin: EntryPoint, provider: str | None) -> SamplerInfo:
        self._check_builtin(name, builtin, provider)
        info = self._builtins.get(builtin.name)
        if info is None:  # two threads may both build it; either record is the same
            info = self._builtins.setdefault(builtin.name, _builtin_info(builtin, self.policy))
        return info

    def _check_builtin(self, name: str, builtin: EntryPoint, provider: str | None) -> None:
        """Raise unless ``builtin`` may serve ``name`` from ``provider``."""
        if not of_provider(OWN_DISTRIBUTION, provider):
            from ._display import ascii_name  # a look-alike of the name shows as one

            raise UnknownSamplerError(
                f"sampler {name!r} is a built-in, provided by {OWN_DISTRIBUTION}, not by "
                f"{ascii_name(provider)}: built-in names are reserved. Leave provider out"
            )
        if self.policy.disabled_builtin(builtin):
            raise UnknownSamplerError(
                f"sampler {name!r} is a built-in disabled by {self.policy.disable_by}; its name "
                f"stays reserved, so no plugin serves it either. Remove it from "
                f"{self.policy.disable_by} to use it"
            )

    def _raise_if_strict(self) -> None:
        if not self.policy.strict:
            return
        problems = [f for f in self._plugins.failures if f.status != "disabled"]
        if problems:
            by_entry_point: dict[str, list[PluginFailure]] = {}
            for failure in problems:  # 500 failed registrations of one hook are one line
                by_entry_point.setdefault(failure.where, []).append(failure)
            named = "".join(
                f"\n- {where}: {_sentence(failures[0].message)}"
                + (f" And {len(failures) - 1} more like it." if len(failures) > 1 else "")
                for where, failures in by_entry_point.items()
            )
            raise PluginLoadError(
                f"{len(problems)} plugin problem(s), and {STRICT_ENV} makes them errors:{named}"
                f"\nFix or uninstall them, or unset {STRICT_ENV}"
            ) from problems[0].error

    # -- lookup -----------------------------------------------------------------------

    def _candidates(self, key: str, provider: str | None) -> list[SamplerInfo]:
        return [
            info
            for info in self._plugins.samplers.get(key, [])
            if of_provider(info.distribution, provider)
        ]

    def _usable(self, provider: str | None) -> dict[str, str]:
        """Each name that selects exactly one sampler of ``provider`` (of any, if None),
        mapped to that sampler's name.

        Class-form entry points not imported yet count by the name their metadata gives.
        """
        found: dict[str, list[str]] = {}
        for key, infos in self._plugins.samplers.items():
            for info in infos:
                if of_provider(info.distribution, provider):
                    found.setdefault(key, []).append(info.name)
        for key, names in self._plugins.unloaded_names(provider).items():
            found.setdefault(key, []).extend(names)
        usable = {key: names[0] for key, names in found.items() if len(names) == 1}
        if of_provider(OWN_DISTRIBUTION, provider):
            for builtin in BUILTINS:
                if not self.policy.disabled_builtin(builtin):
                    usable.update(dict.fromkeys(builtin.keys, builtin.name))
        return usable

    def _hook_label(self, key: str, provider: str | None) -> list[SamplerInfo] | None:
        """The samplers of the hook-form plugin whose entry point is named ``key`` (a label
        that names no sampler), if one loaded and registered any."""
        found = [
            info
            for infos in self._plugins.samplers.values()
            for info in infos
            if info.form == "hook"
            and normalize(info.entry_point.partition("=")[0].strip()) == key
            and of_provider(info.distribution, provider)
        ]
        return list({id(info): info for info in found}.values()) or None

    def _not_found(self, name: str, key: str, provider: str | None) -> Exception:
        # With a provider given, only that distribution's plugins can be what was meant.
        failures = [f for f in self._plugins.failures if of_provider(f.distribution, provider)]
        for failure in failures:
            if key in map(normalize, failure.names):
                if failure.status == "disabled":
                    return UnknownSamplerError(
                        f"sampler {name!r} is {failure.message} ({failure.where}); "
                        f"unset or change that setting to use it"
                    )
                if failure.status == "conflict":  # refused for one of its names
                    # The name is right and the plugin at fault, as for a failed one.
                    return PluginLoadError(
                        f"sampler {name!r} was refused: {failure.where}: {failure.message}"
                    )
                if failure.status == "failed":
                    error = PluginLoadError(
                        f"sampler {name!r} comes from a plugin that failed to load: "
                        f"{failure.where}: {failure.message}"
                    )
                    error.__cause__ = failure.error
                    return error
        if key in self.policy.disable:
            return UnknownSamplerError(f"sampler {name!r} is disabled by {self.policy.disable_by}")
        import difflib  # only on this error path: selecting a sampler never needs it

        from ._display import ascii_name, escaped_name, plural

        if provider is not None:
            # Those providing it, a plugin of which failed to load or was refused among them.
            elsewhere = self._plugins.providers(key) | {
                f.distribution for f in self._plugins.failures if key in map(normalize, f.names)
            }
            if elsewhere:
                return UnknownSamplerError(
                    f"sampler {name!r} is not provided by {ascii_name(provider)}; it is "
                    f"provided by {', '.join(sorted(elsewhere))}; set provider to one of those "
                    f"or leave it out"
                )
            installed = self._plugins.distributions() | {OWN_DISTRIBUTION}
            refused = {failure.distribution for failure in self._plugins.failures}
            known = installed | refused
            if not any(of_provider(distribution, provider) for distribution in known):
                by_key = {normalize(distribution): distribution for distribution in known}
                close = difflib.get_close_matches(normalize(provider), list(by_key), n=1)
                why = _not_a_provider(provider, self._group, by_key[close[0]] if close else None)
                return UnknownSamplerError(
                    f"no sampler named {name!r} provided by {ascii_name(provider)}. {why} "
                    f"Those that may load: {_listing(sorted(installed))}; set provider to one "
                    f"of them, or leave it out"
                )
        usable = self._usable(provider)  # a provider given: only its own names
        names = sorted(set(usable.values()))
        # A name whose plugin failed to load is suggested too, as the one it probably is.
        failed = {normalize(n): (n, f) for f in failures if f.status == "failed" for n in f.names}
        meant = {**{key: spelt for key, (spelt, _) in failed.items()}, **usable}
        others = sorted(other for other in meant if other != key)  # never itself
        meant_as = [other for other in others if typo_of(key, other)]
        close = difflib.get_close_matches(key, meant_as, n=1, cutoff=0)  # the likeliest
        message = f"no sampler named {name!r}"
        message += f" provided by {ascii_name(provider)}." if provider is not None else "."
        told: PluginFailure | None = None
        if close:
            message += f" Did you mean {meant[close[0]]!r}?"
            if close[0] not in usable:  # its failure, here: it may not be quoted below
                told = failed[close[0]][1]
                message += f" Its plugin failed: {told.where}: {_sentence(told.message)}"
        label = self._hook_label(key, provider)
        if label is not None:
            message += (
                f" {name!r} is the entry point of the hook-form plugin "
                f"{escaped_name(label[0].distribution)}, not a sampler: its hook registers "
                f"{_listing(sorted(info.name for info in label))}."
            )
        from_it = f" from {ascii_name(provider)}" if provider is not None else ""
        message += f" Available{from_it}: {_listing(names) or 'none'}."
        blocked: dict[str, set[str]] = {}  # why -> distributions
        for failure in failures:  # a hook-form plugin's names are unknown until it loads
            # A provider given and blocked: whatever its form, the policy is the reason.
            if failure.status == "disabled" and (_hook_form(failure) or provider is not None):
                blocked.setdefault(failure.message, set()).add(failure.distribution)
        if blocked:
            count = len(set().union(*blocked.values()))
            listed = "; ".join(
                f"{_listing(sorted(dists))} ({why})" for why, dists in sorted(blocked.items())
            )
            message += (
                f" The plugin policy blocks {plural(count, 'plugin distribution')} "
                f"that might provide it: {listed}; unset or change that setting to use "
                f"{'them' if count > 1 else 'it'}."
            )
        # Only a plugin whose own code raised (on import, in its hook, while described), or
        # whose hooks registered nothing, can have meant a name no record has: a refused
        # registration or entry point is recorded under its names, the key not among them. A
        # failed hook-form plugin may have registered any name, a class-form one only its own
        # and the aliases its class declares: the hooks are quoted first.
        from .records import _REGISTERED_NOTHING  # loaded with the failures, on this path

        broken = sorted(
            (
                failure
                for failure in failures
                if failure.status == "failed"
                and (failure.error is not None or failure.message.startswith(_REGISTERED_NOTHING))
                and failure is not told
            ),
            key=lambda failure: not _hook_form(failure),
        )
        if broken:
            first_of_each: dict[str, PluginFailure] = {}
            for failure in broken:  # one per distribution: 500 of one plugin's are one line
                first_of_each.setdefault(failure.distribution, failure)
            quoted = " ".join(  # each one a sentence
                f"{failure.where}: {_sentence(failure.message)}"
                for failure in list(first_of_each.values())[:_MAX_FAILURES_QUOTED]
            )
            more = len(broken) - min(len(first_of_each), _MAX_FAILURES_QUOTED)
            message += f" Plugins that failed to load might provide it: {quoted}"
            if more > 0:
                message += f" And {more} more {'failures' if more > 1 else 'failure'}."
        # The closest name may be another sampler altogether ('hardest-first' is near
        # 'fixable-first'): say what else the name may be.
        if provider is None:
            message += (
                f" If a plugin provides {name!r}, its distribution may not be installed in "
                f"this Python environment; run 'agentdescent-sampling list' to see what is "
                f"installed and which plugins failed to load."
            )
        else:
            message += (
                f" If {ascii_name(provider)} should provide {name!r}, the installed version may "
                f"not; run 'agentdescent-sampling list' to see what each plugin provides and "
                f"which failed to load."
            )
        return UnknownSamplerError(message)


def _builtin_info(builtin: EntryPoint, policy: Policy) -> SamplerInfo:
    """The record of a built-in, made as a class-form plugin's is."""
    from .loading import vet

    return vet(
        builtin.load(),
        builtin.name,
        builtin.aliases,
        None,
        policy=policy,
        distribution=builtin.distribution,
        version=builtin.version,
        entry_point=builtin.label,
        form="built-in",
    )


def _disabled_builtin(builtin: EntryPoint, by: str) -> PluginFailure:
    from .records import PluginFailure

    return PluginFailure(
        builtin.label,
        builtin.distribution,
        builtin.version,
        "disabled",
        f"disabled by {by}; the name stays reserved",
        (builtin.name, *builtin.aliases),
    )


class _Selected(NamedTuple):
    """What :meth:`Registry.create` builds: a factory, and how it is served and described."""

    name: str
    factory: Callable[..., Any]
    #: Whether its class declares ``thread_safe = False``: served under a lock.
    synchronized: bool
    #: Its record, made on demand: a built-in's only when building it fails.
    describe: Callable[[], SamplerInfo]


def _state_path(state: object) -> Path:
    """The ``state`` given to :meth:`Registry.create` as a path, checked before anything is
    built.

    Raises:
        TypeError: it is not a ``str`` or an ``os.PathLike`` of one (bytes, a number).
        InvalidSamplerConfig: it is empty or ends with a separator, as ``DurableSampler``
            says.
        StateError: no file can be looked up there.
    """
    from ._files import checked_path
    from .durable import state_path  # only a durable sampler needs the state module

    path = state_path(state)  # its own errors say what a state path is, as given
    try:
        # The text as given: Path drops the './' of './~x.sqlite', which is no one's home.
        return state_path(checked_path(state if isinstance(state, str) else path))
    except ValueError as error:
        raise StateError(
            f"cannot keep sampler state in {short_repr(str(state), 1000)}: {error}"
        ) from None


def _key(name: str) -> str:
    try:
        return normalize(check_name(name))
    except ValueError as error:
        raise InvalidSamplerConfig(str(error)) from None


def _build(spec: SamplerSpec, selected: _Selected) -> TaskSampler:
    """Call the selected factory once with the spec's parameters; word a failure from that call.

    The sampler is served as built, or in one :class:`~agentdescent_sampling.served.ServedSampler`
    under the name it was selected by or a lock.
    """
    params = dict(spec.params)
    try:
        sampler: TaskSampler = selected.factory(**params)
    except (TypeError, ValueError) as error:
        info = selected.describe()
        wrong = wrong_parameters(info.name, info.signature, spec.params)
        if wrong is not None:  # it names what to fix; Python's own TypeError adds nothing
            raise InvalidSamplerConfig(wrong + _how_to_give(info, spec.params)) from None
        raise _refused(info, spec, error) from error
    except KeyboardInterrupt:
        raise
    # A factory may raise anything, SystemExit included (one that validates its
    # parameters CLI-style): it becomes our error and never ends the host. So may what it
    # built while it is looked at (a property, a __getattr__).
    except BaseException as error:
        raise _broken(selected.describe(), spec, error) from error
    try:
        # A class has pick() and record() too, as functions wanting an instance: refused,
        # unless they are its static or class methods, and the class serves as a sampler.
        conforms = isinstance(sampler, TaskSampler)
        returned_class = (
            short_repr(sampler.__qualname__)
            if conforms
            and isinstance(sampler, type)
            and (
                unbindable(sampler.pick, ["a"], 0) is not None
                or unbindable(sampler.record, "a", 0.0) is not None
            )
            else None
        )
        # A preset's factory is not the class: what it built says whether it is thread-safe.
        lock = selected.synchronized or declares_thread_unsafe(sampler)
        named = _plain_name(sampler)
    except KeyboardInterrupt:
        raise
    except BaseException as error:
        raise _broken(selected.describe(), spec, error) from error
    if returned_class is not None:
        raise PluginLoadError(
            f"{_where(selected.describe())}: its factory returned the class {returned_class}, "
            f"not a sampler: register the class itself, or have the factory return an "
            f"instance of it"
        )
    if not conforms:
        raise PluginLoadError(
            f"{_where(selected.describe())}: its factory returned {type(sampler).__name__}, "
            f"which has no pick() and record() methods"
        )
    renamed = None if named == selected.name else selected.name
    if renamed is None and not lock:
        return sampler
    # A preset a hook registered, or a class reporting a name it was not selected by (a
    # built-in's, say), is served under the selected name, and so is its state; a class that
    # declares thread_safe = False, under a lock. One wrapper does both.
    from .served import ServedSampler

    return ServedSampler(sampler, name=renamed, lock=lock)


def _plain_name(sampler: object) -> str | None:
    """``sampler``'s ``name`` if it is plain text it holds, read without running its code.

    A ``name`` that a property computes (and may change once served), or that is a ``str``
    subclass (whose ``__eq__`` may say it is any name), is ``None``: such a sampler is served
    under the name it was selected by, since what it reports later can't be known now.
    """
    name = inspect.getattr_static(sampler, "name", None)
    if isinstance(name, types.MemberDescriptorType):  # a __slots__ field, read by Python
        try:
            name = name.__get__(sampler, type(sampler))
        except AttributeError:  # never set
            return None
    return name if type(name) is str else None


def _broken(info: SamplerInfo, spec: SamplerSpec, error: BaseException) -> PluginLoadError:
    """The factory raised on its own account: given nothing it needs, or not as a refusal."""
    from .loading import describe

    return PluginLoadError(
        f"{_where(info)} raised while being built from "
        f"{short_repr(str(spec))}: {short_repr(describe(error), 300)}"
    )


def _refused(
    info: SamplerInfo, spec: SamplerSpec, error: Exception
) -> InvalidSamplerConfig | PluginLoadError:
    """The factory raised a TypeError or ValueError at ``spec``, whose parameter names it
    takes: say what it said of the values given; given nothing, it is broken."""
    if not spec.params:
        return _broken(info, spec, error)
    try:
        said = short_repr(str(error), 300)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  # a hostile __str__, SystemExit too: no refusal
        return _broken(info, spec, error)
    return InvalidSamplerConfig(
        f"sampler {info.name!r} rejected {short_repr(str(spec))}: {said}. Valid parameters: "
        f"{info.signature.describe()}"
    )


def _not_a_provider(provider: str, group: str, meant: str | None) -> str:
    """Why no installed distribution named ``provider`` provides samplers in the entry-point
    ``group``, and what to do; for one not installed, whether it is the installed ``meant``
    misspelt. No install command: a misspelt name on an index may be anyone's."""
    from ._display import ascii_name
    from .discovery import installed

    if installed(provider):
        return (
            f"{ascii_name(provider)} is installed but declares no samplers (no entry point in "
            f"the {group!r} group)."
        )
    return (
        f"No distribution of that name is installed in this Python environment "
        f"({short_repr(sys.executable, 1000)}); if it is a plugin, install it there."
        + (f" If it is misspelt, did you mean {ascii_name(meant)}?" if meant else "")
    )


def wrong_parameters(name: str, signature: Signature, params: Mapping[str, Any]) -> str | None:
    """``sampler 'NAME': unknown parameter 'cc'. Did you mean 'c'? Valid parameters: ...``,
    or None if ``signature`` takes ``params``."""
    problems = signature.check(params)
    if not problems:
        return None
    names = [parameter.name for parameter in signature.parameters]
    hints = ""
    for key in params:
        if key in names:
            continue
        match = closest_name(key, names)
        if key == "provider":
            hints += PROVIDER_IN_STRING
        elif meant_provider := _meant_provider(key):  # 'provder' is near 'prior' too
            hints += f" Did you mean {f'{match!r}, or ' if match else ''}{meant_provider}?"
        elif match:
            hints += f" Did you mean {match!r}?"
    nested = next(
        (key for key, value in params.items() if key not in names and isinstance(value, Mapping)),
        None,
    )
    if nested is not None:  # {'name': ..., 'params': {...}}, or [task_sampler.params] in TOML
        hints += (
            f" Parameters are keys beside 'name', not a table of their own: move those in "
            f"{short_repr(nested)} up beside 'name'."
        )
    if "state" in params and "state" not in names and not signature.accepts_any:
        # A run spec gives "state" beside "spec", and create() takes it beside the spec.
        hints += (
            " A state file is not a parameter: give it beside the spec, as "
            'create(spec, state=PATH) or a run spec\'s "state".'
        )
    ref_keys = [key for key in _REF_KEYS if key in params and key not in names]
    if ref_keys and not signature.accepts_any:
        # A run spec's ref takes these beside or in place of "spec"; inside it, parameters.
        what = (
            "is not a parameter but a key" if len(ref_keys) == 1 else "are not parameters but keys"
        )
        hints += (
            f" {' and '.join(map(repr, ref_keys))} {what} of a run spec's task_sampler ref: "
            f"{', '.join(_REF_KEYS[key] for key in ref_keys)}."
        )
    valid = f"Valid parameters: {signature.describe()}"
    return f"sampler {name!r}: {'; '.join(problems)}.{hints} {valid}"


#: Where a run spec's ``task_sampler`` ref takes each of its keys that a spec may hold by
#: mistake (``state`` has its own hint).
_REF_KEYS = {
    "file": '"file" goes in place of "spec"',
    "key": '"key" goes beside "file"',
    "link": '"link" goes beside "spec"',
}


def _how_to_give(info: SamplerInfo, params: Mapping[str, Any]) -> str:
    """How a config gives the required parameters of ``info`` that ``params`` lacks, as a
    sentence to end a message with (``""`` if it lacks none)."""
    missing = info.signature.missing(params)
    if not missing:
        return ""
    pairs = ",".join(f"{name}=..." for name in missing)
    keys = " and ".join(repr(name) for name in missing)
    return (
        f". Add {'it' if len(missing) == 1 else 'them'}: {pairs} in '{info.name}:key=value,...', "
        f"or {keys} beside 'name' in a table"
    )


#: The ``provider`` key, which a misspelling of it in a mapping or table is told of.
_PROVIDER = "'provider' (the distribution that provides the sampler, a key beside 'name')"
#: Why ``provider`` is a parameter: given in the ``NAME:key=value`` form, which has no
#: place for it.
PROVIDER_IN_STRING = (
    " 'provider' is a key beside 'name', which the NAME:key=value form has no place for: give "
    'a mapping or a table, such as {"name": ..., "provider": ...}.'
)


def _meant_provider(key: str) -> str | None:
    """:data:`_PROVIDER`, if ``key`` is a misspelling of it; else None."""
    return _PROVIDER if closest_name(key, ["provider"]) else None


def _where(info: SamplerInfo) -> str:
    if info.form == "in-process":
        return f"sampler {info.name!r} (registered in-process)"
    return f"sampler {info.name!r} ({info.distribution} {info.version})"


def _qualified_name(factory: object) -> str:
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}:{qualname}"
    return short_repr(factory, 60)


def _conflict_message(name: str, candidates: list[SamplerInfo]) -> str:
    listed = "; ".join(
        f"{info.distribution} {info.version} (entry point {info.entry_point!a})"
        for info in candidates[:_MAX_FAILURES_QUOTED]
    )
    if len(candidates) > _MAX_FAILURES_QUOTED:
        listed += f"; and {len(candidates) - _MAX_FAILURES_QUOTED} more"
    first = candidates[0].distribution
    return (
        f"sampler {name!r} is provided by {len(candidates)} distributions: {listed}. "
        f"Pick one with provider, for example {table_text({'name': name, 'provider': first})}, "
        f"or uninstall one of them"
    )


def _hook_form(failure: PluginFailure) -> bool:
    """Whether ``failure`` is a hook-form plugin's (an entry point naming a module alone),
    whose sampler names are unknown until it loads."""
    return ":" not in (failure.entry_point or "").partition("=")[2]


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown + (f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else "")


def _sentence(text: str) -> str:
    """``text`` as one sentence: a plugin failure's message, quoted whole in another error
    (it is at most ``loading.MAX_MESSAGE`` long already), with the fix that ends it."""
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else text + "."


_default: Registry | None = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The registry behind :func:`create`, :func:`available` and :func:`register`."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Registry()
        return _default


@overload
def create(spec: SpecLike | Mapping[str, Any], *, state: None = None) -> Sampler: ...
@overload
def create(
    spec: SpecLike | Mapping[str, Any], *, state: str | os.PathLike[str]
) -> DurableSampler: ...
def create(
    spec: SpecLike | Mapping[str, Any], *, state: str | os.PathLike[str] | None = None
) -> Sampler | DurableSampler:
    """Build a sampler from a config value, using the default registry.

    ``spec`` is a name (``"difficulty-weighted"``), a string with parameters
    (``"difficulty-weighted:c=0.1"``), a mapping as read from TOML or JSON
    (``{"name": "difficulty-weighted", "c": 0.1}``, with an optional
    ``"provider"``) or a :class:`SamplerSpec`. ``state`` is a file that keeps the
    sampler's statistics across runs (see :class:`DurableSampler`). See
    :meth:`Registry.create`.
    """
    if state is None:
        return default_registry().create(spec)
    return default_registry().create(spec, state=state)


def available() -> list[Record]:
    """Every installed sampler and every plugin that failed, from the default registry."""
    return default_registry().available()


def register(
    factory: Callable[..., Any],
    name: str | None = None,
    *,
    aliases: Iterable[str] = (),
    description: str | None = None,
) -> SamplerInfo:
    """Register ``factory`` in-process on the default registry; see :meth:`Registry.register`."""
    return default_registry().register(factory, name, aliases=aliases, description=description)
