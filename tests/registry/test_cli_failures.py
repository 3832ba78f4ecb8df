"""The command line with broken plugins installed: scripts can fail on them and see why."""

from __future__ import annotations

import json
import re

from tests.registry.probes import IMPORTED_PLUGINS
from tests.support.venv import PATIENT, Venv

#: Leaves the slow samplers out of ``check --all`` (the kit's threads check takes seconds on
#: each; tests/cli checks every built-in's defaults); a disabled sampler is not a failure.
FAST = {
    "AGENTDESCENT_SAMPLERS_DISABLE": (
        "informative-band,fixable-first,difficulty-weighted,unsafe-counter,slow"
    )
}


def test_list_exits_0_with_failed_plugins_unless_strict(zoo: Venv) -> None:
    plain = zoo.run("agentdescent-sampling", "list", check=False)
    strict = zoo.run("agentdescent-sampling", "list", "--strict", check=False)
    assert plain.returncode == 0
    assert strict.returncode == 1
    assert strict.stdout == plain.stdout
    assert "'agentdescent-sampling list --tracebacks' prints each whole error" in plain.stdout


def test_list_strict_ignores_disabled_plugins_but_not_claims_on_built_in_names(zoo: Venv) -> None:
    # ONLY blocks every ads- distribution: the ordinary ones are merely disabled, which --strict
    # ignores; the ones that claim a built-in's name stay conflicts whatever ONLY says.
    result = zoo.run(
        "agentdescent-sampling",
        "list",
        "--strict",
        env={"AGENTDESCENT_SAMPLERS_ONLY": "nothing-installed"},
        check=False,
    )
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    failing = [line for line in lines if re.search(r"\s(conflict|failed)\s\s", line)]
    assert failing, result.stdout
    assert all("selects a built-in" in line for line in failing), failing
    assert "disabled" in result.stdout


def test_list_tracebacks_prints_a_failed_plugins_whole_error(zoo: Venv) -> None:
    shown = zoo.run("agentdescent-sampling", "list", "--tracebacks").stdout
    section = shown.split("== broken: ads-test-broken-import 1.2.3")[1].split("\n== ")[0]
    assert "Traceback (most recent call last):" in section
    assert "ads_broken.py" in section  # the plugin's own frame, which the table leaves out
    assert "ModuleNotFoundError: No module named 'numpyy_not_installed'" in section
    raises = shown.split("== raises: ads-test-hook-raises")[1].split("\n== ")[0]
    assert 'raise RuntimeError("hook exploded")' in raises


def test_list_json_tracebacks_adds_each_failures_traceback(zoo: Venv) -> None:
    listed = json.loads(zoo.run("agentdescent-sampling", "list", "--json", "--tracebacks").stdout)
    broken = next(r for r in listed if r.get("distribution") == "ads-test-broken-import")
    assert "Traceback (most recent call last):" in broken["traceback"]
    assert all("traceback" not in r for r in listed if r["kind"] == "sampler")
    plain = json.loads(zoo.run("agentdescent-sampling", "list", "--json").stdout)
    assert all("traceback" not in r for r in plain)


def test_check_all_fails_on_a_violation_or_a_failed_plugin(zoo: Venv) -> None:
    result = zoo.run("agentdescent-sampling", "check", "--all", *PATIENT, env=FAST, check=False)
    assert result.returncode == 1
    out = result.stdout
    assert "checking round-robin (agentdescent-sampling" in out
    assert "sloppy: 1 violation(s) of the sampler contract" in out  # empty-shard; bad scores a note
    assert "== broken: ads-test-broken-import 1.2.3" in out
    assert "not checked" in out


def test_check_of_a_builtin_name_a_plugin_claims_says_the_plugin_was_refused_and_fails(
    zoo: Venv,
) -> None:
    # The author of ads-test-impostor, checking the name they chose, would otherwise read
    # "all checks passed" about the built-in, and ship a plugin nobody can select.
    result = zoo.run("agentdescent-sampling", "check", "Round_Robin", *PATIENT, check=False)

    assert result.returncode == 1, result.stdout
    assert "round-robin: all 11 checks passed" in result.stdout
    assert (
        "round-robin is the built-in; ads-test-impostor 1.2.3 (entry point 'round-robin = "
        "ads_impostor:Impostor') claims it too, refused: its entry point is named 'round-robin', "
        "which selects a built-in"
    ) in result.stdout
    unclaimed = zoo.run("agentdescent-sampling", "check", "informative-band", *PATIENT, check=False)
    assert unclaimed.returncode == 0, unclaimed.stdout
    assert "is the built-in;" not in unclaimed.stdout
    # The user selected the built-in: no plugin was imported to look for claims on it.
    checked = "from agentdescent_sampling.cli import main\nmain(['check', 'Round_Robin'])\n"
    imported = zoo.python(checked + IMPORTED_PLUGINS).stdout.splitlines()[-1]
    assert json.loads(imported) == []
