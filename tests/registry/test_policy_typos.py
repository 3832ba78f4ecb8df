"""An ONLY or DISABLE entry that matches nothing installed is told, read from metadata alone."""

from __future__ import annotations

import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from agentdescent_sampling import registry as registry_module
from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import UnknownSamplerError
from agentdescent_sampling.registry import Registry
from tests.support.distinfo import HOOK_FORM, write_plugin

SAMPLER = """
    class Fifo:
        name = "typo-fifo"

        def pick(self, keys, round_index):
            return keys[0]

        def record(self, task_id, score):
            pass
"""
HOOKS = HOOK_FORM.replace('"shuffled"', '"typo-shuffled"')
ONLY = "ads-test-typo-classform, ads-test-typo-hooks, ads-test-typo-hookz"
DISABLE = ["typo-fifoo", "round-robin", "typo-shuffled"]
TOLD = [
    "AGENTDESCENT_SAMPLERS_ONLY names 'ads-test-typo-hookz', which is no installed plugin "
    "distribution, so it allows nothing; did you mean 'ads-test-typo-hooks'? Correct or remove "
    "it; 'agentdescent-sampling list' shows what is installed",
    "Registry(disable=...) names 'typo-fifoo', which matches no built-in, installed plugin "
    "distribution or sampler name (a plugin that may not load names none), so it disables "
    "nothing; did you mean 'typo-fifo'? Correct or remove it; 'agentdescent-sampling list' "
    "shows what is installed",
]


@pytest.fixture
def typo_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A class-form and a hook-form plugin distribution, installed on ``sys.path``, with
    ``AGENTDESCENT_SAMPLERS_ONLY`` naming both and a misspelling of the second."""
    write_plugin(tmp_path, "ads_typo_fifo", textwrap.dedent(SAMPLER), {"typo-fifo": "Fifo"},
                 "ads-test-typo-classform")  # fmt: skip
    write_plugin(tmp_path, "ads_typo_hooks", textwrap.dedent(HOOKS), {"typo-hooks": ""},
                 "ads-test-typo-hooks")  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("AGENTDESCENT_SAMPLERS_ONLY", ONLY)
    for module in ("ads_typo_fifo", "ads_typo_hooks"):
        monkeypatch.delitem(sys.modules, module, raising=False)


@pytest.mark.usefixtures("typo_plugins")
def test_an_only_or_disable_entry_matching_nothing_installed_is_told_the_closest_name() -> None:
    registry = Registry(disable=DISABLE)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.get("typo-fifo")  # a class-form name: the hook-form plugin is not imported
        hook_imported = "ads_typo_hooks" in sys.modules
        registry.available()  # every plugin: the hook registers typo-shuffled, which is matched

    assert not hook_imported
    assert [str(warning.message) for warning in caught] == TOLD
    assert all(warning.category is UserWarning for warning in caught)
    # Each points at the call that read the lists, here; registry.py's own line, it did.
    assert [Path(warning.filename).name for warning in caught] == [Path(__file__).name] * 2


@pytest.mark.usefixtures("typo_plugins")
def test_a_list_of_thousands_of_entries_matching_nothing_is_told_in_eleven_warnings() -> None:
    # Each was one warning: 5,000 entries printed 5,000 lines.
    registry = Registry(disable=[f"nothing-{number:04}" for number in range(5000)])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.available()

    told = [str(warning.message) for warning in caught]
    told = [message for message in told if message.startswith("Registry(disable=...)")]
    assert len(told) == 11
    assert told[0].startswith("Registry(disable=...) names 'nothing-0000', which matches no")
    assert told[-1] == (
        "Registry(disable=...) names 4,990 more entries that match nothing installed"
    )


@pytest.mark.usefixtures("typo_plugins")
def test_a_built_in_selected_reads_no_metadata_and_tells_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        built = Registry(disable=DISABLE).create("difficulty-weighted")
    assert built.name == "difficulty-weighted"


@pytest.mark.usefixtures("typo_plugins")
def test_list_tells_each_entry_that_matches_nothing_as_one_warning_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(registry_module, "_default", Registry(disable=DISABLE))

    assert main(["list"]) == 0

    err = capsys.readouterr().err
    assert err.splitlines() == [f"agentdescent-sampling: warning: {told}" for told in TOLD]


def test_a_hook_registered_sampler_disabled_by_an_alias_is_disabled_by_every_name_unwarned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = HOOK_FORM.replace('"shuffled"', '"alias-shuffled"').replace(
        "register(Shuffled)", 'register(Shuffled, aliases=("alias-shuf",))'
    )
    write_plugin(tmp_path, "ads_alias_hooks", textwrap.dedent(hooks), {"alias-hooks": ""},
                 "ads-test-alias-hooks")  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ads_alias_hooks", raising=False)
    registry = Registry(disable=["alias-shuf"])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = registry.available()
        for name in ("alias-shuffled", "alias-shuf"):
            with pytest.raises(UnknownSamplerError, match=rf"sampler '{name}' is disabled by "):
                registry.create(name)

    assert not caught  # the alias matched the sampler it disabled: no "disables nothing"
    [disabled] = [record for record in records if record.status == "disabled"]
    assert set(disabled.names) == {"alias-shuffled", "alias-shuf"}
