"""Registering a sampler written in a notebook or script, without packaging it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pytest

from agentdescent_sampling import Registry, UnknownSamplerError
from agentdescent_sampling.errors import RegistrationError, SamplerConflictError
from agentdescent_sampling.plugin import check_keys, check_score
from agentdescent_sampling.testing import check_sampler
from tests.support.venv import Venv


class FirstKey:
    """Always the first key."""

    name = "first-key"

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        if not keys:
            raise ValueError("empty shard")
        return keys[self.offset % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        pass

    def __repr__(self) -> str:
        return f"FirstKey(offset={self.offset})"


class SecondKey(FirstKey):
    name = "first-key"


def test_a_registered_class_is_created_by_name_and_listed() -> None:
    registry = Registry(only=[])
    info = registry.register(FirstKey, aliases=("fk",))
    assert (info.name, info.distribution, info.form) == ("first-key", "(in-process)", "in-process")
    assert info.description == "Always the first key."
    sampler = registry.create("fk:offset=1")
    assert sampler.pick(["a", "b"], 0) == "b"
    assert "first-key" in [getattr(record, "name", None) for record in registry.available()]


def test_registering_a_builtin_name_is_a_conflict() -> None:
    # Told as a plugin is, it read "this registration is ignored", of a call that raised.
    with pytest.raises(SamplerConflictError) as conflict:
        Registry(only=[]).register(FirstKey, name="Round_Robin")
    assert str(conflict.value).endswith(
        "claims the built-in name round-robin (as 'Round_Robin'); built-in names are reserved, "
        "so the built-in keeps it: give yours a name of its own"
    )


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"name": "os.path:join"}, "invalid sampler name"),
        ({"name": "round-rob\u0131n"}, "ASCII"),
        ({"aliases": "xyz"}, "aliases='xyz' is not a list or tuple"),
        ({"description": 42}, "description must be text"),
    ],
)
def test_a_registration_breaking_a_name_rule_is_refused(
    kwargs: dict[str, object], expected: str
) -> None:
    with pytest.raises(RegistrationError, match=expected):
        Registry(only=[]).register(FirstKey, **kwargs)  # type: ignore[arg-type]


def test_a_class_whose_pick_cannot_take_round_index_is_refused_at_registration() -> None:
    class NoRound:
        name = "no-round"

        def pick(self, keys: Sequence[str]) -> str:
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            pass

    with pytest.raises(RegistrationError, match=r"pick\(self, keys\) can't be called"):
        Registry(only=[]).register(NoRound)


def test_registering_a_name_again_replaces_the_earlier_in_process_registration() -> None:
    registry = Registry(only=[])
    registry.register(FirstKey)
    registry.register(SecondKey)
    assert type(registry.create("first-key")) is SecondKey


def test_a_disabled_name_cannot_be_registered() -> None:
    with pytest.raises(RegistrationError, match="disabled"):
        Registry(only=[], disable=["first-key"]).register(FirstKey)


def test_a_registered_preset_answers_to_its_own_name() -> None:
    registry = Registry(only=[])
    registry.register(functools.partial(FirstKey, offset=1), name="second-key")
    sampler = registry.create("second-key")
    assert sampler.name == "second-key"
    assert repr(sampler) == "ServedSampler(FirstKey(offset=1), name='second-key')"
    report = check_sampler("second-key", registry=registry)
    assert "name" in report.checks
    assert "name" not in [violation.check for violation in report.violations]


def test_a_preset_of_a_class_without_a_name_passes_the_kits_name_check_by_its_own() -> None:
    class Nameless:
        def __init__(self, start: int = 0) -> None:
            self.start = start

        def pick(self, keys: list[str], round_index: int) -> str:
            return check_keys(keys)[self.start % len(keys)]

        def record(self, task_id: str, score: float) -> None:
            check_score(task_id, score)

    registry = Registry(only=[])
    registry.register(functools.partial(Nameless, start=1), name="nameless-preset")

    report = check_sampler("nameless-preset", registry=registry)

    assert "name" in report.checks
    assert [violation.check for violation in report.violations] == []


def test_a_name_both_registered_and_installed_needs_a_provider(zoo: Venv) -> None:
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import create, register
        from agentdescent_sampling.errors import SamplerConflictError

        class Mine:
            name = "fifo"
            def pick(self, keys, round_index):
                return keys[-1]
            def record(self, task_id, score):
                pass

        register(Mine)
        try:
            create("fifo")
        except SamplerConflictError as error:
            conflict = str(error)
        chosen = create({"name": "fifo", "provider": "(in-process)"})
        print(json.dumps([conflict, type(chosen).__name__]))
        """
    )
    assert "(in-process)" in outcome[0]
    assert "ads-test-classform" in outcome[0]
    assert outcome[1] == "Mine"


def test_a_registered_name_a_hook_form_plugin_also_registers_conflicts_from_the_first_call(
    zoo: Venv,
) -> None:
    # The same create() once gave the registration, and once another lookup had loaded the
    # hook-form plugins, a conflict.
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import create, register
        from agentdescent_sampling.errors import SamplerConflictError

        class Mine:
            name = "shuf"
            def pick(self, keys, round_index):
                return keys[-1]
            def record(self, task_id, score):
                pass

        register(Mine)
        answers = []
        for name in ("shuf", "first-key", "shuf"):
            try:
                answers.append(create(name).pick(["a", "b"], 0))
            except SamplerConflictError as error:
                answers.append(str(error))
        chosen = create({"name": "shuf", "provider": "(in-process)"})
        print(json.dumps([answers, type(chosen).__name__]))
        """
    )
    first, between, again = outcome[0]
    assert "(in-process)" in first
    assert "ads-test-hookform" in first
    assert between in ("a", "b")
    assert again == first
    assert outcome[1] == "Mine"


def test_an_unregistered_name_is_still_unknown() -> None:
    with pytest.raises(UnknownSamplerError):
        Registry(only=[]).create("first-key")


@pytest.mark.parametrize(
    ("given", "told"),
    [({"disable": "agentdescent-sampling-hardest"}, "write disable=\\['agentdescent-sampling"),
     ({"only": "agentdescent-sampling-extras"}, "write only=\\['agentdescent-sampling-extras'\\]"),
     ({"disable": b"rr"}, "not bytes b'rr', .*: write disable=\\['rr'\\]"),
     ({"only": "a, b"}, "write only=\\['a', 'b'\\]$"),
     ({"only": ","}, "write only=\\[\\]$"),
     ({"strict": "no"}, "takes True, False or None .*; got str 'no'")],
    ids=["disable", "only", "bytes", "comma-separated", "none-allowed", "strict"],
)  # fmt: skip
def test_a_policy_argument_of_the_wrong_shape_is_refused_not_read_by_its_characters(
    given: dict[str, Any], told: str
) -> None:
    with pytest.raises(TypeError, match=told):
        Registry(**given)


def test_a_name_a_registry_argument_disables_is_told_so_not_blamed_on_the_environment() -> None:
    with pytest.raises(UnknownSamplerError) as told:
        Registry(disable=["round-robin"]).create("round-robin")

    assert "disabled by Registry(disable=...)" in str(told.value)
    assert "AGENTDESCENT_SAMPLERS" not in str(told.value)


def test_a_registry_reprs_as_the_call_that_builds_it_without_its_samplers() -> None:
    registry = Registry(disable=["Hardest_First", "x"], only=[], strict=True)
    registry.register(FirstKey)
    with pytest.warns(UserWarning, match=r"Registry\(disable=\.\.\.\) names 'x', which matches no"):
        registry.available()  # 'x' disables nothing installed: said, and kept in the repr

    assert repr(registry) == "Registry(disable=['hardest-first', 'x'], only=[], strict=True)"
    assert repr(Registry(only=None, disable=[], strict=False, group="my.group")) == (
        "Registry(disable=[], only=None, strict=False, group='my.group')"
    )
