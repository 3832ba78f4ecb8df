"""Who may serve a name: built-ins are this package's code, and nothing else can claim them."""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from pathlib import Path

import pytest

from agentdescent_sampling import InvalidSamplerConfig, Registry, UnknownSamplerError
from agentdescent_sampling.policy import VERSION, EntryPoint, Policy
from tests.registry.conftest import HOOK_MODULES, LONG
from tests.registry.probes import IMPORTED_PLUGINS, error_of, failures_of, records
from tests.support.distinfo import write_plugin
from tests.support.venv import Venv

BUILTIN_MODULES = """
import json
from agentdescent_sampling import create
print(json.dumps([type(create(name)).__module__
                  for name in ("round-robin", "RoundRobin", "difficulty-weighted")]))
"""
OURS = [
    "agentdescent_sampling.samplers.round_robin",
    "agentdescent_sampling.samplers.round_robin",
    "agentdescent_sampling.samplers.difficulty_weighted",
]


def first_on_path(*paths: str) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(paths)}


# -- a distribution calling itself agentdescent-sampling --------------------------------


def test_a_distribution_named_like_this_package_never_serves_a_builtin(
    zoo: Venv, aside: dict[str, str]
) -> None:
    env = first_on_path(aside["agentdescent-sampling"])
    made, imported = zoo.python(BUILTIN_MODULES + IMPORTED_PLUGINS, env=env).stdout.splitlines()
    assert json.loads(made) == OURS
    assert json.loads(imported) == []
    imported = zoo.json(
        "from agentdescent_sampling import available\navailable()\n" + IMPORTED_PLUGINS, env=env
    )
    assert "ads_impostor_dist" not in imported


def test_every_distribution_named_like_this_package_is_listed_wherever_it_is_on_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first of a name on sys.path hid the rest, as importlib.metadata has it: after this
    # package, or after another impostor, one was neither listed nor refused.
    from agentdescent_sampling.discovery import scan

    for module, name in (("imp_a", "agentdescent-sampling"), ("imp_b", "Agentdescent_Sampling")):
        write_plugin(tmp_path, module, "class X: pass\n", {f"evil-{module}": "X"}, name)
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])  # after this package

    _, refused = scan("agentdescent.samplers", Policy(frozenset(), None, False))

    claims = sorted(failure.names[0] for failure in refused if "imp_" in failure.names[0])
    assert claims == ["evil-imp_a", "evil-imp_b"]
    assert not {"imp_a", "imp_b"} & set(sys.modules)


def test_a_distribution_named_like_this_package_is_listed_as_a_refused_conflict(
    zoo: Venv, aside: dict[str, str]
) -> None:
    env = first_on_path(aside["agentdescent-sampling"])
    found = records(zoo, env=env)
    claims = failures_of(found, "agentdescent-sampling")
    assert sorted(r["names"][0] for r in claims) == ["round-robin", "takeover"]  # type: ignore[index]
    assert {r["status"] for r in claims} == {"conflict"}
    assert all("never imported" in str(r["error"]) for r in claims)
    ours = [
        r for r in found if r["kind"] == "sampler" and r["distribution"] == "agentdescent-sampling"
    ]
    assert {r["name"] for r in ours} == {
        "round-robin",
        "difficulty-weighted",
        "informative-band",
        "fixable-first",
    }
    assert {r["version"] for r in ours} == {VERSION}
    selected = error_of(zoo, "takeover", env=env)  # the impostor is at fault, not the name
    assert selected["type"] == "PluginLoadError"
    assert selected["message"].startswith("sampler 'takeover' was refused: ")


def test_only_does_not_let_a_distribution_named_like_this_package_through(
    zoo: Venv, aside: dict[str, str]
) -> None:
    env = {
        **first_on_path(aside["agentdescent-sampling"]),
        "AGENTDESCENT_SAMPLERS_ONLY": "ads-test-classform",
    }
    imported = zoo.json(
        "from agentdescent_sampling import available\navailable()\n" + IMPORTED_PLUGINS, env=env
    )
    assert imported == ["ads_classform"]


def test_the_builtins_version_is_the_installed_version_of_this_package(zoo: Venv) -> None:
    assert (
        zoo.json(
            "import importlib.metadata, json\n"
            "print(json.dumps(importlib.metadata.version('agentdescent-sampling')))"
        )
        == VERSION
    )


# -- look-alike names -----------------------------------------------------------------


def test_selecting_a_builtin_imports_no_plugin_even_beside_lookalike_entry_points(
    zoo: Venv,
) -> None:
    made, imported = zoo.python(BUILTIN_MODULES + IMPORTED_PLUGINS).stdout.splitlines()
    assert json.loads(made) == OURS
    assert json.loads(imported) == []


def test_the_engine_benchs_default_lineup_imports_no_plugin(zoo: Venv) -> None:
    # It listed every installed sampler to keep the built-ins, importing each plugin.
    lineup = """
import json
from agentdescent_sampling.bench.engine.lineup import default_engine_specs
from agentdescent_sampling.registry import default_registry
print(json.dumps(default_engine_specs(default_registry())))
"""
    specs, imported = zoo.python(lineup + IMPORTED_PLUGINS).stdout.splitlines()
    builtins = ["difficulty-weighted", "informative-band", "fixable-first"]
    assert json.loads(specs) == [*builtins, "agentdescent.DifficultyWeighted"]
    assert json.loads(imported) == []


def test_builtins_stay_usable_under_strict_beside_broken_and_lookalike_plugins(zoo: Venv) -> None:
    made = zoo.json(BUILTIN_MODULES, env={"AGENTDESCENT_SAMPLERS_STRICT": "1"})
    assert made == OURS


def test_entry_points_named_like_a_builtin_are_refused_unimported(zoo: Venv) -> None:
    found = failures_of(records(zoo), "ads-test-lookalikes")
    by_name = {r["names"][0]: r for r in found}  # type: ignore[index]
    assert by_name["Round_Robin"]["status"] == "conflict"
    assert by_name["Difficulty.Weighted"]["status"] == "conflict"
    assert "never imported" in str(by_name["Round_Robin"]["error"])


def test_non_ascii_lookalike_names_are_refused() -> None:
    with pytest.raises(InvalidSamplerConfig, match="ASCII"):
        Registry().get("round-rob\u0131n")


def test_a_non_ascii_lookalike_name_is_shown_escaped_in_its_refusal() -> None:
    with pytest.raises(InvalidSamplerConfig) as refused:
        Registry(only=[]).get("round-rob\u0131n")
    assert "invalid sampler name 'round-rob\\u0131n'" in str(refused.value)


def test_a_long_entry_point_name_claiming_a_builtin_is_quoted_cut_in_its_refusal() -> None:
    # Its name was quoted whole: 300,141 characters, where a failure holds 300.
    from agentdescent_sampling.discovery import _refusal
    from agentdescent_sampling.policy import EntryPoint, Policy

    claim = EntryPoint("round" + "-" * 300_000 + "robin", "evil:X", "evil-dist", "1.0")
    status, message = _refusal(claim, Policy(frozenset(), None, False)) or ("", "")

    assert status == "conflict"
    assert message.startswith("its entry point is named 'round---")
    assert "..., which selects a built-in" in message
    assert len(message) <= 300


class _Mine:
    name = "mine"

    def pick(self, keys: list[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        pass


@pytest.mark.parametrize(
    ("name", "said"),
    [("round-robin", "is a built-in, provided by agentdescent-sampling, not by {}:"),
     ("mine", "is not provided by {}; it is provided by (in-process)"),
     ("no-such", "no sampler named 'no-such' provided by {}.")],
    ids=["built-in", "registered", "unknown"],
)  # fmt: skip
def test_a_lookalike_provider_is_shown_escaped_beside_the_name_it_passes_for(
    name: str, said: str
) -> None:
    registry = Registry(only=[])
    registry.register(_Mine)

    with pytest.raises(UnknownSamplerError) as refused:
        registry.create({"name": name, "provider": "\u0430gentdescent-sampling"})

    assert said.format("'\\u0430gentdescent-sampling'") in str(refused.value)


def test_a_lookalike_in_the_only_list_is_shown_escaped_beside_the_distribution_it_blocks() -> None:
    policy = Policy.read(None, ["\u0430gentdescent-sampling-extras", "mine"], False)
    entry_point = EntryPoint("x", "x:X", "agentdescent-sampling-extras", "1.0")

    assert policy.blocked(entry_point) == (
        "not in Registry(only=...) (mine, '\\u0430gentdescent-sampling-extras')"
    )


def test_a_hook_registering_non_ascii_lookalikes_has_each_refused(zoo: Venv) -> None:
    found = failures_of(records(zoo), "ads-test-lookalikes")
    refused = [r for r in found if "ASCII" in str(r["error"])]
    assert sorted(r["names"][0] for r in refused) == sorted(  # type: ignore[index]
        ["round-rob\u0131n", "\u212aelvin-first", "ba\u017fic"]
    )
    names = {r["name"] for r in records(zoo) if r["kind"] == "sampler"}
    assert not {name for name in names if not str(name).isascii()}


def test_a_typo_imports_only_the_hook_form_plugins(zoo: Venv) -> None:
    imported = zoo.json(
        "from agentdescent_sampling import create\n"
        "try:\n    create('survivr')\nexcept Exception:\n    pass\n" + IMPORTED_PLUGINS
    )
    assert imported
    imported_by_hooks = {"ads_lookalike", "ads_impostor"}  # hook modules import these
    assert set(imported) <= set(HOOK_MODULES) | imported_by_hooks
    assert "ads_classform" not in imported
    assert "ads_slow" not in imported


# -- reserved names under DISABLE, ONLY and STRICT ------------------------------------------


@pytest.mark.parametrize(
    "disabled", ["difficulty-weighted", "DifficultyWeighted", "agentdescent-sampling"]
)
def test_a_disabled_builtin_name_stays_reserved(zoo: Venv, disabled: str) -> None:
    env = {"AGENTDESCENT_SAMPLERS_DISABLE": disabled}
    error = error_of(zoo, "difficulty-weighted", env=env)
    assert error["type"] == "UnknownSamplerError"
    assert "disabled" in error["message"]
    assert "stays reserved" in error["message"]
    impostor = failures_of(records(zoo, env=env), "ads-test-impostor")
    assert {r["status"] for r in impostor} == {"conflict"}


@pytest.mark.parametrize("only", [",", " , "])
def test_an_only_list_with_no_names_loads_no_plugin(zoo: Venv, only: str) -> None:
    env = {"AGENTDESCENT_SAMPLERS_ONLY": only}
    imported = zoo.json(
        "from agentdescent_sampling import available\navailable()\n" + IMPORTED_PLUGINS, env=env
    )
    assert imported == []
    names = {r["name"] for r in records(zoo, env=env) if r["kind"] == "sampler"}
    assert names == {"round-robin", "difficulty-weighted", "informative-band", "fixable-first"}


def test_a_registry_with_an_empty_only_loads_no_plugin(zoo: Venv) -> None:
    loaded, imported = zoo.python(
        "import json\n"
        "from agentdescent_sampling import Registry, SamplerInfo\n"
        "records = Registry(only=[]).available()\n"
        "print(json.dumps(sorted(r.name for r in records if isinstance(r, SamplerInfo))))\n"
        + IMPORTED_PLUGINS
    ).stdout.splitlines()
    assert json.loads(loaded) == [
        "difficulty-weighted",
        "fixable-first",
        "informative-band",
        "round-robin",
    ]
    assert json.loads(imported) == []


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "on"])
def test_every_yes_spelling_of_strict_is_strict(zoo: Venv, value: str) -> None:
    result = zoo.python(
        "from agentdescent_sampling import available\navailable()\n",
        env={"AGENTDESCENT_SAMPLERS_STRICT": value},
        check=False,
    )
    assert result.returncode != 0
    assert "PluginLoadError" in result.stderr


@pytest.mark.parametrize("value", ["", "0", "false", "no", "off"])
def test_every_no_spelling_of_strict_is_not_strict(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("AGENTDESCENT_SAMPLERS_STRICT", value)
    assert Registry().policy.strict is False


@pytest.mark.parametrize("value", ["maybe", "2", "strict"])
def test_an_unknown_strict_value_is_refused_naming_the_spellings(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("AGENTDESCENT_SAMPLERS_STRICT", value)
    with pytest.raises(InvalidSamplerConfig, match=f"STRICT='{value}'.*1, true, yes, on"):
        Registry()


# -- damaged metadata -----------------------------------------------------------------------


def test_a_dist_info_without_metadata_is_refused_and_the_rest_still_load(
    zoo: Venv, aside: dict[str, str]
) -> None:
    env = first_on_path(aside["ads-test-no-metadata"])
    found = records(zoo, env=env)
    (refused,) = [
        r for r in found if r["kind"] == "failure" and "no readable metadata" in str(r["error"])
    ]
    assert refused["status"] == "failed"
    names = {r["name"] for r in found if r["kind"] == "sampler"}
    assert {"round-robin", "fifo", "shuffled"} <= names
    assert "no-meta" not in names
    assert zoo.json(BUILTIN_MODULES, env=env) == OURS


def test_a_malformed_entry_points_txt_spoils_only_its_own_distribution(
    zoo: Venv, aside: dict[str, str]
) -> None:
    env = first_on_path(aside["ads-test-bad-entry-points"])
    found = records(zoo, env=env)
    (refused,) = failures_of(found, "ads-test-bad-entry-points")
    assert "entry_points.txt can't be parsed" in str(refused["error"])
    names = {r["name"] for r in found if r["kind"] == "sampler"}
    assert {
        "round-robin",
        "difficulty-weighted",
        "informative-band",
        "fixable-first",
        "fifo",
        "shuffled",
    } <= names
    assert zoo.json(BUILTIN_MODULES, env=env) == OURS


def test_selecting_a_builtin_reads_no_installed_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    if sys.version_info >= (3, 12):
        metadata = importlib.metadata
    else:
        import importlib_metadata as metadata

    def unreadable() -> object:
        raise OSError("metadata read")

    monkeypatch.setattr(metadata, "distributions", unreadable)
    registry = Registry()
    assert registry.create("informative-band").name == "informative-band"
    assert registry.failures() == []
    registry.available()
    assert "metadata read" in registry.failures()[0].message


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"AGENTDESCENT_SAMPLERS_DISABLE": "ads-test-two-names"},
         "ads-test-two-names (disabled by AGENTDESCENT_SAMPLERS_DISABLE)"),
        ({"AGENTDESCENT_SAMPLERS_ONLY": "ads-test-two-nmaes"},
         "(not in AGENTDESCENT_SAMPLERS_ONLY (ads-test-two-nmaes))"),
    ],
    ids=["disabled", "only-misspelt"],
)  # fmt: skip
def test_a_hook_form_name_the_environment_blocks_is_not_found_naming_the_variable(
    zoo: Venv, env: dict[str, str], reason: str
) -> None:
    # A blocked hook-form plugin is never imported, so its names are unknown: the error says
    # which distributions the environment blocks, and why.
    error = error_of(zoo, "lrt-shuffled", env=env)
    assert error["type"] == "UnknownSamplerError"
    assert "that might provide it: " in error["message"]
    assert reason in error["message"]
    assert "unset or change that setting to use" in error["message"]


def test_metadata_text_never_passes_for_a_table_row_nor_fills_a_message(
    zoo: Venv, aside: dict[str, str]
) -> None:
    # A version and an entry point name spaced like list's columns, with control characters;
    # the version 200,000 characters long, quoted whole in every error that named the plugin.
    env = first_on_path(aside["ads-test-spoofed-text"])
    listed = zoo.run("agentdescent-sampling", "list", env=env).stdout
    rows = [line for line in listed.splitlines() if "ads-test-spoofed-text" in line]
    assert len(rows) == 2
    assert all(line.startswith(("'", "spoofed ")) for line in rows), rows
    assert "\x1b" not in listed
    assert "AAAA" * 20 not in listed
    said = zoo.json(
        """
        import json
        from agentdescent_sampling import available
        from agentdescent_sampling.records import PluginFailure
        print(json.dumps([
            record.where if isinstance(record, PluginFailure) else record.version
            for record in available() if record.distribution == "ads-test-spoofed-text"
        ]))
        """,
        env=env,
    )  # what a failure's or a sampler's message says of it
    assert len(said) == 2
    assert not any("\x1b" in text or len(text) > 200 for text in said), [t[:80] for t in said]


def test_a_long_valid_version_is_kept_whole(zoo: Venv, aside: dict[str, str]) -> None:
    env = first_on_path(aside["ads-test-long-version"])
    (record,) = [r for r in records(zoo, env=env) if r["distribution"] == "ads-test-long-version"]
    assert record["version"] == LONG
