"""``agentdescent-sampling state show|export PATH``: a state file for a person, read-only."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import DurableSampler, create, load_state, save_state
from agentdescent_sampling._stateview import describe_state, state_summary
from agentdescent_sampling.cli import main
from tests.support.holder import holding


def _state(path: Path, records: int) -> Path:
    sampler = create("difficulty-weighted:c=0.1", state=path)
    assert isinstance(sampler, DurableSampler)
    with sampler:
        for step in range(records):
            sampler.record(sampler.pick(["a", "b", "c"], step), float(step % 2))
    return path


def _exported(tmp_path: Path, records: int = 4) -> tuple[Path, Path]:
    """A state of ``records`` records in ``tmp_path``, and its export by ``state export``."""
    state, export = _state(tmp_path / "sampler.sqlite", records), tmp_path / "export.json"
    assert main(["state", "export", str(state), "-o", str(export)]) == 0
    return state, export


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
    state, export = _exported(tmp_path)

    plain = create("difficulty-weighted:c=0.1")
    load_state(plain, export)  # type: ignore[arg-type]
    assert json.loads(export.read_text(encoding="utf-8"))["records"] == 4
    with DurableSampler(create("difficulty-weighted:c=0.1"), state) as reopened:
        assert plain.state_dict() == reopened.state_dict()


def test_an_export_to_standard_output_fits_the_readers_limit_with_its_line_break(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentdescent_sampling.state as state_module

    state, export = _exported(tmp_path)
    size = export.stat().st_size  # the text alone, as -o writes it
    monkeypatch.setattr(state_module, "_MAX_FILE_BYTES", size)  # printed, one byte over
    assert main(["state", "export", str(state)]) == 2
    assert f"over the {size - 1:,} that load_state() reads" in capsys.readouterr().err
    monkeypatch.setattr(state_module, "_MAX_FILE_BYTES", size + 1)
    assert main(["state", "export", str(state)]) == 0
    piped = tmp_path / "piped.json"
    piped.write_text(capsys.readouterr().out, encoding="utf-8")
    assert piped.stat().st_size == size + 1
    load_state(create("difficulty-weighted:c=0.1"), piped)  # type: ignore[arg-type]


def test_import_shows_an_output_path_with_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, export = _exported(tmp_path)
    imported = tmp_path / "\x1b[31mred\nwrote elsewhere.sqlite"

    spec = "difficulty-weighted:c=0.1"
    assert main(["state", "import", str(export), "-o", str(imported), "--spec", spec]) == 0

    out = capsys.readouterr().out
    assert out.startswith(f"wrote {tmp_path}/\\x1b[31mred\\x0awrote elsewhere.sqlite: the state")
    assert out.count("\n") == 1
    assert "\x1b" not in out


def test_import_makes_of_an_export_a_state_file_that_a_run_continues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, export = _exported(tmp_path)
    imported = tmp_path / "imported.sqlite"

    spec = "difficulty-weighted:c=0.1"
    assert main(["state", "import", str(export), "-o", str(imported), "--spec", spec]) == 0

    assert capsys.readouterr().out == (
        f"wrote {imported}: the state of {spec}, 4 records, next round 4. A run spec continues "
        f'it with "state": "{imported}" and "spec": "{spec}"\n'
    )
    with create(spec, state=imported) as continued, create(spec, state=state) as original:
        assert continued.records == 4
        assert continued.state_dict() == original.state_dict()
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "export.json",
        "imported.sqlite",
        "sampler.sqlite",
    ]


def test_import_takes_the_spec_as_a_json_object_as_a_run_spec_gives_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, export = _exported(tmp_path)
    imported = tmp_path / "imported.sqlite"
    spec = '{"name": "difficulty-weighted", "c": 0.1}'

    assert main(["state", "import", str(export), "-o", str(imported), "--spec", spec]) == 0

    assert capsys.readouterr().out.endswith(f'"spec": {spec}\n')
    with create("difficulty-weighted:c=0.1", state=imported) as continued:
        assert continued.records == 4


@pytest.mark.parametrize(
    ("spec", "told"),
    [('{"name": "round-robin", "name": "difficulty-weighted", "c": 0.1}',
      "the key 'name' is given twice"),
     ('{"name": ' + "[" * 20_000 + "]" * 20_000 + "}", "more than 32 levels deep")],
    ids=["key-twice", "deep"],
)  # fmt: skip
def test_import_reads_a_json_spec_as_every_json_config_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, told: str
) -> None:
    # json.loads took the last of two 'name' keys and raised RecursionError past its depth.
    _, export = _exported(tmp_path)
    imported = tmp_path / "imported.sqlite"

    with pytest.raises(SystemExit) as exited:
        main(["state", "import", str(export), "-o", str(imported), "--spec", spec])

    assert exited.value.code == 2
    said = capsys.readouterr().err
    assert told in said
    assert len(said) < 1_000
    assert not imported.exists()


def test_import_refuses_an_output_that_exists_and_leaves_it_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, export = _exported(tmp_path)
    existing = _state(tmp_path / "existing.sqlite", 2)
    before = existing.read_bytes()
    capsys.readouterr()

    args = [
        "state",
        "import",
        str(export),
        "-o",
        str(existing),
        "--spec",
        "difficulty-weighted:c=0.1",
    ]
    assert main(args) == 2

    assert capsys.readouterr().err == (
        f"agentdescent-sampling: error: the output {str(existing)!r} already exists: import "
        f"writes a new state file and replaces none. Give a new path for -o, or delete that "
        f"file if its state is not wanted\n"
    )
    assert existing.read_bytes() == before


def test_import_with_other_parameters_than_the_exports_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, export = _exported(tmp_path)
    imported = tmp_path / "imported.sqlite"

    args = ["state", "import", str(export), "-o", str(imported), "--spec", "difficulty-weighted"]
    assert main(args) == 2

    # It was told to "build it with the saved parameters", as a Python caller is.
    assert capsys.readouterr().err == (
        f"agentdescent-sampling: error: {str(export)!r} is an export saved with other parameters "
        f"than --spec gives: give --spec difficulty-weighted:c=0.1,pass_threshold=0.999, the "
        f"sampler and parameters it was saved with\n"
    )
    assert not imported.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["export.json", "sampler.sqlite"]


def test_import_of_a_state_file_is_told_it_is_one_and_how_to_copy_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It was told to open it with create(spec, state=...), a Python call.
    state = _state(tmp_path / "sampler.sqlite", 2)
    args = ["state", "import", str(state), "-o", str(tmp_path / "new.sqlite"), "--spec", "x"]
    assert main(args) == 2

    assert capsys.readouterr().err == (
        f"agentdescent-sampling: error: {str(state)!r} is a state file already (SQLite), not an "
        f'export: a run spec takes it as its "state" as it is. To copy it, export it first: '
        f"agentdescent-sampling state export {state} -o OUT.json\n"
    )
    assert not (tmp_path / "new.sqlite").exists()


def test_import_of_another_samplers_export_names_the_spec_to_give_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, export = _exported(tmp_path)
    imported = tmp_path / "imported.sqlite"

    args = ["state", "import", str(export), "-o", str(imported), "--spec", "round-robin"]
    assert main(args) == 2

    assert capsys.readouterr().err == (
        f"agentdescent-sampling: error: {str(export)!r} is an export of sampler "
        f"difficulty-weighted, not 'round-robin': give --spec "
        f"difficulty-weighted:c=0.1,pass_threshold=0.999, the sampler and parameters it was "
        f"saved with\n"
    )
    assert not imported.exists()
    told = ["state", "import", str(export), "-o", str(imported), "--spec"]
    assert main([*told, "difficulty-weighted:c=0.1,pass_threshold=0.999"]) == 0


@pytest.mark.parametrize("bom", [False, True], ids=["plain", "after-a-utf-8-bom"])
def test_show_prints_an_export_too_saying_what_an_export_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bom: bool
) -> None:
    _, export = _exported(tmp_path)
    if bom:  # as an editor saving UTF-8 may write it; import and load_state read it too
        export.write_bytes(b"\xef\xbb\xbf" + export.read_bytes())

    assert main(["state", "show", str(export)]) == 0
    lines = capsys.readouterr().out.splitlines()
    shown = (
        "sampler     difficulty-weighted (a JSON export, of save_state or state export: no spec, "
        "log or holder)"
    )
    assert lines[1] == shown
    assert "records     4" in lines
    assert "tasks       3" in lines
    assert main(["state", "show", "--json", str(export)]) == 0
    assert json.loads(capsys.readouterr().out)["export"] is True
    (tmp_path / "broken.json").write_text('{"format": "nope"}', encoding="utf-8")
    assert main(["state", "show", str(tmp_path / "broken.json")]) == 2


def test_show_of_a_plain_samplers_export_says_its_zero_counts_are_not_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sampler = create("fixable-first")
    for round_index in range(5):
        sampler.record(sampler.pick(["a", "b"], round_index), 0.0)
    save_state(sampler, tmp_path / "plain.json")

    assert main(["state", "show", str(tmp_path / "plain.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "records     0 (a durable state counts them; a plain sampler's export has none)" in lines
    assert "next round  0 (a durable state counts them; a plain sampler's export has none)" in lines


def test_import_of_a_plain_samplers_export_says_its_statistics_came_whole_not_zero_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sampler = create("fixable-first")
    for index in range(50):
        sampler.record(f"t{index % 5}", float(index % 2))
    save_state(sampler, tmp_path / "plain.json")
    imported = tmp_path / "imported.sqlite"

    assert main(["state", "import", str(tmp_path / "plain.json"), "-o", str(imported),
                 "--spec", "fixable-first"]) == 0  # fmt: skip

    said = capsys.readouterr().out
    assert said.startswith(
        f"wrote {imported}: the state of fixable-first, its statistics whole (the export counts "
        f"no records or rounds: a plain sampler's has none), the new file's counts from 0. "
    )
    assert "0 records" not in said
    with create("fixable-first", state=imported) as continued:
        assert continued.state_dict() == sampler.state_dict()


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


def test_a_file_that_is_not_a_state_is_an_error_naming_it_what_a_state_is_and_its_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n", encoding="utf-8")

    assert main(["state", "export", str(notes)]) == 2

    assert (
        f"{str(notes)!r} is not a sampler state, the SQLite file create(spec, state=PATH) "
        f"writes (it starts with 'hello\\n')"
    ) in capsys.readouterr().err


@pytest.mark.parametrize("action", ["show", "export"])
def test_a_missing_state_is_told_what_the_path_must_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    missing = tmp_path / "run.sqlite"

    assert main(["state", action, str(missing)]) == 2

    assert capsys.readouterr().err.endswith(
        "No such file or directory; give the path of the SQLite file create(spec, "
        "state=PATH) writes\n"
    )
    assert not missing.exists()


def test_show_refuses_an_export_its_sampler_could_not_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, export = _exported(tmp_path, records=2)
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


@pytest.mark.parametrize(
    ("output", "what"),
    [
        (lambda state: state, "the state file itself"),
        (lambda state: _linked(state, "symlink"), "the state file itself"),
        (lambda state: _linked(state, "hardlink"), "the state file itself"),
        (lambda state: state.with_name(state.name + "-wal"), "the state's wal file"),
        (lambda state: state.with_name(state.name + "-shm"), "the state's shm file"),
    ],
    ids=["the-same-path", "a-symlink-to-it", "a-hard-link-to-it", "its-wal", "its-shm"],
)
def test_export_refuses_to_write_over_the_state_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: Any, what: str
) -> None:
    state = _state(tmp_path / "sampler.sqlite", 3)
    target = output(state)
    before = state.read_bytes()

    assert main(["state", "export", str(state), "-o", str(target)]) == 2

    error = capsys.readouterr().err
    assert f"the output {str(target)!r} is {what} ({str(state)!r})" in error
    assert "Give another file for -o" in error
    assert state.read_bytes() == before
    with DurableSampler(create("difficulty-weighted:c=0.1"), state) as reopened:
        assert reopened.records == 3


@pytest.mark.parametrize(
    ("held", "replaced"),
    [
        ('{"version": 1, "kind": "text"}\n', False),  # a run spec given for -o by mistake
        # One that names a state path like the format: its "format" key is what counts.
        ('{"version": 1, "state": "~/.agentdescent-sampling/state.sqlite"}\n', False),
        ("notes I keep\n", False),
        ("", True),  # an empty file, made by mktemp say
        (None, True),  # an earlier export of the same state
    ],
    ids=[
        "a-run-spec",
        "a-spec-naming-the-format",
        "a-text-file",
        "an-empty-file",
        "an-earlier-export",
    ],
)
def test_export_replaces_an_earlier_export_and_no_other_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], held: str | None, replaced: bool
) -> None:
    # It replaced any file that was not SQLite: a run spec typed for -o was lost.
    state, target = _state(tmp_path / "sampler.sqlite", 3), tmp_path / "out.json"
    if held is None:
        assert main(["state", "export", str(state), "-o", str(target)]) == 0
    else:
        target.write_text(held, encoding="utf-8")
    before = target.read_bytes()

    code = main(["state", "export", str(state), "-o", str(target)])

    if replaced:
        assert code == 0
        assert json.loads(target.read_text(encoding="utf-8"))["records"] == 3
    else:
        assert code == 2
        assert target.read_bytes() == before
        assert (
            f"the output {str(target)!r} is a file that is no earlier export of a sampler state"
            in (capsys.readouterr().err)
        )


def test_export_to_standard_output_redirected_to_a_file_appends_to_it(tmp_path: Path) -> None:
    # /dev/stdout names the file the shell redirected it to: that file is written through,
    # not replaced, so it was refused as "no export" (a log a script appended to).
    state, log = _state(tmp_path / "sampler.sqlite", 3), tmp_path / "log.txt"
    command = (
        f"echo header; {shlex.quote(sys.executable)} -m agentdescent_sampling state export "
        f"{shlex.quote(str(state))} -o /dev/stdout"
    )
    with open(log, "w", encoding="utf-8") as out:
        done = subprocess.run(["sh", "-c", command], stdout=out, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 0, done.stderr
    header, exported = log.read_text(encoding="utf-8").split("\n", 1)
    assert header == "header"
    assert json.loads(exported)["records"] == 3


def test_export_refuses_a_file_it_cannot_read_rather_than_replace_it_unseen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, target = _state(tmp_path / "sampler.sqlite", 3), tmp_path / "out.json"
    target.write_text("mine", encoding="utf-8")
    opened = os.open

    def denied(path: Any, flags: int, *args: Any) -> int:
        if os.fspath(path) == str(target):
            raise PermissionError(13, "Permission denied", str(path))
        return opened(path, flags, *args)

    monkeypatch.setattr(os, "open", denied)  # as a file of another user's, where not root
    assert main(["state", "export", str(state), "-o", str(target)]) == 2
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "mine"
    assert "is a file that is no earlier export of a sampler state" in capsys.readouterr().err


def _linked(state: Path, kind: str) -> Path:
    link = state.with_name("link.sqlite")
    if kind == "symlink":
        link.symlink_to(state.name)
    else:
        os.link(state, link)
    return link


#: What a file can hold to fake lines and reach the terminal: a line break and escapes.
_EVIL = "\x1b[31mRED\x1b[0m\nrecords     999999\x07\r\u202e"


def test_show_escapes_what_the_file_says_so_it_can_fake_no_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _state(tmp_path / "sampler.sqlite", 1)
    with sqlite3.connect(state) as db:
        db.execute("DELETE FROM event")  # nothing to replay with the spec below
        db.execute("UPDATE meta SET value = ? WHERE key = 'sampler'", (_EVIL,))
        db.execute("UPDATE meta SET value = ? WHERE key = 'spec'", (json.dumps(_EVIL),))
    db.close()

    assert main(["state", "show", str(state)]) == 0

    out = capsys.readouterr().out
    assert [line[:12] for line in out.splitlines()] == [
        "state file  ",
        "sampler     ",
        "records     ",
        "next round  ",
        "tasks       ",
        "log         ",
        "held by     ",
    ]
    assert r"sampler     \x1b[31mRED\x1b[0m\x0arecords     999999\x07\x0d\u202e (spec " in out
    assert not any(char in out for char in "\x1b\x07\r\u202e")


def test_a_state_summary_is_shown_escaped_wherever_the_file_speaks() -> None:
    summary = {
        "path": f"state{_EVIL}.sqlite",
        "sampler": _EVIL,
        "spec": {"name": _EVIL},
        "records": 1,
        "rounds": 2,
        "tasks": None,
        "log": 1,
        "held_by": f"process 7 on {_EVIL} (since then)",
        "export": False,
    }

    shown = describe_state(summary)

    assert len(shown.splitlines()) == 7
    assert not any(char in shown for char in "\x1b\x07\r\u202e")
    assert "log         1 entry since the last snapshot" in shown.splitlines()
    assert shown.splitlines()[-1].startswith(r"held by     process 7 on \x1b[31mRED")


def test_show_says_log_entry_once_for_one_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "sampler.sqlite"
    with create("difficulty-weighted", state=state) as sampler:
        sampler.record("a", 1.0)  # a record without a pick: one entry

    assert main(["state", "show", str(state)]) == 0

    assert "log         1 entry since the last snapshot" in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_show_of_a_path_that_is_no_state_file_gives_advice_for_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "sampler.sqlite"
    if kind == "symlink":
        path.symlink_to(_state(tmp_path / "real.sqlite", 1))
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()

    assert main(["state", "show", str(path)]) == 2

    error = capsys.readouterr().err
    assert repr(str(path)) in error
    assert "created if missing" not in error
    assert "Give a new path" not in error
    assert "redirect the writes" not in error


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.iterdir()}


def test_show_and_export_leave_no_file_beside_the_state_they_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _state(tmp_path / "sampler.sqlite", 3)
    before = _files(tmp_path)

    assert main(["state", "show", str(state)]) == 0
    assert main(["state", "export", str(state)]) == 0

    assert "records     3" in capsys.readouterr().out.splitlines()
    assert _files(tmp_path) == before


def test_show_of_a_read_only_state_leaves_nothing_that_refuses_the_next_run(
    unprivileged: list[str],
) -> None:
    # A reader used to leave -wal and -shm files with the state's own mode: made writable
    # again, the state was refused by its read-only -shm, which no message named.
    import shutil
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="ads-read-only-state-"))  # outside root's tmp_path
    state = _state(directory / "sampler.sqlite", 3)
    directory.chmod(0o777)
    if unprivileged:
        os.chown(state, 65534, 65534)  # the state of the user the commands run as
    state.chmod(0o444)
    run = [*unprivileged, sys.executable, "-c"]
    show = "from agentdescent_sampling.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
    record = (
        "import sys; from agentdescent_sampling import create; "
        "create('difficulty-weighted:c=0.1', state=sys.argv[1]).record('a', 1.0)"
    )
    try:
        shown = subprocess.run(
            [*run, show, "state", "show", str(state)], capture_output=True, text=True, check=False
        )
        left = sorted(path.name for path in directory.iterdir())
        state.chmod(0o644)
        recorded = subprocess.run(
            [*run, record, str(state)], capture_output=True, text=True, check=False
        )
    finally:
        directory.chmod(0o755)
        shutil.rmtree(directory)

    assert shown.returncode == 0, shown.stderr
    assert "records     3" in shown.stdout.splitlines()
    assert left == ["sampler.sqlite"]
    assert recorded.returncode == 0, recorded.stderr


def test_a_state_read_while_a_run_holds_it_is_read_through_the_runs_own_files(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    with holding("informative-band", state, "a", "b") as holder:
        summary = state_summary(state)

    assert summary["held_by"].startswith(f"process {holder.pid} on ")
    assert (summary["records"], summary["log"]) == (2, 4)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sampler.sqlite"]


def test_export_refuses_an_output_that_is_sqlites_file_beside_another_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, other = _state(tmp_path / "sampler.sqlite", 3), _state(tmp_path / "other.sqlite", 1)
    target = tmp_path / "other.sqlite-wal"
    before = _files(tmp_path)

    assert main(["state", "export", str(state), "-o", str(target)]) == 2

    said = f"the output {str(target)!r} is the wal file SQLite keeps beside the database "
    assert f"{said}{str(other)!r}" in capsys.readouterr().err
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    ("path", "told"),
    [("~no-such-user-here/state.sqlite", "for a user this system does not know"),
     ("", "an empty path; give the file or directory meant")],
    ids=["unknown-user", "empty"],
)  # fmt: skip
@pytest.mark.parametrize("where", ["state", "output"])
def test_a_path_the_state_commands_cannot_use_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, told: str, where: str
) -> None:
    state = _state(tmp_path / "sampler.sqlite", 2)
    args = ["state", "export", path] if where == "state" else ["state", "export", str(state)]
    with pytest.raises(SystemExit) as exited:
        main([*args, "-o", path] if where == "output" else args)

    assert exited.value.code == 2
    assert told in capsys.readouterr().err


def test_show_of_a_file_with_no_state_yet_says_so_not_a_none_sampler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "new.sqlite"
    empty.touch()  # a file being made, or whose making SQLite undid, as SQLite reads it

    assert main(["state", "show", str(empty)]) == 0

    out = capsys.readouterr().out
    assert (
        "sampler     none yet: it is a new file being made, or one whose making a killed run "
        "left undone" in out
    )
    assert "None" not in out


def test_a_json_export_given_as_a_state_is_told_the_command_that_imports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, export = _exported(tmp_path)
    capsys.readouterr()

    assert main(["state", "export", str(export)]) == 2

    assert "'agentdescent-sampling state import EXPORT -o NEW_PATH --spec SPEC'" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("command", ["export", "import"])
def test_an_output_ending_with_a_separator_where_no_directory_is_makes_no_file_by_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    state, export = _exported(tmp_path)
    output = f"{tmp_path / 'runs'}{os.sep}"
    given = str(state) if command == "export" else str(export)
    spec = ["--spec", "difficulty-weighted:c=0.1"] if command == "import" else []
    capsys.readouterr()

    with pytest.raises(SystemExit) as exited:
        main(["state", command, given, "-o", output, *spec])

    assert exited.value.code == 2
    assert "so it names a directory, and no directory is there" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("saved", "params"),
    [("difficulty-weighted", {"c": [1, 2]}), ("x y", {})],
    ids=["list", "name"],
)  # fmt: skip
def test_import_of_an_export_whose_spec_the_string_form_breaks_names_it_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], saved: str, params: dict[str, Any]
) -> None:
    export, imported = tmp_path / "export.json", tmp_path / "imported.sqlite"
    document = {"format": "agentdescent-sampling/state", "sampler": saved, "records": 0,
                "rounds": 0, "state": {"params": params}}  # fmt: skip
    export.write_text(json.dumps(document), encoding="utf-8")

    args = ["state", "import", str(export), "-o", str(imported), "--spec", "round-robin"]
    assert main(args) == 2

    err = capsys.readouterr().err
    assert f"is an export of sampler {saved}, not 'round-robin': give --spec '" in err
    assert json.dumps({"name": saved, **params}) in err
    assert not imported.exists()


def test_export_to_a_read_only_file_system_is_one_line_naming_the_file_the_cause_and_the_fix(
    tmp_path: Path, read_only_file_system: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    state = _state(files / "sampler.sqlite", 2)
    mounted = tmp_path / "ro"
    output = mounted / "sampler.json"
    export = "import sys; from agentdescent_sampling.cli import main; sys.exit(main(sys.argv[1:]))"

    run = read_only_file_system(
        files, mounted, sys.executable, "-c", export, "state", "export", str(state), "-o",
        str(output),
    )  # fmt: skip

    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == (
        f"agentdescent-sampling: error: cannot write sampler state to {str(output)!r}: its file "
        f"system is mounted read-only (Errno 30); remount it read-write, or give a path on a "
        f"writable file system\n"
    )


def test_export_to_standard_output_writes_what_o_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Pretty-printed, it used to count more values than -o's text, so that a state near the
    # limit exported through a pipe could not be imported.
    state, export = _exported(tmp_path)
    capsys.readouterr()
    assert main(["state", "export", str(state)]) == 0
    assert capsys.readouterr().out == export.read_text() + "\n"


def test_export_of_a_state_its_readers_would_refuse_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentdescent_sampling._files as files

    state = _state(tmp_path / "sampler.sqlite", 40)
    monkeypatch.setattr(files, "MAX_VALUES", 30)
    capsys.readouterr()
    assert main(["state", "export", str(state)]) != 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "over the 30 that load_state() reads" in err


def test_import_writes_a_state_named_with_a_leading_tilde_here_when_given_with_dot_slash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The './' was dropped on the way, and '~new.sqlite' read as an unknown user's home.
    _, export = _exported(tmp_path)
    monkeypatch.chdir(tmp_path)
    spec = "difficulty-weighted:c=0.1,pass_threshold=0.999"
    assert main(["state", "import", str(export), "-o", "./~new.sqlite", "--spec", spec]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {tmp_path / '~new.sqlite'}: ")
    assert (tmp_path / "~new.sqlite").is_file()
