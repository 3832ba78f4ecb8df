"""The README's first example runs as printed, and so do docs/engine.md's blocks after it; the
documented error messages are real."""

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
ENGINE = REPO / "docs" / "engine.md"
#: What docs/engine.md says its blocks are given beyond the README's first run, as it writes it.
ENGINE_SETUP = (
    'tasks = tasks("train") + tasks("held-out")',
    "agent = RuleAgent()",
    "def mine(info): ...",
)
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
    done = _run(script)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "held-out reward: 0.83\n"


def test_docs_engines_blocks_run_after_the_readmes_first_run(tmp_path: Path) -> None:
    pytest.importorskip("agentdescent", reason="the blocks run the real evolve()")
    text = ENGINE.read_text(encoding="utf-8")
    intro = " ".join(text.split("```", 1)[0].split())
    missing = [line for line in ENGINE_SETUP if f"`{line}`" not in intro]
    assert not missing, f"docs/engine.md no longer gives its blocks {missing}; update this test"
    # The README's definitions, up to the sampler it builds and the run it makes.
    readme = first_python_block(README.read_text(encoding="utf-8")).split("\nsampler = ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    runs = [block for block in blocks if "evolve(" in block]  # the rest show a call's shape
    assert runs, "docs/engine.md has no block calling evolve() any more; update this test"
    for number, block in enumerate(runs):
        script = tmp_path / f"engine_{number}.py"
        script.write_text("\n".join([readme, *ENGINE_SETUP, block]), encoding="utf-8")
        done = _run(script)
        assert done.returncode == 0, f"docs/engine.md's block {number + 1}:\n{done.stderr}"


def _run(script: Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with this Python in its own directory: it needs no file of this
    repository."""
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=script.parent,
    )


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
