"""``create(spec, state=PATH)``: statistics that survive a stop, a crash and a mismatch."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

import agentdescent_sampling._replay as replay_module
import agentdescent_sampling.durable as durable_module
from agentdescent_sampling import (
    DifficultyWeighted,
    DurableSampler,
    InvalidSamplerConfig,
    Registry,
    RoundRobin,
    StateError,
    TaskSampler,
    create,
    load_state,
    save_state,
)
from agentdescent_sampling.durable import REPLAY_LIMIT, TOLD, read_durable_state
from agentdescent_sampling.plugin import check_keys, check_score
from agentdescent_sampling.protocol import check_state, short_repr
from tests.support.holder import holding

BUILT_INS = ["round-robin", "difficulty-weighted", "informative-band", "fixable-first"]
SHARDS = [["a", "b", "c", "d"], ["e", "f", "g"]]


def outcome(task: str, trial: int) -> float:
    """A deterministic reward: each task passes on its own share of trials."""
    return 1.0 if (trial * (ord(task) % 5 + 1)) % 3 == 0 else 0.0


def durable(spec: str, path: Path) -> DurableSampler:
    """``create(spec, state=path)``, typed as what it is."""
    sampler = create(spec, state=path)
    assert isinstance(sampler, DurableSampler)
    return sampler


def drive(
    sampler: TaskSampler,
    rounds: range,
    trials: dict[str, int],
    *,
    told: bool = False,
    reflect: bool = True,
    repeats: bool = False,
    shards: list[list[str]] = SHARDS,
) -> list[str]:
    """Roll out one pick per shard per round, as evolve()'s sequential path does.

    With ``told``, each failure is followed by ``evidence()`` (unless not ``reflect``) and
    each round by ``end_round()``, as ``wire()`` wires them; with ``repeats`` too, every
    other note by ``repeated()``, as if its card proposed what the one before did.
    """
    picks = []
    for round_index in rounds:
        commits = 0
        for shard in shards:
            picked = sampler.pick(shard, round_index)
            trials[picked] = trials.get(picked, 0) + 1
            score = outcome(picked, trials[picked])
            sampler.record(picked, score)
            if told and score < 1.0:
                proposed = trials[picked] % 2 == 1  # a fix that passed its re-run, and landed
                if reflect:
                    sampler.evidence(picked, 1.0 if proposed else 0.0, proposed)  # type: ignore[attr-defined]
                if repeats and not proposed:
                    sampler.repeated(picked, trials[picked] % 4 == 2)  # type: ignore[attr-defined]
                commits += proposed
            picks.append(picked)
        if told:  # the engine fuses fixes: half as many commits as proposals
            sampler.end_round(commits // 2)  # type: ignore[attr-defined]
    return picks


@pytest.mark.parametrize("name", BUILT_INS)
def test_a_resumed_sampler_picks_exactly_as_if_it_had_never_stopped(
    tmp_path: Path, name: str
) -> None:
    state = tmp_path / "sampler.sqlite"
    uninterrupted = drive(create(name), range(12), {})

    trials: dict[str, int] = {}
    with durable(name, state) as first:
        before = drive(first, range(5), trials)
    # A new process: the engine numbers its rounds from 0 again.
    with durable(name, state) as second:
        after = drive(second, range(7), trials)

    assert before + after == uninterrupted


def test_what_fixable_first_was_told_between_rounds_survives_a_stop(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    uninterrupted = create("fixable-first")
    expected = drive(uninterrupted, range(12), {}, told=True)

    trials: dict[str, int] = {}
    with durable("fixable-first", state) as first:
        before = drive(first, range(5), trials, told=True)
    with durable("fixable-first", state) as second:
        after = drive(second, range(7), trials, told=True)
        assert second.state_dict() == uninterrupted.state_dict()

    assert before + after == expected
    # The told calls changed what was picked: without them the run picks otherwise.
    assert drive(create("fixable-first"), range(12), {}) != expected


def test_what_fixable_first_was_told_of_repeated_proposals_survives_a_stop(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    uninterrupted = create("fixable-first")
    expected = drive(uninterrupted, range(12), {}, told=True, repeats=True)
    assert uninterrupted.state_dict()["repeats"], "some task's proposals should repeat"

    trials: dict[str, int] = {}
    with durable("fixable-first", state) as first:
        before = drive(first, range(5), trials, told=True, repeats=True)
    with durable("fixable-first", state) as second:
        after = drive(second, range(7), trials, told=True, repeats=True)
        assert second.state_dict() == uninterrupted.state_dict()

    assert before + after == expected
    # The repeats changed what was picked: without them the run picks otherwise.
    assert drive(create("fixable-first"), range(12), {}, told=True) != expected


def test_a_sampler_told_of_round_ends_is_never_snapshotted_mid_round(tmp_path: Path) -> None:
    # 40 shards: 80 log entries a round, past the 64 that allow a snapshot, so one taken
    # mid-round would lose the round's failures, which fixable-first's state_dict() leaves out.
    wide = [[chr(0x4E00 + 2 * k), chr(0x4E01 + 2 * k)] for k in range(40)]  # one-letter ids
    state = tmp_path / "sampler.sqlite"
    uninterrupted, uninterrupted_trials = create("fixable-first"), {}
    rounds_only = {"told": True, "reflect": False, "shards": wide}  # no evidence(): counts only
    expected = drive(uninterrupted, range(3), uninterrupted_trials, **rounds_only)

    trials: dict[str, int] = {}
    with durable("fixable-first", state) as first:
        before = drive(first, range(3), trials, **rounds_only)
    with durable("fixable-first", state) as second:
        assert second.state_dict() == uninterrupted.state_dict()
        after = drive(second, range(3), trials, **rounds_only)

    expected += drive(uninterrupted, range(3, 6), uninterrupted_trials, **rounds_only)
    assert before + after == expected


def test_a_told_call_the_sampler_lacks_is_missing_on_the_durable_sampler_too(
    tmp_path: Path,
) -> None:
    with durable("difficulty-weighted", tmp_path / "sampler.sqlite") as sampler:
        for told in TOLD:
            assert not hasattr(sampler, told)


def test_a_told_call_with_arguments_that_are_not_json_tells_nothing(tmp_path: Path) -> None:
    with durable("fixable-first", tmp_path / "sampler.sqlite") as sampler:
        sampler.record(sampler.pick(["a"], 0), 0.0)
        before = sampler.state_dict()

        with pytest.raises(StateError, match="its arguments are not JSON"):
            sampler.evidence("a", 1.0, object())

        assert sampler.state_dict() == before


def _rows(state: Path, table: str) -> list[tuple[Any, ...]]:
    """The rows of a table of a state file, read beside its holder (SQLite itself keeps
    the holder's locks, as this package's own second descriptor would not)."""
    db = sqlite3.connect(f"{state.as_uri()}?mode=ro", uri=True)
    try:
        return db.execute(f"SELECT * FROM {table}").fetchall()
    finally:
        db.close()


def test_a_new_state_is_made_whole_when_built_and_left_nowhere_if_never_written(
    tmp_path: Path,
) -> None:
    state = tmp_path / "runs" / "csv-total" / "sampler.sqlite"

    with durable("difficulty-weighted", state) as sampler:
        # Claimed at once, in one transaction: its tables, the sampler as built, its holder.
        assert [row[:3] for row in _rows(state, "snapshot")] == [(1, 0, 0)]
        assert [row[:2] for row in _rows(state, "holder")] == [(1, os.getpid())]
        sampler.pick(["a"], 0)
    # Nothing recorded: building a sampler (agentdescent plan) leaves nothing behind.
    assert list(tmp_path.iterdir()) == []

    with durable("difficulty-weighted", state) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
    assert read_durable_state(state)["records"] == 1


def test_a_json_export_imports_into_a_durable_state_and_stays(tmp_path: Path) -> None:
    export, state = tmp_path / "export.json", tmp_path / "sampler.sqlite"
    plain = create("difficulty-weighted")
    plain.record(plain.pick(["a", "b"], 0), 1.0)
    save_state(plain, export)  # type: ignore[arg-type]

    with durable("difficulty-weighted", state) as sampler:
        load_state(sampler, export)

    with durable("difficulty-weighted", state) as reopened:
        assert reopened.state_dict() == plain.state_dict()


def test_a_durable_state_exports_to_the_one_document_shape(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    with durable("informative-band", tmp_path / "sampler.sqlite") as sampler:
        sampler.record(sampler.pick(["a", "b"], 3), 0.0)
        save_state(sampler, export)
    plain = create("informative-band")

    load_state(plain, export)  # type: ignore[arg-type]

    document = json.loads(export.read_text(encoding="utf-8"))
    assert document == {
        "format": "agentdescent-sampling/state",
        "sampler": "informative-band",
        "records": 1,
        "rounds": 4,
        "state": plain.state_dict(),
    }
    assert oct(export.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("target", ["sampler.sqlite", "link.sqlite", "sampler.sqlite-wal"])
def test_an_export_never_replaces_a_state_database_nor_a_file_beside_it(
    tmp_path: Path, target: str
) -> None:
    state = tmp_path / "sampler.sqlite"
    (tmp_path / "link.sqlite").symlink_to(state)
    with durable("fixable-first", state) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 0.0)
        before = _files(tmp_path)

        with pytest.raises(StateError, match=r"SQLite .* Give another path for the export"):
            save_state(sampler, tmp_path / target)

        assert _files(tmp_path) == before
        sampler.record(sampler.pick(["a", "b"], 1), 1.0)  # the run holding it goes on
    assert read_durable_state(state)["records"] == 2


def test_a_state_database_given_to_load_state_is_told_apart_from_an_export(
    tmp_path: Path,
) -> None:
    state = _saved(tmp_path, "fixable-first")
    plain = create("fixable-first")
    before = plain.state_dict()

    with pytest.raises(StateError, match=r"an SQLite database .* not a save_state export") as told:
        load_state(plain, state)  # type: ignore[arg-type]

    assert f"create(spec, state={str(state)!r})" in str(told.value)
    assert f"state export {state} -o OUT.json" in str(told.value)
    assert plain.state_dict() == before


def _saved(tmp_path: Path, spec: str) -> Path:
    state = tmp_path / "sampler.sqlite"
    with durable(spec, state) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    return state


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.iterdir()}


@pytest.mark.parametrize(
    ("saved_by", "loaded_by", "message"),
    [
        (
            "informative-band",
            "difficulty-weighted",
            "holds the state of sampler 'informative-band', not 'difficulty-weighted'",
        ),
        ("difficulty-weighted:c=0.2", "difficulty-weighted:c=0.1", "the state was saved with"),
        ("informative-band:window=5", "informative-band:window=7", "the state was saved with"),
    ],
    ids=["another-sampler", "other-c", "other-window"],
)
def test_a_mismatched_state_file_raises_and_is_left_untouched(
    tmp_path: Path, saved_by: str, loaded_by: str, message: str
) -> None:
    state = _saved(tmp_path, saved_by)
    before = _files(tmp_path)

    with pytest.raises(StateError, match=message) as raised:
        create(loaded_by, state=state)

    assert "the file was left as it is" in str(raised.value)
    assert _files(tmp_path) == before


def _foreign_database(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    db.close()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda path: path.write_text("notes\n", encoding="utf-8"), "not a sampler state"),
        (
            lambda path: save_state(create("round-robin"), path),  # type: ignore[arg-type]
            "a JSON file .* load_state",
        ),
        (_foreign_database, "an SQLite database of another program"),
        (lambda path: path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 20), "not a sampler"),
    ],
    ids=["text", "json-export", "another-sqlite-database", "truncated"],
)
def test_a_file_that_is_not_sampler_state_is_refused_and_never_written(
    tmp_path: Path, make: Any, message: str
) -> None:
    state = tmp_path / "sampler.sqlite"
    make(state)
    before = _files(tmp_path)

    with pytest.raises(StateError, match=message):
        create("round-robin", state=state)

    assert _files(tmp_path) == before


def test_a_symlink_at_the_state_path_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me", encoding="utf-8")
    link = tmp_path / "sampler.sqlite"
    link.symlink_to(target)

    with pytest.raises(StateError, match="is a symbolic link"):
        create("round-robin", state=link)

    assert target.read_text(encoding="utf-8") == "keep me"


def test_a_symlink_swapped_in_later_is_never_written_through(tmp_path: Path) -> None:
    state, target = tmp_path / "sampler.sqlite", tmp_path / "precious.txt"
    target.write_text("keep me", encoding="utf-8")
    sampler = durable("difficulty-weighted", state)
    sampler.record(sampler.pick(["a"], 0), 1.0)
    os.rename(state, tmp_path / "moved.sqlite")
    state.symlink_to(target)

    with (
        pytest.warns(RuntimeWarning, match="was moved, deleted or replaced"),
        pytest.raises(StateError, match="was moved, deleted or replaced"),
    ):
        sampler.record(sampler.pick(["a"], 1), 1.0)
    with pytest.warns(RuntimeWarning, match=r"1 record\(s\) .* are lost: .* was moved, del"):
        sampler.close()

    assert target.read_text(encoding="utf-8") == "keep me"


@contextlib.contextmanager
def _moved_aside(tmp_path: Path) -> Iterator[tuple[DurableSampler, Path, Path]]:
    """A durable sampler that recorded once, then had its file moved aside:
    ``(sampler, state path, where the file is)``; closed on leaving."""
    state, aside = tmp_path / "sampler.sqlite", tmp_path / "aside.sqlite"
    with durable("difficulty-weighted", state) as sampler:
        sampler.record("a", 0.0)
        os.rename(state, aside)
        yield sampler, state, aside


def test_a_record_that_could_not_be_written_is_kept_and_written_with_the_next(
    tmp_path: Path,
) -> None:
    with _moved_aside(tmp_path) as (sampler, state, aside):
        with (
            pytest.warns(RuntimeWarning, match="the path now names nothing"),
            pytest.raises(StateError, match="the path now names nothing"),
        ):
            sampler.record("a", 1.0)
        assert sampler.stats() == {"a": (1, 2)}
        os.rename(aside, state)
        sampler.record("b", 0.0)

    assert read_durable_state(state)["records"] == 3


def test_a_state_that_cannot_be_written_is_warned_of_at_once_and_again_after_it_recovers(
    tmp_path: Path,
) -> None:
    # evolve() takes a sampler's error for a worker's and goes on: the user heard of a state
    # file moved away only when the run closed it, too late to put it back. Each outage is
    # told once, under Python's default filters (which show a text once per line), whether
    # a record or the picks wrote what it held.
    state, aside = tmp_path / "sampler.sqlite", tmp_path / "aside.sqlite"
    with (
        durable("difficulty-weighted", state) as sampler,
        warnings.catch_warnings(record=True) as said,
    ):
        warnings.simplefilter("default")
        sampler.record("a", 0.0)
        for outage in range(3):
            os.rename(state, aside)
            for _ in range(3):
                with pytest.raises(StateError):
                    sampler.record("a", 1.0)
            assert len(said) == outage + 1  # one per outage, not one per record
            os.rename(aside, state)
            if outage == 0:
                sampler.record("b", 0.0)  # a record writes what was held
            else:  # the picks do, once they would cost a replay a million task ids
                for round_index in range(2_100):
                    sampler.pick(["a", "b"], round_index)
    assert [w.category for w in said] == [RuntimeWarning] * 3
    assert {w.filename for w in said} == {__file__}  # the caller of record()
    assert all(
        "nothing is written there until the file is back at that path: what is recorded "
        "meanwhile is kept in memory, written with the next write after the file is back, "
        "or lost if the sampler is closed first" in str(w.message)
        for w in said
    )
    assert read_durable_state(state)["records"] == 11


def test_a_state_that_cannot_be_written_raises_state_error_where_warnings_are_errors(
    tmp_path: Path,
) -> None:
    with _moved_aside(tmp_path) as (sampler, state, aside):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(StateError, match="was moved, deleted or replaced"):
                sampler.record("a", 1.0)
        os.rename(aside, state)


@pytest.fixture
def no_umask() -> Iterator[None]:
    """Run with umask 0, so only the package decides the modes of what it creates."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("no_umask")
def test_the_state_and_its_wal_and_shm_files_are_private_from_the_first_byte(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    with durable("difficulty-weighted", state) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
        modes = {path.name: oct(path.stat().st_mode & 0o777) for path in tmp_path.iterdir()}

    assert modes == {name: "0o600" for name in ("sampler.sqlite", *_sidecars("sampler.sqlite"))}


def _sidecars(name: str) -> list[str]:
    return [f"{name}-wal", f"{name}-shm"]


@pytest.mark.parametrize(
    "name",
    [":memory:", "file:run.sqlite", "file:run.sqlite?mode=memory", "a#b%20c?.sqlite",
     "link/../beside-link.sqlite", "../../../../../../../../../../{tmp}/above-root.sqlite"],
    ids=["memory", "file-uri", "memory-uri", "uri-marks", "dot-dot-after-a-symlink",
         "dot-dot-above-root"],
)  # fmt: skip
def test_a_state_path_sqlite_could_read_otherwise_keeps_the_records_in_the_file_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    (tmp_path / "real" / "deeper").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real" / "deeper")
    monkeypatch.chdir(tmp_path)
    path = name.format(tmp=str(tmp_path).lstrip("/"))
    expected = Path(os.path.realpath(path))  # as the system resolves it
    with durable("difficulty-weighted", Path(path)) as sampler:
        for round_index in range(5):
            sampler.record(sampler.pick(["a", "b"], round_index), 1.0)

    assert read_durable_state(expected)["records"] == 5
    assert sorted(each.name for each in expected.parent.iterdir() if each.is_file()) == [
        expected.name
    ]


def test_a_relative_state_path_keeps_its_file_after_the_process_changes_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    with durable("round-robin", Path("run.sqlite")) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)
        monkeypatch.chdir(tmp_path / "elsewhere")  # as a tool the run calls may
        sampler.record(sampler.pick(["a", "b"], 1), 1.0)

    assert read_durable_state(tmp_path / "run.sqlite")["records"] == 2
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_directory_as_the_state_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidSamplerConfig, match="is a directory"):
        create("round-robin", state=tmp_path)


def test_a_plugin_sampler_without_state_methods_is_refused_with_a_clear_error(
    tmp_path: Path,
) -> None:
    # hardest-first is the plugin in plugins/agentdescent-sampling-hardest, installed by the
    # README's test command.
    with pytest.raises(InvalidSamplerConfig) as raised:
        create("hardest-first", state=tmp_path / "sampler.sqlite")

    assert str(raised.value).startswith(
        "sampler 'hardest-first' (Hardest) cannot keep its state in "
    )
    assert "no state_dict() and load_state_dict() methods" in str(raised.value)
    assert not (tmp_path / "sampler.sqlite").exists()


class LastScore:
    """A plugin-style sampler with state methods and no checks of its own."""

    name = "last-score"

    def __init__(self) -> None:
        self.seen: dict[str, float] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return min(check_keys(keys), key=lambda key: self.seen.get(key, 0.0))

    def record(self, task_id: str, score: float) -> None:
        self.seen[task_id] = check_score(task_id, score)

    def state_dict(self) -> dict[str, Any]:
        return {"seen": dict(self.seen)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.seen = dict(state["seen"])


class Checked(LastScore):
    """The same with ``check_state``, as the built-ins do."""

    name = "checked"

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name, "version": 1, "seen": dict(self.seen)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.seen = dict(check_state(state, self.name, 1)["seen"])


class OtherShape(LastScore):
    """Another version of ``last-score``, whose state has another shape."""

    def state_dict(self) -> dict[str, Any]:
        return {"scores": dict(self.seen)}


def test_any_sampler_with_state_methods_keeps_its_state(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    with DurableSampler(LastScore(), state) as first:
        first.record("a", 1.0)
        first.record("b", 0.5)

    with DurableSampler(LastScore(), state) as resumed:
        assert resumed.wrapped.seen == {"a": 1.0, "b": 0.5}  # type: ignore[attr-defined]
        assert resumed.pick(["a", "b", "c"], 0) == "c"


def test_another_plugin_samplers_file_is_refused_even_without_its_own_checks(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    with DurableSampler(Checked(), state) as checked:
        checked.record("a", 1.0)
    before = _files(tmp_path)

    with pytest.raises(StateError, match="holds the state of sampler 'checked', not 'last-score'"):
        DurableSampler(LastScore(), state)

    assert _files(tmp_path) == before


def test_a_plugin_samplers_own_error_on_a_foreign_state_is_a_state_error(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    with DurableSampler(OtherShape(), state) as other:
        other.record("a", 1.0)
    before = _files(tmp_path)

    with pytest.raises(
        StateError, match="sampler 'last-score' could not load this state: KeyError"
    ):
        DurableSampler(LastScore(), state)

    assert _files(tmp_path) == before


class Spread:
    """A plugin-style sampler whose ``state_dict()`` stops being plain JSON after ten records:
    the spread of its scores as a NaN, as a careless variance would give."""

    name = "spread"

    def __init__(self) -> None:
        self.scores: list[float] = []
        self.snapshots = 0  # state_dict() calls

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        keys = check_keys(keys)
        return keys[len(self.scores) % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        self.scores.append(check_score(task_id, score))

    def state_dict(self) -> dict[str, Any]:
        self.snapshots += 1
        return {"scores": list(self.scores), "spread": self.spread()}

    def spread(self) -> Any:
        return float("nan") if len(self.scores) >= 10 else 0.0

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.scores = list(state["scores"])


class SeenSet(Spread):
    """The same, whose ``state_dict()`` holds a set after ten records."""

    name = "seen-set"

    def spread(self) -> Any:
        return set(self.scores) if len(self.scores) >= 10 else 0.0


class SetFromTheStart(Spread):
    """The same, whose ``state_dict()`` holds a set from the start."""

    name = "set-from-the-start"

    def spread(self) -> Any:
        return set()


class RaisesAfterTen(Spread):
    """The same, whose ``state_dict()`` raises after ten records, as a plugin's bug would."""

    name = "raises-after-ten"

    def spread(self) -> Any:
        if len(self.scores) >= 10:
            raise RuntimeError("the spread is out of sync")
        return 0.0


class RaisesFromTheStart(Spread):
    """The same, whose ``state_dict()`` raises from the start."""

    name = "raises-from-the-start"

    def spread(self) -> Any:
        raise KeyError("spread")


#: The warning of a snapshot that failed, after a record was committed or a log replayed.
LOST_NOTHING = "Nothing recorded is lost"
NOT_SNAPSHOTTED = f"{LOST_NOTHING}: the record was saved"


def _run(registry: Registry, name: str, state: Path, records: int) -> DurableSampler:
    sampler = registry.create(name, state=state)
    for step in range(records):
        sampler.record(sampler.pick(["a", "b", "c"], step), step % 2)
    return sampler


@pytest.mark.parametrize("kind", [Spread, SeenSet], ids=["a-nan", "a-set"])
def test_a_state_that_stops_being_json_mid_run_never_fails_a_record_nor_loses_one(
    tmp_path: Path, kind: type[Spread]
) -> None:
    registry, state = Registry(), tmp_path / "sampler.sqlite"
    registry.register(kind)
    # 200 records, 400 log entries: snapshots fall due from the 64th entry on, and fail.
    with pytest.warns(RuntimeWarning, match=f"sampler '{kind.name}'.*{NOT_SNAPSHOTTED}"):
        first = _run(registry, kind.name, state, 200)
    first.close()
    with pytest.warns(RuntimeWarning, match=LOST_NOTHING):
        resumed = _run(registry, kind.name, state, 100)
    with resumed:
        assert resumed.records == 300
    with pytest.warns(RuntimeWarning, match=LOST_NOTHING):
        reopened = registry.create(kind.name, state=state)
    with reopened:
        assert reopened.records == 300
        assert len(reopened.wrapped.scores) == 300  # type: ignore[attr-defined]


def test_a_state_dict_that_raises_mid_run_fails_no_record_and_warns_that_the_record_was_saved(
    tmp_path: Path,
) -> None:
    registry, state = Registry(), tmp_path / "sampler.sqlite"
    registry.register(RaisesAfterTen)
    said = (
        rf"cannot keep the state of sampler 'raises-after-ten' in '{re.escape(str(state))}': its "
        rf"state_dict\(\) raised RuntimeError: the spread is out of sync\. {NOT_SNAPSHOTTED}"
    )
    # 200 records, 400 log entries: snapshots fall due from the 64th entry on, and raise.
    with pytest.warns(RuntimeWarning, match=said):
        sampler = _run(registry, "raises-after-ten", state, 200)
    with sampler:  # still usable: it picks and records, and its file takes them
        sampler.record(sampler.pick(["a", "b", "c"], 200), 1.0)
        assert sampler.records == 201

    replayed = r"sampler 'raises-after-ten'.*its log of [0-9,]+ entries was replayed"
    with pytest.warns(RuntimeWarning, match=replayed):
        reopened = registry.create("raises-after-ten", state=state)
    with reopened:
        assert reopened.records == 201
        assert len(reopened.wrapped.scores) == 201  # type: ignore[attr-defined]
        reopened.record(reopened.pick(["a", "b", "c"], 0), 0.0)
    with pytest.warns(RuntimeWarning, match=replayed):
        again = registry.create("raises-after-ten", state=state)
    with again:
        assert again.records == 202


def test_picks_never_recorded_whose_state_cannot_be_snapshotted_are_kept_and_tried_by_doublings(
    tmp_path: Path,
) -> None:
    registry, state = Registry(), tmp_path / "sampler.sqlite"
    registry.register(Spread)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the records' failed snapshots
        sampler = _run(registry, "spread", state, 20)
    with sampler, warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        for step in range(20, 3_020):  # this opening wrote: the picks are written as they come
            sampler.pick(["a", "b", "c"], step)
    # A snapshot after them was tried, and warned of, once the log doubled, not at each pick.
    assert 1 <= len(said) <= 3, [str(warning.message) for warning in said]
    assert all("Nothing recorded is lost: the picks were saved" in str(w.message) for w in said)

    with pytest.warns(RuntimeWarning, match=f"{LOST_NOTHING}: its log of"):
        reopened = registry.create("spread", state=state)
    before = state.read_bytes()
    tried = reopened.wrapped.snapshots  # type: ignore[attr-defined]
    with reopened, warnings.catch_warnings():
        warnings.simplefilter("error")  # folding an opening's picks in memory never warns
        assert (reopened.records, reopened.rounds) == (20, 3_020)
        for step in range(3_020, 8_020):  # this opening writes nothing: they fold in memory
            reopened.pick(["a", "b", "c"], step)
        # Tried at some 2,000 picks and again once they doubled: twice, not at each pick.
        assert reopened.wrapped.snapshots - tried == 2  # type: ignore[attr-defined]
    assert state.read_bytes() == before


def test_picks_never_recorded_past_an_eighth_of_the_limit_whose_state_cannot_fold_are_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Neither written (the log would near the replay limit) nor folded (state_dict() is not
    # JSON), they piled up in memory, and the next record wrote them all past the limit.
    monkeypatch.setattr(durable_module, "REPLAY_LIMIT", 1 << 21)
    monkeypatch.setattr(durable_module, "_FLUSH_COST", 1 << 14)
    registry, state = Registry(), tmp_path / "sampler.sqlite"
    registry.register(Spread)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        sampler = _run(registry, "spread", state, 700)  # past an eighth of the limit
        for step in range(20_000):
            sampler.pick(["a", "b", "c"], step)
        held = len(sampler._queue.entries)
        sampler.record("a", 1.0)
        sampler.close()
    assert held < 100, held
    assert any("Nothing recorded is lost" in str(w.message) for w in said)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # its log is replayed, not folded
        with registry.create("spread", state=state) as reopened:
            # Every record; the picks no record followed were let go, as at a close.
            assert (reopened.records, reopened.rounds) == (701, 700)


def test_a_state_file_whose_log_cannot_be_snapshotted_reopens_with_every_record(
    tmp_path: Path,
) -> None:
    registry, state = Registry(), tmp_path / "sampler.sqlite"
    registry.register(Spread)
    # 20 records, 40 log entries: too few for a snapshot, so the NaN is met on reopening,
    # when the replayed log would become the snapshot.
    with _run(registry, "spread", state, 20):
        pass
    for reopening in range(3):
        with pytest.warns(RuntimeWarning, match=f"{LOST_NOTHING}: its log of"):
            reopened = registry.create("spread", state=state)
        with reopened:
            assert reopened.records == 20 + reopening
            assert len(reopened.wrapped.scores) == 20 + reopening  # type: ignore[attr-defined]
            reopened.record("a", 1.0)


def test_a_snapshot_that_keeps_failing_is_tried_again_only_as_the_log_doubles(
    tmp_path: Path,
) -> None:
    registry = Registry()
    registry.register(Spread)
    # 1,000 records, 2,000 entries: tried at 64, 128, 256, 512 and 1,024 entries (and once at
    # creation), not at each of the ~970 records after the 32nd.
    with (
        pytest.warns(RuntimeWarning, match=NOT_SNAPSHOTTED),
        _run(registry, "spread", tmp_path / "sampler.sqlite", 1000) as sampler,
    ):
        assert sampler.wrapped.snapshots <= 8  # type: ignore[attr-defined]


def test_a_state_that_is_not_json_at_creation_is_refused_saying_what_json_is(
    tmp_path: Path,
) -> None:
    registry, state = Registry(), tmp_path / "sampler.sqlite"
    registry.register(SetFromTheStart)

    with pytest.raises(StateError) as raised:
        registry.create("set-from-the-start", state=state)

    message = str(raised.value)
    assert "sampler 'set-from-the-start'" in message
    assert str(state) in message
    # Where the set is, beside Python's words (which named its type alone).
    assert "state['spread'] is a set (Object of type set is not JSON serializable)" in message
    assert (
        "state_dict() must return plain JSON data (dicts, lists, str, numbers, no NaN or infinity)"
        in message
    )
    assert not state.exists()


def test_a_state_dict_that_raises_at_creation_is_refused_naming_the_sampler_and_leaves_no_file(
    tmp_path: Path,
) -> None:
    registry, state = Registry(), tmp_path / "sampler.sqlite"
    registry.register(RaisesFromTheStart)

    with pytest.raises(StateError) as raised:
        registry.create("raises-from-the-start", state=state)

    assert str(raised.value) == (
        f"cannot keep the state of sampler 'raises-from-the-start' in {str(state)!r}: its "
        f"state_dict() raised KeyError: 'spread'"
    )
    assert isinstance(raised.value.__cause__, KeyError)
    assert list(tmp_path.iterdir()) == []


class _SignalledAt:
    """A state's connection that has a real signal arrive right after ``sql``."""

    def __init__(self, connection: sqlite3.Connection, sql: str, number: int) -> None:
        self.connection, self.sql, self.number = connection, sql, number

    def execute(self, sql: str, *args: Any) -> Any:
        done = self.connection.execute(sql, *args)
        if sql == self.sql:
            self.sql = ""  # once
            os.kill(os.getpid(), self.number)
        return done

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


def _own_interrupt(number: int, frame: object) -> None:
    raise KeyboardInterrupt  # as asyncio's handler does on a second Ctrl-C


def _exit_on_term(number: int, frame: object) -> None:
    sys.exit(143)  # the graceful stop of a program run in a container


@pytest.mark.parametrize("sql", ["BEGIN IMMEDIATE", "COMMIT"])
@pytest.mark.parametrize(
    ("number", "handler", "raised"),
    [(signal.SIGINT, signal.default_int_handler, KeyboardInterrupt),
     (signal.SIGINT, _own_interrupt, KeyboardInterrupt),
     (signal.SIGTERM, _exit_on_term, SystemExit)],
    ids=["ctrl-c", "a-programs-own-sigint-handler", "sigterm-calling-sys-exit"],
)  # fmt: skip
def test_a_signal_while_a_record_commits_keeps_it_once_and_the_next_records_are_kept(
    tmp_path: Path, sql: str, number: int, handler: Any, raised: type[BaseException]
) -> None:
    previous = signal.signal(number, handler)
    state = tmp_path / "sampler.sqlite"
    keys = ["a", "b", "c"]
    try:
        with durable("round-robin", state) as sampler:
            for round_index in range(10):
                picked = sampler.pick(keys, round_index)
                if round_index == 5:
                    connection = sampler._db.connection  # type: ignore[attr-defined]
                    signalled = _SignalledAt(connection, sql, number)
                    sampler._db.connection = signalled  # type: ignore[attr-defined]
                    with pytest.raises(raised):
                        sampler.record(picked, 1.0)
                    sampler._db.connection = connection  # type: ignore[attr-defined]
                else:
                    sampler.record(picked, 1.0)
    finally:
        signal.signal(number, previous)

    read = read_durable_state(state)
    assert read["records"] == 10  # the interrupted record is in the file, once
    assert read["rounds"] == 10


def test_concurrent_records_all_reach_the_file(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    sampler = durable("difficulty-weighted", state)
    keys = [f"task-{i}" for i in range(10)]

    def worker() -> None:
        for step in range(25):
            sampler.record(sampler.pick(keys, step), 1.0 if step % 2 else 0.0)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sampler.close()

    saved = read_durable_state(state)
    assert saved["records"] == 200
    assert sum(trials for _, trials in saved["state"]["stats"].values()) == 200


def test_the_log_is_folded_into_a_snapshot_as_it_grows(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    with durable("round-robin", state) as sampler:
        for step in range(500):
            sampler.record(sampler.pick(["a", "b"], step), 1.0)

    saved = read_durable_state(state)
    assert saved["records"] == 500
    assert saved["rounds"] == 500
    assert saved["log"] <= 2 * 64


def test_a_second_sampler_on_a_held_state_in_this_process_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    held = f"already open in this process \\(pid {os.getpid()}"
    with durable("difficulty-weighted", state) as first:
        first.record("a", 1.0)
        with pytest.raises(StateError, match=held):
            create("difficulty-weighted", state=state)

    durable("difficulty-weighted", state).close()  # free again once closed


def test_a_second_process_is_refused_with_the_file_and_the_holders_pid(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    with holding("difficulty-weighted", state, "a") as holder:
        with pytest.raises(StateError) as raised:
            create("difficulty-weighted", state=state)
        shown = read_durable_state(state)

    message = str(raised.value)
    assert repr(str(state)) in message
    assert f"in use by process {holder.pid} on " in message
    assert shown["held_by"].startswith(f"process {holder.pid} on ")
    with durable("difficulty-weighted", state) as after:  # free once the holder has exited
        assert after.records == 1


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="names the holder from /proc/locks")
def test_a_holder_that_has_recorded_nothing_yet_is_named_by_its_pid(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    with durable("difficulty-weighted", state) as before:  # an existing state, not in use
        before.record(before.pick(["a"], 0), 1.0)
    # The holder opens it and records nothing.
    with holding("difficulty-weighted", state) as holder, pytest.raises(StateError) as raised:
        create("difficulty-weighted", state=state)

    assert f"in use by process {holder.pid} on " in str(raised.value)
    assert "(no record yet)" in str(raised.value)


#: Records forever, printing how many records have returned; the test kills it.
_CRASHING_RUN = textwrap.dedent(
    """
    import sys
    from agentdescent_sampling import create
    sys.path.insert(0, sys.argv[3])
    from test_durable import SHARDS, outcome

    sampler = create(sys.argv[1], state=sys.argv[2])
    trials = {}
    round_index = 0
    while True:
        for shard in SHARDS:
            picked = sampler.pick(shard, round_index)
            trials[picked] = trials.get(picked, 0) + 1
            sampler.record(picked, outcome(picked, trials[picked]))
            print(sampler.records, flush=True)
        round_index += 1
    """
)


def _killed_run(name: str, state: Path, records: int) -> int:
    """Run :data:`_CRASHING_RUN` on ``state`` until ``records`` records returned, then
    SIGKILL it; return how many had returned."""
    run = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_RUN, name, str(state), str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert run.stdout is not None
    acknowledged = 0
    while acknowledged < records:
        acknowledged = int(run.stdout.readline())
    run.kill()
    run.wait()
    return acknowledged


@pytest.mark.parametrize("name", BUILT_INS)
def test_a_process_killed_mid_run_loses_no_record_that_returned(tmp_path: Path, name: str) -> None:
    state = tmp_path / "sampler.sqlite"
    # Past the first snapshots of the log; SIGKILL, possibly mid-commit or mid-snapshot.
    acknowledged = _killed_run(name, state, 150)

    with durable(name, state) as resumed:
        assert resumed.records >= acknowledged
        # The file is exactly the state after its first `records` records, replayed here.
        replay = create(name)
        trials: dict[str, int] = {}
        records = 0
        round_index = 0
        while records < resumed.records:
            for shard in SHARDS:
                if records == resumed.records:
                    break
                picked = replay.pick(shard, round_index)
                trials[picked] = trials.get(picked, 0) + 1
                replay.record(picked, outcome(picked, trials[picked]))
                records += 1
            round_index += 1
        assert resumed.state_dict() == replay.state_dict()


def test_a_state_moved_without_the_wal_a_killed_run_left_is_refused_not_made_afresh(
    tmp_path: Path,
) -> None:
    state, moved = tmp_path / "sampler.sqlite", tmp_path / "elsewhere.sqlite"
    acknowledged = _killed_run("round-robin", state, 20)
    wal = Path(f"{state}-wal")
    assert wal.stat().st_size  # the killed run's latest records are still in its log
    state.rename(moved)  # "the file", as a user moves it
    logged = wal.read_bytes()

    for opening in (lambda: create("round-robin", state=state), lambda: read_durable_state(state)):
        with pytest.raises(StateError) as refused:
            opening()
        assert str(refused.value).startswith(
            f"the sampler state {str(state)!r} is missing, but {str(wal)!r} beside it holds "
            f"writes SQLite had not yet folded into it"
        )
        assert f"Put the state file back at {str(state)!r}" in str(refused.value)
    assert not state.exists()  # nothing made
    assert wal.read_bytes() == logged  # nothing lost

    for sidecar in ("-wal", "-shm"):
        Path(f"{state}{sidecar}").rename(f"{moved}{sidecar}")
    with durable("round-robin", moved) as reopened:
        assert reopened.records >= acknowledged


def test_a_missing_state_beside_a_left_journal_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    Path(f"{state}-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7")

    with pytest.raises(StateError, match=r"is missing, but .*-journal' beside it holds"):
        create("round-robin", state=state)
    assert not state.exists()


def test_an_empty_wal_left_beside_a_missing_state_is_no_reason_to_refuse(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    Path(f"{state}-wal").touch()

    with durable("round-robin", state) as made:
        made.record(made.pick(["a"], 0), 1.0)
    assert read_durable_state(state)["records"] == 1


#: Builds ``argv[1]`` on the new path ``argv[2]``, forks, and in the child does ``argv[3]``
#: with the parent's sampler (``record``, or ``exit``: nothing), printing what it was told,
#: then exits as any process does (its finalizers run); the parent then records 5 times.
_FORKED = textwrap.dedent(
    """
    import os, sys
    from agentdescent_sampling import StateError, create

    sampler = create(sys.argv[1], state=sys.argv[2])
    child = os.fork()
    if child == 0:
        if sys.argv[3] == "record":
            try:
                sampler.record(sampler.pick(["a", "b"], 0), 0.0)
            except StateError as error:
                print("refused:", error, flush=True)
        sys.exit(0)
    os.waitpid(child, 0)
    for step in range(5):
        sampler.record(sampler.pick(["a", "b"], step), 1.0)
    sampler.close()
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("child", ["record", "exit"])
def test_a_forked_child_neither_writes_nor_removes_the_state_its_parent_holds(
    tmp_path: Path, child: str
) -> None:
    state = tmp_path / "sampler.sqlite"
    done = subprocess.run(
        [sys.executable, "-c", _FORKED, "round-robin", str(state), child],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    if child == "record":
        assert done.stdout.startswith(
            f"refused: pick(): the sampler state {str(state)!r} was opened by process "
        )
        assert "is a fork of it, which cannot keep records there" in done.stdout
    assert read_durable_state(state)["records"] == 5  # the parent's, every one


def test_a_count_past_what_a_state_file_holds_is_never_snapshotted_and_the_file_still_opens(
    tmp_path: Path,
) -> None:
    # Loaded at the last count a state file holds, the sampler counts past it: a snapshot of
    # that would be refused by the file's readers, and every record after it unreachable.
    state = tmp_path / "sampler.sqlite"
    with durable("difficulty-weighted", state) as sampler:
        near = sampler.state_dict()
        near["picks"] = 2**53 - 1
        sampler.load_state_dict(near)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for step in range(200):  # well past the first fold of the log
                sampler.record(sampler.pick(["a", "b"], step), 1.0)
    assert "['picks'] is the whole number 9007199254" in str(caught[0].message)

    with pytest.warns(RuntimeWarning, match="Nothing recorded is lost"):
        reopened = durable("difficulty-weighted", state)
    with reopened:
        assert reopened.records == 200
        assert reopened.state_dict()["picks"] == 2**53 - 1 + 200


@pytest.mark.parametrize("size", [248, 255])
def test_a_state_name_without_room_for_sqlites_journal_beside_it_is_refused_before_anything_is_made(
    tmp_path: Path, size: int
) -> None:
    state = tmp_path / ("s" * (size - len(".sqlite")) + ".sqlite")

    with pytest.raises(StateError) as refused:
        create("round-robin", state=state)

    assert str(refused.value).endswith(
        f"its name is {size} bytes, and SQLite keeps a file ('-journal') beside it named with up "
        f"to 8 bytes more, over the 255 file systems take; give a name of at most 247 bytes"
    )
    assert list(tmp_path.iterdir()) == []
    with durable("round-robin", state.with_name("s" * 240 + ".sqlite")) as fits:  # 247 bytes
        fits.record(fits.pick(["a"], 0), 1.0)


def test_a_state_whose_damaged_schema_is_not_utf8_is_refused_as_damaged_and_left_as_it_is(
    tmp_path: Path,
) -> None:
    # SQLite's message then quotes the bytes, and Python's sqlite3 fails to decode it.
    state = tmp_path / "sampler.sqlite"
    with durable("round-robin", state) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
    with contextlib.closing(sqlite3.connect(state)) as db:
        db.execute("PRAGMA writable_schema=ON")
        damaged = "CAST(X'43524541544520EA205441424C45206576656E742028736571290A' AS TEXT)"
        db.execute(f"UPDATE sqlite_master SET sql = {damaged} WHERE name = 'event'")
        db.commit()
    before = state.read_bytes()

    for opening in (lambda: create("round-robin", state=state), lambda: read_durable_state(state)):
        with pytest.raises(StateError, match=r"is not a readable sampler state: .*it is damaged"):
            opening()
    assert state.read_bytes() == before


@pytest.mark.parametrize("sidecar", ["-wal", "-shm"])
def test_a_symlink_planted_beside_an_existing_state_is_named_not_called_damage(
    tmp_path: Path, sidecar: str
) -> None:
    state, victim = tmp_path / "sampler.sqlite", tmp_path / "victim.txt"
    victim.write_text("precious\n")
    with durable("round-robin", state) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
    Path(f"{state}{sidecar}").symlink_to(victim)

    with pytest.raises(StateError) as refused:
        create("round-robin", state=state)

    assert str(refused.value) == (
        f"cannot open the sampler state {str(state)!r}: {f'{state}{sidecar}'!r} beside it, a "
        f"file SQLite keeps as part of the database, is a symbolic link to {str(victim)!r}, "
        f"which SQLite refuses to write through, and so does this (the state was left as it "
        f"is); remove the link"
    )
    assert victim.read_text() == "precious\n"
    Path(f"{state}{sidecar}").unlink()
    assert read_durable_state(state)["records"] == 1


#: Builds round-robin on the new path ``argv[1]`` and records once; a thread takes the
#: sampler's lock and keeps it; the process forks. The child tries a pick (printing what it
#: was told) and sleeps; the parent, meanwhile, lets the thread go, closes the sampler and
#: opens the file again, printing its records.
_FORKED_MID_CALL = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from agentdescent_sampling import StateError, create

    sampler = create("round-robin", state=sys.argv[1])
    sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    held, release = threading.Event(), threading.Event()

    def hold():
        with sampler.lock:
            held.set()
            release.wait()

    threading.Thread(target=hold).start()
    held.wait()
    child = os.fork()
    if child == 0:
        signal.alarm(30)  # a child that hangs (the defect) does not outlive the test
        try:
            sampler.pick(["a", "b"], 1)
        except StateError:
            os.write(1, b"child refused\\n")  # one write: a line the parent's cannot split
        time.sleep(3)
        os._exit(0)
    release.set()
    sampler.close()
    with create("round-robin", state=sys.argv[1]) as again:  # while the child lives
        os.write(1, f"parent reopened with {again.records} record\\n".encode())
    os.waitpid(child, 0)
    """
)


@pytest.mark.skipif(not hasattr(signal, "alarm"), reason="needs os.fork and signal.alarm")
def test_a_fork_while_a_thread_holds_the_sampler_refuses_the_child_and_frees_the_parents_file(
    tmp_path: Path,
) -> None:
    # The child inherited a lock held for good, and a descriptor whose flock kept the file
    # held after its parent closed it: the child's pick hung, and the parent's reopening was
    # refused as "in use by process" (its own pid).
    done = subprocess.run(
        [sys.executable, "-c", _FORKED_MID_CALL, str(tmp_path / "sampler.sqlite")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["child refused", "parent reopened with 1 record"]


def test_a_closed_sampler_refuses_to_record_and_leaves_the_file_to_others(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    sampler = durable("difficulty-weighted", state)
    sampler.record(sampler.pick(["a"], 0), 1.0)
    sampler.close()

    with pytest.raises(StateError, match="is closed"):
        sampler.record("a", 1.0)

    assert read_durable_state(state)["records"] == 1


def test_a_closed_sampler_refuses_a_pick_and_a_record_before_either_changes_it(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    sampler = durable("fixable-first", state)
    sampler.record(sampler.pick(["a", "b"], 0), 0.0)
    sampler.close()
    before = sampler.state_dict()

    # A pick would spend a rollout whose record cannot be kept.
    with pytest.raises(StateError, match=r"pick\(\): the sampler state .* is closed"):
        sampler.pick(["a", "b"], 1)
    with pytest.raises(StateError, match=r"record\(\): .* open the file again with create"):
        sampler.record("b", 1.0)
    with pytest.raises(StateError, match=r"end_round\(\): the sampler state .* is closed"):
        sampler.end_round(0)

    assert sampler.state_dict() == before
    assert sampler.records == 1
    assert read_durable_state(state)["records"] == 1


def test_a_full_disk_is_named_with_what_to_do_and_the_record_is_kept_for_the_next_write(
    tmp_path: Path,
) -> None:
    # SQLite rolls a transaction back itself when the disk fills mid-statement: the
    # ROLLBACK after it raised "cannot rollback - no transaction is active" in its place.
    state = tmp_path / "sampler.sqlite"
    with durable("difficulty-weighted", state) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
        connection = sampler._db.connection
        assert connection is not None
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full
        big = ["x" * 20_000, "b"]

        with (
            pytest.warns(RuntimeWarning, match="disk is full"),
            pytest.raises(StateError, match=r"disk is full; free space on its file system"),
        ):
            sampler.record(sampler.pick(big, 1), 0.0)

        connection.execute("PRAGMA max_page_count = 1000000")  # space freed
        sampler.record(sampler.pick(["a"], 2), 1.0)
        kept = sampler.state_dict()

    with durable("difficulty-weighted", state) as resumed:
        assert resumed.records == 3
        assert resumed.state_dict() == kept


def test_records_a_full_disk_still_holds_back_at_close_are_named_in_a_warning(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    sampler = durable("difficulty-weighted", state)
    sampler.record(sampler.pick(["a"], 0), 1.0)
    connection = sampler._db.connection
    assert connection is not None
    (pages,) = connection.execute("PRAGMA page_count").fetchone()
    connection.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full, and stays so
    big = ["x" * 20_000, "b"]
    with (
        pytest.warns(RuntimeWarning, match="disk is full"),  # at the first failure
        pytest.raises(StateError, match="disk is full"),
    ):
        sampler.record(sampler.pick(big, 1), 0.0)
    with pytest.raises(StateError, match="disk is full"):
        sampler.record(sampler.pick(big, 2), 0.0)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning raises: the file is closed first
        with pytest.raises(RuntimeWarning, match=r"2 record\(s\) or told call\(s\) could not"):
            sampler.close()

    assert read_durable_state(state)["records"] == 1
    with durable("difficulty-weighted", state) as reopened:  # released, by this process too
        assert reopened.records == 1


def test_a_new_state_on_a_full_disk_is_told_to_free_space_not_called_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling import _statedb

    connect = _statedb.StateDB._connect

    def on_a_full_disk(self: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = connect(self, **kwargs)
        connection.execute("PRAGMA max_page_count = 1")  # no room for its tables
        return connection

    monkeypatch.setattr(_statedb.StateDB, "_connect", on_a_full_disk)
    state = tmp_path / "sampler.sqlite"

    with pytest.raises(StateError, match=r"disk is full; free space on its file system") as caught:
        create("difficulty-weighted", state=state)

    assert "not a readable sampler state" not in str(caught.value)
    assert not state.exists()


def test_a_loaded_state_the_file_cannot_take_leaves_the_sampler_as_the_file_has_it(
    tmp_path: Path,
) -> None:
    # The sampler kept the loaded state in memory while the file kept the old snapshot: the
    # records that followed were replayed, on resume, into a state the run never had.
    state, export = tmp_path / "sampler.sqlite", tmp_path / "export.json"
    other = create("difficulty-weighted")
    for k in range(2_000):
        other.record(f"task-{k:05d}-" + "z" * 40, 1.0)
    save_state(other, export)
    with durable("difficulty-weighted", state) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
        before = sampler.state_dict()
        connection = sampler._db.connection
        assert connection is not None
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages + 2}")  # no room for the export

        with pytest.raises(StateError, match="disk is full"):
            load_state(sampler, export)

        assert sampler.state_dict() == before
        assert (sampler.records, sampler.rounds) == (1, 1)
        connection.execute("PRAGMA max_page_count = 1000000")
        sampler.record(sampler.pick(["a"], 1), 0.0)
        kept = sampler.state_dict()

    with durable("difficulty-weighted", state) as resumed:
        assert resumed.state_dict() == kept
        assert resumed.records == 2


class _HeldRecord:
    """A sampler whose ``record`` waits, once ``entered`` is set, until ``release`` is."""

    name = "held-record"

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.recorded: list[str] = []

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        self.entered.set()
        assert self.release.wait(10)
        self.recorded.append(task_id)

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name, "recorded": list(self.recorded)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.recorded = list(state["recorded"])


def test_a_record_racing_close_finishes_and_is_kept_before_the_file_closes(
    tmp_path: Path,
) -> None:
    # close() from another thread waited for nothing: the record in flight then failed at
    # the closed file after changing the sampler, a new file was removed under a record
    # just committed, or SQLite's connection, closed under the commit, crashed the process.
    state = tmp_path / "sampler.sqlite"
    held = _HeldRecord()
    sampler = DurableSampler(held, state)
    outcome: list[BaseException | None] = []

    def record() -> None:
        try:
            sampler.record("a", 1.0)
        except BaseException as error:  # noqa: BLE001  # the test reads it
            outcome.append(error)
        else:
            outcome.append(None)

    recorder = threading.Thread(target=record)
    recorder.start()
    assert held.entered.wait(10)
    closer = threading.Thread(target=sampler.close)
    closer.start()
    time.sleep(0.2)  # time for close() to close the file, if it does not wait
    held.release.set()
    recorder.join(10)
    closer.join(10)

    assert outcome == [None]
    with pytest.raises(StateError, match=r"record\(\): .* is closed"):
        sampler.record("a", 1.0)
    reopened = _HeldRecord()
    reopened.release.set()
    with DurableSampler(reopened, state) as again:
        assert again.records == 1
        assert reopened.recorded == ["a"]


def test_a_closed_sampler_refuses_a_state_to_load_before_it_changes_the_sampler(
    tmp_path: Path,
) -> None:
    state, export = tmp_path / "sampler.sqlite", tmp_path / "fresh.json"
    save_state(create("fixable-first"), export)
    sampler = durable("fixable-first", state)
    sampler.record(sampler.pick(["a", "b"], 0), 0.0)
    sampler.close()
    before = sampler.state_dict()

    with pytest.raises(StateError, match=r"load_state_dict\(\): .* open the file again"):
        sampler.load_state_dict(create("fixable-first").state_dict())
    with pytest.raises(StateError, match=r"load_state_dict\(\): .* is closed"):
        load_state(sampler, export)

    assert sampler.state_dict() == before
    assert sampler.records == 1
    assert read_durable_state(state)["records"] == 1


def test_a_second_sampler_on_a_new_path_is_refused_when_built(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    with durable("difficulty-weighted", state) as first:  # a new path, claimed now
        with pytest.raises(StateError, match="already open in this process"):
            create("difficulty-weighted", state=state)
        first.record(first.pick(["a"], 0), 1.0)

    assert read_durable_state(state)["state"]["stats"] == {"a": [1, 1]}


def test_a_second_process_on_a_new_path_is_refused_when_built_naming_the_first(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    # The holder is built on a new path, and records nothing.
    with holding("round-robin", state) as holder, pytest.raises(StateError) as raised:
        create("round-robin", state=state)

    assert f"in use by process {holder.pid} on " in str(raised.value)
    assert "made by another sampler" not in str(raised.value)
    assert not state.exists()  # the holder recorded nothing: its file went with it
    with durable("round-robin", state) as after:
        assert after.records == 0


class UnsafeCounter:
    """Counts trials with an unguarded read-modify-write, and says so."""

    name = "unsafe-counter"
    thread_safe = False

    def __init__(self) -> None:
        self.trials: dict[str, int] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        seen = self.trials.get(task_id, 0)
        time.sleep(0)  # a thread switch here loses a count, unless the calls are serialized
        self.trials[task_id] = seen + 1

    def bump(self, task_id: str) -> None:
        """Another method with the same unguarded read-modify-write."""
        seen = self.trials.get(task_id, 0)
        time.sleep(0)
        self.trials[task_id] = seen + 1

    def state_dict(self) -> dict[str, Any]:
        return {"trials": dict(self.trials)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.trials = dict(state["trials"])


def test_a_thread_unsafe_sampler_gets_one_wrapper_for_its_lock_and_its_state(
    tmp_path: Path,
) -> None:
    registry = Registry()
    registry.register(UnsafeCounter)

    with registry.create("unsafe-counter", state=tmp_path / "sampler.sqlite") as sampler:
        assert type(sampler.wrapped) is UnsafeCounter
        assert repr(sampler).startswith("DurableSampler(synchronized(<")


@pytest.mark.usefixtures("fast_thread_switching")
def test_a_thread_unsafe_sampler_with_state_has_every_call_serialized(tmp_path: Path) -> None:
    registry = Registry()
    registry.register(UnsafeCounter)
    state = tmp_path / "sampler.sqlite"
    sampler = registry.create("unsafe-counter", state=state)

    def worker() -> None:
        for step in range(50):
            sampler.record(sampler.pick(["a"], step), 1.0)
            sampler.bump("a")

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sampler.close()

    assert sampler.wrapped.trials == {"a": 800}  # type: ignore[attr-defined]
    with DurableSampler(UnsafeCounter(), state) as reopened:
        assert reopened.records == 400


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("file/state.sqlite", r"'.*file' is a regular file, not a directory; give a path in a"),
        ("deep/" + "n" * 300 + ".sqlite", r"is 307 bytes, and file systems take at most 255"),
        ("n" * 300 + ".sqlite", r"is 307 bytes, and file systems take at most 255"),
    ],
    ids=["a-file-for-a-directory", "a-name-too-long", "a-name-too-long-in-a-directory-that-is"],
)
def test_a_state_path_its_first_write_could_not_make_is_refused_at_once(
    tmp_path: Path, where: str, message: str
) -> None:
    # agentdescent plan builds the sampler and writes nothing: the run would fail later.
    (tmp_path / "file").write_text("not a directory", encoding="utf-8")
    with pytest.raises(StateError, match=message):
        create("round-robin", state=tmp_path / where)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file"]


#: Builds ``argv[1]`` on the new path ``argv[2]`` and is killed (SIGKILL) by the first
#: statement SQLite is given after its first commit to the file: where a crash leaves the
#: file once its making has begun to land.
_KILLED_AFTER_THE_FIRST_COMMIT = textwrap.dedent(
    """
    import os, signal, sqlite3, sys

    connect = sqlite3.connect

    def traced(*args, **kwargs):
        db = connect(*args, **kwargs)
        committed = []

        def trace(statement):
            if committed:
                os.kill(os.getpid(), signal.SIGKILL)
            if statement.strip().upper() == "COMMIT":
                committed.append(statement)

        db.set_trace_callback(trace)
        return db

    sqlite3.connect = traced
    from agentdescent_sampling import create

    sampler = create(sys.argv[1], state=sys.argv[2])
    for step in range(10):
        sampler.record(sampler.pick(["a", "b", "c"], step), 0.0)
    """
)


def test_a_run_killed_as_it_made_a_new_state_costs_no_later_record(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_AFTER_THE_FIRST_COMMIT, "fixable-first", str(state)],
        check=False,
    )
    assert killed.returncode == -9
    assert state.exists()

    trials: dict[str, int] = {}
    with durable("fixable-first", state) as second:
        acknowledged = drive(second, range(15), trials)  # 30 records, each returned
    with durable("fixable-first", state) as reopened:
        assert reopened.records == len(acknowledged) == 30
        uninterrupted = create("fixable-first")
        drive(uninterrupted, range(15), {})
        assert reopened.state_dict() == uninterrupted.state_dict()


def _tables_without_a_snapshot(path: Path, spec: str) -> None:
    """A state file's tables and holder, and no snapshot: what this library never leaves
    (it makes a file whole, its snapshot in its first commit)."""
    from agentdescent_sampling._statedb import _SCHEMA_SQL, APPLICATION_ID, SCHEMA
    from agentdescent_sampling.state import FORMAT

    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {SCHEMA}")
    db.executescript(_SCHEMA_SQL)
    meta = [("format", FORMAT), ("sampler", spec), ("spec", json.dumps(spec))]
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta)
    db.execute("INSERT INTO holder VALUES (1, 2147483646, 'gone', 'then')")
    db.execute("PRAGMA journal_mode=WAL")
    db.close()


@pytest.mark.parametrize("with_log", [False, True], ids=["no-log", "a-log"])
def test_a_state_whose_snapshot_was_removed_is_refused_by_opener_and_reader_untouched(
    tmp_path: Path, with_log: bool
) -> None:
    # Such a file was completed when opened, the sampler as built under its log, for
    # releases that made a file in several commits; none was ever published, so a missing
    # snapshot is damage: replaying a log over a sampler as built would make up its state.
    state = tmp_path / "sampler.sqlite"
    with durable("fixable-first", state) as first:
        drive(first, range(3), {})
        if with_log:
            first.pick(SHARDS[0], 3)
            first.record("a", 0.0)
    with sqlite3.connect(state) as db:
        db.execute("DELETE FROM snapshot")
    db.close()
    before = state.read_bytes()
    said = (
        f"{str(state)!r}: the file holds no snapshot, which every state file this library "
        "writes holds from its first commit: it was changed by something else, or made by a "
        "development version of it; give the run a new state path (the file was left as it is)"
    )

    with pytest.raises(StateError) as opening:
        create("fixable-first", state=state)
    with pytest.raises(StateError) as reading:
        read_durable_state(state)

    assert str(opening.value) == str(reading.value) == said
    assert state.read_bytes() == before


#: Records into ``argv[1]`` as told on stdin: ``r N`` records N, ``s`` folds the log into a
#: snapshot, ``loop`` records (folding every 64 log entries) until stdin closes; each
#: command answers with the record count.
_WRITER = textwrap.dedent(
    """
    import sys
    from agentdescent_sampling import create

    sampler = create("round-robin", state=sys.argv[1])
    step = 0
    for line in sys.stdin:
        command = line.split()
        if command[0] == "loop":
            print("looping", flush=True)
            sys.stdin.close()
            while True:
                sampler.record(sampler.pick(["a", "b", "c"], step), 1.0)
                step += 1
        if command[0] == "r":
            for _ in range(int(command[1])):
                sampler.record(sampler.pick(["a", "b", "c"], step), 1.0)
                step += 1
        else:
            sampler.load_state_dict(sampler.state_dict())  # a snapshot, at once
        print(sampler.records, flush=True)
    """
)


@contextlib.contextmanager
def _writer(state: Path) -> Iterator[Callable[[str], str]]:
    """A process recording into ``state`` on command; yields the function that commands it."""
    run = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(state)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert run.stdin is not None
    assert run.stdout is not None

    def tell(command: str) -> str:
        assert run.stdin is not None
        assert run.stdout is not None
        run.stdin.write(command + "\n")
        run.stdin.flush()
        return run.stdout.readline().strip()

    try:
        yield tell
    finally:
        run.kill()
        run.wait()


def test_a_reader_sees_one_commit_even_if_the_log_is_folded_between_its_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling._statedb import StateDB

    state = tmp_path / "sampler.sqlite"
    with _writer(state) as tell:
        assert tell("r 10") == "10"  # a snapshot of none, then a log of 10 records
        snapshot = StateDB.snapshot

        def fold_meanwhile(db: StateDB) -> Any:
            found = snapshot(db)
            assert tell("r 5") == "15"
            assert tell("s") == "15"  # the log is folded into a snapshot of 15, then empty
            return found

        monkeypatch.setattr(StateDB, "snapshot", fold_meanwhile)
        saved = read_durable_state(state)

    # The file as of one commit: the snapshot of none and its log of 10, not a mix.
    assert (saved["records"], saved["log"]) == (10, 20)
    assert saved["state"] == _round_robin_after(10)


def _round_robin_after(records: int) -> Any:
    sampler = create("round-robin")
    for step in range(records):
        sampler.record(sampler.pick(["a", "b", "c"], step), 1.0)
    return sampler.state_dict()  # type: ignore[attr-defined]


def test_the_counts_read_while_a_run_folds_its_log_never_go_backwards(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    counts = []
    with _writer(state) as tell:
        assert tell("r 1") == "1"
        assert tell("loop") == "looping"
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            counts.append(read_durable_state(state)["records"])

    assert len(counts) > 50
    assert counts[-1] > 64  # the log was folded again and again meanwhile
    backwards = [(before, after) for before, after in itertools.pairwise(counts) if after < before]
    assert backwards == []


def test_a_state_loaded_into_a_durable_sampler_goes_on_with_its_round_numbering(
    tmp_path: Path,
) -> None:
    original, export, loaded = (
        tmp_path / "original.sqlite",
        tmp_path / "export.json",
        tmp_path / "loaded.sqlite",
    )
    keys = ["a", "b", "c", "d", "e"]
    with durable("round-robin", original) as sampler:
        for round_index in range(3):
            sampler.record(sampler.pick(keys, round_index), 1.0)
        save_state(sampler, export)  # made at round 3

    with durable("round-robin", loaded) as sampler:
        load_state(sampler, export)
        assert sampler.rounds == 3
        picked = sampler.pick(keys, 0)  # this process's first round: the state's fourth
        sampler.record(picked, 1.0)
        assert sampler.rounds == 4
    with durable("round-robin", original) as reopened:
        assert reopened.pick(keys, 0) == picked == "d"
    with durable("round-robin", loaded) as reopened:
        assert reopened.rounds == 4
        assert reopened.pick(keys, 0) == "e"


def _hostile_log(path: Path, shards: int, keys: int, picks: int) -> None:
    """A state whose log holds ``picks`` picks of ``shards`` shards of ``keys`` tasks each,
    in turn: a few hundred kilobytes that would take its sampler many seconds to replay."""
    with durable("fixable-first", path) as sampler:
        sampler.record("t0", 1.0)
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO shard VALUES (?, ?)",
            [
                (shard, json.dumps([f"s{shard}-{k}" for k in range(keys)]))
                for shard in range(shards)
            ],
        )
        db.executemany(
            "INSERT INTO event (name, args) VALUES ('pick', ?)",
            [(json.dumps([n % shards, n // 100, f"s{n % shards}-0"]),) for n in range(picks)],
        )
    db.close()


def _refused_unreplayed(state: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Open ``state`` as a run does and as ``state show`` does; return each refusal's
    message, having checked that nothing was replayed (not even the snapshot loaded, which
    comes first) and the file was left byte for byte."""

    def replayed(*args: object) -> None:
        raise AssertionError("the log was replayed before its cost was counted")

    before = state.read_bytes()
    monkeypatch.setattr(replay_module, "_load", replayed)
    messages = []
    for opening in (
        lambda: create("fixable-first", state=state),
        lambda: read_durable_state(state),
    ):
        with pytest.raises(StateError) as raised:
            opening()
        messages.append(str(raised.value))
    assert state.read_bytes() == before
    return messages


@pytest.mark.parametrize(
    ("shards", "keys", "picks"),
    [(1, 10_000, 5_000), (10, 1_000, 300)],
    ids=["many-picks-of-one-large-shard", "shards-used-in-turn"],
)
def test_a_state_whose_log_would_take_long_to_replay_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shards: int, keys: int, picks: int
) -> None:
    state = tmp_path / "sampler.sqlite"
    _hostile_log(state, shards, keys, picks)

    for message in _refused_unreplayed(state, monkeypatch):
        assert message.startswith(
            f"{str(state)!r}: replaying its log would ask more of the sampler"
        )
        assert "over 33,554,432 task ids, the limit" in message
        assert "give the run a new state path" in message
        assert "raise agentdescent_sampling.durable.REPLAY_LIMIT" in message


@pytest.mark.parametrize("last", ["record", "end_round"])
def test_a_log_of_more_records_than_a_replay_may_take_is_refused_unreplayed(
    tmp_path: Path, last: str
) -> None:
    state = tmp_path / "sampler.sqlite"
    _hostile_log(state, shards=1, keys=2, picks=0)
    entries = REPLAY_LIMIT // 128 + 1  # each a few microseconds to replay
    with sqlite3.connect(state) as db:  # failures, then a round that credits them all
        db.executemany(
            "INSERT INTO event (name, args) VALUES ('record', ?)",
            ((json.dumps([f"t{n}", 0.0]),) for n in range(entries - 1)),
        )
        arguments = json.dumps(["t0", 0.0] if last == "record" else [entries])
        db.execute("INSERT INTO event (name, args) VALUES (?, ?)", (last, arguments))
    db.close()

    with pytest.raises(StateError, match=r"its entries cost over 33,554,432 task ids"):
        read_durable_state(state)


def test_a_log_of_many_picks_of_a_one_task_shard_is_refused_unreplayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pick counted its shard's size and 8 task ids (a quarter of a microsecond), but costs
    # a replay 5 to 40 microseconds whatever its shard: a 28 MB file of a million picks of
    # one task, a quarter of the limit, took 12 s to open.
    state = tmp_path / "sampler.sqlite"
    _hostile_log(state, shards=1, keys=1, picks=REPLAY_LIMIT // 512)

    for message in _refused_unreplayed(state, monkeypatch):
        assert "its entries cost over 33,554,432 task ids" in message
    replayed = _Picks()  # a sampler of yours, wrapped: nothing reaches it either
    with pytest.raises(StateError, match=r"its entries cost over 33,554,432 task ids"):
        DurableSampler(replayed, state)
    assert replayed.picks == 0


@pytest.mark.parametrize("call", ["record", "evidence", "pick"])
def test_an_entry_of_megabytes_of_arguments_is_refused_unreplayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    # Counted as any entry, one record of 30 MB took 4.5 s and 824 MiB to read before its
    # replay refused it.
    monkeypatch.setattr(durable_module, "REPLAY_LIMIT", 1 << 20)
    state = tmp_path / "sampler.sqlite"
    _hostile_log(state, shards=1, keys=1, picks=0)
    arguments = json.dumps(["t0", 0.5, [[]] * (1 << 16)])  # 256 KiB, at 8 ids each: twice it
    with sqlite3.connect(state) as db:
        db.execute("INSERT INTO event (name, args) VALUES (?, ?)", (call, arguments))
    db.close()

    for message in _refused_unreplayed(state, monkeypatch):
        assert "its entries cost over 1,048,576 task ids" in message
        assert "costs 512 and 8 a character of its arguments" in message


def test_a_log_of_many_entries_that_are_no_picks_is_refused_unreplayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Counted as nothing, 8 million of them were walked, 12 s, before the replay refused
    # the first.
    state = tmp_path / "sampler.sqlite"
    _hostile_log(state, shards=1, keys=1, picks=0)
    with sqlite3.connect(state) as db:
        db.executemany(
            "INSERT INTO event (name, args) VALUES ('pick', '0')", [()] * (REPLAY_LIMIT // 512)
        )
    db.close()

    for message in _refused_unreplayed(state, monkeypatch):
        assert "its entries cost over 33,554,432 task ids" in message


def test_a_logged_entry_of_no_call_this_library_logs_is_named_escaped(tmp_path: Path) -> None:
    state = _saved(tmp_path, "round-robin")
    with sqlite3.connect(state) as db:  # a name that would print lines of its own
        db.execute("INSERT INTO event (name, args) VALUES (?, '[]')", ("x\nrecords  10\x1b[8m",))
    db.close()

    with pytest.raises(StateError) as raised:
        read_durable_state(state)
    assert "cannot replay entry 3 of its log, 'x\\nrecords  10\\x1b[8m'[]," in str(raised.value)


def _told_calls_over_a_large_state(path: Path, picked: bool) -> None:
    """A fixable-first state whose log repeats ``end_round`` over many tasks: those of a
    snapshot of 20,000 tasks, before any pick, or 2,000 recorded after a pick."""
    large = create("fixable-first")
    for n in range(0 if picked else 20_000):
        large.record(f"t{n}", float(n % 2))
    with durable("fixable-first", path) as sampler:
        sampler.load_state_dict(large.state_dict())
        sampler.record("t0", 1.0)
    rows = [("record", json.dumps([f"r{n}", 0.0])) for n in range(2000 if picked else 0)]
    rows += [("end_round", "[1]")] * (300 if picked else 40)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO shard VALUES (1, '[\"t0\"]')")
        if picked:
            db.execute("INSERT INTO event (name, args) VALUES ('pick', '[1, 0, \"t0\"]')")
        db.executemany("INSERT INTO event (name, args) VALUES (?, ?)", rows)
    db.close()


@pytest.mark.parametrize("picked", [False, True], ids=["before-any-pick", "after-a-pick"])
def test_a_log_of_told_calls_over_many_tasks_is_refused_unreplayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, picked: bool
) -> None:
    # fixable-first's end_round and evidence refile every task it loaded until its first
    # pick, and the tasks touched since after it, again at each call: counted as a record
    # each (128 task ids), 800 of them after a snapshot of 100,000 tasks took 103 s to open.
    state = tmp_path / "sampler.sqlite"
    _told_calls_over_a_large_state(state, picked)

    for message in _refused_unreplayed(state, monkeypatch):
        assert "its entries cost over 33,554,432 task ids" in message
        assert "a told call the tasks it may go over" in message


@pytest.mark.parametrize("shard_id", ["1", 1.0, True], ids=["text", "float", "bool"])
def test_a_pick_that_names_its_shard_by_anything_but_a_whole_number_is_refused_unreplayed(
    tmp_path: Path, shard_id: object
) -> None:
    # SQLite finds shard 1 by "1", 1.0 or true too, and the replay limit counted only picks
    # whose shard id is a whole number: a small file of such picks of a large shard opened,
    # after as long a replay as it liked.
    state = tmp_path / "sampler.sqlite"
    _hostile_log(state, shards=2, keys=10_000, picks=0)
    with sqlite3.connect(state) as db:
        db.executemany(
            "INSERT INTO event (name, args) VALUES ('pick', ?)",
            [(json.dumps([shard_id, 0, "s1-0"]),)] * 3,
        )
    db.close()
    before = state.read_bytes()

    with pytest.raises(StateError, match=r"cannot replay entry 2 of its log, pick\["):
        read_durable_state(state)
    replayed = _Picks()
    with pytest.raises(StateError, match=r"cannot replay entry 2 of its log, pick\["):
        DurableSampler(replayed, state)
    assert replayed.picks == 0
    assert state.read_bytes() == before


class _Picks:
    """Counts its picks: fixable-first's state, as far as a replay needs one."""

    name = "fixable-first"

    def __init__(self) -> None:
        self.picks = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        self.picks += 1
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        pass


def _damage(path: Path, damage: str) -> None:
    """Damage the log of the state at ``path`` as a disk, a copy or another program may."""
    with sqlite3.connect(path) as db:
        if damage == "a-damaged-page":
            (size,) = db.execute("PRAGMA page_size").fetchone()
            query = "SELECT rootpage FROM sqlite_master WHERE name = 'event'"
            (page,) = db.execute(query).fetchone()
        elif damage == "text-that-is-not-utf-8":
            db.execute("UPDATE event SET args = CAST(X'5B22FF222C20305D' AS TEXT) WHERE seq = 2")
        else:
            db.execute("DROP TABLE event")
    db.close()
    if damage == "a-damaged-page":
        with open(path, "r+b") as file:
            file.seek((page - 1) * size)
            file.write(bytes(16))


@pytest.mark.parametrize("damage", ["a-damaged-page", "text-that-is-not-utf-8", "a-missing-table"])
def test_a_damaged_state_is_a_state_error_naming_the_file_not_sqlites_own_error(
    tmp_path: Path, damage: str
) -> None:
    # SQLite's DatabaseError ("database disk image is malformed") or OperationalError
    # escaped from reading the log, naming neither the file nor what to do.
    state = tmp_path / "sampler.sqlite"
    with durable("fixable-first", state) as sampler:
        for step in range(3):
            sampler.record(sampler.pick(["a", "b"], step), 0.0)
    _damage(state, damage)
    before = state.read_bytes()

    for opening in (
        lambda: create("fixable-first", state=state),
        lambda: read_durable_state(state),
    ):
        with pytest.raises(StateError) as raised:
            opening()
        message = str(raised.value)
        assert message.startswith(f"{str(state)!r} is not a readable sampler state: "), message
        assert "give the run a new state path" in message
    assert state.read_bytes() == before


def test_a_state_written_under_heavy_use_stays_far_within_the_replay_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling import durable as module

    # A limit 32 times smaller, to write past it quickly: 400 picks of 4,000 tasks count
    # 1.6 million, and fixable-first, never told of a round's end, is snapshotted otherwise
    # only once its log is four times its snapshot's size.
    monkeypatch.setattr(module, "REPLAY_LIMIT", 1 << 20)
    state, keys = tmp_path / "sampler.sqlite", [f"task-{k}" for k in range(4000)]
    uninterrupted = create("fixable-first")
    with durable("fixable-first", state) as sampler:
        for step in range(400):
            sampler.record(sampler.pick(keys, step), float(step % 3 == 0))
            uninterrupted.record(uninterrupted.pick(keys, step), float(step % 3 == 0))

    saved = read_durable_state(state)
    assert saved["records"] == 400
    assert saved["log"] <= 2 * (1 << 20) // 8 // 4000  # folded as it reached an eighth
    with durable("fixable-first", state) as reopened:
        assert reopened.records == 400
        assert reopened.pick(keys, 400) == uninterrupted.pick(keys, 400)


def test_a_log_kept_past_the_replay_limit_by_a_failing_state_dict_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file was refused as "made or changed by something else", and no warning had
    # said that the log the run kept could no longer be opened.
    from agentdescent_sampling import durable as module

    monkeypatch.setattr(module, "REPLAY_LIMIT", 1 << 14)  # 128 records
    state = tmp_path / "sampler.sqlite"
    failing = _Counter()
    sampler = DurableSampler(failing, state)
    failing.broken = True
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        for _ in range(300):
            sampler.record("a", 1.0)
    sampler.close()
    said = [str(warning.message) for warning in warned if warning.category is RuntimeWarning]
    assert any("over agentdescent_sampling.durable.REPLAY_LIMIT" in text for text in said)

    with pytest.raises(StateError, match=r"unless their sampler's state_dict\(\) kept failing"):
        DurableSampler(_Counter(), state)
    monkeypatch.setattr(module, "REPLAY_LIMIT", 1 << 20)
    reopened = _Counter()
    with DurableSampler(reopened, state) as again:
        assert again.records == reopened.records == 300


class _Counter:
    """Counts its records; its ``state_dict()`` raises once ``broken``."""

    name = "counter"

    def __init__(self) -> None:
        self.records, self.broken = 0, False

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        self.records += 1

    def state_dict(self) -> dict[str, Any]:
        if self.broken:
            raise RuntimeError("cannot")
        return {"sampler": self.name, "records": self.records}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.records = state["records"]


def test_a_state_whose_making_was_killed_mid_commit_is_made_afresh(tmp_path: Path) -> None:
    # Killed as SQLite committed the new file: the file whole, its rollback journal still
    # there (hot), saying the file was empty before. SQLite undoes the commit when it opens
    # the file, leaving it empty, as it was: a new state, not a damaged one.
    import struct

    state = tmp_path / "sampler.sqlite"
    _tables_without_a_snapshot(state, "round-robin")
    with sqlite3.connect(state, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode=DELETE")
    db.close()
    magic = bytes.fromhex("d9d505f920a163d7")
    header = magic + struct.pack(">IIIII", 0, 12345, 0, 512, 4096)  # 0 pages before
    state.with_name(state.name + "-journal").write_bytes(header.ljust(512, b"\0"))

    with durable("round-robin", state) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)

    assert read_durable_state(state)["records"] == 1


def test_a_state_nested_deeper_than_a_config_may_be_reopens_as_it_was_written(
    tmp_path: Path,
) -> None:
    class Deep(LastScore):
        """Keeps its state 40 levels deep."""

        def state_dict(self) -> dict[str, Any]:
            nested: dict[str, Any] = {"seen": dict(self.seen)}
            for _ in range(40):
                nested = {"inner": nested}
            return nested

        def load_state_dict(self, state: Mapping[str, Any]) -> None:
            while "inner" in state:
                state = state["inner"]
            self.seen = dict(state["seen"])

    path = tmp_path / "deep.sqlite"
    for score in (0.25, 0.5):  # the second run opens the first's snapshot and log
        with DurableSampler(Deep(), path) as sampler:
            for step in range(70):  # past the log's first fold into a snapshot
                sampler.record(sampler.pick(["a", "b"], step), score)

    with DurableSampler(Deep(), path) as reopened:
        assert reopened.wrapped.seen == {"a": 0.5, "b": 0.5}


def test_a_state_path_climbing_above_the_root_names_the_file_under_the_root(
    tmp_path: Path,
) -> None:
    climbing = Path("/..", "..", *tmp_path.parts[1:], "sampler.sqlite")

    with durable("round-robin", climbing) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)

    assert read_durable_state(tmp_path / "sampler.sqlite")["records"] == 1


def test_a_state_path_given_as_bytes_is_refused_saying_what_to_give(tmp_path: Path) -> None:
    path = os.fsencode(tmp_path / "sampler.sqlite")
    message = r"a state path must be a str or an os.PathLike of one, not bytes .*os\.fsdecode"

    with pytest.raises(TypeError, match=message):
        DurableSampler(create("round-robin"), path)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=message):
        read_durable_state(path)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_sampler_dropped_unclosed_frees_its_state_at_once(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    durable("round-robin", state).record("a", 1.0)  # its last reference gone: closed
    assert durable("round-robin", state).records == 1
    assert read_durable_state(state)["records"] == 1


def test_an_opener_waiting_for_a_new_state_its_maker_closes_unused_makes_its_own(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    with holding("round-robin", state) as holder:  # built on a new path, nothing recorded
        assert holder.stdin is not None
        # The holder lets go (and removes its unused file) while this opener waits for it.
        threading.Timer(0.5, holder.stdin.close).start()
        with durable("round-robin", state) as sampler:
            assert [row[:2] for row in _rows(state, "holder")] == [(1, os.getpid())]
            sampler.record(sampler.pick(["a", "b"], 0), 1.0)

    assert read_durable_state(state)["records"] == 1


def test_a_state_opened_and_closed_with_nothing_recorded_is_left_byte_for_byte(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    with durable("fixable-first", state) as sampler:
        drive(sampler, range(3), {}, told=True)
        sampler.pick(SHARDS[0], 3)  # a rollout still running when the run stopped
    log = read_durable_state(state)["log"]
    before = _files(tmp_path)

    # What agentdescent plan does: build the sampler, and close it without a rollout.
    with durable("fixable-first", state) as sampler:
        sampler.pick(SHARDS[1], 0)

    assert _files(tmp_path) == before
    assert read_durable_state(state)["log"] == log > 0


@pytest.mark.parametrize("name", BUILT_INS)
def test_a_reopened_state_recorded_into_reopens_as_the_sampler_that_recorded(
    tmp_path: Path, name: str
) -> None:
    # The log replayed at opening (its picks in flight dropped) becomes the snapshot in the
    # transaction of the first record after it, never after it: the file holds what the
    # sampler held, without the picks that died with the first run.
    state, trials, told = tmp_path / "sampler.sqlite", {}, name == "fixable-first"
    with durable(name, state) as first:
        drive(first, range(3), trials, told=told)
        first.pick(SHARDS[0], 3)
    with durable(name, state) as second:
        drive(second, range(1), trials, told=told)
        held = second.state_dict()

    with durable(name, state) as third:
        assert third.state_dict() == held
    assert read_durable_state(state)["state"] == held


def test_a_state_names_no_holder_once_its_run_has_closed(tmp_path: Path) -> None:
    # A run writes its pid with its first entry: until then, the file names none, not the
    # run before it.
    state = _saved(tmp_path, "round-robin")
    assert _rows(state, "holder") == []


def test_an_empty_file_at_the_state_path_is_left_empty_when_nothing_is_recorded(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    state.touch()

    with durable("round-robin", state) as sampler:
        sampler.pick(["a"], 0)

    assert _files(tmp_path) == {"sampler.sqlite": b""}  # not this process's to remove
    with durable("round-robin", state) as sampler:
        sampler.record("a", 1.0)
    assert read_durable_state(state)["records"] == 1


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_the_files_sqlite_keeps_beside_a_database_are_refused_as_a_state_path(
    tmp_path: Path, suffix: str
) -> None:
    database = _saved(tmp_path, "round-robin")
    sidecar = database.with_name(database.name + suffix)
    sidecar.touch()  # as an idle state's empty -wal is
    before = _files(tmp_path)
    said = f"is the {suffix[1:]} file SQLite keeps beside the database {str(database)!r}"

    with pytest.raises(StateError, match=re.escape(said)):
        create("round-robin", state=sidecar)
    with pytest.raises(StateError, match=re.escape(said)):
        read_durable_state(sidecar)

    assert _files(tmp_path) == before


def test_a_path_with_a_name_too_long_and_a_separator_is_our_error_not_a_bare_oserror(
    tmp_path: Path,
) -> None:
    from agentdescent_sampling import save_state
    from agentdescent_sampling.refs import from_run_spec

    too_long = f"{tmp_path}/{'a' * 300}/"
    with pytest.raises(StateError):
        save_state(create("round-robin"), too_long)
    with pytest.raises(InvalidSamplerConfig, match=r"^policies\.task_sampler: "):
        from_run_spec(spec="round-robin", state=too_long)


def test_a_state_path_ending_with_a_separator_is_refused_as_a_directory_and_nothing_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling.refs import from_run_spec

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    said = (
        "the sampler state path 'newdir/' ends with '/', so it names a directory, and a state "
        "path names a file: give one such as 'newdir/sampler-state.sqlite'"
    )

    _refused_alike("newdir/", said)
    # A run spec's path reaches create() as a Path, which has dropped the '/' already.
    with pytest.raises(InvalidSamplerConfig, match="'~/newdir/': it ends with '/', so it names"):
        from_run_spec(spec="round-robin", state="~/newdir/")

    assert list(tmp_path.iterdir()) == []


def test_an_empty_state_path_is_refused_naming_the_empty_string(tmp_path: Path) -> None:
    said = (
        "the sampler state path is the empty string ''; give the path of the state file, for "
        "example 'sampler-state.sqlite', or no state (None) for a sampler that keeps none"
    )
    _refused_alike("", said)


def _refused_alike(state: str, said: str) -> None:
    """``create()`` and ``DurableSampler`` refuse ``state`` with one error, of one class."""
    for make in (
        lambda: create("round-robin", state=state),
        lambda: DurableSampler(create("round-robin"), state),
    ):
        with pytest.raises(InvalidSamplerConfig) as raised:
            make()
        assert str(raised.value) == said


def test_a_state_dict_that_raises_is_a_state_error_when_the_state_is_read_or_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling import registry as registry_module

    registry, state, export = Registry(), tmp_path / "sampler.sqlite", tmp_path / "export.json"
    registry.register(RaisesAfterTen)
    monkeypatch.setattr(registry_module, "_default", registry)  # what read_durable_state builds
    said = (
        r"cannot {} the state of sampler 'raises-after-ten' {} '{}': its state_dict\(\) "
        r"raised RuntimeError: the spread is out of sync"
    )

    with _run(registry, "raises-after-ten", state, 20) as sampler:  # 40 entries: none folded
        with pytest.raises(StateError, match=said.format("export", "kept in", state)) as raised:
            save_state(sampler, export)
        assert isinstance(raised.value.__cause__, RuntimeError)
    with pytest.raises(StateError, match=said.format("read", "in", state)):
        read_durable_state(state)
    plain = _run(registry, "raises-after-ten", tmp_path / "plain.sqlite", 10).wrapped
    with pytest.raises(StateError, match=said.format("save", "to", export)):
        save_state(plain, export)  # type: ignore[arg-type]

    assert not export.exists()


@pytest.mark.parametrize(
    ("change", "told"),
    [(["CREATE TRIGGER eat AFTER INSERT ON event BEGIN DELETE FROM event; END"],
      "it holds the trigger 'eat', which no state this library writes holds"),
     (["DROP TABLE event", "CREATE VIEW event (seq, name, args) AS SELECT 1, 'pick', '0'"],
      "it holds the view 'event', which no state this library writes holds"),
     (["CREATE INDEX by_name ON event (name)"],
      "it holds the index 'by_name', which no state this library writes holds"),
     (["DROP TABLE holder"], "it lacks the table 'holder', which every state this library "
      "writes holds"),
     (["DROP TABLE event", "CREATE TABLE event (seq INTEGER PRIMARY KEY, name TEXT, args)"],
      "its table 'event' is not defined as this library defines it")],
    ids=["a-trigger", "a-view", "an-index", "a-table-less", "a-table-redefined"],
)  # fmt: skip
def test_a_state_whose_tables_were_changed_is_refused_before_any_is_read(
    tmp_path: Path, change: list[str], told: str
) -> None:
    # A trigger would run in every write (one deleting what was just recorded lost records
    # silently); a view in every read (a recursive one never ends).
    state = _saved(tmp_path, "round-robin")
    with sqlite3.connect(state) as db:
        for statement in change:
            db.execute(statement)
    db.close()
    before = state.read_bytes()

    for opening in (
        lambda: create("round-robin", state=state),
        lambda: read_durable_state(state),
    ):
        with pytest.raises(StateError) as raised:
            opening()
        assert str(raised.value).startswith(
            f"{str(state)!r} is not a readable sampler state: {told} (the file was left as it is)"
        )
    assert state.read_bytes() == before


def test_a_state_analyzed_by_sqlite_opens(tmp_path: Path) -> None:
    state = _saved(tmp_path, "round-robin")
    with sqlite3.connect(state) as db:
        db.execute("ANALYZE")  # statistics tables, which change no read or write
    db.close()

    with durable("round-robin", state) as reopened:
        assert reopened.records == 1


def test_a_log_entry_stored_as_bytes_is_refused_saying_how_it_is_stored(
    tmp_path: Path,
) -> None:
    state = _saved(tmp_path, "round-robin")
    with sqlite3.connect(state) as db:  # a TEXT column keeps a BLOB as it is given
        db.execute("INSERT INTO event (name, args) VALUES ('record', X'3432')")
    db.close()

    with pytest.raises(StateError, match=r"is not valid JSON \(it is stored as a BLOB, not"):
        read_durable_state(state)


@pytest.mark.parametrize("named", ["difficulty-weighted", "no-such-sampler"])
def test_a_state_whose_spec_names_another_sampler_is_refused_before_building_it(
    tmp_path: Path, named: str
) -> None:
    state = _saved(tmp_path, "round-robin")
    with sqlite3.connect(state) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'spec'", (json.dumps({"name": named}),))
    db.close()
    before = state.read_bytes()

    with pytest.raises(StateError) as refused:
        read_durable_state(state)

    assert str(refused.value) == (
        f"{str(state)!r}: its spec names sampler {named!r}, but the state is of sampler "
        f"'round-robin': the file was changed by something else, and it was not read. Give the "
        f"run a new state path (the file was left as it is)"
    )
    assert state.read_bytes() == before


def test_a_state_whose_spec_names_its_sampler_by_an_alias_is_read() -> None:
    from agentdescent_sampling.durable import _writer

    assert type(_writer("RoundRobin", "round-robin", "x.sqlite")).__name__ == "RoundRobin"


@pytest.mark.parametrize(
    ("table", "column", "what"),
    [
        ("snapshot", "state", "the snapshot"),
        ("event", "args", "event 1"),
        ("meta", "value", "its spec"),
    ],
)
def test_json_nested_too_deep_inside_a_state_is_refused_not_a_recursion_error(
    tmp_path: Path, table: str, column: str, what: str
) -> None:
    state = _saved(tmp_path, "round-robin")
    deep = "[" * 100_000 + "]" * 100_000
    with sqlite3.connect(state) as db:
        where = " WHERE key = 'spec'" if table == "meta" else ""
        db.execute(f"UPDATE {table} SET {column} = ?{where}", (deep,))
    db.close()

    opened = [] if table == "meta" else [lambda: create("round-robin", state=state)]
    for read in [lambda: read_durable_state(state), *opened]:  # create() reads no stored spec
        with pytest.raises(StateError, match=rf"{what} nests too deep for Python to read"):
            read()


def test_a_run_refused_by_a_read_only_file_beside_its_state_is_told_which_file(
    unprivileged: list[str],
) -> None:
    import shutil
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="ads-read-only-shm-"))  # outside root's tmp_path
    try:
        state = _saved(directory, "round-robin")
        # Left by a reader of an older release: its user cannot write it, nor change its mode.
        shm = state.with_name(state.name + "-shm")
        shm.write_bytes(b"")
        shm.chmod(0o444)
        state.chmod(0o666)
        directory.chmod(0o777)
        opening = "import sys; from agentdescent_sampling import create; create('round-robin', state=sys.argv[1])"  # noqa: E501
        command = [*unprivileged, sys.executable, "-c", opening, str(state)]
        run = subprocess.run(command, capture_output=True, text=True, check=False)
    finally:
        directory.chmod(0o755)
        shutil.rmtree(directory)

    assert run.returncode == 1
    said = (
        f"cannot write the sampler state {str(state)!r}: {str(shm)!r} is read-only for this "
        f"user (attempt to write a readonly database); make it writable (or remove {str(shm)!r} "
        f"while no process has the state open: SQLite makes it again)"
    )
    assert said in run.stderr


def test_a_run_waits_for_a_read_in_progress_and_is_told_if_it_outlasts_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling import _statedb

    state = _saved(tmp_path, "round-robin")
    # A reader of a state no run holds reads the file as it is, and keeps runs out meanwhile.
    reader = _statedb.StateDB(state, "", "", writable=False)
    threading.Timer(0.3, reader.close).start()
    with durable("round-robin", state) as sampler:
        assert sampler.records == 1

    # A read longer than the wait for a run's holder is waited out too: a reader polling
    # the state ('watch state show') must not make a resume fail.
    monkeypatch.setattr(_statedb, "_HOLDER_WAIT", 0.2)
    reader = _statedb.StateDB(state, "", "", writable=False)
    threading.Timer(0.8, reader.close).start()
    with durable("round-robin", state) as sampler:
        assert sampler.records == 1

    monkeypatch.setattr(_statedb, "_READER_WAIT", 0.2)
    reader = _statedb.StateDB(state, "", "", writable=False)
    try:
        with pytest.raises(
            StateError, match=r"has been read by other processes .* for over 0\.4 s"
        ):
            create("round-robin", state=state)
    finally:
        reader.close()


def test_a_run_waiting_for_a_state_read_elsewhere_holds_up_no_other_state_in_its_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling import _statedb

    contended = _saved(tmp_path, "round-robin")
    waiting = threading.Event()
    wait_for_lock = _statedb.StateDB._wait_for_lock

    def noted(self: _statedb.StateDB, seconds: float) -> bool:
        waiting.set()
        return wait_for_lock(self, seconds)

    monkeypatch.setattr(_statedb.StateDB, "_wait_for_lock", noted)
    # The read keeps the run below waiting for up to a minute (see the test above).
    reader = _statedb.StateDB(contended, "", "", writable=False)
    records: list[int] = []

    def run() -> None:
        with durable("round-robin", contended) as sampler:
            records.append(sampler.records)

    def unrelated() -> None:
        with durable("round-robin", tmp_path / "other.sqlite") as sampler:
            sampler.record(sampler.pick(["a"], 0), 1.0)

    waiter = threading.Thread(target=run)
    other = threading.Thread(target=unrelated)
    try:
        waiter.start()
        assert waiting.wait(30)
        other.start()
        other.join(30)  # it had waited out the whole minute-long wait of the run above
        assert not other.is_alive()
        assert waiter.is_alive()
        # Meanwhile the contended state is refused to a second opener here, as when open.
        with pytest.raises(StateError, match="already open in this process"):
            create("round-robin", state=contended)
    finally:
        reader.close()
        waiter.join(60)
        other.join(60)
    assert records == [1]
    with durable("round-robin", contended) as sampler:  # released by the run that waited
        assert sampler.records == 1


def test_only_a_file_beside_an_sqlite_database_counts_as_its_side_file(tmp_path: Path) -> None:
    import sqlite3

    from agentdescent_sampling._statedb import sidecar_of

    notes = tmp_path / "notes.txt"
    notes.write_text("not a database")
    database = tmp_path / "data.db"
    sqlite3.connect(database).execute("CREATE TABLE t (x)").connection.close()

    assert sidecar_of(f"{notes}-wal") is None
    assert sidecar_of(f"{database}-wal") == (str(database), "wal")
    assert sidecar_of(f"{database}-journal") == (str(database), "journal")


def test_a_round_index_the_file_cannot_hold_is_refused_and_every_record_still_saves(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.sqlite"
    with create("difficulty-weighted", state=path) as sampler:
        sampler.record(sampler.pick(["a", "b"], 2**53 - 2), 1.0)
        with pytest.raises(ValueError, match=r"round_index=9007199254740992\): the state file"):
            sampler.pick(["a", "b"], 2**53)
    with create("difficulty-weighted", state=path) as sampler:  # continues from 2**53 - 1
        with pytest.raises(ValueError, match=r"round_index=1\) \(9,007,199,254,740,991 "):
            sampler.pick(["a", "b"], 1)
        sampler.record("b", 0.0)
    with create("difficulty-weighted", state=path) as sampler:
        assert sampler.stats() == {"a": (1, 1), "b": (0, 1)}


class _LiveState:
    """A sampler whose ``state_dict()`` returns its own dict, which loading fills in place."""

    name = "live-state"

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        self.counts[task_id] = self.counts.get(task_id, 0) + 1

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name, "counts": self.counts}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        counts = dict(state["counts"])
        self.counts.clear()
        self.counts.update(counts)


def test_a_loaded_state_the_file_cannot_take_is_undone_whatever_state_dict_shares(
    tmp_path: Path,
) -> None:
    live = _LiveState()
    with DurableSampler(live, tmp_path / "sampler.sqlite") as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
        connection = sampler._db.connection
        assert connection is not None
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full
        loaded = {
            "sampler": "live-state",
            "counts": {f"t{i:05d}" + "x" * 50: 1 for i in range(3000)},
        }

        with pytest.raises(StateError, match="disk is full"):
            sampler.load_state_dict(loaded)

        assert live.counts == {"a": 1}
        connection.execute("PRAGMA max_page_count = 1000000")


@pytest.mark.parametrize("name", ["difficulty-weighted", "informative-band", "fixable-first"])
def test_picks_made_after_the_last_record_are_kept_when_the_state_is_closed(
    tmp_path: Path, name: str
) -> None:
    state = tmp_path / "sampler.sqlite"
    with durable(name, state) as first:
        drive(first, range(3), {})
        first.pick(SHARDS[0], 3)  # its rollout failed: the engine records nothing for it
        stopped = first.state_dict()
    # The pick counted (a pick count, a task's last pick): the state reopens as it stopped.
    with durable(name, state) as second:
        assert second.state_dict() == stopped


def test_a_resumed_run_that_changes_a_parameter_the_state_allows_is_read_with_its_spec(
    tmp_path: Path,
) -> None:
    # The file kept the spec of the run that made it: `state show` named failure_cost 3 for a
    # run resumed with 1, and replayed that run's log with the spec it was not written with.
    state, trials = tmp_path / "sampler.sqlite", {}
    made, resumed_with = ({"name": "fixable-first", "failure_cost": cost} for cost in (3, 1))
    with create(made, state=state) as first:
        drive(first, range(3), trials)
    with create(resumed_with, state=state) as planned:
        planned.pick(SHARDS[0], 3)  # a dry run writes nothing, its spec neither
    assert read_durable_state(state)["spec"] == made

    with create(resumed_with, state=state) as resumed:
        drive(resumed, range(3, 12), trials)
        resumed.pick(SHARDS[0], 12)  # in flight at the end: written at close, and replayed
        stopped = resumed.state_dict()

    saved = read_durable_state(state)
    assert saved["spec"] == resumed_with
    assert saved["state"] == stopped


@pytest.mark.parametrize("name", BUILT_INS)
def test_picks_never_recorded_hold_bounded_memory_and_are_kept_at_close(
    tmp_path: Path, name: str
) -> None:
    import tracemalloc

    # Rollouts that never come back leave picks with no record after them. They were held
    # in memory, unwritten, without bound (500,000 picks: 69 MB), and past some 8,000 they
    # were dropped at close: the file reopened as the sampler before them.
    state = tmp_path / "sampler.sqlite"
    with durable(name, state) as sampler:
        sampler.record(sampler.pick(SHARDS[0], 0), 1.0)
        tracemalloc.start()
        try:
            held = []
            for step in range(1, 30_001):
                sampler.pick(SHARDS[0], step)
                if step % 10_000 == 0:
                    held.append(tracemalloc.get_traced_memory()[0])
        finally:
            tracemalloc.stop()
        stopped = sampler.state_dict()
    # Unbounded, each 10,000 picks held about 1.3 MB more; written as they come, a few
    # thousand picks' worth at most.
    assert held[2] - held[0] < 300_000, held

    with durable(name, state) as reopened:
        assert reopened.rounds == 30_001
        reopened_state = reopened.state_dict()
    if name == "fixable-first":
        # The log grew past an eighth of the replay limit, so it was snapshotted; a snapshot
        # holds no pick in flight (the module says so), and fixable-first skips tasks in
        # flight: replayed after it, a later pick may fall on another task. Its pick count,
        # and everything but when each task was last picked, are exact.
        assert reopened_state["picks"] == stopped["picks"] == 30_001
        last = 4  # a task's fields: fails, passes, streak, mixed, last pick, seen
        assert {task: f[:last] + f[last + 1 :] for task, f in reopened_state["tasks"].items()} == {
            task: f[:last] + f[last + 1 :] for task, f in stopped["tasks"].items()
        }
        reopened_state.pop("tasks"), stopped.pop("tasks")
    assert reopened_state == stopped


def test_picks_never_recorded_of_many_large_shards_hold_bounded_memory_and_are_kept(
    tmp_path: Path,
) -> None:
    import tracemalloc

    # With more shards in turn than a sampler indexes, each pick queues its whole shard: held
    # until 4,096 entries were, 2,000-task shards took 63 MB; and picks of a large shard
    # were dropped at close once the log neared the replay limit (after some 900 picks).
    shards = [[f"s{shard}-t{task}" for task in range(2_000)] for shard in range(10)]
    state = tmp_path / "sampler.sqlite"
    with durable("round-robin", state) as sampler:
        sampler.record(sampler.pick(shards[0], 0), 1.0)
        tracemalloc.start()
        try:
            for step in range(1, 1_501):
                sampler.pick(shards[step % len(shards)], step)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        stopped = sampler.state_dict()
    assert peak < 16_000_000, peak  # unbounded: some 30 MB by now

    with durable("round-robin", state) as reopened:
        assert reopened.rounds == 1_501
        assert reopened.state_dict() == stopped


def test_picks_never_recorded_within_a_told_round_are_written_and_the_round_reopens_whole(
    tmp_path: Path,
) -> None:
    # fixable-first told of rounds is snapshotted only at a round's end, where its
    # state_dict() is whole: a failure waits for the round's end in memory alone. Picks never
    # recorded were folded into a snapshot mid-round, and the failure was forgotten.
    state, few = tmp_path / "sampler.sqlite", [f"t{task}" for task in range(8)]
    with durable("fixable-first", state) as sampler:
        for task in few:
            sampler.record(sampler.pick(few, 0), 1.0 if task != "t1" else 0.0)
        sampler.end_round(0)  # type: ignore[attr-defined]
        sampler.pick(few, 1)
        sampler.record("t1", 0.0)  # waits for the round's end
        for _ in range(4_500):  # rollouts that never come back
            sampler.pick(few, 1)
        sampler.pick(few, 1)
        sampler.record("t2", 0.0)
        sampler.end_round(0)  # type: ignore[attr-defined]
        stopped = sampler.state_dict()

    with durable("fixable-first", state) as reopened:
        assert reopened.state_dict() == stopped


@pytest.mark.parametrize("resumed", [False, True], ids=["one-run", "resumed-between-rounds"])
def test_a_long_told_round_is_not_snapshotted_before_its_end(tmp_path: Path, resumed: bool) -> None:
    # "Four times the log" is for a sampler never told of rounds; it also fired mid-round for
    # one that is, and the round's failures waiting for its end were forgotten; and once that
    # was mended, in a run resumed between rounds until its first round ended.
    state, few = tmp_path / "sampler.sqlite", [f"t{task}" for task in range(8)]
    sampler = durable("fixable-first", state)
    for _ in few:
        sampler.record(sampler.pick(few, 0), 1.0)
    sampler.end_round(0)  # type: ignore[attr-defined]
    if resumed:
        sampler.close()
        sampler = durable("fixable-first", state)
    with sampler:
        sampler.pick(few, 1)
        sampler.record("t1", 0.0)
        for _ in range(300):
            sampler.pick(few, 1)
        sampler.pick(few, 1)
        sampler.record("t2", 0.0)  # the 4x rule's snapshot came here
        sampler.end_round(0)  # type: ignore[attr-defined]
        stopped = sampler.state_dict()
    assert stopped["no_commit"] == ["t1", "t2"]

    with durable("fixable-first", state) as reopened:
        assert reopened.state_dict() == stopped


def test_a_sampler_made_durable_without_a_spec_is_read_with_its_own_parameters(
    tmp_path: Path,
) -> None:
    # Given no spec, the file kept the sampler's name alone, and state show replayed its
    # log through a sampler built with the defaults (failure_cost 3, not 5).
    state, trials = tmp_path / "sampler.sqlite", {}
    built = create({"name": "fixable-first", "failure_cost": 5})
    with DurableSampler(built, state) as sampler:
        drive(sampler, range(12), trials)
        sampler.pick(SHARDS[0], 12)
        stopped = sampler.state_dict()

    saved = read_durable_state(state)
    assert saved["spec"] == {"name": "fixable-first", "failure_cost": 5}
    assert saved["state"] == stopped
    # Resumed with other parameters and no spec, the file is read with those; a provider
    # the file names, which the sampler cannot tell, is kept.
    with sqlite3.connect(state) as db:
        told = {"name": "fixable-first", "failure_cost": 5, "provider": "agentdescent-sampling"}
        db.execute("UPDATE meta SET value = ? WHERE key = 'spec'", (json.dumps(told),))
    db.close()
    with DurableSampler(create({"name": "fixable-first", "failure_cost": 2}), state) as resumed:
        drive(resumed, range(13, 16), trials)
        resumed.pick(SHARDS[0], 16)
        stopped = resumed.state_dict()
    saved = read_durable_state(state)
    assert saved["spec"] == {**told, "failure_cost": 2}
    assert saved["state"] == stopped


@attrs.define
class Threshold:
    """An attrs sampler whose registered factory takes a percentage, not its field."""

    name: ClassVar[str] = "threshold"
    threshold: float = 0.5

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return check_keys(keys)[0]

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name, "version": 1}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        check_state(state, self.name, 1)


@pytest.mark.parametrize(
    ("made", "kept"),
    [
        ("difficulty-weighted", "difficulty-weighted"),
        ("difficulty-weighted:c=0.1", {"name": "difficulty-weighted", "c": 0.1}),
        ("dw-hot", "dw-hot"),  # a preset: its parameters are not its spec's
        ({"name": "threshold", "pct": 70}, "threshold"),  # a factory taking other parameters
    ],
    ids=["defaults", "changed", "a-preset", "a-factory"],
)
def test_a_sampler_made_durable_without_a_spec_keeps_one_that_builds_it(
    tmp_path: Path, made: str | dict[str, Any], kept: str | dict[str, Any]
) -> None:
    # A preset's or a factory's sampler had its class's fields stored as its parameters,
    # which its name does not take: state show, which builds the sampler, failed.
    registry = Registry()
    registry.register(lambda: DifficultyWeighted(c=0.5), name="dw-hot")
    registry.register(lambda pct=50: Threshold(threshold=pct / 100), name="threshold")
    state = tmp_path / "sampler.sqlite"
    with DurableSampler(registry.create(made), state) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    with contextlib.closing(sqlite3.connect(state)) as db:
        (stored,) = db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
    assert json.loads(stored) == kept
    registry.create(kept)  # builds


def test_a_snapshot_that_failed_once_never_lets_unrecorded_picks_take_the_log_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After a failed snapshot, none was tried before the log doubled in entries, while picks
    # of large shards were written whatever they cost: the file went past REPLAY_LIMIT, and
    # the library refused to open its own file.
    from agentdescent_sampling import durable as module

    monkeypatch.setattr(module, "REPLAY_LIMIT", 1 << 23)
    written, armed = module._write_snapshot, [False]

    def full_once(db: Any, *args: Any) -> None:
        if armed[0]:
            armed[0] = False
            raise sqlite3.OperationalError("database or disk is full")
        written(db, *args)

    monkeypatch.setattr(module, "_write_snapshot", full_once)
    state, few = tmp_path / "sampler.sqlite", [f"t{task}" for task in range(8)]
    big = [[f"s{shard}-{task}" for task in range(8_000)] for shard in range(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the failed snapshot's
        with durable("fixable-first", state) as sampler:
            for _ in few:
                sampler.record(sampler.pick(few, 0), 1.0)
            sampler.end_round(0)  # type: ignore[attr-defined]
            armed[0] = True
            while armed[0]:  # a long round, until the cost rule's snapshot fails
                sampler.record(sampler.pick(few, 1), 1.0)
            for step in range(1_200):  # rollouts that never come back: past the limit
                sampler.pick(big[step % len(big)], 1)
            records = sampler.records

    with durable("fixable-first", state) as reopened:
        assert reopened.records == records


def test_picks_kept_at_close_never_make_a_state_its_own_release_refuses_to_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdescent_sampling import durable as module

    # Picks with no record after them are folded into a snapshot only by the thousand:
    # written at close, as many as these (300 picks of 4,000 tasks, past a limit 32 times
    # smaller) made a file refused as "made or changed by something else".
    monkeypatch.setattr(module, "REPLAY_LIMIT", 1 << 20)
    state, keys = tmp_path / "sampler.sqlite", [f"task-{k}" for k in range(4000)]
    with durable("fixable-first", state) as sampler:
        sampler.record(sampler.pick(keys, 0), 1.0)
        for step in range(1, 300):
            sampler.pick(keys, step)

    with durable("fixable-first", state) as reopened:
        assert reopened.records == 1


def test_a_state_on_a_read_only_file_system_is_refused_naming_it_the_cause_and_what_to_try(
    tmp_path: Path, read_only_file_system: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    # Opening an existing state said only "[Errno 30] Read-only file system: '<the path again>'".
    files = tmp_path / "files"
    files.mkdir()
    _saved(files, "round-robin")
    mounted = tmp_path / "ro"
    state, new = mounted / "sampler.sqlite", mounted / "runs" / "new.sqlite"
    opening = (
        "import sys\nfrom agentdescent_sampling import StateError, create\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n        create('round-robin', state=path)\n"
        "    except StateError as error:\n        print(error)\n"
    )

    run = read_only_file_system(files, mounted, sys.executable, "-c", opening, str(state), str(new))

    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"cannot open the sampler state {str(state)!r}: its file system is mounted read-only "
        f"(Errno 30); remount it read-write, or give a path on a writable file system",
        f"cannot make the sampler state {short_repr(str(new))}: the directory {str(mounted)!r} is "
        f"on a file system mounted read-only; give a path on a writable file system, or remount "
        f"it read-write",
    ]


class _LockHeldBack:
    """The sampler's lock, except that ``thread``'s first wait for it first lets the test in."""

    def __init__(self, lock: Any, thread: str) -> None:
        self.lock, self.thread = lock, thread
        self.arrived, self.go = threading.Event(), threading.Event()

    def __enter__(self) -> Any:
        if threading.current_thread().name == self.thread and not self.arrived.is_set():
            self.arrived.set()
            assert self.go.wait(10)
        return self.lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.lock.__exit__(*exc)


def _held_back(sampler: DurableSampler, call: Callable[[], object]) -> tuple[Any, Any]:
    """Run ``call`` in a thread stopped as it waits for the sampler's lock; the lock and thread."""
    held = _LockHeldBack(sampler._lock, "held-back")
    sampler._lock = held  # type: ignore[assignment]  # the same lock, with a gate
    thread = threading.Thread(target=call, name="held-back")
    thread.start()
    assert held.arrived.wait(10)
    return held, thread


def test_a_record_made_while_another_thread_loads_a_state_is_counted(tmp_path: Path) -> None:
    # load_state_dict() read the record count before it took the lock, and set it back.
    sampler = durable("difficulty-weighted", tmp_path / "sampler.sqlite")
    state = sampler.state_dict()
    held, loader = _held_back(sampler, lambda: sampler.load_state_dict(state))
    sampler.record("a", 1.0)
    held.go.set()
    loader.join(10)
    assert sampler.records == 1
    sampler.close()
    assert read_durable_state(tmp_path / "sampler.sqlite")["records"] == 1


def test_a_pick_waiting_while_a_state_loads_continues_the_loaded_round_indexes(
    tmp_path: Path,
) -> None:
    # pick() shifted its round index by the base it read before it took the lock.
    keys = [f"task{i}" for i in range(10)]
    with durable("round-robin", tmp_path / "first.sqlite") as first:
        for round_index in range(5):
            first.record(first.pick(keys, round_index), 1.0)
        save_state(first, tmp_path / "export.json")
    sampler = durable("round-robin", tmp_path / "second.sqlite")
    picked: list[str] = []
    held, picker = _held_back(sampler, lambda: picked.append(sampler.pick(keys, 0)))
    load_state(sampler, tmp_path / "export.json")
    held.go.set()
    picker.join(10)
    assert picked == ["task5"]  # round 0 of this process is round 5 of the state
    sampler.close()


@pytest.mark.parametrize("name", BUILT_INS)
def test_a_shard_with_a_key_that_is_not_a_string_is_refused_and_the_file_still_opens(
    name: str, tmp_path: Path
) -> None:
    # round-robin checks only the key it picks: the shard it was given must not reach the
    # file's log, which could not be read back, and every record would be lost with it.
    path = tmp_path / "state.sqlite"
    with durable(name, path) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)
        with pytest.raises(TypeError, match="got int 3"):
            sampler.pick(["a", 3], 2)  # type: ignore[list-item]
        sampler.record(sampler.pick(["a", "b"], 1), 0.0)
        expected = sampler.wrapped.state_dict()
    with durable(name, path) as resumed:
        assert resumed.records == 2
        assert resumed.wrapped.state_dict() == expected


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_new_state_named_as_sqlites_own_file_beside_a_database_is_refused(
    tmp_path: Path, suffix: str
) -> None:
    # x.sqlite-wal was made, and a later state at x.sqlite was refused for "unfolded" records.
    path = tmp_path / f"x.sqlite{suffix}"
    with pytest.raises(StateError, match=rf"its name ends with '{suffix}', as the file SQLite"):
        create("round-robin", state=path)
    assert not path.exists()
    with create("round-robin", state=tmp_path / "x.sqlite") as sampler:
        sampler.record("a", 1.0)
    assert sampler.records == 1
    # A name with no file suffix before it is no database's file: team-journal is a state.
    with create("round-robin", state=tmp_path / f"team{suffix}") as sampler:
        sampler.record("a", 1.0)
    assert (tmp_path / f"team{suffix}").is_file()


def test_a_sampler_with_one_of_the_two_state_methods_is_told_which_it_lacks(
    tmp_path: Path,
) -> None:
    # It was told it had neither.
    class LoadsOnly(RoundRobin):
        state_dict = None  # type: ignore[assignment]

    with pytest.raises(InvalidSamplerConfig) as raised:
        DurableSampler(LoadsOnly(), tmp_path / "sampler.sqlite")
    assert "it has load_state_dict() but no state_dict() method." in str(raised.value)
    assert not (tmp_path / "sampler.sqlite").exists()


def test_a_state_named_with_a_leading_tilde_is_made_here_when_written_with_dot_slash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Path drops the './', and the '~t.sqlite' left was read as the home of a user 't.sqlite'.
    monkeypatch.chdir(tmp_path)
    with create("round-robin", state="./~t-agentdescent.sqlite") as sampler:
        sampler.record("a", 1.0)
    assert (tmp_path / "~t-agentdescent.sqlite").is_file()
    with create("round-robin", state="./~t-agentdescent.sqlite") as sampler:
        assert sampler.records == 1


def test_a_state_keeps_the_samplers_registered_name_however_it_was_selected(
    tmp_path: Path,
) -> None:
    # Selected by its alias, the file named 'FixableFirst', and a run selecting it as
    # 'fixable-first' was told the sampler's spec had changed.
    state = tmp_path / "sampler.sqlite"
    with create("FixableFirst:failure_cost=2", state=state) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)
    assert read_durable_state(state)["spec"] == {"name": "fixable-first", "failure_cost": 2}
    with create("fixable_first:failure_cost=2", state=state) as again:
        assert again._respecced is None
    with create("fixable-first", state=state) as changed:
        assert changed._respecced == (
            {"name": "fixable-first", "failure_cost": 2},
            {"name": "fixable-first"},
        )


def test_a_state_directory_no_file_system_lets_be_made_is_told_what_path_to_give() -> None:
    # Under /proc, no directory can be made: it was told "No such file or directory" alone.
    with pytest.raises(StateError) as refused:
        create("round-robin", state="/proc/no-such-directory/state.sqlite")
    assert str(refused.value) == (
        "cannot create the directory of the sampler state "
        "'/proc/no-such-directory/state.sqlite': No such file or directory; give a path in a "
        "directory this user can make and write, such as ~/runs"
    )
