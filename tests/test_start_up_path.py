"""Selecting a built-in by name imports that sampler and the registry, nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from agentdescent_sampling import Registry

IMPORTED = """
import inspect, json, sys
import attrs
import agentdescent_sampling as a
a.create({spec!r})
modules = sorted(sys.modules)
ours = [m for m in modules if m.partition(".")[0] == "agentdescent_sampling"]
defined = [
    name
    for module in ours
    for name, value in vars(sys.modules[module]).items()
    if inspect.isclass(value) and value.__module__ == module and attrs.has(value)
]
print(json.dumps({{"modules": modules, "attrs_classes": sorted(set(defined))}}))
"""

#: What selecting a built-in never needs: reading installed metadata and importing plugins
#: (discovery, loading, hookspecs), describing samplers (records, params), wrapping them
#: (served, durable), reading files (_files, spec_file) or naming temporary files (secrets).
OFF_THE_PATH = {
    "agentdescent_sampling.spec_file",
    "agentdescent_sampling.discovery",
    "agentdescent_sampling.loading",
    "agentdescent_sampling.hookspecs",
    "agentdescent_sampling.records",
    "agentdescent_sampling.params",
    "agentdescent_sampling.served",
    "agentdescent_sampling.durable",
    "agentdescent_sampling._files",
    "secrets",
    "difflib",
}


def _after(spec: str) -> dict[str, Any]:
    code = IMPORTED.format(spec=spec)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def _modules_after(spec: str) -> set[str]:
    return set(_after(spec)["modules"])


@pytest.mark.parametrize("spec", ["informative-band", "DifficultyWeighted:c=0.1"])
def test_creating_a_built_in_imports_no_plugin_no_other_built_in_and_no_tooling(
    spec: str,
) -> None:
    modules = _modules_after(spec)
    ours = {m for m in modules if m.startswith("agentdescent_sampling.samplers.")}
    wanted = "informative_band" if spec == "informative-band" else "difficulty_weighted"
    assert {m.rpartition(".")[2] for m in ours} - {"_copies", "_graded", "_index"} == {wanted}
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


@pytest.mark.parametrize("spec", ["informative-band", "DifficultyWeighted:c=0.1"])
def test_creating_a_built_in_imports_no_plugin_machinery_no_record_and_no_file_code(
    spec: str,
) -> None:
    assert _modules_after(spec) & OFF_THE_PATH == set()


@pytest.mark.parametrize(
    ("spec", "sampler"),
    [("informative-band", "InformativeBand"), ("DifficultyWeighted:c=0.1", "DifficultyWeighted")],
)
def test_creating_a_built_in_defines_no_attrs_class_but_the_spec_and_the_sampler(
    spec: str, sampler: str
) -> None:
    # Each attrs class costs start-up time to define: internal records are plain classes.
    assert _after(spec)["attrs_classes"] == sorted(["SamplerSpec", sampler])


def test_the_plugin_contract_loads_no_hook_machinery_until_a_hook_form_name_is_used() -> None:
    # A class-form plugin imports its checks from agentdescent_sampling.plugin: selecting it
    # must not import pluggy, which only the hook form's hookimpl and Register need.
    code = (
        "import json, sys\n"
        "from agentdescent_sampling.plugin import SOLVED, check_pick, check_score, synchronized\n"
        "before = sorted(sys.modules)\n"
        "from agentdescent_sampling.plugin import hookimpl\n"
        "print(json.dumps([before, sorted(sys.modules)]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    before, after = map(set, json.loads(result.stdout))
    assert not before & {"pluggy", "agentdescent_sampling.hookspecs", "importlib.metadata"}
    assert {"pluggy", "agentdescent_sampling.hookspecs"} <= after
