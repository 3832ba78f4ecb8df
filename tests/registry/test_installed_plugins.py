"""The registry against real distributions installed by pip into a throwaway venv."""

from __future__ import annotations

import json

import pytest

from tests.registry.probes import IMPORTED_PLUGINS, error_of, failure_of, records
from tests.support.venv import PATIENT, Venv


def test_a_class_form_plugin_is_registered_under_its_entry_point_name(zoo: Venv) -> None:
    made = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        from agentdescent_sampling.registry import default_registry
        sampler = create("fifo:offset=1")
        info = default_registry().get("fifo")
        print(json.dumps([type(sampler).__name__, sampler.pick(["a", "b"], 0), info.to_dict()]))
        """
    )
    assert made[:2] == ["Fifo", "b"]
    assert made[2]["distribution"] == "ads-test-classform"
    assert made[2]["version"] == "1.2.3"
    assert made[2]["form"] == "class"
    assert made[2]["parameters"] == [
        {"name": "offset", "default": 0, "required": False, "type": ""}
    ]


def test_a_hook_form_plugin_registers_several_samplers_with_aliases_and_descriptions(
    zoo: Venv,
) -> None:
    by_name = {r["name"]: r for r in records(zoo) if r["kind"] == "sampler"}
    assert by_name["shuffled"]["aliases"] == ["shuf"]
    assert by_name["shuffled"]["description"] == "Shuffled order, seeded."
    assert by_name["shuffled"]["form"] == "hook"
    assert by_name["first-key"]["description"] == ""
    assert by_name["first-key"]["accepts_any_parameter"] is True
    assert (
        zoo.json(
            """
        import json
        from agentdescent_sampling import create
        print(json.dumps(type(create("shuf:seed=3")).__name__))
        """
        )
        == "Shuffled"
    )


def test_selecting_a_builtin_imports_no_plugin(zoo: Venv) -> None:
    imported = zoo.json(
        "from agentdescent_sampling import create\ncreate('difficulty-weighted')\n"
        + IMPORTED_PLUGINS
    )
    assert imported == []


def test_selecting_a_class_form_plugin_imports_only_that_plugin(zoo: Venv) -> None:
    imported = zoo.json(
        "from agentdescent_sampling import create\ncreate('fifo')\n" + IMPORTED_PLUGINS
    )
    assert imported == ["ads_classform"]


def test_a_name_not_found_otherwise_loads_the_hook_plugins(zoo: Venv) -> None:
    imported = zoo.json(
        "from agentdescent_sampling import create\ncreate('first-key')\n" + IMPORTED_PLUGINS
    )
    assert "ads_hookform" in imported


def test_failed_plugins_are_recorded_with_distribution_version_and_error(zoo: Venv) -> None:
    found = records(zoo)
    broken = failure_of(found, "ads-test-broken-import")
    assert broken["status"] == "failed"
    assert broken["version"] == "1.2.3"
    assert broken["entry_point"] == "broken = ads_broken:Sampler"
    assert "ModuleNotFoundError" in str(broken["error"])
    # A module it imports is missing: install that, not check the entry point or reinstall.
    assert str(broken["error"]).endswith(
        "; it imports 'numpyy_not_installed', which is not installed: if that is the module "
        "meant, install it (and list it in its dependencies); if not, correct the import"
    )
    assert "hook exploded" in str(failure_of(found, "ads-test-hook-raises")["error"])
    assert "SystemExit: 3" in str(failure_of(found, "ads-test-exits")["error"])
    assert "SyntaxError" in str(failure_of(found, "ads-test-syntax-error")["error"])
    assert "neither a sampler factory" in str(failure_of(found, "ads-test-not-a-factory")["error"])


def test_every_other_sampler_keeps_working_beside_broken_plugins(zoo: Venv) -> None:
    names = {r["name"] for r in records(zoo) if r["kind"] == "sampler"}
    assert {"round-robin", "difficulty-weighted", "fifo", "shuffled", "survivor"} <= names


def test_hooks_that_register_nothing_are_reported_with_both_forms_of_entry_point(
    zoo: Venv,
) -> None:
    error = str(failure_of(records(zoo), "ads-test-registers-nothing")["error"])
    assert "its hooks registered no sampler" in error
    assert "'module:Class'" in error


def test_a_misspelt_hook_is_reported_not_ignored(zoo: Venv) -> None:
    failure = failure_of(records(zoo), "ads-test-misspelt")
    assert "the one hook is @hookimpl agentdescent_register_samplers(register); " in str(
        failure["error"]
    )
    assert "; agentdescent_register_sampler(register) (at ads_misspelt.py:" in str(failure["error"])
    assert str(failure["error"]).endswith(
        "is marked @hookimpl under another name: rename it agentdescent_register_samplers"
    )


def test_invalid_registrations_are_recorded_and_the_valid_one_survives(zoo: Venv) -> None:
    found = records(zoo)
    errors = [
        str(r["error"])
        for r in found
        if r["kind"] == "failure" and r["distribution"] == "ads-test-bad-registrations"
    ]
    assert len(errors) == 4
    assert any("registered int 42, which is not callable" in e for e in errors)
    assert any("registered class NoPick: it has no pick() method" in e for e in errors)
    assert any("already registered" in e for e in errors)
    assert any("invalid sampler name 'bad.name'" in e for e in errors)
    assert [r["distribution"] for r in found if r.get("name") == "survivor"] == [
        "ads-test-bad-registrations"
    ]


def test_selecting_a_sampler_from_a_failed_plugin_raises_chained_to_the_original(
    zoo: Venv,
) -> None:
    error = error_of(zoo, "broken")
    assert error["type"] == "PluginLoadError"
    assert error["cause"] == "ModuleNotFoundError"
    assert "ads-test-broken-import 1.2.3" in error["message"]


def test_an_unknown_name_mentions_the_plugins_that_failed(zoo: Venv) -> None:
    env = {"AGENTDESCENT_SAMPLERS_ONLY": "ads-test-hook-raises, ads-test-bad-registrations"}
    error = error_of(zoo, "survivr", env=env)
    assert error["type"] == "UnknownSamplerError"
    assert "Did you mean 'survivor'?" in error["message"]
    assert "ads-test-hook-raises 1.2.3" in error["message"]
    assert "hook exploded" in error["message"]


def test_strict_mode_names_every_failed_plugin_once(zoo: Venv) -> None:
    result = zoo.python(
        "from agentdescent_sampling import available\navailable()\n",
        env={"AGENTDESCENT_SAMPLERS_STRICT": "1"},
        check=False,
    )
    message = result.stderr.split("PluginLoadError: ", 1)[1]
    failed = {
        str(record["distribution"])
        for record in records(zoo)
        if record["kind"] == "failure" and record["status"] != "disabled"
    }
    assert len(failed) > 10
    assert [name for name in sorted(failed) if name not in message] == []
    # ads-test-many-failures registers 500 broken samplers from one entry point: one line.
    assert message.count("ads-test-many-failures") == 1
    assert "And 499 more like it." in message


def test_strict_mode_makes_a_load_failure_raise(zoo: Venv) -> None:
    result = zoo.python(
        "from agentdescent_sampling import available\navailable()\n",
        env={"AGENTDESCENT_SAMPLERS_STRICT": "1"},
        check=False,
    )
    assert result.returncode != 0
    assert "PluginLoadError" in result.stderr
    assert "AGENTDESCENT_SAMPLERS_STRICT makes them errors" in result.stderr


def test_two_distributions_with_one_name_conflict_naming_both(zoo: Venv) -> None:
    error = error_of(zoo, "dup")
    assert error["type"] == "SamplerConflictError"
    assert "ads-test-dup-a 1.2.3" in error["message"]
    assert "ads-test-dup-b 1.2.3" in error["message"]
    conflicted = [r for r in records(zoo) if r.get("name") == "dup"]
    assert sorted((r["distribution"], r["status"]) for r in conflicted) == [
        ("ads-test-dup-a", "conflict"),
        ("ads-test-dup-b", "conflict"),
    ]


def test_provider_picks_one_of_two_conflicting_distributions(zoo: Venv) -> None:
    module = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        sampler = create({"name": "dup", "provider": "ads_test_dup_b"})
        print(json.dumps(type(sampler).__module__))
        """
    )
    assert module == "ads_dup_b"


def test_a_name_with_a_provider_imports_only_that_providers_plugin(zoo: Venv) -> None:
    imported = zoo.json(
        "from agentdescent_sampling import create\n"
        "create({'name': 'dup', 'provider': 'ads-test-dup-b'})\n" + IMPORTED_PLUGINS
    )
    assert imported == ["ads_dup_b"]


def test_a_name_whose_class_form_plugin_fails_to_import_never_imports_the_hook_plugins(
    zoo: Venv,
) -> None:
    imported = zoo.json(
        "from agentdescent_sampling import create\n"
        "try:\n    create('broken')\nexcept Exception:\n    pass\n" + IMPORTED_PLUGINS
    )
    assert imported == [], imported


def test_a_plugin_claiming_a_builtin_name_is_reported_and_the_builtin_keeps_working(
    zoo: Venv,
) -> None:
    made = zoo.json(
        """
        import json
        from agentdescent_sampling import available, create
        available()
        names = ("round-robin", "difficulty-weighted")
        print(json.dumps([type(create(name)).__module__ for name in names]))
        """
    )
    assert made == [
        "agentdescent_sampling.samplers.round_robin",
        "agentdescent_sampling.samplers.difficulty_weighted",
    ]
    claims = [
        r
        for r in records(zoo)
        if r["kind"] == "failure" and r["distribution"] == "ads-test-impostor"
    ]
    assert sorted(r["names"][0] for r in claims) == ["difficulty-weighted", "round-robin"]  # type: ignore[index]
    assert {r["status"] for r in claims} == {"conflict"}


@pytest.mark.parametrize("disabled", ["fifo", "ads-test-classform", "ADS_TEST_CLASSFORM"])
def test_a_disabled_plugin_is_never_imported_and_says_why(zoo: Venv, disabled: str) -> None:
    env = {"AGENTDESCENT_SAMPLERS_DISABLE": f"something-else, {disabled}"}
    error = error_of(zoo, "fifo", env=env)
    assert error["type"] == "UnknownSamplerError"
    assert "AGENTDESCENT_SAMPLERS_DISABLE" in error["message"]
    imported = zoo.json(
        "from agentdescent_sampling import available\navailable()\n" + IMPORTED_PLUGINS, env=env
    )
    assert "ads_classform" not in imported
    assert failure_of(records(zoo, env=env), "ads-test-classform")["status"] == "disabled"


def test_a_builtin_can_be_disabled_by_name(zoo: Venv) -> None:
    error = error_of(zoo, "round-robin", env={"AGENTDESCENT_SAMPLERS_DISABLE": "round-robin"})
    assert error["type"] == "UnknownSamplerError"
    assert "disabled" in error["message"]


def test_only_limits_loading_to_the_named_distributions_and_the_builtins(zoo: Venv) -> None:
    env = {"AGENTDESCENT_SAMPLERS_ONLY": "ads-test-classform"}
    names = {r["name"] for r in records(zoo, env=env) if r["kind"] == "sampler"}
    assert names == {
        "round-robin",
        "difficulty-weighted",
        "informative-band",
        "fixable-first",
        "fifo",
    }
    imported = zoo.json(
        "from agentdescent_sampling import available\navailable()\n" + IMPORTED_PLUGINS, env=env
    )
    assert imported == ["ads_classform"]
    assert error_of(zoo, "shuffled", env=env)["type"] == "UnknownSamplerError"


def test_many_threads_selecting_at_once_load_each_plugin_once(zoo: Venv) -> None:
    outcome = zoo.json(
        """
        import json, sys, threading
        from agentdescent_sampling import create
        from agentdescent_sampling.registry import default_registry
        sys.setswitchinterval(1e-6)
        barrier = threading.Barrier(16)
        def select():
            barrier.wait()
            create("shuffled")
            create("fifo")
        threads = [threading.Thread(target=select) for _ in range(16)]
        for t in threads: t.start()
        for t in threads: t.join()
        import ads_hookform
        failures = [f.message for f in default_registry().failures()
                    if f.distribution in ("ads-test-hookform", "ads-test-classform")]
        print(json.dumps([len(ads_hookform.CALLS), failures]))
        """
    )
    assert outcome == [1, []]


def test_list_json_shows_builtins_plugins_and_failures_with_versions(zoo: Venv) -> None:
    listed = json.loads(zoo.run("agentdescent-sampling", "list", "--json").stdout)
    builtins = {r["name"]: r for r in listed if r.get("distribution") == "agentdescent-sampling"}
    assert set(builtins) == {
        "round-robin",
        "difficulty-weighted",
        "informative-band",
        "fixable-first",
    }
    assert {r["version"] for r in builtins.values()} == {"0.1.0"}
    assert any(r["kind"] == "failure" for r in listed)


def test_list_prints_a_table_with_failed_plugins(zoo: Venv) -> None:
    table = zoo.run("agentdescent-sampling", "list").stdout
    assert table.splitlines()[0].split() == [
        "NAME",
        "DISTRIBUTION",
        "VERSION",
        "STATUS",
        "DESCRIPTION",
    ]
    assert "ads-test-broken-import" in table
    assert "conflict" in table


def test_show_prints_description_and_parameters(zoo: Venv) -> None:
    shown = zoo.run("agentdescent-sampling", "show", "shuf").stdout
    assert "shuffled (ads-test-hookform 1.2.3)" in shown
    assert "Shuffled order, seeded." in shown
    assert "seed = 0" in shown


def test_show_of_an_unknown_name_fails_with_a_clear_message(zoo: Venv) -> None:
    result = zoo.run("agentdescent-sampling", "show", "nothing-here", check=False)
    assert result.returncode == 2
    assert "no sampler named 'nothing-here'" in result.stderr


def test_a_class_declaring_thread_safe_false_is_served_synchronized(zoo: Venv) -> None:
    served = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        from agentdescent_sampling.registry import default_registry
        sampler = create("unsafe-counter")
        print(json.dumps([type(sampler).__name__, repr(sampler),
                          default_registry().get("unsafe-counter").synchronized]))
        """
    )
    assert served[0] == "ServedSampler"
    assert served[1].startswith("synchronized(<ads_unsafe.Counter object")
    assert served[2] is True
    assert "ok, synchronized" in zoo.run("agentdescent-sampling", "list").stdout
    shown = zoo.run("agentdescent-sampling", "show", "unsafe-counter").stdout
    assert "wrapped in synchronized()" in shown


@pytest.mark.version_independent
def test_check_passes_the_wrapped_sampler_that_fails_unwrapped(zoo: Venv) -> None:
    assert zoo.run("agentdescent-sampling", "check", "unsafe-counter", *PATIENT).returncode == 0
    raw = zoo.json(
        """
        import json
        from ads_unsafe import Counter
        from agentdescent_sampling.testing import check_sampler

        class Undeclared(Counter):
            thread_safe = True  # as if it had not declared itself unsafe

        checked = [check_sampler(factory).violations for factory in (Counter, Undeclared)]
        print(json.dumps([[v.check for v in violations] for violations in checked]))
        """
    )
    assert raw == [[], ["threads"]]  # the class is checked as served: under a lock


def test_check_fails_a_nonconforming_sampler_with_a_line_per_violation(zoo: Venv) -> None:
    result = zoo.run("agentdescent-sampling", "check", "sloppy", *PATIENT, check=False)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("  - ")]
    assert [line.split("]")[0] for line in lines] == ["  - [empty-shard"]
    assert "  note: bad scores: record() accepted nan" in result.stdout


def test_a_slow_plugin_is_imported_only_when_its_name_is_selected(zoo: Venv) -> None:
    code = "from agentdescent_sampling import create\ncreate('{}')\n" + IMPORTED_PLUGINS
    assert "ads_slow" not in zoo.json(code.format("fifo"))
    assert "ads_slow" in zoo.json(code.format("slow"))


@pytest.mark.parametrize(
    "spec", ["ads_classform:Fifo", {"name": "ads_classform.Fifo"}, "fifo/../ads_classform"]
)
def test_a_config_naming_a_plugin_module_path_imports_nothing(zoo: Venv, spec: object) -> None:
    attempt = f"""
from agentdescent_sampling import InvalidSamplerConfig, create
try:
    create({spec!r})
except InvalidSamplerConfig:
    pass
else:
    raise AssertionError("accepted")
"""
    assert zoo.json(attempt + IMPORTED_PLUGINS) == []
