"""The Pythons the package declares are the ones CI tests, CI runs the README's command, and
docs/development.md names what each session runs."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def noxfile_constants(*names: str) -> dict[str, object]:
    """Constants of noxfile.py, read without importing nox."""
    found: dict[str, object] = {}
    for node in ast.parse((REPO / "noxfile.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in names:
                found[name] = ast.literal_eval(node.value)
    return found


def matrix_pythons() -> set[str]:
    """The versions noxfile.py runs."""
    found = noxfile_constants("FULL_PYTHON", "FAST_PYTHONS")
    full, fast = found["FULL_PYTHON"], found["FAST_PYTHONS"]
    assert isinstance(full, str), found
    assert isinstance(fast, list), found
    assert full not in fast, "one session per version"
    return {full, *fast}


def test_the_classifiers_declare_exactly_the_versions_the_matrix_tests() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    assert declared == matrix_pythons()
    lowest = min(declared, key=lambda v: tuple(map(int, v.split("."))))
    assert project["requires-python"] == f">={lowest}"


def test_the_readme_states_the_versions_the_matrix_tests() -> None:
    versions = sorted(matrix_pythons(), key=lambda v: tuple(map(int, v.split("."))))
    stated = f"Supported and tested: Python {', '.join(versions[:-1])} and {versions[-1]}."
    assert stated in (REPO / "README.md").read_text(encoding="utf-8")


def test_ci_ends_by_running_exactly_the_readme_test_command() -> None:
    command = (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip().splitlines()[-1]
    assert command.endswith("python -m nox"), "the README's test command runs the nox matrix"
    assert command in (REPO / "README.md").read_text(encoding="utf-8").splitlines()


def test_the_sessions_build_with_the_backend_every_project_names() -> None:
    # The sessions build without isolation, with the one backend they install first.
    backend = noxfile_constants("BUILD_BACKEND")["BUILD_BACKEND"]
    projects = [REPO / "pyproject.toml", *sorted((REPO / "plugins").glob("*/pyproject.toml"))]
    for project in projects:
        system = tomllib.loads(project.read_text(encoding="utf-8"))["build-system"]
        assert system["requires"] == [backend], project


def test_the_development_guide_names_exactly_the_tests_the_fast_sessions_run() -> None:
    found = noxfile_constants("FAST_TESTS", "FAST_PYTHONS")
    tests, pythons = found["FAST_TESTS"], found["FAST_PYTHONS"]
    assert isinstance(tests, list), found
    assert isinstance(pythons, list), found
    sessions = ", ".join(f"`fast-{version}`" for version in pythons)
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith(f"| {sessions} |")]
    named = re.findall(r"`(tests/[^`]+)`", row)
    assert named == tests, f"docs/development.md's fast row names {named}, noxfile.py {tests}"
