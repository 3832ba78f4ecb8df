"""The README's examples of error messages are what the library prints."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agentdescent_sampling import Registry, SamplerError

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLE = re.compile(r"^>>> create\((?P<spec>.+)\)\n(?P<error>\w+): (?P<message>.+)$", re.MULTILINE)


def examples() -> list[tuple[str, str, str]]:
    text = README.read_text(encoding="utf-8")
    found = [match.group("spec", "error", "message") for match in EXAMPLE.finditer(text)]
    assert found, "the README has no '>>> create(...)' examples any more; update this test"
    return found


@pytest.mark.parametrize(("spec", "error", "message"), examples())
def test_each_error_example_in_the_readme_is_what_create_raises(
    spec: str, error: str, message: str
) -> None:
    # The README shows a machine with only this package installed.
    registry = Registry(disable=(), only=("agentdescent-sampling",), strict=False)
    with pytest.raises(SamplerError) as raised:
        registry.create(ast.literal_eval(spec))
    assert f"{type(raised.value).__name__}: {raised.value}" == f"{error}: {message}"
