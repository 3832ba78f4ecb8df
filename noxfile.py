"""The test matrix: every Python the package supports, each in a fresh venv.

Run ``python -m nox`` (what ``.ci/run`` runs): the ``matrix`` session runs the others in
lanes at once (``LANES``), and prints each lane's whole output when the lane ends, so that
nothing interleaves. ``python -m nox -s fast-3.12`` runs one session.

``full`` runs ruff, mypy and the whole test suite on one version, on two pytest workers;
``fast`` runs, on every other version, the tests whose outcome depends on the Python version
(the registry reads entry points through ``importlib_metadata`` below 3.12 and through the
standard library from 3.12; config files are read with ``tomli`` on 3.10), with real
pip-installed plugins and the real engine, leaving out the slow scenarios marked
``version_independent`` (see tests/conftest.py), which ``full`` runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nox

# download_python, below, arrived in 2025.10.14.
nox.needs_version = ">=2025.10.14"

FULL_PYTHON = "3.11"
FAST_PYTHONS = ["3.10", "3.12", "3.13"]

# Directories (and three files at the top of tests/) that exercise the version-dependent
# paths: the registry against real pip-installed plugins, the real evolve(), the
# plugin distributions in plugins/, the conformance kit, and spec_from_file() on TOML.
FAST_TESTS = [
    "tests/registry",
    "tests/engine",
    "tests/plugins",
    "tests/test_conformance_kit.py",
    "tests/test_spec.py",
    "tests/test_stateful_wrappers.py",
]
# Replaces pyproject's -m 'not soak': the soak stays out, and so do the slow scenarios whose
# outcome is the same on every Python (they run in full).
FAST_MARKERS = ["-m", "not soak and not version_independent"]

#: What every pyproject.toml here names in build-system.requires.
BUILD_BACKEND = "setuptools>=77"
# The slowest tests stay visible in CI's output.
DURATIONS = ["--durations=15"]
# pytest-xdist: full's tests on two workers, as many as the CI machine has cores.
XDIST = "pytest-xdist==3.8.0"
WORKERS = ["-n", "2"]

# A supported version that cannot be found must fail the run, never be skipped, and the
# run must use this machine's interpreters rather than download one.
nox.options.error_on_missing_interpreters = True
nox.options.download_python = "never"
# The standard library's venv seeds the pip each interpreter ships with (23.0 to 24.2),
# which is what a user of the README's command starts from; virtualenv would seed its own.
nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = False
# `python -m nox` runs the matrix, which runs every other session.
nox.options.sessions = ["matrix"]

#: The lanes the matrix runs at once, each its sessions in order: every session in a lane
#: of its own, so that no core sits idle while one lane still queues two sessions (with
#: fast-3.12 and fast-3.13 in one lane, that lane ended 1.4 minutes after the others).
LANES = [[f"full-{FULL_PYTHON}"], *([f"fast-{version}"] for version in FAST_PYTHONS)]
#: The niceness of every lane but the first. full is the longest lane, so it gets the cores
#: when it wants them, and the fast lanes take what it leaves (its pytest workers waiting
#: on a paced run or a subprocess): the run then ends when the cores' work does. At equal
#: priority, full's threads checks slowed under the oversubscription and it ended 2.1
#: minutes after the fast lanes.
BACKGROUND_NICENESS = 10
LOGS = Path(".nox", "matrix-logs")


#: What a copy of a plugin leaves out: what an earlier build left beside its sources.
_BUILT = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")


def install(session: nox.Session, *extra: str) -> None:
    """Install as the README says: a current pip, then this package and every plugin."""
    # pip before 23.3.2 does not see the editable ".[test]" as satisfying the plugins'
    # "agentdescent-sampling>=0.1,<0.2" and looks for it on the index (pypa/pip#12372).
    session.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # setuptools: the build backend every project here names (build-system.requires), put
    # in the session once, so that the four builds below share it (--no-build-isolation)
    # instead of each installing it into a throwaway build environment of its own.
    session.run("python", "-m", "pip", "install", "-q", "--upgrade", "pip", BUILD_BACKEND)
    # Each session builds its own copy of the plugins: setuptools builds in the source tree
    # (build/), and two lanes building one plugin at once collide there ("File exists").
    copies = Path(session.create_tmp(), "plugins")
    shutil.rmtree(copies, ignore_errors=True)
    plugins = [
        str(shutil.copytree(p.parent, copies / p.parent.name, ignore=_BUILT))
        for p in sorted(Path("plugins").glob("*/pyproject.toml"))
    ]
    # --no-compile: bytecode for every installed module (matplotlib, mypy, ...) costs a
    # third of the install; Python compiles what the tests import when they import it.
    session.install("--no-compile", "--no-build-isolation", "-e", ".[test]", *plugins, *extra)
    # The session installs the engine, so an engine test that skips hides a broken install.
    session.env["AGENTDESCENT_SAMPLING_REQUIRE_ENGINE"] = "1"


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    """Every session, in lanes at once; fails when any session fails."""
    LOGS.mkdir(parents=True, exist_ok=True)
    posargs = ["--", *session.posargs] if session.posargs else []
    started = time.monotonic()
    running = []
    for lane in LANES:
        log = LOGS / f"{lane[0]}.txt"
        session.log(f"started {', '.join(lane)}; output in {log} until it ends")
        with log.open("w", encoding="utf-8") as out:
            command = [sys.executable, "-m", "nox", "--noxfile", __file__, "-s", *lane, *posargs]
            if running and shutil.which("nice"):
                command = ["nice", "-n", str(BACKGROUND_NICENESS), *command]
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        running.append((lane, log, process))
    outcomes = []
    while running:
        for entry in list(running):
            lane, log, process = entry
            if process.poll() is None:
                continue
            running.remove(entry)
            text = log.read_text(encoding="utf-8")
            # The lane's own nox names each session that failed; a lane that died before
            # naming one counts as failed whole.
            failed = re.findall(r"^nox > Session (\S+) (?:failed|aborted)", text, re.MULTILINE)
            if process.returncode != 0 and not failed:
                failed = lane
            verdict = f"FAILED: {', '.join(failed)}" if failed else "passed"
            took = f"{(time.monotonic() - started) / 60:.1f} min"
            outcomes.append((lane, verdict, took, failed))
            # One lane's whole output at a time, so that nothing interleaves.
            print(f"\n{'=' * 20} {', '.join(lane)}: {verdict} ({took}) {'=' * 20}")
            print(text, end="", flush=True)
        time.sleep(1)
    for lane, verdict, took, _ in outcomes:
        session.log(f"{', '.join(lane)}: {verdict}, the lane took {took}")
    failed = [name for *_, names in outcomes for name in names]
    if failed:
        session.error(f"{', '.join(failed)} failed; each session's output is above")


@nox.session(python=[FULL_PYTHON])
def full(session: nox.Session) -> None:
    """Ruff, mypy and the whole test suite."""
    install(session, XDIST)
    session.run("python", "-m", "ruff", "check", ".")
    session.run("python", "-m", "ruff", "format", "--check", ".")
    session.run("python", "-m", "mypy")
    session.run("python", "-m", "pytest", *WORKERS, *DURATIONS, *session.posargs)


@nox.session(python=FAST_PYTHONS)
def fast(session: nox.Session) -> None:
    """The registry, engine, plugin and conformance tests that depend on the version."""
    install(session)
    session.run("python", "-m", "pytest", *FAST_MARKERS, *DURATIONS, *FAST_TESTS, *session.posargs)
