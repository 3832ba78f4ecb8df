"""Read a sampler factory's parameters, for ``show``, ``list --json`` and config checks."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ._display import one_of, safe_repr

__all__ = ["REQUIRED", "Parameter", "Signature", "signature_of"]


class _Required:
    """The default of a parameter a config must set."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: The ``default`` of a :class:`Parameter` that has none.
REQUIRED: Any = _Required()


@attrs.frozen
class Parameter:
    """One keyword parameter of a sampler factory.

    Args:
        name: the keyword a config uses.
        default: the value used when a config leaves it out, or :data:`REQUIRED`.
        annotation: the declared type, as text ("" when undeclared).
    """

    name: str
    default: Any
    annotation: str = ""

    @property
    def required(self) -> bool:
        """Whether a config must set this parameter."""
        return self.default is REQUIRED

    def __str__(self) -> str:
        return self.name if self.required else f"{self.name}={safe_repr(self.default)}"


@attrs.frozen
class Signature:
    """The keyword parameters a factory takes, and whether it takes any others."""

    parameters: tuple[Parameter, ...] = ()
    accepts_any: bool = False

    def describe(self) -> str:
        """``c=0.2, pass_threshold=0.999, prior=0.5``, or ``none (it takes no parameters)``."""
        names = [str(parameter) for parameter in self.parameters]
        if self.accepts_any:
            names.append("**kwargs")
        return ", ".join(names) or "none (it takes no parameters)"

    @property
    def required(self) -> list[str]:
        """The names of the parameters a config must set, in order."""
        return [parameter.name for parameter in self.parameters if parameter.required]

    def missing(self, params: Mapping[str, Any]) -> list[str]:
        """The names of the required parameters that ``params`` lacks, in order."""
        return [name for name in self.required if name not in params]

    def check(self, params: Mapping[str, Any]) -> list[str]:
        """Return one message per unknown or missing parameter in ``params``."""
        known = {parameter.name for parameter in self.parameters}
        problems = []
        if not self.accepts_any:
            problems += [f"unknown parameter {key!r}" for key in params if key not in known]
        problems += [f"missing required parameter {name!r}" for name in self.missing(params)]
        return problems


def signature_of(factory: Callable[..., Any]) -> Signature:
    """Describe ``factory``'s keyword parameters.

    attrs classes are read from their fields (so defaults and aliases are exact), each
    typed as declared, or as ``__init__`` takes it where that adds only ``None`` (a
    converter that reads ``None`` as the default: ``float | None``); anything else from
    :func:`inspect.signature`. A factory whose signature can't be read is taken to accept
    any keyword.
    """
    if inspect.isclass(factory) and attrs.has(factory):
        taken = _init_annotations(factory)
        return Signature(
            tuple(
                Parameter(
                    str.__str__(field.alias or field.name),
                    _attrs_default(field.default),
                    _typed(_text(field.type), taken.get(field.alias or field.name)),
                )
                for field in attrs.fields(factory)
                if field.init
            )
        )
    try:
        found = inspect.signature(factory)
    except (TypeError, ValueError):
        return Signature(accepts_any=True)
    parameters = []
    accepts_any = False
    for parameter in found.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            accepts_any = True
        elif parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            default = REQUIRED if parameter.default is parameter.empty else parameter.default
            annotation = "" if parameter.annotation is parameter.empty else parameter.annotation
            name = str.__str__(parameter.name)  # a plugin's __signature__ may give a subclass
            parameters.append(Parameter(name, default, _text(annotation)))
    return Signature(tuple(parameters), accepts_any)


def _attrs_default(default: Any) -> Any:
    if default is attrs.NOTHING:
        return REQUIRED
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]  # Factory is a class
        # Describing a plugin must not run its code: show the factory, never call it.
        return _Computed(default.factory)
    return default


class _Computed:
    """The default of a field whose default factory runs at each construction."""

    def __init__(self, factory: Callable[..., Any]) -> None:
        self.factory = factory

    def __repr__(self) -> str:
        name = _qualified(self.factory)
        return f"{name}()" if name is not None else "a new value per instance"


def _qualified(factory: Any) -> str | None:
    """The qualified name of a function, a method or a class, read where Python keeps it, so
    that no property, metaclass or ``__getattr__`` of the factory's runs; else ``None``."""
    if type(factory) is types.MethodType:  # a classmethod, say: its function's name
        factory = factory.__func__
    if issubclass(type(factory), type):  # any metaclass: ABCMeta, EnumMeta
        name = type.__dict__["__qualname__"].__get__(factory)
    elif one_of(type(factory), (types.FunctionType, types.BuiltinFunctionType)):
        name = factory.__qualname__
    else:
        return None
    return str.__str__(name) if isinstance(name, str) else None


def _init_annotations(factory: type) -> dict[str, Any]:
    """The annotations of ``factory``'s own ``__init__`` function, read without running any
    of its code (no property, metaclass or descriptor of its own); ``{}`` if none can be."""
    try:
        init = inspect.getattr_static(factory, "__init__", None)
        taken = init.__annotations__ if type(init) is types.FunctionType else None
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  # a metaclass's own failure: the declared types
        return {}
    return taken if type(taken) is dict else {}


def _typed(declared: str, taken: Any) -> str:
    """``declared``, or ``__init__``'s annotation ``taken`` where it is ``declared`` or
    ``None`` (``float | None``, ``Optional[float]``)."""
    text = _text(taken) if isinstance(taken, str) else ""
    with_none = (f"{declared} | None", f"None | {declared}", f"Optional[{declared}]")
    return text if declared and text in with_none else declared


def _text(annotation: Any) -> str:
    if annotation is None:
        return ""
    if isinstance(annotation, str):
        return str.__str__(annotation)
    return safe_repr(annotation)
