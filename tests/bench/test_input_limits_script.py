"""benchmarks/input_limits.py: each case writes the input it names, and reads it both ways."""

from __future__ import annotations

import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from agentdescent_sampling import InvalidSamplerConfig, spec_from_file
from agentdescent_sampling.discovery import MAX_ENTRY_POINTS, METADATA_LIMIT
from agentdescent_sampling.spec_file import _MAX_FILE_BYTES

SCRIPT = "input_limits"


@pytest.fixture(scope="module")
def input_limits(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


def test_the_long_description_is_past_the_metadata_limit_and_both_reads_find_the_plugin(
    input_limits: ModuleType, tmp_path: Path
) -> None:
    entry, path = input_limits.long_description(tmp_path, megabytes=3)
    metadata = tmp_path / "long_plugin-0.1.dist-info" / "METADATA"
    assert metadata.stat().st_size > 2 * METADATA_LIMIT
    for code in (input_limits.LOOKUP, input_limits.UNBOUNDED_METADATA):
        seconds, peak = input_limits.read(entry, path, code)  # raises if the read fails
        assert seconds > 0
        assert peak >= 0


def test_the_many_entry_points_are_past_the_limit_a_distribution_may_declare(
    input_limits: ModuleType, tmp_path: Path
) -> None:
    input_limits.many_entry_points(tmp_path)
    text = (tmp_path / "many_plugin-0.1.dist-info" / "entry_points.txt").read_text()
    assert text.count(" = many_plugin:Sampler") == 66_000 > MAX_ENTRY_POINTS


def test_the_zipped_entry_points_inflate_past_the_metadata_limit(
    input_limits: ModuleType, tmp_path: Path
) -> None:
    entry, _ = input_limits.inflating_zip(tmp_path, megabytes=4)
    with zipfile.ZipFile(entry) as archive:
        member = archive.getinfo("zip_plugin-0.1.dist-info/entry_points.txt")
    assert member.file_size > 3 * METADATA_LIMIT
    assert Path(entry).stat().st_size < METADATA_LIMIT // 50


@pytest.mark.parametrize(
    "shape", ["yaml block list", "yaml lines broken by CR", "toml dotted headers", "json object"]
)
def test_a_config_of_the_most_values_read_is_read_and_one_of_a_mebibyte_refused(
    input_limits: ModuleType, tmp_path: Path, shape: str
) -> None:
    suffix = input_limits.CONFIGS[shape][0]
    most = tmp_path / "most"
    most.mkdir()
    _, path = input_limits.config(shape, at_most_values=True)(most)
    assert spec_from_file(path).name == "round-robin"
    piece = input_limits.CONFIGS[shape][2]
    text = Path(path).read_bytes().decode()  # as written: a carriage return is kept
    one_more = text.replace(piece, piece * 2, 1)
    if suffix != ".yaml":  # a piece more: the next header or key
        head = input_limits.CONFIGS[shape][1]
        one_more = text.replace(head, head + piece.format("extra"), 1)
    Path(path).write_bytes(one_more.encode())
    with pytest.raises(InvalidSamplerConfig, match="over the limit of 32,768"):
        spec_from_file(path)

    mebibyte = tmp_path / "mebibyte"
    mebibyte.mkdir()
    _, path = input_limits.config(shape, at_most_values=False)(mebibyte)
    assert 0.9 * _MAX_FILE_BYTES < Path(path).stat().st_size <= _MAX_FILE_BYTES
    with pytest.raises(InvalidSamplerConfig, match="over the limit of 32,768"):
        spec_from_file(path)
