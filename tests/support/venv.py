"""Throwaway virtual environments with real distributions installed by pip."""

from __future__ import annotations

import base64
import ensurepip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
#: ``agentdescent-sampling check``'s flag for a time limit a loaded machine cannot trip: the
#: limit stands guard against a hang, and the kit's 64,000 threaded calls once took over 60 s
#: beside a benchmark.
PATIENT = ("--seconds", "600")
_ENV_PREFIX = "AGENTDESCENT_SAMPLERS_"


class Venv:
    """A virtual environment made for a test session, and ways to run code inside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bin = path / ("Scripts" if sys.platform == "win32" else "bin")

    @classmethod
    def create(cls, path: Path, *projects: Path | str, with_pip: bool = False) -> Venv:
        """Make a venv at ``path`` and pip-install ``projects`` (wheels, paths or requirements).

        Wheels install without a build; setuptools is installed only when a source project
        has to be built (``--no-build-isolation``: offline, and as fast as a build gets).
        Without ``with_pip`` the venv gets no pip of its own (seeding one takes seconds): this
        interpreter's pip installs into it. With it, the venv gets what ``ensurepip`` would
        give it, the wheels this interpreter ships, installed without compiling them.
        """
        bundled = sorted(Path(ensurepip.__file__).with_name("_bundled").glob("*.whl"))
        venv.create(path, with_pip=with_pip and not bundled, clear=True)
        made = cls(path)
        if with_pip and bundled:
            # What ensurepip runs, less the bytecode of all of pip: a third of the CPU.
            made.pip("install", "--no-compile", "--no-deps", "--no-index", *map(str, bundled))
        if any(not str(project).endswith(".whl") for project in projects):
            made.pip("install", "setuptools>=77", "wheel")
        sources = [_aside(project, path.parent) for project in projects]
        made.pip("install", "--no-build-isolation", *sources)
        return made

    def pip(self, *args: str) -> None:
        """Run pip on this venv (its own, or this interpreter's); fail loudly with its output."""
        python = str(self.bin / "python")
        if (self.bin / "pip").exists():
            command = [python, "-m", "pip"]
        else:
            command = [sys.executable, "-m", "pip", "--python", python]
        self.run(*command, "-q", "--disable-pip-version-check", *args)

    def run(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        check: bool = True,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command with this venv first on PATH and no inherited AGENTDESCENT_SAMPLERS_*."""
        environ = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_PREFIX)}
        environ.pop("PYTHONPATH", None)
        environ["PATH"] = f"{self.bin}{os.pathsep}{environ.get('PATH', '')}"
        environ.update(env or {})
        result = subprocess.run(
            args, capture_output=True, text=True, env=environ, cwd=cwd or self.path, timeout=300
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} exited {result.returncode}\n"
                f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
            )
        return result

    def python(
        self, code: str, env: dict[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a Python snippet (dedented) in this venv."""
        return self.run(str(self.bin / "python"), "-c", textwrap.dedent(code), env=env, check=check)

    def json(self, code: str, env: dict[str, str] | None = None) -> Any:
        """Run a snippet whose last line of output is JSON, and return it decoded."""
        return json.loads(self.python(code, env=env).stdout.strip().splitlines()[-1])


def write_wheel(
    root: Path,
    name: str,
    modules: dict[str, str],
    entry_points: dict[str, str],
    version: str = "1.0.0",
) -> Path:
    """Write a pure-Python wheel with ``agentdescent.samplers`` entry points, without a build.

    Written in milliseconds instead of a setuptools build per distribution; pip installs it as
    it installs any wheel, so it is a real installed distribution.
    """
    root.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    points = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    files = {module: textwrap.dedent(source) for module, source in modules.items()}
    files |= {
        f"{stem}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{stem}.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: tests.support.venv\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
        f"{stem}.dist-info/entry_points.txt": f"[agentdescent.samplers]\n{points}",
    }
    record = [f"{path},sha256={_digest(text)},{len(text.encode())}" for path, text in files.items()]
    files[f"{stem}.dist-info/RECORD"] = "\n".join([*record, f"{stem}.dist-info/RECORD,,"]) + "\n"
    wheel = root / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def build_wheel(project: Path, out: Path) -> Path:
    """Build ``project`` into a wheel in ``out`` once, for several venvs to install."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
         "-w", str(out), _aside(project, out)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    (wheel,) = out.glob("*.whl")
    return wheel


#: What a copy of a source project in this repository leaves behind: builds, caches, venvs.
_NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".nox",
    ".venv",
    ".ci-venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
)


def _aside(project: Path | str, scratch: Path) -> str:
    """``project`` as pip should be given it: a source directory in this repository (with
    any ``[extras]``) is first copied into ``scratch``.

    setuptools builds in the source tree (its ``build/`` and ``*.egg-info``), and the nox
    sessions and pytest workers build the same projects at once: one build's clean-up once
    emptied another's wheel. Wheels, requirements and projects outside the repository are
    given as they are.
    """
    text = str(project)
    where, bracket, extras = text.partition("[")
    source = Path(where)
    if text.endswith(".whl") or not source.is_dir():
        return text
    source = source.resolve()
    if source != REPO and REPO not in source.parents:
        return text
    copy = scratch / f"{source.name}-source"
    if not copy.exists():
        shutil.copytree(source, copy, ignore=_NOT_SOURCE)
    return f"{copy}{bracket}{extras}"


def _digest(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
