"""Import the plugins :mod:`~agentdescent_sampling.discovery` let through, in isolation.

:class:`Plugins` holds what one registry has seen of the installed plugins: the entry
points not imported yet, the samplers they registered and every failure. Whatever a
plugin raises while being imported, running its hooks or being described is recorded
as that plugin's :class:`PluginFailure`. :func:`vet` holds the rules every
registration meets, from a plugin or in-process: a sampler factory, valid ASCII
names, a text description, and no built-in name.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
import traceback
import types
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Literal, TextIO

from ._caller import outside_the_package
from ._display import escaped_name, plain_text, safe_repr, shown
from .discovery import known_names, scan, unmatched, unmatched_disabled
from .params import signature_of
from .policy import BUILTINS, DISABLE_ENV, RESERVED, EntryPoint, Policy, normalize, of_provider
from .protocol import check_name, declares_thread_unsafe, method_problem, short_repr
from .records import _REGISTERED_NOTHING, Form, PluginFailure, SamplerInfo, summary

__all__ = [
    "MAX_MESSAGE",
    "PluginInterrupt",
    "Plugins",
    "Refused",
    "bounded",
    "describe",
    "running_plugin",
    "vet",
]

Status = Literal["failed", "conflict", "disabled"]
#: The longest failure message kept; a plugin's exception text can be any size.
MAX_MESSAGE = 300
#: The one hook a hook-form plugin implements (see ``hookspecs``).
_HOOK = "agentdescent_register_samplers"


class PluginInterrupt(KeyboardInterrupt):
    """A ``KeyboardInterrupt`` raised while a plugin's code ran, its message naming the plugin
    or sampler: no Ctrl-C may have been pressed, for the plugin can raise it itself."""


class Refused(Exception):
    """A registration that breaks a rule: recorded for a plugin, raised in-process."""

    def __init__(self, status: Status, message: str, names: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        #: The names the registration claimed, as far as they could be read.
        self.names = names


def vet(
    factory: object,
    name: object,
    aliases: object,
    description: object,
    *,
    policy: Policy,
    distribution: str,
    version: str,
    entry_point: str,
    form: Form,
) -> SamplerInfo:
    """Check one registration against the rules and describe it.

    ``name`` defaults to ``factory.name``. Describing runs no plugin code beyond
    attribute reads: attrs default factories are shown, never called.

    Raises:
        Refused: the registration breaks a rule; its status and message say which.
    """
    if name is None:
        name = getattr(factory, "name", None)
    # A str subclass's methods are the plugin's code: a name sorted, formatted or stripped
    # later, outside this registration's isolation, could raise SystemExit or lie in print.
    name, description = plain_text(name), plain_text(description)
    try:
        names = _valid_names(factory, name, aliases, description, policy, form)
    except Refused as refused:
        refused.names = refused.names or ((name,) if isinstance(name, str) else ())
        raise
    assert callable(factory)  # for mypy: _valid_names checked it
    assert description is None or isinstance(description, str)  # likewise
    return SamplerInfo(
        name=names[0],
        factory=factory,
        aliases=tuple(names[1:]),
        description=summary(description if description is not None else _doc(factory)),
        distribution=distribution,
        version=version,
        entry_point=entry_point,
        form=form,
        signature=signature_of(factory),
        synchronized=declares_thread_unsafe(factory),
    )


def _doc(factory: object) -> str | None:
    """``factory``'s docstring; a :func:`functools.partial`'s is what it wraps, not
    functools' own (``partial(func, *args, **keywords) - new function with ...``)."""
    while isinstance(factory, functools.partial):  # a preset: its function documents it
        factory = factory.func
    return inspect.getdoc(factory)


def _class_not_instance(value: object, verb: str) -> str:
    """For a sampler instance where its class was meant, ``"; register the class ..."``
    (``verb`` says what to do with the class); else ``""``."""
    if method_problem(value) is not None:
        return ""
    kind = type(value).__name__
    return f"; {verb} the class ({kind}), not an instance of it: create() builds one each time"


def _valid_names(
    factory: object, name: object, aliases: object, description: object, policy: Policy, form: Form
) -> list[str]:
    """The registration's names (``name`` first, no duplicates) if it keeps every rule."""
    if not callable(factory):
        raise Refused(
            "failed",
            f"registered {type(factory).__name__} {short_repr(factory)}, which is not callable"
            f"{_class_not_instance(factory, 'register')}",
        )
    if inspect.isclass(factory):
        problem = method_problem(factory)
        if problem is not None:
            raise Refused("failed", f"registered class {factory.__name__}: {problem}")
    if name is None:
        what = f"class {factory.__name__}" if inspect.isclass(factory) else short_repr(factory)
        raise Refused(
            "failed", f"registered {what} without a name: pass name= or give it a 'name' attribute"
        )
    if isinstance(aliases, (str, bytes)) or not isinstance(aliases, Iterable):
        raise Refused(
            "failed",
            f"aliases={short_repr(aliases)} is not a list or tuple of names; "
            f"write aliases=({short_repr(aliases)},) for one alias",
        )
    names: list[str] = []
    invalid: str | None = None
    for each in (name, *aliases):
        try:
            checked = check_name(plain_text(each))
        except ValueError as error:
            invalid = invalid or str(error)
            continue
        if normalize(checked) not in map(normalize, names):
            names.append(checked)
    if invalid is not None:  # refused under each valid name, so that selecting one says why
        raise Refused("failed", invalid, tuple(names))
    if description is not None and not isinstance(description, str):
        raise Refused(
            "failed",
            f"description must be text, got {type(description).__name__} {short_repr(description)}",
        )
    keys = {normalize(each) for each in names}
    if keys & RESERVED and form != "built-in":  # a built-in is declared in code, never by a plugin
        claimed = "; ".join(_builtin_claimed(each) for each in names if normalize(each) in RESERVED)
        raise Refused(
            "conflict",
            f"claims the built-in name {claimed}; built-in names are reserved, so the built-in "
            + (
                "keeps it: give yours a name of its own"
                if form == "in-process"
                else "is used and this registration is ignored. Rename it"
            ),
            tuple(names),
        )
    if keys & policy.disable:
        # All its names: an alias disables it too, and selects nothing then.
        raise Refused("disabled", f"disabled by {policy.disable_by}", tuple(names))
    return names


def _builtin_claimed(name: str) -> str:
    """A reserved ``name`` as the built-in spells it, with the spelling given and the
    built-in it is an alias of: ``FixableFirst, an alias of fixable-first``,
    ``round-robin (as 'Round_Robin')``."""
    builtin, spelled = next(
        (builtin, spelled)
        for builtin in BUILTINS
        for spelled in (builtin.name, *builtin.aliases)
        if normalize(spelled) == normalize(name)  # one does: RESERVED is the built-ins' names
    )
    given = "" if spelled == name else f" (as {short_repr(name)})"
    alias = "" if spelled == builtin.name else f", an alias of {builtin.name}"
    return f"{spelled}{given}{alias}"


class Plugins:
    """What one registry has seen of the installed plugins. Callers hold the registry's lock.

    Args:
        group: the entry-point group to read.
        policy: which plugins may load.
    """

    def __init__(self, group: str, policy: Policy) -> None:
        self.group = group
        self.policy = policy
        #: Normalized name -> every sampler registered under it (more than one is a conflict).
        self.samplers: dict[str, list[SamplerInfo]] = {}
        self.failures: list[PluginFailure] = []
        self._pending: list[EntryPoint] | None = None
        self._manager: Any = None
        #: DISABLE entries to check once the hook-form plugins have registered their samplers.
        self._disable_left: frozenset[str] = frozenset()

    def load_named(self, key: str, provider: str | None = None) -> None:
        """Import the class-form plugins whose entry point carries the normalized name
        ``key`` (only ``provider``'s, if given)."""
        self._load([ep for ep in self._scanned() if _named(ep, key, provider)])

    def carries(self, key: str, provider: str | None = None) -> bool:
        """Whether a class-form entry point that may load (``provider``'s, if given) carries
        the normalized name ``key``: not imported yet, or imported and failed. One the
        policy refused (disabled, not in ``ONLY``) does not count: a hook-form plugin the
        policy allows may register the name."""
        return any(_named(ep, key, provider) for ep in self._scanned()) or any(
            failure.status == "failed"
            and key in map(normalize, failure.names)
            and ":" in failure.entry_point.partition("=")[2]  # class form: module:attribute
            and of_provider(failure.distribution, provider)
            for failure in self.failures
        )

    def load_hooks(self, provider: str | None = None) -> None:
        """Import every hook-form plugin (only ``provider``'s, if given), the only ones that
        can register other names."""
        self._load(
            [
                ep
                for ep in self._scanned()
                if ep.form == "hook" and of_provider(ep.distribution, provider)
            ]
        )

    def scan(self) -> None:
        """Read the installed entry points, refusing some by their metadata; import none."""
        self._scanned()

    def load_all(self) -> None:
        """Import every plugin that may load."""
        self._load(list(self._scanned()))

    def unloaded_names(self, provider: str | None = None) -> dict[str, list[str]]:
        """Normalized name -> the names of the class-form entry points not imported yet,
        of ``provider`` only if one is given.

        Read from metadata alone, so that a message can list and suggest them without
        importing any.
        """
        names: dict[str, list[str]] = {}
        for ep in self._scanned():
            if ep.form == "class" and of_provider(ep.distribution, provider):
                names.setdefault(normalize(ep.name), []).append(ep.name)
        return names

    def providers(self, key: str) -> set[str]:
        """The distributions whose samplers, loaded or class-form entry points not imported
        yet, go by the normalized name ``key``; read without importing any."""
        found = {info.distribution for info in self.samplers.get(key, ())}
        found.update(ep.distribution for ep in self._scanned() if _named(ep, key, None))
        return found

    def distributions(self) -> set[str]:
        """The distributions whose samplers may load: each installed one with an entry point
        in the group that the policy allows, and the provider of each registered sampler;
        read without importing any."""
        found = {ep.distribution for ep in self._scanned()}
        found.update(info.distribution for infos in self.samplers.values() for info in infos)
        return found

    def add(self, info: SamplerInfo) -> None:
        """Make ``info`` selectable by each of its names."""
        for key in info.keys:
            self.samplers.setdefault(key, []).append(info)

    def remove(self, info: SamplerInfo) -> None:
        """Forget ``info`` under each of its names."""
        for key in info.keys:
            self.samplers[key] = [other for other in self.samplers[key] if other is not info]
            if not self.samplers[key]:
                del self.samplers[key]

    def _scanned(self) -> list[EntryPoint]:
        if self._pending is None:
            try:
                self._pending, refused = scan(self.group, self.policy)
            except Exception as error:  # noqa: BLE001  # broken metadata must not break the host
                self._pending, refused = [], [
                    PluginFailure(
                        "", "unknown", "unknown", "failed",
                        bounded(f"reading installed entry points failed: {describe(error)}"),
                        error=error,
                    )
                ]  # fmt: skip
            self.failures.extend(refused)
            told, self._disable_left = unmatched(self.policy, [*self._pending, *refused])
            _warn(told)
        return self._pending

    def _load(self, entry_points: list[EntryPoint]) -> None:
        self._load_each(entry_points)
        self._check_disabled()

    def _check_disabled(self) -> None:
        """Warn of the DISABLE entries that match nothing, once no hook-form plugin is left
        to register a sampler they may name."""
        pending = self._scanned()
        if not self._disable_left or any(ep.form == "hook" for ep in pending):
            return
        known = known_names([*pending, *self.failures])
        known.update(self.samplers)
        known.update(map(normalize, self.distributions()))
        left, self._disable_left = self._disable_left, frozenset()
        _warn(unmatched_disabled(self.policy, left, known))

    def _load_each(self, entry_points: list[EntryPoint]) -> None:
        for ep in entry_points:
            if ep not in self._scanned():
                continue
            self._scanned().remove(ep)
            ok, loaded = self._isolated(ep, "import", ep.load)
            if not ok:
                continue
            if ep.form == "hook":
                self._load_hooks(ep, loaded)
            elif inspect.isfunction(loaded) and loaded.__name__ == _HOOK:
                module = ep.value.partition(":")[0].strip()
                self._fail(
                    ep,
                    "failed",
                    f"{ep.value} is the hook function {_HOOK}, not a sampler factory: a "
                    f"hook-form entry point names the module that holds its @hookimpl "
                    f"functions, without ':' ({module})",
                )
            elif not callable(loaded):
                self._fail(
                    ep,
                    "failed",
                    f"{ep.value} is {safe_repr(type(loaded))} {safe_repr(loaded, 80)}, neither a "
                    f"sampler factory nor a module of @hookimpl functions (a hook-form entry "
                    f"point names a module, without ':'){_class_not_instance(loaded, 'name')}",
                )
            else:
                self._register(ep, "class", loaded, ep.name, (), None)

    def _plugin_manager(self) -> Any:
        if self._manager is None:
            # Imported on the first hook-form plugin: a run that selects a built-in or a
            # class-form plugin never imports pluggy.
            import pluggy

            from . import hookspecs

            self._manager = pluggy.PluginManager(hookspecs.PROJECT)
            self._manager.add_hookspecs(hookspecs)
        return self._manager

    def _load_hooks(self, ep: EntryPoint, plugin: object) -> None:
        registrations: list[tuple[Any, Any, Any, Any, str]] = []
        returned: list[object] = []  # what a hook returned: samplers meant for register()?
        hook_running = threading.Event()

        def register(
            factory: Callable[..., Any],
            name: str | None = None,
            aliases: Iterable[str] = (),
            description: str | None = None,
        ) -> None:
            # Kept by the plugin (a thread, a global) and called once its hook has returned,
            # a registration would be dropped without a word.
            if not hook_running.is_set():
                raise RuntimeError(
                    f"register({short_repr(name if name is not None else factory)}) was called "
                    f"after the {ep.distribution} plugin's @hookimpl {_HOOK}(register) "
                    f"returned, so nothing can take it; call register() inside that hook, "
                    f"before it returns"
                )
            # Vetted once the hook returns, when the plugin's call is no longer on the stack.
            registrations.append((factory, name, aliases, description, _calling_line(ep)))

        def call_hooks() -> None:
            import pluggy

            manager = self._plugin_manager()
            try:
                try:
                    manager.register(plugin, name=f"{ep.distribution}: {ep.label}")
                except pluggy.PluginValidationError as error:  # the hook's own signature
                    raise pluggy.PluginValidationError(
                        error.plugin, _wrong_signature(plugin, error)
                    ) from error
                try:
                    manager.check_pending()
                except pluggy.PluginValidationError as error:
                    raise pluggy.PluginValidationError(
                        error.plugin, _unknown_hook(plugin, error)
                    ) from error
                others = [other for other in manager.get_plugins() if other is not plugin]
                caller = manager.subset_hook_caller(_HOOK, others)
                returned.extend(caller(register=register))  # pluggy leaves out each None
            except BaseException:
                if manager.is_registered(plugin):
                    manager.unregister(plugin)
                raise

        hook_running.set()
        try:
            ok, _ = self._isolated(ep, "hook", call_hooks)
        finally:
            hook_running.clear()
        if not ok:
            return
        if not registrations and returned:
            self._fail(
                ep,
                "failed",
                f"{_REGISTERED_NOTHING}: @hookimpl {_HOOK}(register) returned "
                f"{short_repr(returned[0])}, and what it returns is ignored; call "
                f"register(SamplerClass) once for each sampler instead of returning them",
            )
        elif not registrations:
            self._fail(
                ep,
                "failed",
                f"{_REGISTERED_NOTHING}: {_registered_nothing(plugin)}",
            )
        for factory, name, aliases, description, where in registrations:
            self._register(ep, "hook", factory, name, aliases, description, where)

    def _register(
        self,
        ep: EntryPoint,
        form: Literal["class", "hook"],
        factory: object,
        name: object,
        aliases: object,
        description: object,
        where: str = "",
    ) -> None:
        """Vet and add one registration; ``where`` is the line of a hook's ``register()``
        call (`` (at my_plugin/hooks.py:12)``), told with a failure."""

        def make() -> SamplerInfo:
            return vet(
                factory,
                name,
                aliases,
                description,
                policy=self.policy,
                distribution=ep.distribution,
                version=ep.version,
                entry_point=ep.label,
                form=form,
            )

        # Plain: a failure is filed under it, and shown and compared after the isolation.
        claimed = (str.__str__(name),) if isinstance(name, str) else ()
        ok, info = self._isolated(ep, "registration", make, claimed, where)
        if not ok:
            return
        mine = [
            other
            for key in info.keys
            for other in self.samplers.get(key, [])
            if other.distribution == info.distribution
        ]
        if mine:
            self._fail(
                ep,
                "failed",
                f"registers {info.name!r}, a name its distribution already registered "
                f"(as {mine[0].name!r} from {mine[0].entry_point!a}); the first is kept{where}",
                names=(info.name, *info.aliases),
            )
            return
        self.add(info)

    def _isolated(
        self,
        ep: EntryPoint,
        stage: str,
        call: Callable[[], Any],
        names: tuple[str, ...] | None = None,
        where: str = "",
    ) -> tuple[bool, Any]:
        """Run plugin code; record whatever it raises as this plugin's failure, at the line
        of the plugin's it came through, else at ``where``."""
        outer = getattr(_running, "plugin", None)
        _running.plugin = ep.label
        try:
            if plugin_output is None:
                return True, call()
            with contextlib.redirect_stdout(plugin_output):
                return True, call()
        except Refused as refused:
            at = "" if refused.status == "disabled" else where  # the user's choice, no fault
            self._fail(ep, refused.status, refused.message + at, names=refused.names or names)
        except KeyboardInterrupt as interrupt:
            # The user's interrupt is not the plugin's failure: let it end the call, but
            # keep the plugin in failures() rather than have it vanish half-loaded. Not
            # tried again: a plugin that raises it itself would end every later call too,
            # and the interrupt names it, for no Ctrl-C may have been pressed.
            self._fail(
                ep,
                "failed",
                f"{stage} interrupted by KeyboardInterrupt; this process will not try it "
                f"again: restart Python to load it",
                interrupt,
                names,
            )
            raise PluginInterrupt(
                f"while loading the plugin {escaped_name(ep.distribution)} {ep.version} "
                f"(entry point {ep.label!a}, {stage}); if no one pressed Ctrl-C, it raised "
                f"KeyboardInterrupt itself: {DISABLE_ENV}={escaped_name(ep.distribution)} "
                f"keeps it from loading"
            ) from interrupt
        # A plugin is isolated from the host whatever it raises: SystemExit, GeneratorExit
        # and BaseException subclasses included.
        except BaseException as error:  # noqa: BLE001
            self._fail(ep, "failed", _failed(ep, stage, error, where), error, names)
        finally:
            _running.plugin = outer
        return False, None

    def _fail(
        self,
        ep: EntryPoint,
        status: Status,
        message: str,
        error: BaseException | None = None,
        names: tuple[str, ...] | None = None,
    ) -> None:
        self.failures.append(
            PluginFailure(
                entry_point=ep.label,
                distribution=ep.distribution,
                version=ep.version,
                status=status,
                message=bounded(message),
                names=names if names is not None else (ep.name,),
                error=error,
            )
        )


def code_lines(error: BaseException) -> list[tuple[str, str, int]]:
    """``(top-level package, file, line)`` of each frame ``error`` came through, outermost
    first; a frame's globals are read as a plain dict, so no code of its module runs."""
    return _frame_lines(traceback.walk_tb(error.__traceback__))


def stack_lines(frame: types.FrameType) -> list[tuple[str, str, int]]:
    """``(top-level package, file, line)`` of each frame of the stack that ``frame`` runs at
    the top of (another thread's, from :func:`sys._current_frames`), outermost first, read
    as :func:`code_lines` reads a traceback's."""
    return _frame_lines(reversed(list(traceback.walk_stack(frame))))


def _frame_lines(frames: Iterable[tuple[types.FrameType, int]]) -> list[tuple[str, str, int]]:
    """``(top-level package, file, line)`` of each of ``frames``, in their order."""
    lines = []
    for frame, line in frames:
        module = dict.get(frame.f_globals, "__name__")  # not a subclass's own get()
        package = module.partition(".")[0] if isinstance(module, str) else ""
        lines.append((package, frame.f_code.co_filename, line))
    return lines


def _failed(ep: EntryPoint, stage: str, error: BaseException, where: str) -> str:
    """What ``stage`` of ``ep`` raising ``error`` is told as: the error, the line of the
    plugin's it came through (else ``where``) and, for an import, what to write instead. It
    never raises: the error is the plugin's, and reading it (its ``__class__``, its
    ``name``, a property of its own) may run the plugin's code."""
    try:
        hint = ""
        if stage == "import" and issubclass(type(error), (ImportError, AttributeError)):
            hint = _entry_point_hint(ep, error)  # type: ignore[arg-type]  # by its type
        return f"{stage} failed: {describe(error)}{_plugin_line(ep, error) or where}{hint}"
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  # a report must not fail on the error it reports
        return f"{stage} failed: {describe(error)}, whose details could not be read{where}"


def _entry_point_hint(ep: EntryPoint, error: ImportError | AttributeError) -> str:
    """What to write instead of an entry point whose target its package lacks: a class
    written ``module.Class`` (with a dot, so read as a hook-form module), or a misspelt
    attribute; else where to look. Reads the modules' dicts only: no plugin code runs."""
    module, _, attribute = ep.value.partition(":")
    fix = ""
    if isinstance(error, ModuleNotFoundError) and error.name == module and not attribute:
        parent, _, last = module.rpartition(".")
        if last in _names_in(sys.modules.get(parent)):
            fix = f"{parent}:{last}, with a colon before a class ({module} is no module)"
    elif isinstance(error, AttributeError) and attribute:
        names = _names_in(error.obj) if error.obj is sys.modules.get(module) else []
        if error.name == attribute.partition(".")[0] and names:
            import difflib  # only on this error path

            close = difflib.get_close_matches(error.name, names, n=1, cutoff=0.6)
            fix = f"{module}:{close[0]}" if close else ""
    if fix:
        return f"; write the entry point as {ep.name} = {fix}, and reinstall {ep.distribution}"
    missing = error.name if isinstance(error, ModuleNotFoundError) else None
    if missing and missing.partition(".")[0] != module.partition(".")[0]:
        # Not the plugin's own package: a module it imports, which is not installed.
        # Its spelling is the plugin's: it may be a typo, never a name to install blindly.
        return (
            f"; it imports {missing!r}, which is not installed: if that is the module meant, "
            f"install it (and list it in its dependencies); if not, correct the import"
        )
    return (
        f"; check the entry point ({ep.label}) against the package's code, or reinstall "
        f"{ep.distribution}"
    )


def _names_in(module: object) -> list[str]:
    """The public names a plain module holds, read from its dict (a module's own
    ``__getattr__`` or ``__dir__`` is plugin code); none for anything else."""
    if type(module) is not types.ModuleType:
        return []
    return [name for name in vars(module) if not name.startswith("_")]


def _plugin_line(ep: EntryPoint, error: BaseException) -> str:
    """`` (at my_plugin/hooks.py:12)``: the innermost line of the plugin's own package that
    ``error`` came through, as a path from the package's folder, or ``""`` (a module that
    is not there at all: the hint about the entry point says what to check). It never
    raises, and runs none of the plugin's code: a frame's globals are read as a plain dict."""
    top = ep.value.partition(":")[0].partition(".")[0]
    try:
        found = _innermost(top, code_lines(error))
        if found:
            return found
        filename = getattr(error, "filename", None) if isinstance(error, SyntaxError) else None
        if isinstance(filename, str) and filename:  # never ran a line
            return f" (at {_in_package(top, filename)}:{error.lineno})"  # type: ignore[attr-defined]
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  # a report must not fail on the error it reports
        pass
    return ""


def _calling_line(ep: EntryPoint) -> str:
    """`` (at my_plugin/hooks.py:12)``: the innermost line of the plugin's own package on
    this thread's stack, where the plugin called what runs now (a hook's ``register()``),
    or ``""``; read as :func:`_plugin_line` reads a traceback."""
    top = ep.value.partition(":")[0].partition(".")[0]
    try:
        frame = inspect.currentframe()
        return _innermost(top, stack_lines(frame)) if frame is not None else ""
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  # a registration must not fail on where it was made
        return ""


def _innermost(top: str, lines: list[tuple[str, str, int]]) -> str:
    """`` (at my_plugin/hooks.py:12)``: the last of ``lines`` (outermost first) in the
    package ``top``, or ``""``."""
    found = [(file, line) for package, file, line in lines if package == top]
    return f" (at {_in_package(top, found[-1][0])}:{found[-1][1]})" if found else ""


def _in_package(top: str, file: str) -> str:
    """``file`` as a path from the folder holding the package ``top``
    (``my_plugin/hooks.py``), else its base name."""
    path = file.replace(os.sep, "/")
    cut = path.rfind(f"/{top}/")
    return shown(path[cut + 1 :] if cut >= 0 else os.path.basename(path), 120)


def _one_line(error: BaseException) -> str:
    """pluggy's words, whose lines it breaks, on one line."""
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())


def _wrong_signature(plugin: object, error: BaseException) -> str:
    """What pluggy refused a hook-form plugin's hook for, with the function as written,
    where it is, and what to write instead; pluggy's own words last."""
    return (
        f"@hookimpl {_as_written(plugin, getattr(plugin, _HOOK, None))} does not take what "
        f"the hook passes: write @hookimpl {_HOOK}(register), one argument named register; "
        f"pluggy said: {_one_line(error)}"
    )


def _unknown_hook(plugin: object, error: BaseException) -> str:
    """What pluggy refused a hook-form plugin for when it marks a hook this package does not
    have: the one hook there is, and each function of the module marked under another name,
    as written and where it is (else pluggy's own words). Reads the module's dict only."""
    from .hookspecs import PROJECT

    named = vars(plugin) if type(plugin) is types.ModuleType else {}
    misspelt = [
        _as_written(plugin, value, name)
        for name, value in list(named.items())[:1000]
        if name != _HOOK and inspect.isfunction(value) and f"{PROJECT}_impl" in vars(value)
    ]
    if not misspelt:
        return f"the one hook is @hookimpl {_HOOK}(register): {_one_line(error)}"
    one = len(misspelt) == 1
    return (
        f"the one hook is @hookimpl {_HOOK}(register); {', '.join(misspelt[:3])} "
        f"{'is' if one else 'are'} marked @hookimpl under another name: rename "
        f"{'it' if one else 'the one meant'} {_HOOK}"
    )


def _registered_nothing(plugin: object) -> str:
    """Why a hook-form plugin whose hooks ran registered no sampler, as far as its module's
    dict tells: its hook left unmarked, taking no ``register`` or never calling it, or no
    hook at all (a class-form entry point written without ``:Class``, say)."""
    from .hookspecs import PROJECT

    named = vars(plugin) if type(plugin) is types.ModuleType else {}
    hook = named.get(_HOOK)
    if not inspect.isfunction(hook):
        import difflib  # only on this error path

        functions = [n for n, v in list(named.items())[:1000] if inspect.isfunction(v)]
        close = difflib.get_close_matches(_HOOK, functions, n=1, cutoff=0.8)
        if close:  # a misspelt hook, left unmarked too: pluggy never saw it
            return (
                f"{_as_written(plugin, named[close[0]], close[0])} is not the hook: rename it "
                f"{_HOOK} and decorate it with @hookimpl (from agentdescent_sampling.plugin "
                f"import hookimpl)"
            )
        return (
            f"a hook-form entry point names a module whose @hookimpl {_HOOK}(register) calls "
            f"register(); a class-form one is written 'module:Class'"
        )
    if f"{PROJECT}_impl" not in vars(hook):
        return (
            f"{_as_written(plugin, hook)} is not marked with agentdescent_sampling's "
            f"@hookimpl, so it was never called: decorate it with @hookimpl (from "
            f"agentdescent_sampling.plugin import hookimpl)"
        )
    if not inspect.signature(hook).parameters:
        return (
            f"@hookimpl {_as_written(plugin, hook)} takes no register, so it can register "
            f"nothing: write @hookimpl {_HOOK}(register) and call register(SamplerClass) in it"
        )
    return (
        f"@hookimpl {_as_written(plugin, hook)} returned without calling register(): "
        f"call register(SamplerClass) in it once for each sampler (or, for one class, "
        f"write a class-form entry point: 'module:Class')"
    )


def _as_written(plugin: object, hook: object, name: str = _HOOK) -> str:
    """``agentdescent_register_samplers(reg) (at my_plugin/hooks.py:12)``: the plugin's
    hook, by the ``name`` its module gives it, with its parameters as written (a default as
    ``=...``: showing one would run its ``repr``), and where it begins when that can be
    read."""
    written, where = f"{name}(...)", ""
    try:
        kinds = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
        signature = inspect.signature(hook, follow_wrapped=False)  # type: ignore[arg-type]
        parameters = signature.parameters.values()
        written = f"{name}({', '.join(_parameter(each, kinds) for each in parameters)})"
        file = inspect.getsourcefile(hook)  # type: ignore[arg-type]
        top = str(getattr(plugin, "__name__", "")).partition(".")[0]
        if file:
            where = f" (at {_in_package(top, file)}:{hook.__code__.co_firstlineno})"  # type: ignore[attr-defined]
    except (TypeError, ValueError, AttributeError):
        pass
    return written + where


def _parameter(parameter: inspect.Parameter, kinds: dict[Any, str]) -> str:
    """``parameter`` as a signature shows it, but a default as ``=...``."""
    default = "" if parameter.default is inspect.Parameter.empty else "=..."
    return f"{kinds.get(parameter.kind, '')}{parameter.name}{default}"


#: The entry point whose code this thread is running, if any (see :func:`running_plugin`).
_running = threading.local()

#: Where what a plugin prints while it loads goes; None: the host's standard output. The
#: command line sends it to standard error, so that its own output (``--json``) stays whole.
plugin_output: TextIO | None = None


def running_plugin() -> str | None:
    """The entry point whose import, hook or description this thread is running, if any.

    In-process registration is for the user's own code; a plugin registers through its
    entry point or hook, so ``register()`` refuses a call made while this is set.
    """
    plugin = getattr(_running, "plugin", None)
    return plugin if isinstance(plugin, str) else None


def bounded(message: str) -> str:
    """``message`` shown safely (control characters escaped), cut to :data:`MAX_MESSAGE`."""
    return shown(message, MAX_MESSAGE)


def describe(error: BaseException) -> str:
    """``Type: text`` of ``error``, short, escaped, and safe against a hostile ``__str__``."""
    try:
        text = str(error)
    except KeyboardInterrupt:
        raise
    # A hostile __str__ must not escape isolation, whatever it raises: SystemExit included.
    except BaseException:  # noqa: BLE001
        return f"{safe_repr(type(error))}: an exception that could not be printed"
    return shown(f"{safe_repr(type(error))}: {shown(text, MAX_MESSAGE)}", MAX_MESSAGE)


def _warn(told: list[str]) -> None:
    """Warn of each entry of the environment's plugin lists that matches nothing installed."""
    for message in told:
        warnings.warn(message, UserWarning, stacklevel=outside_the_package())


def _named(entry_point: EntryPoint, key: str, provider: str | None) -> bool:
    """Whether ``entry_point`` is a class-form one carrying the normalized name ``key``, of
    ``provider`` if given."""
    return (
        entry_point.form == "class"
        and normalize(entry_point.name) == key
        and of_provider(entry_point.distribution, provider)
    )
