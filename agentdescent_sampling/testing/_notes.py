"""The kit's notes: advice on what no check fails (no ``stats()``, numbers and flags taken
unvalidated, ``**kwargs`` that swallow a typo, bad scores taken)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._display import safe_repr
from ..params import Parameter
from ..protocol import declares_thread_unsafe
from ..served import ServedSampler
from ._calls import _signature
from ._report import Factory
from ._scores import _bad_scores_taken
from ._settings import _threads
from ._threads import _STATS_SHAPE


def _notes(factory: Factory, params: dict[str, Any], label: str) -> tuple[str, ...]:
    sampler = factory(**params)
    notes = []
    locked = declares_thread_unsafe(factory) or declares_thread_unsafe(sampler)
    locked = locked or (isinstance(sampler, ServedSampler) and sampler.lock is not None)
    unread = _without_stats(sampler, label, locked)
    if unread:
        notes.append(unread)
    loose = _unvalidated(factory, params)
    if loose:
        names = [parameter.name for parameter in loose]
        kinds = {"declared a number" if p.annotation else "defaulting to a number" for p in loose}
        numbers = kinds.pop() if len(kinds) == 1 else "declared a number or defaulting to one"
        notes.append(
            f"parameters: {', '.join(names)}, {numbers}, accepted the string "
            f"{_NOT_A_NUMBER!r}, so a config's typo ({label}:{names[0]}=abc) passes create() "
            f"and fails later, if at all. Validate numbers as they are set (an attrs validator "
            f"such as agentdescent_sampling.plugin.number_in, or in a plain __init__ a "
            f"check that raises TypeError or ValueError), so create() refuses a bad value "
            f"naming its parameter"
        )
    signature = _signature(factory)
    if signature.accepts_any and _takes_unknown_keyword(factory, params):
        named = {parameter.name for parameter in signature.parameters}
        swallowed = [key for key in params if key not in named]
        taken = (
            f"the parameter given here that it does not name, {swallowed[0]}="
            f"{safe_repr(params[swallowed[0]], 40)}, was taken silently, as a config's typo is"
            if swallowed
            else f"a config's misspelt parameter ({label}:x=1) is taken silently"
        )
        notes.append(
            f"parameters: {label} takes any keyword (**kwargs), so {taken}, and the sampler "
            f"runs without it. Name each parameter (an attrs class, or keyword arguments), so "
            f"that create() refuses an unknown one and suggests the closest"
        )
    flags = _unvalidated_flags(factory, params)
    if flags:
        listed = ", ".join(parameter.name for parameter in flags)
        notes.append(
            f"flags: {listed} accepted the string 'false', which an if reads as true, so a "
            f'config\'s quoted "false" ({label}:{flags[0].name}="false") turns it on. Validate '
            f"flags as they are set (an attrs validator such as "
            f"agentdescent_sampling.plugin.boolean(), or a check that raises TypeError)"
        )
    taken = _bad_scores_taken(sampler)  # looked at above, not yet called
    if taken:
        notes.append(
            f"bad scores: record() {taken}. The engine checks each reward before record(), so "
            f"no run is harmed, but another caller's bad score would skew the statistics "
            f"silently: agentdescent_sampling.plugin.check_score(task_id, score) refuses them "
            f"for you"
        )
    return tuple(notes)


#: A keyword no sampler names: what the kit gives a factory taking ``**kwargs``.
_UNKNOWN_KEYWORD = "agentdescent_kit_unknown_keyword"


def _takes_unknown_keyword(factory: Factory, params: dict[str, Any]) -> bool:
    """Whether ``factory`` builds a sampler given a keyword it cannot know: one that hands
    its ``**kwargs`` on to a class that names its parameters refuses it."""
    try:
        factory(**params, **{_UNKNOWN_KEYWORD: 1})
    except Exception:  # noqa: BLE001  # refused, as an unknown parameter should be
        return False
    return True


def _without_stats(sampler: Any, label: str, locked: bool) -> str:
    """The one note of a sampler without ``stats()``, saying what each check that reads it
    could not see: the threads check its lost records (unless it is ``locked``: served under
    a lock, it loses none), the instances check what it learned (unless ``state_dict()``
    shows that); or ``""``, if it has ``stats()`` or neither check needs it."""
    if callable(getattr(sampler, "stats", None)):
        return ""
    threads = not locked
    apart = not callable(getattr(sampler, "state_dict", None))
    lost = (
        f"lost records could not be observed, because {label} has no stats(); only exceptions "
        f"and non-members under {_threads()} threads were checked"
    )
    shared = (
        "whether records on one instance change what another learned (a class attribute or "
        "a mutable default argument shares it) could not be seen"
    )
    if threads and apart:
        return (
            f"threads and instances-apart: {lost}; and with no state_dict() either, {shared}. "
            f"Add stats() returning {_STATS_SHAPE}, which both checks read (declaring "
            f"thread_safe = False answers the threads check alone)"
        )
    if threads:
        return (
            f"threads: {lost}. Add stats() returning {_STATS_SHAPE}, or declare thread_safe = False"
        )
    if apart:
        return (
            f"instances-apart: not checked: {label} has neither state_dict() nor stats(), so "
            f"{shared}. Add stats() returning {_STATS_SHAPE}, which the threads check reads too"
        )
    return ""


#: What the kit sets a number parameter to, to see whether the factory validates it.
_NOT_A_NUMBER = "not-a-number"


def _unvalidated(factory: Factory, params: dict[str, Any]) -> list[Parameter]:
    """The number parameters that ``factory`` builds a sampler with when set to a string:
    those declared ``int`` or ``float`` (or either or None), and those declared nothing
    whose default is an ``int`` or a ``float``."""

    def number(parameter: Parameter) -> bool:
        undeclared = not parameter.annotation and type(parameter.default) in (int, float)
        return _declared_as(parameter.annotation, {"int", "float"}) or undeclared

    return _taking(factory, params, number, _NOT_A_NUMBER)


def _unvalidated_flags(factory: Factory, params: dict[str, Any]) -> list[Parameter]:
    """The flags, declared ``bool`` or declared nothing with a ``bool`` default, that
    ``factory`` builds a sampler with when set to the string ``'false'``, which is true."""

    def flag(parameter: Parameter) -> bool:
        undeclared = not parameter.annotation and type(parameter.default) is bool
        return _declared_as(parameter.annotation, {"bool"}) or undeclared

    return _taking(factory, params, flag, "false")


def _taking(
    factory: Factory, params: dict[str, Any], kind: Callable[[Parameter], bool], given: str
) -> list[Parameter]:
    """The parameters of ``kind`` that ``factory`` builds a sampler with when set to
    ``given``, a string of the wrong type."""
    loose = []
    for parameter in _signature(factory).parameters:
        if not kind(parameter):
            continue
        try:
            factory(**{**params, parameter.name: given})
        except Exception:  # noqa: BLE001  # refused, as it should be, whatever the type
            continue
        loose.append(parameter)
    return loose


def _declared_as(annotation: str, kinds: set[str]) -> bool:
    """Whether ``annotation`` (as text) is one of ``kinds`` (``{"int", "float"}``), or a union
    of them, with or without ``None``: ``float | None``, ``Optional[int]``,
    ``typing.Union[int, float]``."""
    text = annotation.replace("typing.", "").replace(" ", "")
    for wrapper in ("Optional[", "Union["):
        if text.startswith(wrapper) and text.endswith("]"):
            text = text[len(wrapper) : -1].replace(",", "|")
    parts = set(text.split("|")) - {"None", "NoneType"}
    return bool(parts) and parts <= kinds
