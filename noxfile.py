"""The test matrix: every Python the package supports, each in a fresh venv.

Run ``python -m nox`` (what ``.ci/run`` runs). ``full`` runs ruff, mypy and the whole
test suite on one version; ``fast`` runs the tests whose outcome depends on the Python
version (the registry reads entry points through ``importlib_metadata`` below 3.12 and
through the standard library from 3.12; config files are read with ``tomli`` on 3.10)
on every other version.
"""

from __future__ import annotations

from pathlib import Path

import nox

# download_python, below, arrived in 2025.10.14.
nox.needs_version = ">=2025.10.14"

FULL_PYTHON = "3.11"
FAST_PYTHONS = ["3.10", "3.12", "3.13"]

# Directories (and two files at the top of tests/) that exercise the version-dependent
# paths: the registry against real pip-installed plugins, the real evolve(), the
# plugin distributions in plugins/, the conformance kit, and spec_from_file() on TOML.
FAST_TESTS = [
    "tests/registry",
    "tests/engine",
    "tests/plugins",
    "tests/test_conformance_kit.py",
    "tests/test_spec.py",
]

# The slowest tests stay visible in CI's output.
DURATIONS = ["--durations=15"]

# A supported version that cannot be found must fail the run, never be skipped, and the
# run must use this machine's interpreters rather than download one.
nox.options.error_on_missing_interpreters = True
nox.options.download_python = "never"
# The standard library's venv seeds the pip each interpreter ships with (23.0 to 24.2),
# which is what a user of the README's command starts from; virtualenv would seed its own.
nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = False


def install(session: nox.Session) -> None:
    """Install as the README says: a current pip, then this package and every plugin."""
    # pip before 23.3.2 does not see the editable ".[test]" as satisfying the plugins'
    # "agentdescent-sampling>=0.1" and looks for it on the index (pypa/pip#12372).
    session.run("python", "-m", "pip", "install", "--upgrade", "pip")
    plugins = sorted(str(p.parent) for p in Path("plugins").glob("*/pyproject.toml"))
    session.install("-e", ".[test]", *plugins)
    # The session installs the engine, so an engine test that skips hides a broken install.
    session.env["AGENTDESCENT_SAMPLING_REQUIRE_ENGINE"] = "1"


@nox.session(python=[FULL_PYTHON])
def full(session: nox.Session) -> None:
    """Ruff, mypy and the whole test suite."""
    install(session)
    session.run("python", "-m", "ruff", "check", ".")
    session.run("python", "-m", "ruff", "format", "--check", ".")
    session.run("python", "-m", "mypy")
    session.run("python", "-m", "pytest", *DURATIONS, *session.posargs)


@nox.session(python=FAST_PYTHONS)
def fast(session: nox.Session) -> None:
    """The registry, engine, plugin and conformance tests."""
    install(session)
    session.run("python", "-m", "pytest", *DURATIONS, *FAST_TESTS, *session.posargs)
