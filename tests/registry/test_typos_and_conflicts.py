"""A venv where nothing failed: typos of class-form names, and one name two distributions share."""

from __future__ import annotations

import json

from tests.registry.probes import IMPORTED_PLUGINS, error_of
from tests.support.venv import Venv


def test_a_typo_of_a_class_form_name_suggests_and_lists_it_without_importing_it(
    few: Venv,
) -> None:
    error = error_of(few, "coin-fli")
    assert error["type"] == "UnknownSamplerError"
    assert "Did you mean 'coin-flip'?" in error["message"]
    available = error["message"].split("Available: ")[1].split(".")[0].split(", ")
    assert {"coin-flip", "failing-first", "failing-first-explore"} <= set(available)
    assert "dup" not in available  # two distributions provide it: no one sampler to name
    imported = json.loads(
        few.python(
            "from agentdescent_sampling import create\n"
            "try:\n    create('coin-fli')\nexcept LookupError:\n    pass\n" + IMPORTED_PLUGINS
        ).stdout.splitlines()[-1]
    )
    assert imported == ["ads_failing", "ads_failing_hooks"]  # the hook-form plugin, and its import


def test_a_typo_is_suggested_the_closest_name_not_a_longer_preset_of_it(few: Venv) -> None:
    assert "Did you mean 'failing-first'?" in error_of(few, "failing-frist")["message"]


def test_list_strict_exits_1_when_two_distributions_provide_one_name_and_says_with_whom(
    few: Venv,
) -> None:
    plain = few.run("agentdescent-sampling", "list", check=False)
    strict = few.run("agentdescent-sampling", "list", "--strict", check=False)
    assert plain.returncode == 0
    assert strict.returncode == 1, strict.stdout
    # The two rows of 'dup', each a conflict, are what the summary counts: nothing else failed.
    # Each row said only its description and "conflict", with no word of the other.
    assert "\n2 samplers in conflict share a name with another's" in strict.stdout
    assert "failed or" not in strict.stdout
    for this, other in (("a", "b"), ("b", "a")):
        assert (
            f"dup is also ads-test-dup-{other}'s: select this one with "
            f'{{"name": "dup", "provider": "ads-test-dup-{this}"}}'
        ) in strict.stdout
    listed = json.loads(few.run("agentdescent-sampling", "list", "--json").stdout)
    shared = [each["shared"] for each in listed if each.get("status") == "conflict"]
    assert shared == [{"dup": ["ads-test-dup-b"]}, {"dup": ["ads-test-dup-a"]}]
    assert error_of(few, "dup")["type"] == "SamplerConflictError"
