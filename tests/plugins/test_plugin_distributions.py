"""The plugins/ distributions, pip-installed beside this package into a fresh venv."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from agentdescent_sampling import __version__
from tests.plugins.conftest import EXTRAS, HARDEST
from tests.support.venv import PATIENT, REPO, Venv

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def test_hardest_first_is_created_by_name_after_pip_install(plugins_env: Venv) -> None:
    made = plugins_env.json(
        """
        import json
        from agentdescent_sampling import create
        sampler = create("hardest-first")
        sampler.record("a", 0.9)
        print(json.dumps([type(sampler).__module__, sampler.pick(["a", "b"], 0)]))
        """
    )
    assert made == ["agentdescent_sampling_hardest", "b"]


def test_list_shows_the_plugins_with_their_versions(plugins_env: Venv) -> None:
    listed = json.loads(plugins_env.run("agentdescent-sampling", "list", "--json").stdout)
    found = {r["name"]: (r["distribution"], r["version"], r["form"], r["status"]) for r in listed}
    assert found["hardest-first"] == ("agentdescent-sampling-hardest", "0.1.0", "class", "ok")
    assert found["epoch-shuffle"] == ("agentdescent-sampling-extras", "0.1.0", "hook", "ok")
    assert found["uniform-random"] == ("agentdescent-sampling-extras", "0.1.0", "hook", "ok")
    assert not [r for r in listed if r["kind"] == "failure"]
    assert "hardest-first" in plugins_env.run("agentdescent-sampling", "list").stdout


# A built-in and each plugin form, installed; each built-in's conformance is pinned in
# tests/test_conformance_kit.py (the kit's threads check takes seconds a sampler).
@pytest.mark.parametrize(
    "name",
    [
        "round-robin",
        "hardest-first",
        "epoch-shuffle",
        "uniform-random:seed=4",
    ],
)
def test_check_passes_a_builtin_and_every_plugin_sampler(plugins_env: Venv, name: str) -> None:
    result = plugins_env.run("agentdescent-sampling", "check", name, *PATIENT)
    assert "checks passed" in result.stdout


def test_the_plugins_own_test_suites_pass_with_the_kit_fixture(plugins_env: Venv) -> None:
    result = plugins_env.run(
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(HARDEST / "tests"),
        str(EXTRAS / "tests"),
    )
    assert " passed" in result.stdout
    assert "failed" not in result.stdout


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("hardest_first.toml", "hardest-first -> Hardest()"),
        ("epoch_shuffle.toml", "EpochShuffle(seed=7)"),
    ],
)
def test_the_example_selects_a_third_party_sampler_from_toml(
    plugins_env: Venv, config: str, expected: str
) -> None:
    result = plugins_env.run(
        "python", str(REPO / "examples" / "select_from_toml.py"), str(REPO / "examples" / config)
    )
    assert expected in result.stdout
    assert "rollouts" in result.stdout


@pytest.mark.parametrize(
    "pyproject", sorted(REPO.glob("plugins/*/pyproject.toml")), ids=lambda p: p.parent.name
)
def test_every_plugin_requires_the_core_below_its_next_minor_version(pyproject: Path) -> None:
    # The plugins import the core's submodules, which a 0.x minor release may change.
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    [core] = [
        Requirement(text)
        for text in project["dependencies"]
        if Requirement(text).name == "agentdescent-sampling"
    ]
    ours = Version(__version__)
    assert ours in core.specifier
    assert Version(f"{ours.major}.{ours.minor + 1}.0") not in core.specifier
    assert any(spec.operator == "<" for spec in core.specifier), core


@pytest.mark.parametrize(
    "pyproject",
    [REPO / "pyproject.toml", *sorted((REPO / "plugins").glob("*/pyproject.toml"))],
    ids=lambda path: path.parent.name,
)
def test_every_distribution_ships_the_text_of_the_license_it_declares(pyproject: Path) -> None:
    # MIT asks that its notice travel with the code: setuptools puts LICENSE in the wheel.
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    # An SPDX expression: setuptools warns of the {text = ...} table, which it stops building
    # on 2027-02-18.
    assert (project["license"], project["license-files"]) == ("MIT", ["LICENSE"])
    notice = (pyproject.parent / "LICENSE").read_text(encoding="utf-8")
    assert notice.startswith("MIT License\n\nCopyright (c) ")
    assert notice == (REPO / "LICENSE").read_text(encoding="utf-8")
