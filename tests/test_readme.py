"""The README's first example runs as printed, and the documented error messages are real."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentdescent_sampling import Registry, SamplerError

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CONFIGURATION = REPO / "docs" / "configuration.md"
EXAMPLE = re.compile(r"^>>> create\((?P<spec>.+)\)\n(?P<error>\w+): (?P<message>.+)$", re.MULTILINE)
#: The README's longest allowed length: a first screen read in a minute, the rest in docs/.
MAX_README_LINES = 250


def first_python_block(text: str) -> str:
    """The source of the first ```python block in ``text``."""
    found = re.search(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert found, "the README has no python block any more; update this test"
    return found[1]


def test_the_readme_fits_its_line_budget() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move reference to docs/"


def test_the_readmes_first_example_runs_offline_and_prints_the_learnt_reward(
    tmp_path: Path,
) -> None:
    pytest.importorskip("agentdescent", reason="the example runs the real evolve()")
    script = tmp_path / "first_example.py"
    script.write_text(first_python_block(README.read_text(encoding="utf-8")), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,  # self-contained: it needs no file of this repository
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "held-out reward: 0.83\n"


def examples() -> list[tuple[str, str, str]]:
    text = CONFIGURATION.read_text(encoding="utf-8")
    found = [match.group("spec", "error", "message") for match in EXAMPLE.finditer(text)]
    assert found, "docs/configuration.md has no '>>> create(...)' examples; update this test"
    return found


@pytest.mark.parametrize(("spec", "error", "message"), examples())
def test_each_documented_error_example_is_what_create_raises(
    spec: str, error: str, message: str
) -> None:
    # The docs show a machine with only this package installed: a group no plugin declares.
    registry = Registry(group="agentdescent.samplers.none-installed", disable=(), strict=False)
    with pytest.raises(SamplerError) as raised:
        registry.create(ast.literal_eval(spec))
    assert f"{type(raised.value).__name__}: {raised.value}" == f"{error}: {message}"
