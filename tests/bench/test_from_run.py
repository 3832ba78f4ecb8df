"""``bench --from-run``: the make-up estimated from hand-made rollout records, the workload it
becomes, and bad run directories named.

The records here are written as agentdescent 0.7.0's run store writes them (one JSON file per
record under ``ledger/trajectories/``); ``tests/engine/test_run_spec_from_run.py`` reads a real
run's.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling._files import reason_of
from agentdescent_sampling.bench.engine.fromrun import (
    MIN_RECORDS,
    Record,
    estimate_make_up,
    format_make_up,
    read_run,
)
from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import BenchError

ARTIFACT = "my-skill"


def _records(task_id: str, *outcomes: tuple[int, float]) -> list[Record]:
    """One record per ``(version, reward)``, written in that order."""
    return [Record(task_id, reward, version, at) for at, (version, reward) in enumerate(outcomes)]


def _kinds(records: Iterable[Record], **options: Any) -> dict[str, tuple[str, int, int]]:
    make_up = estimate_make_up(records, **options)
    return {task.task_id: (task.kind, task.passes, task.failures) for task in make_up.tasks}


def test_each_task_is_sorted_by_what_its_records_show_in_version_order() -> None:
    records = [
        *_records("solved", (1, 1.0), (2, 1.0), (3, 1.0)),
        *_records("hopeless", (1, 0.0), (3, 0.0)),
        *_records("fixed-late", (1, 0.0), (2, 0.0), (3, 1.0), (4, 1.0)),
        *_records("flaky", (1, 0.0), (2, 1.0), (2, 0.0)),
        *_records("broken", (1, 1.0), (2, 0.0)),
        *_records("seen-once", (1, 0.0)),
    ]
    random.Random(0).shuffle(records)  # the store's files come in hash order

    assert _kinds(records) == {
        "solved": ("always", 3, 0),
        "hopeless": ("never", 0, 2),
        "fixed-late": ("flipped", 2, 2),
        "flaky": ("mixed", 1, 2),
        "broken": ("mixed", 1, 1),
        "seen-once": ("too-few", 0, 1),
    }


def test_a_flip_counts_the_failures_before_the_first_pass() -> None:
    records = [
        *_records("a", (1, 0.0), (2, 1.0)),
        *_records("b", (1, 0.0), (2, 0.0), (5, 0.0), (6, 1.0)),
        *_records("c", (3, 0.0), (4, 0.0), (7, 1.0)),
    ]

    assert estimate_make_up(records).flip_failures == (1, 2, 3)


def test_a_pass_and_a_fail_under_one_version_is_mixed_even_in_flip_order() -> None:
    # Failed, then passed, both under version 2: luck, not a commit.
    assert _kinds(_records("t", (1, 0.0), (2, 0.0), (2, 1.0)))["t"][0] == "mixed"


def test_a_task_needs_min_records_records_to_be_placed() -> None:
    assert MIN_RECORDS == 2
    assert _kinds(_records("t", (1, 1.0)))["t"] == ("too-few", 1, 0)
    assert _kinds(_records("t", (1, 1.0), (2, 1.0)))["t"] == ("always", 2, 0)


def test_the_pass_threshold_decides_a_pass_and_graded_scores_are_told_from_the_rewards() -> None:
    records = _records("t", (1, 0.5), (2, 0.85))

    assert _kinds(records)["t"][0] == "never"
    assert _kinds(records, pass_threshold=0.8)["t"][0] == "flipped"
    assert estimate_make_up(records).graded
    assert not estimate_make_up(_records("t", (1, 0.0), (2, 1.0))).graded


def test_mixed_tasks_luck_is_the_share_of_their_records_that_passed() -> None:
    records = [*_records("a", (1, 1.0), (1, 0.0)), *_records("b", (1, 1.0), (1, 0.0), (2, 0.0))]

    assert estimate_make_up(records).luck == pytest.approx(2 / 5)
    assert estimate_make_up(_records("a", (1, 0.0), (2, 1.0))).luck is None


# --- a run directory -----------------------------------------------------------------------


def _record_file(
    task_id: str, reward: float, version: int, *, purpose: str = "rollout", at: float = 0.0,
    worker: str | None = "w0", artifact: str = ARTIFACT,
) -> dict[str, Any]:  # fmt: skip
    """A record as agentdescent 0.7.0's ``Trajectory.to_dict`` writes it."""
    return {
        "schema_version": 1, "trace_id": "", "artifact_id": artifact, "task_id": task_id,
        "env_fingerprint": "", "rendered": f"COLUMN: v{version}", "rendered_truncated": False,
        "purpose": purpose, "base_version": json.dumps({artifact: version}), "output": "6",
        "reward": reward, "cost_tokens": 0, "cost_wallclock": 0.1, "lease_id": None,
        "worker_id": worker, "events": [], "ts": 1_700_000_000.0 + at,
    }  # fmt: skip


def make_run(
    root: Path,
    records: Iterable[Mapping[str, Any]],
    *,
    status: Mapping[str, Any] | None = None,
    evolve: Mapping[str, Any] | None = None,
    rounds: Iterable[str] = (),
    **spec: Any,
) -> Path:
    """A run directory holding ``records``, with a ``status.json`` and ``spec.json``, and
    ``rounds`` as the lines of its ``rounds.jsonl``."""
    run = root / "20260101-000000-abcdef"
    (run / "ledger" / "trajectories").mkdir(parents=True)
    (run / "status.json").write_text(
        json.dumps({"run_id": run.name, "state": "done", "rollouts": 0, **(status or {})})
    )
    (run / "spec.json").write_text(
        json.dumps({"kind": "skill_dir", "evolve": dict(evolve or {}), **spec})
    )
    for number, record in enumerate(records):
        (run / "ledger" / "trajectories" / f"{number:064x}.json").write_text(json.dumps(record))
    if rounds:
        (run / "rounds.jsonl").write_text("".join(f"{line}\n" for line in rounds))
    return run


def _rounds(*processes: int, workers: int = 2) -> list[str]:
    """``rounds.jsonl`` as agentdescent 0.7.0 writes it for a run whose processes (the first,
    then each resume) ran that many rounds: each numbers its rounds from 0 and counts its
    rollouts from 0."""
    return [
        json.dumps({"round": index, "held_out_reward": 0.6, "rollouts": workers * (index + 1)})
        for rounds in processes
        for index in range(rounds)
    ]


def _run_records() -> list[dict[str, Any]]:
    """Two workers, three versions: 2 flipped (k 1 and 2), 1 mixed, 1 always, 1 never, 1 once."""
    outcomes = {
        "flip-1": [(1, 0.0), (2, 1.0)],
        "flip-2": [(1, 0.0), (2, 0.0), (3, 1.0)],
        "mixed": [(2, 1.0), (3, 0.0)],
        "always": [(1, 1.0), (3, 1.0)],
        "never": [(1, 0.0), (2, 0.0)],
        "once": [(3, 0.0)],
    }
    rows = [
        _record_file(task, reward, version, at=version, worker=f"w{i % 2}")
        for i, (task, runs) in enumerate(outcomes.items())
        for version, reward in runs
    ]
    rows += [_record_file("held", 0.0, 1, purpose="eval", worker=None)]
    rows += [_record_file("flip-1", 1.0, 1, purpose="self_verify")]
    return rows


def test_a_run_directory_becomes_a_workload_of_its_make_up_and_shape(tmp_path: Path) -> None:
    run = read_run(make_run(tmp_path, _run_records(), status={"rollouts": 30}))

    assert run.rollout_records == 12
    assert run.unused == {"eval": 1, "self_verify": 1}
    assert (run.spent, run.workers, run.max_concurrency, run.rounds) == (30, 2, 2, 15)
    workload = run.workload()
    assert workload.name == "from-run"
    assert (workload.lessons, workload.flaky, workload.luck) == (3, 1, 0.5)
    assert workload.failures_needed == (1, 2)
    assert (workload.always, workload.never, workload.graded) == (1, 1, False)
    assert (workload.workers, workload.max_concurrency, workload.rounds) == (2, 2, 15)
    assert workload.solved_threshold == 0.999


def test_a_resumed_run_counts_the_rollouts_of_every_round_not_the_last_process_alone(
    tmp_path: Path,
) -> None:
    # 4 rounds of 2 workers, resumed for 4 more: 8 + 8 rollouts, of which status.json, which
    # the engine resets on resume, counts the last 8; the store kept 12 records.
    path = make_run(
        tmp_path, _run_records(), status={"rollouts": 8}, evolve={"n_workers": 2},
        rounds=_rounds(4, 4),
    )  # fmt: skip
    run = read_run(path)

    assert (run.rollout_records, run.spent, run.workers, run.rounds) == (12, 16, 2, 8)
    assert run.notes == ()  # every round read, and status.json agrees with the last
    text = format_make_up(run, run.workload())
    assert "of 6 train tasks, from the 16 rollouts it made" in " ".join(text.split())
    assert "8 rounds x 2 workers, 2 in flight" in " ".join(text.split())


@pytest.mark.parametrize(
    ("rounds", "spent"),
    [
        # Cancelled after round 0, resumed: its round 0 counts 2 again, and is a new process.
        (_rounds(1, 3), 2 + 6),
        (_rounds(4, 4, 2), 8 + 8 + 4),
        # A run killed mid-write leaves half a line: the rounds before it still count.
        ([*_rounds(4), '{"round": 4, "rollo'], 8),
    ],
    ids=["resumed-after-one-round", "resumed-twice", "half-written-line"],
)
def test_each_process_of_the_run_adds_its_last_count(
    tmp_path: Path, rounds: list[str], spent: int
) -> None:
    records = [_record_file("t", 0.0, 1), _record_file("t", 1.0, 2)]
    path = make_run(tmp_path, records, status={"rollouts": 2}, rounds=rounds)

    assert read_run(path).spent == spent


def _said(run_dir: Path) -> str:
    """The make-up report of the run at ``run_dir``, on one line."""
    run = read_run(run_dir)
    return " ".join(format_make_up(run, run.workload()).split())


def test_a_rounds_log_cut_short_mid_line_is_noted_and_its_last_process_counted_from_status(
    tmp_path: Path,
) -> None:
    # 4 rounds, resumed for 4 more, cut inside line 6: its last 3 rounds are lost, but
    # status.json still counts the last process's 8 rollouts.
    text = "".join(f"{line}\n" for line in _rounds(4, 4))
    cut = sum(len(line) + 1 for line in _rounds(4, 4)[:5]) + 20
    path = make_run(tmp_path, _run_records(), status={"rollouts": 8}, evolve={"n_workers": 2})
    (path / "rounds.jsonl").write_text(text[:cut])

    run = read_run(path)

    assert (run.spent, run.rounds) == (16, 8)
    said = _said(path)
    assert "from the 16 rollouts it made" in said
    assert (
        "rounds.jsonl's last line, line 6, is cut short, as a run stopped mid-write leaves it, "
        "and is skipped. So the 16 rollouts it made (8 rounds of 2 workers) are a floor, "
        "counted from its 5 readable rounds with status.json's 8 for the run's last process in "
        "place of the 2 its last round shows"
    ) in said


def test_the_notes_on_a_damaged_rounds_log_go_in_the_json_as_well_as_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")
    lines = _rounds(4, 4)
    path = make_run(tmp_path, _run_records(), status={"rollouts": 8}, evolve={"n_workers": 2})
    (path / "rounds.jsonl").write_text("".join(f"{line}\n" for line in lines)[:-30])
    [note] = read_run(path).notes
    assert "rounds.jsonl's last line, line 8, is cut short" in note

    argv = ["bench", "--from-run", str(path), "--workload", "lessons", "--sampler",
            "informative-band", "--seeds", "1", "--json"]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    notes = {workload["name"]: workload["notes"] for workload in json.loads(out)["workloads"]}
    assert notes == {"from-run": [note], "lessons": []}
    assert "line 8, is cut short" in " ".join(err.split())


def test_an_os_errors_reason_is_its_strerror_without_the_path_python_appends() -> None:
    long = "/runs/" + "x" * 5000
    assert reason_of(FileNotFoundError(2, "No such file or directory", long)) == (
        "No such file or directory"
    )
    # Raised with a message of our own, it has no strerror: the message is the reason.
    assert reason_of(OSError("it is a directory, not a regular file")) == (
        "it is a directory, not a regular file"
    )
    assert reason_of(ValueError("Expecting value: line 1 column 1")) == (
        "Expecting value: line 1 column 1"
    )


def test_lines_of_the_rounds_log_that_are_not_rounds_are_counted_and_named_in_the_note(
    tmp_path: Path,
) -> None:
    lines = _rounds(4, 4)
    lines[2] = "garbage"
    lines[4] = "[]"
    lines[6] = json.dumps({"round": "seven", "rollouts": 6})
    path = make_run(
        tmp_path, _run_records(), status={"rollouts": 8}, evolve={"n_workers": 2}, rounds=lines
    )

    assert read_run(path).spent == 16  # each process's last round survived
    assert (
        "3 of the 8 lines of rounds.jsonl are not a round and are skipped: lines 3, 5 and 7. "
        "So the 16 rollouts it made (8 rounds of 2 workers) are a floor, counted from its 5 "
        "readable rounds"
    ) in _said(path)


def test_a_rounds_line_nested_too_deeply_is_a_line_that_is_not_a_round_not_a_crash(
    tmp_path: Path,
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = make_run(tmp_path, _run_records(), rounds=[*_rounds(4), deep])

    assert read_run(path).spent == 12  # the 12 records outnumber the 8 of the rounds
    assert "1 of the 5 lines of rounds.jsonl is not a round and is skipped: line 5" in (_said(path))


def test_a_rounds_log_that_lacks_the_last_rounds_is_counted_from_status_and_says_so(
    tmp_path: Path,
) -> None:
    # Cut at a line's end: every line reads, but status.json counts rounds that are gone.
    path = make_run(
        tmp_path, _run_records(), status={"rollouts": 8}, evolve={"n_workers": 2},
        rounds=_rounds(4, 4)[:5],
    )  # fmt: skip

    assert read_run(path).spent == 16
    assert "rounds.jsonl lacks the run's last rounds" in _said(path)


@pytest.mark.parametrize(
    ("make", "trouble"),
    [
        (lambda file: None, "there is no rounds.jsonl, where agentdescent logs each round"),
        (lambda file: file.write_text(""), "rounds.jsonl is empty"),
        (lambda file: file.write_text("\n \n"), "rounds.jsonl is empty"),
        (lambda file: os.truncate(file.write_bytes(b"") or file, (1 << 24) + 1),
         "rounds.jsonl was not read: it is larger than the limit of 16,777,216 bytes"),
        (lambda file: file.mkdir(),
         "rounds.jsonl was not read: it is a directory, not a regular file"),
    ],
    ids=["missing", "empty", "blank", "over-the-limit", "a-directory"],
)  # fmt: skip
def test_a_rounds_log_that_gives_no_rounds_is_noted_with_the_count_that_stands_in(
    tmp_path: Path, make: Callable[[Path], object], trouble: str
) -> None:
    path = make_run(tmp_path, _run_records(), status={"rollouts": 8}, evolve={"n_workers": 2})
    make(path / "rounds.jsonl")

    run = read_run(path)

    assert run.spent == 12
    said = _said(path)
    assert (
        f"{trouble}. So the 12 rollouts it made (6 rounds of 2 workers) are a floor, counted "
        f"from its 12 rollout records, which outnumber status.json's 8 (the run's last "
        f"process's alone, if it was resumed)"
    ) in said
    assert "Errno" not in said


def test_the_specs_workers_concurrency_and_threshold_are_the_workloads(tmp_path: Path) -> None:
    evolve = {"n_workers": 4, "max_concurrency": 1, "solved_threshold": 0.8}
    records = [_record_file("t", 0.5, 1), _record_file("t", 0.9, 2)]
    run = read_run(make_run(tmp_path, records, status={"rollouts": 10}, evolve=evolve))

    assert run.make_up.pass_threshold == 0.8
    assert run.make_up.of("flipped")
    workload = run.workload()
    assert (workload.workers, workload.max_concurrency, workload.rounds) == (4, 1, 3)
    assert workload.graded


@pytest.mark.parametrize(
    ("evolve", "status", "told"),
    [({"n_workers": 10_000_000}, {"rollouts": 10}, "10,000,000 workers"),
     ({}, {"rollouts": 10**12}, "1,000,000,000,000 rollouts")],
    ids=["workers", "rollouts"],
)  # fmt: skip
def test_a_count_past_what_the_bench_replays_is_refused_naming_what_it_read(
    tmp_path: Path, evolve: dict[str, int], status: dict[str, int], told: str
) -> None:
    # Taken as they stood, they ran the bench for ever, or out of memory.
    records = [_record_file("t", 0.0, 1), _record_file("t", 1.0, 2)]
    run = make_run(tmp_path, records, status=status, evolve=evolve)

    with pytest.raises(BenchError) as raised:
        read_run(run)
    assert f"the run counts {told} (spec.json, status.json, result.json or rounds.jsonl)" in str(
        raised.value
    )
    assert "it read 2 rollout records from" in str(raised.value)


def test_the_make_up_report_counts_each_kind_and_says_what_it_cannot_tell(tmp_path: Path) -> None:
    run = read_run(make_run(tmp_path, _run_records(), status={"rollouts": 30}))

    text = format_make_up(run, run.workload())

    assert text.startswith(f"Make-up of run {run.run_id} (done): 12 rollout records of 6 train")
    assert "not used: 1 eval, 1 self_verify records" in text
    for line in (
        "always       1",
        "never        1",
        "flipped      2  after 1 failure: 1 task; 2 failures: 1 task",
        "mixed        1  50% of their records passed",
        "too-few      1  fewer than 2 records (0 passed, 1 failed), left out",
    ):
        assert f"\n  {line}" in text
    assert "3 lessons (1 flaky), 1 always-pass, 1 never-pass" in text
    assert "What the records cannot tell:" in text
    assert "needed more failures than the run gave it" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_an_asynchronous_run_is_benched_by_the_asynchronous_path_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make_run(tmp_path, _run_records(), evolve={"asynchronous": True, "max_seconds": 60})
    run = read_run(path)
    assert run.asynchronous
    said = " ".join(format_make_up(run, run.workload()).split())
    assert "in flight; by evolve(asynchronous=True), as the run went" in said

    assert main(["bench", "--from-run", str(path), "--seeds", "1", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["config"]["asynchronous"] is True
    # What a reader needs to run it again: the run's directory.
    assert document["workloads"][0]["summary"].startswith(f"from the run in {path}: ")


def test_a_synchronous_run_says_nothing_of_the_path(tmp_path: Path) -> None:
    run = read_run(make_run(tmp_path, _run_records(), evolve={"asynchronous": False}))
    assert not run.asynchronous
    assert "asynchronous" not in format_make_up(run, run.workload())


def test_a_small_make_up_warns_that_its_held_out_set_decides_little(tmp_path: Path) -> None:
    records = [_record_file(task, reward, v) for task in ("a", "b") for v, reward in
               ((1, 0.0), (2, 1.0))]  # fmt: skip
    run = read_run(make_run(tmp_path, records))

    assert "\n  only 2 held-out twins: each commit decision rests on that many rollouts" in (
        format_make_up(run, run.workload())
    )


# --- bad input -------------------------------------------------------------------------------


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``agentdescent-sampling bench ARGV``; assert it exits 2; its error message."""
    assert main(["bench", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    return captured.err


def test_a_misspelt_sampler_is_refused_before_the_make_up_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make_run(tmp_path, _run_records())

    err = _refused(capsys, "--from-run", str(path), "--sampler", "fixable-frist")  # out: ""

    assert "no sampler named 'fixable-frist'. Did you mean 'fixable-first'?" in err


def test_a_synchronous_only_reflector_on_an_asynchronous_run_is_told_to_choose_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make_run(tmp_path, _run_records(), evolve={"asynchronous": True, "max_seconds": 60})

    err = _refused(capsys, "--from-run", str(path), "--reflector", "llm-like-gate")

    assert "a --from-run of an asynchronous run is benched asynchronously: choose another " in err
    assert "--async" not in err  # the user gave none, and none forces the synchronous path


@pytest.mark.parametrize("reward", [5.0, -0.5])
def test_a_reward_outside_zero_to_one_is_refused_as_the_log_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reward: float
) -> None:
    # 5.0 had counted as a pass and -0.5 as a failure, silently.
    path = make_run(tmp_path, [*_run_records(), _record_file("odd", reward, 1)])

    err = _refused(capsys, "--from-run", str(path))

    assert f"has 'reward' {reward}, outside [0, 1]" in err
    assert "for example accuracy / 100" in err


def test_a_run_id_is_told_the_directory_the_engine_keeps_it_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    run_id = make_run(home / "runs", _run_records()).name
    monkeypatch.setenv("AGENTDESCENT_HOME", str(home))
    monkeypatch.chdir(tmp_path)  # where no directory has that name

    err = _refused(capsys, "--from-run", run_id)

    looked = tmp_path / run_id  # a relative path is told where it was looked for
    assert f"no such directory ('{looked}'); it is the id of the run in " in err
    assert f"the id of the run in '{home / 'runs' / run_id}': give that directory" in err


def test_a_missing_directory_is_named_with_where_runs_live(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-run"

    err = _refused(capsys, "--from-run", str(missing))

    assert f"--from-run '{missing}': no such directory" in err
    assert "~/.agentdescent/runs/<run_id>" in err
    assert "agentdescent status" in err


def test_a_run_path_longer_than_the_system_allows_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    too_long = tmp_path / ("a" * 300)  # a name over NAME_MAX: is_dir() raises for it

    err = _refused(capsys, "--from-run", str(too_long))

    assert f"--from-run '{str(too_long)[:30]}" in err
    assert "a... is 300 bytes, and file systems take at most 255; give a shorter path" in err


def test_a_symbolic_link_loop_or_to_nothing_is_named_as_such_not_as_no_such_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop, back, dangling = tmp_path / "run", tmp_path / "back", tmp_path / "old-run"
    loop.symlink_to(back)
    back.symlink_to(loop)
    dangling.symlink_to(tmp_path / "removed")

    assert f"--from-run '{loop}': a loop of symbolic links; give the directory of one run" in (
        _refused(capsys, "--from-run", str(loop))
    )
    err = _refused(capsys, "--from-run", str(dangling))
    # The target is quoted cut to a length, so a long temporary directory shows in part.
    assert f"--from-run '{dangling}': a symbolic link to '{str(tmp_path)[:20]}" in err
    assert "removed', which leads to nothing; give the directory of one run" in err or (
        "..., which leads to nothing; give the directory of one run" in err
    )


def test_a_file_is_not_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "rollouts.jsonl"
    file.write_text("{}\n")

    assert "not a directory" in _refused(capsys, "--from-run", str(file))


def test_a_directory_without_status_and_spec_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(capsys, "--from-run", str(tmp_path))

    assert f"--from-run '{tmp_path}': not an agentdescent run directory" in err
    assert "it has no status.json and no spec.json, which" in err


def test_the_run_store_and_a_runs_ledger_point_to_the_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path, _run_records())

    store = _refused(capsys, "--from-run", str(tmp_path))
    ledger = _refused(capsys, "--from-run", str(run / "ledger"))

    assert f"a run store holding 1 run; give one run's directory, such as '{run}'" in store
    assert f"this is a run's ledger; give the run's directory, '{run}'" in ledger


def test_a_run_with_no_rollout_records_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    held_out_only = make_run(tmp_path / "a", [_record_file("held", 1.0, 1, purpose="eval")])
    unrecorded = make_run(tmp_path / "b", [], record_rollouts=False)

    err = _refused(capsys, "--from-run", str(held_out_only))
    assert f"--from-run '{held_out_only}': the run has no rollout records (state 'done'" in err
    assert "records every rollout by default" in err
    err = _refused(capsys, "--from-run", str(unrecorded))
    assert "its spec sets record_rollouts: false; run the spec again without it" in err
    cancelled = make_run(tmp_path / "c", [], status={"state": "cancelled"})
    err = _refused(capsys, "--from-run", str(cancelled))
    assert (
        f"(state 'cancelled', 0 rollouts); continue it with agentdescent resume {cancelled.name}"
        in err
    )


def test_a_directory_missing_one_run_file_is_told_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path, _run_records())
    (run / "status.json").unlink()

    err = _refused(capsys, "--from-run", str(run))

    assert "not an agentdescent run directory: it has no status.json, which" in err


def test_a_run_file_that_is_no_regular_file_is_told_so_not_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A FIFO named status.json was told "it has no status.json", though ls shows one.
    run = make_run(tmp_path, _run_records())
    (run / "status.json").unlink()
    os.mkfifo(run / "status.json")

    err = _refused(capsys, "--from-run", str(run))

    assert "it has a status.json that is no regular file, which" in err


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "Expecting property name"),
        ("[1, 2]", "it holds [1, 2], not a JSON object"),
        (json.dumps({**_record_file("t", 1.0, 1), "reward": "high"}), "'reward' is 'high'"),
        (json.dumps({**_record_file("t", 1.0, 1), "task_id": None}), "'task_id' is None"),
        (json.dumps({**_record_file("t", 1.0, 1), "base_version": "2"}), "'base_version' is '2'"),
        (json.dumps({**_record_file("t", 1.0, 1), "base_version": '{"other": 2}'}),
         "gives no whole-number version of its artifact 'my-skill'"),
    ],
    ids=["not-json", "not-an-object", "reward", "task-id", "base-version", "version"],
)  # fmt: skip
def test_an_unreadable_record_is_named_with_what_a_record_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, reason: str
) -> None:
    run = make_run(tmp_path, _run_records())
    bad = run / "ledger" / "trajectories" / ("f" * 64 + ".json")
    bad.write_text(content)

    err = _refused(capsys, "--from-run", str(run))

    assert f"cannot read the run's rollout record '{bad}'" in err
    assert reason in err
    assert "task_id, purpose, reward and base_version" in err


def test_a_record_that_is_a_directory_is_named_by_its_path_not_a_file_descriptor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path, _run_records())
    bad = run / "ledger" / "trajectories" / ("f" * 64 + ".json")
    bad.mkdir()

    err = _refused(capsys, "--from-run", str(run))

    assert (
        f"cannot read the run's rollout record '{bad}': it is a directory, not a regular file; "
        f"expected"
    ) in err
    assert "Errno" not in err
    assert "move the file aside" in err


def test_what_the_runs_files_say_is_shown_escaped_in_the_make_up(tmp_path: Path) -> None:
    records = [*_run_records(), _record_file("held", 0.0, 1, purpose="ev\x1b[2Jal")]
    made = make_run(tmp_path, records, status={"state": "do\x1bne\u202e"})
    path = made.rename(made.with_name("run\x1b]0;title\x07"))
    run = read_run(path)

    text = format_make_up(run, run.workload())

    assert not {"\x1b", "\x07", "\u202e"} & set(text)
    said = " ".join(text.split())
    assert "Make-up of run run\\x1b]0;title\\x07 (do\\x1bne\\u202e): 12 rollout" in said
    assert "not used: 1 ev\\x1b[2Jal, 1 eval, 1 self_verify records" in said
    assert "\x1b" not in run.workload().summary


def test_an_unreadable_status_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path, _run_records())
    (run / "status.json").write_text("{torn")

    err = _refused(capsys, "--from-run", str(run))

    assert f"cannot read '{run / 'status.json'}'" in err
    assert "run the spec again" in err


def test_a_run_too_short_to_place_its_tasks_is_told_which_spec_fields_lengthen_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each task rolled out once: none can be placed, and a longer run may stop at patience.
    records = [_record_file(f"t{i}", 0.0, 1) for i in range(3)] + [_record_file("ok", 1.0, 1)]

    err = _refused(capsys, "--from-run", str(make_run(tmp_path, records)))

    assert "; 4 of its 4 tasks have fewer than 2 rollout records, and the engine records" in err
    assert '"evolve": {"rounds": ...}, and a "patience" as large' in err


def test_records_of_two_artifacts_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [*_run_records(), _record_file("t", 1.0, 1, artifact="other-skill")]

    err = _refused(capsys, "--from-run", str(make_run(tmp_path, records)))

    assert "its rollout records are of 2 artifacts ('my-skill', 'other-skill')" in err


def test_a_run_with_nothing_to_learn_is_refused_before_the_bench(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [_record_file("solved", 1.0, v) for v in (1, 2)] + [_record_file("once", 0.0, 1)]

    err = _refused(capsys, "--from-run", str(make_run(tmp_path, records)))

    assert "no task flipped from failing to passing, and none passed and failed" in err
    assert "(0 flipped, 0 mixed, 1 always-pass, 0 never-pass, 1 too few records)" in err
    with pytest.raises(BenchError, match="no sampler can buy anything"):
        read_run(make_run(tmp_path / "again", records)).workload()


def test_from_run_belongs_to_the_artifact_bench_and_from_log_to_the_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], example_log: Path
) -> None:
    run = make_run(tmp_path, _run_records())

    share = _refused(capsys, "share", "--from-run", str(run))
    artifact = _refused(capsys, "--from-run", str(run), "--from-log", str(example_log))

    assert "drop 'share', or give --from-log FILE" in share
    assert "--from-log is an option of the share measure" in artifact


def _ended_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()
    return ended.pid


def test_a_running_run_whose_process_has_ended_is_noted_with_the_resume_that_continues_it(
    tmp_path: Path,
) -> None:
    pid = _ended_pid()
    status = {"rollouts": 8, "state": "running", "pid": pid}
    run = read_run(make_run(tmp_path, _run_records(), status=status, rounds=_rounds(4)))

    assert run.notes == (
        f"status.json says running, but its process {pid} has ended (killed, or the machine "
        f"went away): its records are benched as they stand; agentdescent resume "
        f"{run.run_id} continues the run",
    )


@pytest.mark.parametrize("pid", ["alive", None, True, -1, 0, 2**40, "123"])
def test_a_running_run_is_noted_only_when_its_process_is_known_to_have_ended(
    tmp_path: Path, pid: object
) -> None:
    status = {"rollouts": 8, "state": "running", "pid": os.getpid() if pid == "alive" else pid}
    run = read_run(make_run(tmp_path, _run_records(), status=status, rounds=_rounds(4)))
    assert run.notes == ()
