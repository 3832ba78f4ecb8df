"""Throwaway virtual environments with real distributions installed by pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_ENV_PREFIX = "AGENTDESCENT_SAMPLERS_"


class Venv:
    """A virtual environment made for a test session, and ways to run code inside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bin = path / ("Scripts" if sys.platform == "win32" else "bin")

    @classmethod
    def create(cls, path: Path, *projects: Path | str) -> Venv:
        """Make a venv at ``path`` and pip-install ``projects`` (paths or requirements)."""
        venv.create(path, with_pip=True, clear=True)
        made = cls(path)
        made.pip("install", "setuptools>=64", "wheel")
        made.pip("install", "--no-build-isolation", *map(str, projects))
        return made

    def pip(self, *args: str) -> None:
        """Run pip in this venv; fail loudly with pip's output."""
        self.run(str(self.bin / "python"), "-m", "pip", "-q", "--disable-pip-version-check", *args)

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


def write_distribution(
    root: Path,
    name: str,
    modules: dict[str, str],
    entry_points: dict[str, str],
    version: str = "1.0.0",
) -> Path:
    """Write a minimal pip-installable project with ``agentdescent.samplers`` entry points."""
    project = root / name
    project.mkdir(parents=True)
    points = "\n".join(f'"{key}" = "{value}"' for key, value in entry_points.items())
    modules_list = ", ".join(f'"{module.removesuffix(".py")}"' for module in modules)
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = ["setuptools>=64"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "{name}"
            version = "{version}"

            [project.entry-points."agentdescent.samplers"]
            {{points}}

            [tool.setuptools]
            py-modules = [{modules_list}]
            """
        ).replace("{points}", points)
    )
    for module, source in modules.items():
        (project / module).write_text(textwrap.dedent(source))
    return project
