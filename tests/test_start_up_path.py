"""Selecting a built-in by name imports that sampler and the registry, nothing else."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentdescent_sampling import Registry

IMPORTED = """
import json, sys
import agentdescent_sampling as a
a.create({spec!r})
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after(spec: str) -> set[str]:
    code = IMPORTED.format(spec=spec)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout))


@pytest.mark.parametrize("spec", ["informative-band", "DifficultyWeighted:c=0.1"])
def test_creating_a_built_in_imports_no_plugin_no_other_built_in_and_no_tooling(
    spec: str,
) -> None:
    modules = _modules_after(spec)
    ours = {m for m in modules if m.startswith("agentdescent_sampling.samplers.")}
    wanted = "informative_band" if spec == "informative-band" else "difficulty_weighted"
    assert {m.rpartition(".")[2] for m in ours} - {"_graded", "_index", "_pending"} == {wanted}
    assert not {m for m in modules if m.startswith("agentdescent_sampling_")}  # plugins
    assert not {m for m in modules if m.startswith(("agentdescent_sampling.bench",
                                                    "agentdescent_sampling.testing",
                                                    "agentdescent_sampling.cli"))}  # fmt: skip
    # No scan of installed distributions, no hook machinery, no config-file parser.
    assert not modules & {"importlib_metadata", "importlib.metadata", "pluggy", "tomllib", "tomli"}


def test_a_built_in_selected_first_is_listed_once_as_discovery_would_list_it() -> None:
    early = Registry(disable=(), only=None)
    early.create("informative-band")
    fresh = Registry(disable=(), only=None)
    assert [r.to_dict() for r in early.available()] == [r.to_dict() for r in fresh.available()]
    assert early.failures() == fresh.failures()


def test_a_disabled_built_in_is_not_served_by_the_short_path() -> None:
    registry = Registry(disable=["informative-band"], only=None)
    with pytest.raises(LookupError, match="informative-band"):
        registry.create("informative-band")
