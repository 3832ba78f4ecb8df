"""``agentdescent-sampling state show|export PATH``: a state file for a person, read-only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentdescent_sampling import DurableSampler, create, load_state
from agentdescent_sampling.cli import main
from tests.support.holder import holding


def _state(path: Path, records: int) -> Path:
    sampler = create("difficulty-weighted:c=0.1", state=path)
    assert isinstance(sampler, DurableSampler)
    with sampler:
        for step in range(records):
            sampler.record(sampler.pick(["a", "b", "c"], step), float(step % 2))
    return path


def test_show_prints_the_sampler_its_counts_and_that_nobody_holds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _state(tmp_path / "sampler.sqlite", 5)
    before = state.read_bytes()

    assert main(["state", "show", str(state)]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[1]
        == 'sampler     difficulty-weighted (spec {"name": "difficulty-weighted", "c": 0.1})'
    )
    assert "records     5" in lines
    assert "next round  5" in lines
    assert "tasks       3" in lines
    assert "held by     nobody (no run has it open)" in lines
    assert state.read_bytes() == before


def test_export_writes_what_load_state_reads(tmp_path: Path) -> None:
    state, export = _state(tmp_path / "sampler.sqlite", 4), tmp_path / "export.json"

    assert main(["state", "export", str(state), "-o", str(export)]) == 0

    plain = create("difficulty-weighted:c=0.1")
    load_state(plain, export)  # type: ignore[arg-type]
    assert json.loads(export.read_text(encoding="utf-8"))["records"] == 4
    with DurableSampler(create("difficulty-weighted:c=0.1"), state) as reopened:
        assert plain.state_dict() == reopened.state_dict()


def test_show_prints_an_export_too_saying_what_an_export_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, export = _state(tmp_path / "sampler.sqlite", 4), tmp_path / "export.json"
    assert main(["state", "export", str(state), "-o", str(export)]) == 0

    assert main(["state", "show", str(export)]) == 0
    lines = capsys.readouterr().out.splitlines()
    shown = "sampler     difficulty-weighted (a save_state export: no spec, log or holder)"
    assert lines[1] == shown
    assert "records     4" in lines
    assert "tasks       3" in lines
    assert main(["state", "show", "--json", str(export)]) == 0
    assert json.loads(capsys.readouterr().out)["export"] is True
    (tmp_path / "broken.json").write_text('{"format": "nope"}', encoding="utf-8")
    assert main(["state", "show", str(tmp_path / "broken.json")]) == 2


def test_show_json_of_a_held_file_names_the_holder_and_counts_its_log(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    command = [sys.executable, "-m", "agentdescent_sampling", "state", "show", "--json", str(state)]
    with holding("informative-band", state, "a", "b") as holder:
        shown = subprocess.run(command, capture_output=True, text=True, check=False)

    assert shown.returncode == 0, shown.stderr
    summary = json.loads(shown.stdout)
    assert summary["held_by"].startswith(f"process {holder.pid} on ")
    assert (summary["sampler"], summary["records"], summary["tasks"]) == ("informative-band", 2, 2)
    assert summary["log"] == 4  # both picks and records, after the sampler as it was built
    assert summary["export"] is False


def test_a_file_that_is_not_a_state_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n", encoding="utf-8")

    assert main(["state", "export", str(notes)]) == 2

    assert f"{str(notes)!r} is not a sampler state" in capsys.readouterr().err


def test_show_refuses_an_export_its_sampler_could_not_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, export = _state(tmp_path / "sampler.sqlite", 2), tmp_path / "export.json"
    assert main(["state", "export", str(state), "-o", str(export)]) == 0
    document = json.loads(export.read_text(encoding="utf-8"))
    document["state"]["stats"] = {"a": "x"}
    export.write_text(json.dumps(document), encoding="utf-8")

    assert main(["state", "show", str(export)]) == 2
    assert str(export) in capsys.readouterr().err


def test_a_state_path_under_a_tilde_is_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    _state(tmp_path / "sampler.sqlite", 1)
    assert main(["state", "show", "~/sampler.sqlite"]) == 0
    assert f"state file  {tmp_path / 'sampler.sqlite'}" in capsys.readouterr().out


def test_show_reads_a_state_in_a_directory_it_cannot_write(unprivileged: list[str]) -> None:
    # A reader of a WAL database makes its -shm file beside it; a read-only directory refuses
    # that, and nothing can write the state there, so show reads the file as it is.
    import shutil
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="ads-read-only-"))  # outside root's 0700 tmp_path
    try:
        _state(directory / "sampler.sqlite", 3)
        (directory / "sampler.sqlite").chmod(0o644)
        directory.chmod(0o555)
        command = [*unprivileged, sys.executable, "-m", "agentdescent_sampling", "state", "show",
                   str(directory / "sampler.sqlite")]  # fmt: skip
        shown = subprocess.run(command, capture_output=True, text=True, check=False)
        assert shown.returncode == 0, shown.stderr
        assert "records     3" in shown.stdout.splitlines()
    finally:
        directory.chmod(0o755)
        shutil.rmtree(directory)
