"""Every code block in docs/writing-a-sampler.md runs, so the guide cannot rot."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.support.venv import REPO, Venv

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

GUIDE = REPO / "docs" / "writing-a-sampler.md"
_BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(language: str) -> list[tuple[str | None, str]]:
    """The guide's blocks in ``language``: (file name or None, source), in order."""
    found = []
    for match in _BLOCK.finditer(GUIDE.read_text()):
        if match[1] == language:
            file = re.search(r"file=(\S+)", match[2])
            found.append((file[1] if file else None, match[3]))
    return found


def test_the_guide_has_blocks_of_every_kind() -> None:
    assert all(blocks(language) for language in ("python", "toml", "console"))


# In-process, and its slow part is the kit's threads check of a locked sampler.
@pytest.mark.version_independent
def test_the_python_snippets_run_in_order() -> None:
    namespace: dict[str, object] = {}
    for file, source in blocks("python"):
        code = compile(source, f"{GUIDE.name}:{file or 'snippet'}", "exec")
        if file is None:
            exec(code, namespace)


def test_the_toml_blocks_parse() -> None:
    for _, source in blocks("toml"):
        tomllib.loads(source)


def test_the_guide_plugin_installs_lists_checks_and_passes_its_tests(
    plugins_env: Venv, tmp_path: Path
) -> None:
    project = tmp_path / "agentdescent-sampling-failing-first"
    for language in ("python", "toml"):
        for file, source in blocks(language):
            if file is not None:
                (project / file).parent.mkdir(parents=True, exist_ok=True)
                (project / file).write_text(source)
    (console,) = blocks("console")
    for command, expected in _commands(console[1]):
        result = plugins_env.run(*shlex.split(command), cwd=project)
        output = [" ".join(line.split()) for line in result.stdout.splitlines()]
        for line in expected:
            assert any(" ".join(line.split()) in seen for seen in output), (command, line, output)


def _commands(console: str) -> list[tuple[str, list[str]]]:
    commands: list[tuple[str, list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif line.strip():
            commands[-1][1].append(line)
    return commands


@pytest.mark.parametrize("section", ["Names", "Locking", "Publishing", "Two plugin forms"])
def test_the_guide_covers(section: str) -> None:
    assert f"## {section}" in GUIDE.read_text()
