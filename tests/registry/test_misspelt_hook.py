"""A hook-form plugin whose hook is marked under another name is told which, where and what."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.distinfo import install_plugins

ALIASED = """
    from agentdescent_sampling.plugin import hookimpl

    class Loud:
        def __repr__(self):
            raise SystemExit("a default's repr ran")

    @hookimpl
    def agentdescent_register_samplers(register, extra=Loud()):
        pass

    # Kept under a misspelt name alone: the function's own name is the right one.
    agentdescent_register_sampler = agentdescent_register_samplers
    del agentdescent_register_samplers
"""


def _failure_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """The failure recorded for a hook-form plugin of ``source``, installed alone."""
    registry = install_plugins(tmp_path, monkeypatch, {"misspelt-dist": (source, {"mis": ""})})
    registry.available()
    (failure,) = [f for f in registry.failures() if f.distribution == "misspelt-dist"]
    return failure.message


def test_a_misspelt_hook_is_named_as_its_module_names_it_without_running_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = _failure_of(tmp_path, monkeypatch, ALIASED)
    assert "the one hook is @hookimpl agentdescent_register_samplers(register); " in message
    assert "agentdescent_register_sampler(register, extra=...) (at kit_test_plugin_" in message
    assert message.endswith("under another name: rename it agentdescent_register_samplers")


WRAPPED = """
    from agentdescent_sampling.plugin import hookimpl

    def other(*args):
        pass

    @hookimpl
    def agentdescent_register_sampler(register):
        pass

    agentdescent_register_sampler.__wrapped__ = other  # as a decorator might leave it
"""


def test_a_misspelt_hook_is_shown_by_its_own_parameters_not_what_it_says_it_wraps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = _failure_of(tmp_path, monkeypatch, WRAPPED)
    assert "; agentdescent_register_sampler(register) (at kit_test_plugin_" in message
