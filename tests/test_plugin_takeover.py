"""A plugin cannot pass as the user's own registration, nor as the sampler it names."""

from __future__ import annotations

import re
import sqlite3
import sys
import textwrap
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import agentdescent_sampling
from agentdescent_sampling import StateError, create, load_state, save_state
from agentdescent_sampling import loading as loading_module
from agentdescent_sampling import registry as registry_module
from agentdescent_sampling.errors import PluginLoadError
from agentdescent_sampling.plugin import hookimpl
from agentdescent_sampling.policy import EntryPoint
from agentdescent_sampling.records import PluginFailure
from agentdescent_sampling.registry import Registry
from agentdescent_sampling.samplers.round_robin import RoundRobin
from tests.support.distinfo import install_plugins, write_plugin


class Mine:
    """The user's own sampler, registered in-process."""

    name = "mine"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        pass


class Theirs(Mine):
    """A plugin's sampler."""

    name = "theirs"


class _Loader:
    def __init__(self, load: Callable[[], object]) -> None:
        self.load = load


def _install(monkeypatch: pytest.MonkeyPatch, *entry_points: EntryPoint) -> Registry:
    registry = Registry()
    monkeypatch.setattr(loading_module, "scan", lambda group, policy: (list(entry_points), []))
    monkeypatch.setattr(registry_module, "_default", registry)
    return registry


def _class_form(name: str, load: Callable[[], object]) -> EntryPoint:
    return EntryPoint(name, f"sneaky:{name}", "sneaky-dist", "1.0", _Loader(load))


def _hook_form(hook: Callable[..., None]) -> EntryPoint:
    module = types.ModuleType("sneaky")
    module.agentdescent_register_samplers = hookimpl(hook)  # type: ignore[attr-defined]
    return EntryPoint("sneaky", "sneaky", "sneaky-dist", "1.0", _Loader(lambda: module))


def _registering_at_import(name: str) -> Callable[[], object]:
    def load() -> object:
        agentdescent_sampling.register(Theirs, name=name)
        return Theirs

    return load


def _registering_in_a_hook(name: str) -> Callable[..., None]:
    def agentdescent_register_samplers(register: Callable[..., None]) -> None:
        register(Theirs, name="theirs")
        agentdescent_sampling.register(Theirs, name=name)

    return agentdescent_register_samplers


PLUGINS: dict[str, Callable[[str], EntryPoint]] = {
    "at import": lambda name: _class_form("theirs", _registering_at_import(name)),
    "in a hook": lambda name: _hook_form(_registering_in_a_hook(name)),
}


@pytest.mark.parametrize("claimed", ["mine", "another-name"])
@pytest.mark.parametrize("plugin", PLUGINS.values(), ids=PLUGINS)
def test_a_plugin_cannot_register_in_process(
    monkeypatch: pytest.MonkeyPatch, plugin: Callable[[str], EntryPoint], claimed: str
) -> None:
    registry = _install(monkeypatch, plugin(claimed))
    registry.register(Mine)
    registry.available()  # imports every plugin
    assert registry.get("mine").factory is Mine
    in_process = [
        record
        for record in registry.available()
        if not isinstance(record, PluginFailure) and record.form == "in-process"
    ]
    assert [record.name for record in in_process] == ["mine"]
    failures = [r for r in registry.available() if isinstance(r, PluginFailure)]
    assert any("in-process registration is for your own code" in f.message for f in failures)


def test_the_user_can_still_register_after_a_plugin_was_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry = _install(monkeypatch, PLUGINS["at import"]("mine"))
    registry.available()
    assert registry.register(Mine).form == "in-process"


class ClaimsABuiltin(RoundRobin):
    """A plugin's class reporting a built-in's name."""

    name = "round-robin"


@pytest.mark.parametrize(("selected", "reported"), [("rr2", "round-robin"), ("rr3", "mine")])
def test_a_sampler_answers_to_the_name_it_was_selected_by(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, selected: str, reported: str
) -> None:
    factory: Any = type("Claims", (ClaimsABuiltin,), {"name": reported})
    _install(monkeypatch, _class_form(selected, lambda: factory))
    sampler = create(selected)
    assert sampler.name == selected
    path = tmp_path / "state.json"
    save_state(sampler, path)  # type: ignore[arg-type]
    with pytest.raises(StateError, match=f"holds the state of sampler '{selected}'"):
        load_state(create("round-robin"), path)  # type: ignore[arg-type]
    load_state(create(selected), path)  # type: ignore[arg-type]


def test_a_durable_state_of_a_misnamed_sampler_is_owned_by_the_selected_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install(monkeypatch, _class_form("rr2", lambda: ClaimsABuiltin))
    path = tmp_path / "state.sqlite"
    with create("rr2", state=path) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    with pytest.raises(StateError, match="holds the state of sampler 'rr2'"):
        create("round-robin", state=path)
    with create("rr2", state=path) as resumed:
        assert resumed.name == "rr2"


@pytest.mark.parametrize(
    "distribution",
    ["agentdescent-sampling ", "agentdescent-sampling\t", "\u0430gentdescent-sampling",
     "agentdescent\u2010sampling", "-lead", "trail."],
    ids=["trailing-space", "trailing-tab", "cyrillic-a", "unicode-hyphen", "lead-dash", "dot"],
)  # fmt: skip
def test_a_distribution_with_a_name_pip_would_not_write_is_refused_unimported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, distribution: str
) -> None:
    source = "raise SystemExit('imported')\n"
    write_plugin(tmp_path, "lookalike_plugin", source, {"lookalike": "Sampler"}, distribution)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry()

    [refused] = [
        record
        for record in registry.available()
        if isinstance(record, PluginFailure) and "lookalike" in record.names
    ]

    assert refused.status == "conflict"
    assert f"its distribution's name, {distribution!a}, is not a valid" in refused.message
    assert "lookalike_plugin" not in sys.modules


HOOKED = """
from agentdescent_sampling.plugin import hookimpl


class Hooked:
    name = "shared-name"

    def pick(self, keys, round_index):
        return keys[0]

    def record(self, task_id, score):
        pass


@hookimpl
def agentdescent_register_samplers(register):
    register(Hooked, name="shared-name")
"""


@pytest.mark.parametrize("policy", [{"disable": ["classy-dist"]}, {"only": ["hooky-dist"]}])
def test_a_name_whose_class_form_plugin_the_policy_refuses_is_served_by_an_allowed_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: dict[str, list[str]]
) -> None:
    write_plugin(tmp_path, "classy_refused", "raise SystemExit('imported')\n",
                 {"shared-name": "Sampler"}, "classy-dist")  # fmt: skip
    write_plugin(tmp_path, "hooky_allowed", HOOKED, {"hooky": ""}, "hooky-dist")
    monkeypatch.syspath_prepend(str(tmp_path))

    sampler = Registry(strict=False, **policy).create("shared-name")  # type: ignore[arg-type]

    assert type(sampler).__module__ == "hooky_allowed"
    assert "classy_refused" not in sys.modules


def test_a_state_made_by_a_plugin_alias_is_read_back_and_one_of_another_plugin_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling.durable import read_durable_state

    aliased = HOOKED.replace(
        'name="shared-name")', 'name="shared-name", aliases=("alias",))'
    ).replace(
        "    def record(self, task_id, score):\n        pass\n",
        "    def record(self, task_id, score):\n        pass\n\n"
        "    def state_dict(self):\n        return {}\n\n"
        "    def load_state_dict(self, state):\n        pass\n",
    )
    write_plugin(tmp_path, "hooky_aliased", aliased, {"hooky": ""}, "hooky-dist")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry_module, "_default", Registry(strict=False))
    state = tmp_path / "sampler.sqlite"
    with create("alias", state=state) as sampler:  # type: ignore[union-attr]
        sampler.record(sampler.pick(["a"], 0), 1.0)

    assert read_durable_state(state)["records"] == 1

    with sqlite3.connect(state) as db:  # a plugin's name, but not this state's sampler
        db.execute("UPDATE meta SET value = ? WHERE key = 'sampler'", ("other-plugin",))
    db.close()
    # The spec keeps the name the alias selects, as any spelling of a name is kept.
    with pytest.raises(StateError, match="its spec names sampler 'shared-name', but the state"):
        read_durable_state(state)


#: A sampler keeping its state as the built-in ``round-robin`` does, under its ``name``.
STATE_UNDER_ITS_NAME = """
    class Base:
        def pick(self, keys, round_index):
            return keys[0]

        def record(self, task_id, score):
            pass

        def state_dict(self):
            return {"sampler": self.name, "version": 1}

        def load_state_dict(self, state):
            pass
"""
#: Samplers of a class-form ``rr2`` whose ``name`` is not plain text: it reads as ``rr2`` when
#: it is built and as ``round-robin`` later, is equal to both, or runs code when compared.
NAMES_THAT_LIE = {
    "str subclass equal to any name": """
        class Anything(str):
            def __eq__(self, other):
                return True

            __hash__ = str.__hash__

        class Sampler(Base):
            name = Anything("round-robin")
    """,
    "object whose __eq__ exits": """
        class Quits:
            def __eq__(self, other):
                raise SystemExit("from __eq__")

        class Sampler(Base):
            name = Quits()
    """,
    "property changing once served": """
        class Sampler(Base):
            reads = 0

            @property
            def name(self):
                type(self).reads += 1
                return "rr2" if type(self).reads == 1 else "round-robin"
    """,
    "__getattr__ changing once served": """
        class Sampler(Base):
            reads = 0

            def __getattr__(self, attribute):
                if attribute != "name":
                    raise AttributeError(attribute)
                type(self).reads += 1
                return "rr2" if type(self).reads == 1 else "round-robin"
    """,
}


@pytest.mark.parametrize("source", NAMES_THAT_LIE.values(), ids=NAMES_THAT_LIE)
def test_a_sampler_whose_name_is_not_plain_text_answers_to_the_name_it_was_selected_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    plugin = textwrap.dedent(STATE_UNDER_ITS_NAME) + textwrap.dedent(source)
    install_plugins(tmp_path, monkeypatch, {"liar-dist": (plugin, {"rr2": "Sampler"})})
    sampler = create("rr2")
    assert sampler.name == "rr2"
    path = tmp_path / "state.json"
    save_state(sampler, path)  # type: ignore[arg-type]
    with pytest.raises(StateError, match="holds the state of sampler 'rr2'"):
        load_state(create("round-robin"), path)  # type: ignore[arg-type]


#: Samplers that raise, SystemExit and kin included, only when the registry looks at them.
RAISING_WHEN_LOOKED_AT = {
    "thread_safe property": """
        class Sampler(Base):
            @property
            def thread_safe(self):
                raise SystemExit("from thread_safe")
    """,
    "__getattr__": """
        class Sampler(Base):
            def __getattr__(self, attribute):
                raise GeneratorExit(attribute)
    """,
}


@pytest.mark.parametrize("source", RAISING_WHEN_LOOKED_AT.values(), ids=RAISING_WHEN_LOOKED_AT)
def test_a_sampler_raising_when_looked_at_once_built_is_a_plugin_load_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    plugin = textwrap.dedent(STATE_UNDER_ITS_NAME) + 'Base.name = "looked-at"\n'
    plugin += textwrap.dedent(source)
    install_plugins(tmp_path, monkeypatch, {"raising-dist": (plugin, {"looked-at": "Sampler"})})
    with pytest.raises(
        PluginLoadError, match=re.escape("'looked-at' (raising-dist 0.1) raised while being built")
    ):
        create("looked-at")
    assert type(create("round-robin")).__name__ == "RoundRobin"
