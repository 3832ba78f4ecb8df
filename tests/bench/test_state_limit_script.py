"""benchmarks/state_limit.py: each shape is the document it names, at the size asked."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = "state_limit"


@pytest.fixture(scope="module")
def state_limit(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


def test_each_shape_counts_the_values_asked_and_reads_as_a_state_file(
    state_limit: ModuleType, tmp_path: Path
) -> None:
    for shape, (per_item, _) in {**state_limit.SHAPES, **state_limit.STATES}.items():
        path, values, size = state_limit.write(shape, 5_000, str(tmp_path))
        assert 5_000 - 200 - per_item < values <= 5_000, shape
        assert size == Path(path).stat().st_size, shape
        document = json.loads(Path(path).read_text())
        assert document["format"] == "agentdescent-sampling/state", shape
        seconds, peak = state_limit.read(path)
        assert seconds > 0, shape
        assert peak >= 0, shape


def test_each_sized_shape_is_about_the_size_asked(state_limit: ModuleType, tmp_path: Path) -> None:
    for shape in state_limit.SIZED:
        path, _, size = state_limit.write(shape, 50_000, str(tmp_path))
        assert 50_000 - 4_400 < size < 50_000 + 200, shape
        json.loads(Path(path).read_text())


def test_the_two_states_load_into_their_samplers(state_limit: ModuleType, tmp_path: Path) -> None:
    from agentdescent_sampling import create, load_state

    for name in ["fixable-first", "difficulty-weighted"]:
        path, _, _ = state_limit.write(f"{name} state", 5_000, str(tmp_path))
        sampler = create(name)
        load_state(sampler, path)  # type: ignore[arg-type]
        assert len(sampler.stats()) > 400, name  # type: ignore[attr-defined]
