"""Save, restart and load: a resumed run picks exactly what an uninterrupted one would."""

from __future__ import annotations

import codecs
import copy
import json
import math
import os
import pickle
import random
import re
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from agentdescent_sampling import (
    DifficultyWeighted,
    DurableSampler,
    FixableFirst,
    InformativeBand,
    RoundRobin,
    SamplerInfo,
    SamplerSpec,
    StateError,
    available,
    create,
    load_state,
    save_state,
    spec_from_file,
)
from agentdescent_sampling.plugin import Stateful, synchronized
from agentdescent_sampling.state import not_json, write_state_file

BUILT_INS = sorted(
    record.name
    for record in available()
    if isinstance(record, SamplerInfo) and record.distribution == "agentdescent-sampling"
)


def rollouts(sampler: Any, rng: random.Random, start: int, count: int) -> list[str]:
    """Drive ``sampler`` over rotating shards with seeded outcomes; return its picks."""
    keys = [f"t{i}" for i in range(30)]
    picks = []
    for r in range(start, start + count):
        shard = keys[r % 3 :: 2]
        picked = sampler.pick(shard, r)
        picks.append(picked)
        sampler.record(picked, rng.choice([0.0, 1.0, 0.5]))
    return picks


@pytest.mark.parametrize("name", BUILT_INS)
def test_save_restart_load_continues_with_the_same_picks(name: str, tmp_path: Path) -> None:
    uninterrupted = create(name)
    expected = rollouts(uninterrupted, random.Random(1), 0, 300)

    first = create(name)
    rng = random.Random(1)
    before = rollouts(first, rng, 0, 137)
    assert isinstance(first, Stateful)
    save_state(first, tmp_path / "state.json")
    resumed = create(name)
    load_state(resumed, tmp_path / "state.json")  # type: ignore[arg-type]
    after = rollouts(resumed, rng, 137, 163)

    assert before + after == expected


@pytest.mark.parametrize("name", BUILT_INS)
def test_state_is_json_with_the_sampler_name_and_a_version(name: str) -> None:
    state = create(name).state_dict()
    assert json.loads(json.dumps(state)) == state
    assert state["sampler"] == name
    assert state["version"] == 1


def good_state_file(tmp_path: Path) -> Path:
    sampler = create("difficulty-weighted")
    rollouts(sampler, random.Random(2), 0, 50)
    path = tmp_path / "state.json"
    save_state(sampler, path)  # type: ignore[arg-type]
    return path


BAD_FILES: dict[str, Callable[[str], str]] = {
    "truncated": lambda text: text[: len(text) // 2],
    "not json": lambda text: "\x00garbage",
    "empty": lambda text: "",
    "no format marker": lambda text: json.dumps(json.loads(text)["state"]),
    "wrong version": lambda text: text.replace('"version": 1', '"version": 99'),
    "wrong sampler": lambda text: text.replace('"difficulty-weighted"', '"round-robin"'),
    "negative trials": lambda text: text.replace("[0, 1]", "[0, -1]", 1),
    "passes above trials": lambda text: text.replace("[0, 1]", "[5, 1]", 1),
    "wrong parameters": lambda text: text.replace('"c": 0.2', '"c": 0.9'),
}


@pytest.mark.parametrize("damage", sorted(BAD_FILES))
def test_a_bad_state_file_raises_state_error_and_changes_nothing(
    damage: str, tmp_path: Path
) -> None:
    path = good_state_file(tmp_path)
    text = BAD_FILES[damage](path.read_text())
    assert text != path.read_text()
    path.write_text(text)
    sampler = create("difficulty-weighted")
    sampler.record("kept", 1.0)
    with pytest.raises(StateError, match="state"):
        load_state(sampler, path)  # type: ignore[arg-type]
    assert sampler.stats() == {"kept": (1, 1)}
    assert path.read_text() == text


@pytest.mark.parametrize("owner", [None, "", 3], ids=["null", "empty", "a-number"])
def test_a_state_naming_no_sampler_is_refused_without_advice_to_select_it(
    tmp_path: Path, owner: object
) -> None:
    path = good_state_file(tmp_path)
    document = json.loads(path.read_text())
    document["sampler"] = owner
    path.write_text(json.dumps(document))
    with pytest.raises(StateError, match="names no sampler its state belongs to") as raised:
        load_state(create("difficulty-weighted"), path)  # type: ignore[arg-type]
    assert "select" not in str(raised.value)


def test_a_missing_file_raises_state_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(StateError, match=r"nothing-here\.json"):
        load_state(create("round-robin"), tmp_path / "nothing-here.json")  # type: ignore[arg-type]


def test_a_failed_save_leaves_the_last_good_file_and_no_temporary(tmp_path: Path) -> None:
    path = good_state_file(tmp_path)
    good = path.read_text()

    class Unserializable:
        def state_dict(self) -> dict[str, Any]:
            return {"sampler": "x", "version": 1, "stats": {"t": float("nan")}}

        def load_state_dict(self, state: object) -> None:
            raise AssertionError("not called")

    with pytest.raises(StateError, match="cannot write"):
        save_state(Unserializable(), path)
    assert path.read_text() == good
    assert os.listdir(tmp_path) == ["state.json"]


def test_saving_into_a_missing_directory_says_which_directory_is_missing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    with pytest.raises(StateError, match=f"there is no directory '{missing}'; create it") as told:
        save_state(create("round-robin"), missing / "s.json")  # type: ignore[arg-type]
    assert ".tmp" not in str(told.value)
    assert "state_dict()" not in str(told.value)  # the advice for a state that is not JSON


def test_saving_over_a_directory_says_to_name_a_file_and_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(StateError, match="it is a directory, not a file; name a file, such as"):
        save_state(create("round-robin"), tmp_path / "taken")  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == ["taken"]


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="no /dev/stdout on this system")
def test_saving_to_dev_stdout_appended_to_a_file_keeps_what_the_file_held(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("line 1\n", encoding="utf-8")
    code = (
        "from agentdescent_sampling import create, save_state\n"
        "save_state(create('round-robin'), '/dev/stdout')\n"
    )
    with open(log, "a", encoding="utf-8") as appended:  # run >> run.log
        subprocess.run([sys.executable, "-c", code], stdout=appended, check=True)

    held, saved = log.read_text(encoding="utf-8").split("\n", 1)
    assert held == "line 1"
    assert json.loads(saved)["sampler"] == "round-robin"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_saving_into_a_named_pipe_writes_through_it_and_leaves_it_a_pipe(tmp_path: Path) -> None:
    # A pipe, a terminal or /dev/null: a rename would put a regular file in its place.
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()), daemon=True)
    reader.start()
    sampler = create("round-robin")
    save_state(sampler, pipe)  # type: ignore[arg-type]
    reader.join(timeout=10)

    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert json.loads(read[0])["sampler"] == "round-robin"
    assert os.listdir(tmp_path) == ["pipe"]


@pytest.mark.skipif(not os.path.exists(os.devnull), reason="needs a device file")
def test_loading_from_a_device_or_pipe_is_told_to_give_a_regular_file() -> None:
    with pytest.raises(StateError) as raised:
        load_state(create("round-robin"), os.devnull)

    assert str(raised.value) == (
        f"cannot read sampler state from {os.devnull!r}: it is a character device, not a "
        f"regular file; give a regular file (save_state() writes one, as 'state export -o "
        f"FILE' does)"
    )


def test_saving_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "runs" / "state.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = tmp_path / "current.json"
    link.symlink_to(real)
    sampler = create("difficulty-weighted")
    sampler.record("a", 1.0)
    save_state(sampler, link)  # type: ignore[arg-type]
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    resumed = create("difficulty-weighted")
    load_state(resumed, real)  # type: ignore[arg-type]
    assert resumed.stats() == {"a": (1, 1)}
    assert sorted(os.listdir(tmp_path)) == ["current.json", "runs"]


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
def test_saving_over_a_file_keeps_its_permissions(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "state.json"
    path.write_text("{}")
    path.chmod(mode)
    save_state(create("round-robin"), path)  # type: ignore[arg-type]
    assert stat.S_IMODE(path.stat().st_mode) == mode


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002, 0o000])
def test_a_new_state_export_is_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        save_state(create("round-robin"), tmp_path / "state.json")  # type: ignore[arg-type]
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "state.json").stat().st_mode) == 0o600


STALLED_SAVE = """
import os, sys, time
from agentdescent_sampling import create, save_state

def stall(descriptor):
    print("writing", flush=True)
    time.sleep(120)

os.fsync = stall  # the save stops mid-write, its temporary file on disk
sampler = create("difficulty-weighted")
sampler.record("a", 1.0)
save_state(sampler, sys.argv[1])
"""


def _kill_mid_save(path: Path) -> None:
    """Start a real process saving to ``path``, and kill -9 it in the middle of the write."""
    child = subprocess.Popen(
        [sys.executable, "-c", STALLED_SAVE, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "writing\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)


def _temporaries(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.endswith(".tmp")]


@pytest.mark.parametrize("size", [234, 255])
def test_a_save_whose_temporary_name_would_be_too_long_is_refused_naming_the_longest_name(
    tmp_path: Path, size: int
) -> None:
    target = tmp_path / ("s" * (size - len(".json")) + ".json")

    with pytest.raises(StateError) as refused:
        save_state(create("round-robin"), target)

    assert f"its name is {size} bytes, and it is written first to a temporary file" in str(
        refused.value
    )
    assert "give a name of at most 233 bytes" in str(refused.value)
    assert list(tmp_path.iterdir()) == []
    save_state(create("round-robin"), target.with_name("s" * 228 + ".json"))  # 233 bytes


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs kill -9")
def test_the_next_save_removes_the_temporaries_of_saves_killed_mid_write(
    tmp_path: Path,
) -> None:
    path = good_state_file(tmp_path)
    good = path.read_text()
    for _ in range(3):
        _kill_mid_save(path)
        # Each kill leaves its temporary file; each save, killed or not, first removes
        # those of dead savers, so they never pile up.
        assert len(_temporaries(tmp_path)) == 1
        assert path.read_text() == good  # and the last good state
    sampler = create("difficulty-weighted")
    sampler.record("b", 0.0)
    save_state(sampler, path)  # type: ignore[arg-type]
    assert _temporaries(tmp_path) == []
    resumed = create("difficulty-weighted")
    load_state(resumed, path)  # type: ignore[arg-type]
    assert resumed.stats() == {"b": (0, 1)}


def test_a_save_leaves_the_temporaries_of_a_running_saver_and_of_other_files(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.json"
    running = tmp_path / f".state.json.{os.getppid()}-0123abcd.tmp"  # our parent runs
    other = tmp_path / f".other.json.{2**22 + 12345}-0123abcd.tmp"  # another file's
    unrelated = tmp_path / ".state.json.notes.tmp"  # not one of ours
    for leftover in (running, other, unrelated):
        leftover.write_text("")
    impossible = tmp_path / ".state.json.999999999999-0123abcd.tmp"  # no process has this id
    impossible.write_text("")
    directory = tmp_path / ".state.json.999999999998-0123abcd.tmp"  # cannot be unlinked
    directory.mkdir()
    save_state(create("round-robin"), path)  # type: ignore[arg-type]
    assert sorted(_temporaries(tmp_path)) == sorted(
        p.name for p in (running, other, unrelated, directory)
    )


def test_a_state_file_with_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = good_state_file(tmp_path)
    path.write_bytes(codecs.BOM_UTF8 + path.read_bytes())
    sampler = create("difficulty-weighted")
    load_state(sampler, path)  # type: ignore[arg-type]
    assert sampler.stats()


def test_saving_or_loading_a_sampler_without_state_methods_says_what_it_lacks(
    tmp_path: Path,
) -> None:
    class NoState:
        name = "no-state"

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            return keys[0]

        def record(self, task_id: str, score: float) -> None:
            return None

    path = tmp_path / "sampler.json"
    with pytest.raises(TypeError, match=r"^sampler 'no-state' \(NoState\) cannot be saved to "
                       r".*sampler.json': it has no state_dict\(\) and load_state_dict\(\) "
                       r"methods. Use a sampler that has them"):  # fmt: skip
        save_state(NoState(), path)
    assert not path.exists()
    save_state(create("round-robin"), path)
    with pytest.raises(TypeError, match=r"cannot load the state in .*sampler.json'"):
        load_state(NoState(), path)  # type: ignore[arg-type]


def test_saving_a_state_that_contains_itself_is_refused_at_once_not_walked_forever(
    tmp_path: Path,
) -> None:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    path = tmp_path / "sampler.json"
    outcome: list[BaseException] = []

    def save() -> None:
        try:
            write_state_file(path, {"format": "agentdescent-sampling/state", "state": looped})
        except BaseException as error:  # noqa: BLE001  # the outcome checked below
            outcome.append(error)

    # In a daemon thread: before the fix the save walked the loop forever.
    saver = threading.Thread(target=save, daemon=True)
    saver.start()
    saver.join(30)

    assert not saver.is_alive(), "the save is still walking the state"
    (error,) = outcome
    assert isinstance(error, StateError)
    assert "document['state']['self'] contains itself, which JSON cannot hold" in str(error)
    assert "state_dict() must return plain JSON data" in str(error)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("state", "told"),
    [
        ({"n": 1, "seen": {"a"}}, "state['seen'] is a set (Object of type set is not JSON"),
        ({"stats": [0.5, math.inf]}, "state['stats'][1] is inf (Out of range float values"),
        ({"by": {(1, 2): 3}}, "state['by'] has the key (1, 2) (a tuple) (keys must be str"),
    ],
    ids=["a-set", "infinity", "a-tuple-key"],
)
def test_saving_a_state_json_refuses_names_where_the_value_is(
    tmp_path: Path, state: dict[str, Any], told: str
) -> None:
    # Python's words named the type alone ("Object of type set is not JSON serializable"),
    # leaving an author to search a state of thousands of tasks for it.
    with pytest.raises(StateError) as refused:
        write_state_file(
            tmp_path / "s.json", {"format": "agentdescent-sampling/state", "state": state}
        )
    assert told in str(refused.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("count", "told"),
    [(2**60, "the whole number 1152921504606846976"),
     (10**700, "the whole number 1" + "0" * 39 + "... (701 digits)"),
     # Python writes no int of so many digits: this was its bare ValueError.
     (10**5000, "a whole number of over 4,300 digits")],
    ids=["past-2**53", "cut-after-40-digits", "past-4,300-digits"],
)  # fmt: skip
def test_saving_a_count_no_reader_takes_names_where_it_is(
    tmp_path: Path, count: int, told: str
) -> None:
    document = {"format": "agentdescent-sampling/state", "state": {"picks": [0, count]}}

    with pytest.raises(StateError) as raised:
        write_state_file(tmp_path / "sampler.json", document)

    assert (
        f"document['state']['picks'][1] is {told}, over the 9,007,199,254,740,992 a state "
        f"file holds (its readers may refuse it); start the sampler fresh"
    ) in str(raised.value)


@pytest.mark.parametrize(
    ("state", "told"),
    [({"a": [1, 10**5000]}, "state['a'][1] is a whole number of over 4,300 digits (Exceeds"),
     ({"a": {10**5000: 1}}, "state['a'] has a key that is a whole number of over 4,300 digits")],
    ids=["a-value", "a-key"],
)  # fmt: skip
def test_a_state_json_cannot_write_for_a_number_of_too_many_digits_is_named_where_it_is(
    state: dict[str, Any], told: str
) -> None:
    with pytest.raises(ValueError, match="Exceeds the limit") as refused:
        json.dumps(state)

    assert not_json(state, refused.value).startswith(told)


@pytest.mark.parametrize(
    ("call", "told"),
    [(lambda: save_state(RoundRobin, "s.json"), "save_state() takes a sampler, not the class "
      "RoundRobin: pass an instance, RoundRobin()"),
     (lambda: load_state(RoundRobin, "s.json"), "load_state() takes a sampler, not the class"),
     (lambda: synchronized(RoundRobin), "synchronized() takes a sampler, not the class"),  # type: ignore[arg-type]
     (lambda: DurableSampler(RoundRobin, "s.sqlite"), "DurableSampler() takes a sampler, not"),  # type: ignore[arg-type]
     (lambda: save_state(RoundRobin(), None), "save_state() takes a file path, a str or a "
      "pathlib.Path; got NoneType None"),  # type: ignore[arg-type]
     (lambda: load_state(RoundRobin(), b"s.json"), "load_state() takes a file path"),  # type: ignore[arg-type]
     (lambda: spec_from_file(None), "spec_from_file() takes a file path"),  # type: ignore[arg-type]
    ],
    ids=["save-a-class", "load-a-class", "synchronize-a-class", "durable-class", "save-to-none",
         "load-bytes", "spec-from-none"],
)  # fmt: skip
def test_a_class_for_a_sampler_or_no_path_for_a_file_is_told_what_to_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: Callable[[], object], told: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=re.escape(told)):
        call()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", BUILT_INS)
@pytest.mark.parametrize(
    "copied", [copy.copy, copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))],
    ids=["copy", "deepcopy", "pickle"],
)  # fmt: skip
def test_a_copy_of_a_sampler_picks_as_it_does_and_learns_apart(
    name: str, copied: Callable[[Any], Any]
) -> None:
    keys = ["a", "b", "c", "d"]
    sampler = synchronized(create(name))  # a served sampler copies what it serves
    for step in range(12):
        sampler.record(sampler.pick(keys, step), float(step % 3 == 0))
    twin = copied(sampler)

    assert repr(twin) == repr(sampler)
    assert twin.state_dict() == sampler.state_dict()
    assert [twin.pick(keys, 12 + step) for step in range(4)] == [
        sampler.pick(keys, 12 + step) for step in range(4)
    ]
    before = copy.deepcopy(sampler.state_dict())
    twin.record("a", 1.0)
    assert sampler.state_dict() == before


def test_a_spec_pickles_and_a_durable_sampler_refuses_saying_what_to_send(tmp_path: Path) -> None:
    spec = SamplerSpec("difficulty-weighted", {"c": 0.1}, None, "run.toml")
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert copy.deepcopy(spec).source == "run.toml"
    durable = create("round-robin", state=tmp_path / "state.sqlite")
    with durable, pytest.raises(TypeError, match=r"copy the sampler it keeps \(durable.wrapped\)"):
        pickle.dumps(durable)


@pytest.mark.parametrize("builtin", [RoundRobin, DifficultyWeighted, InformativeBand, FixableFirst])
def test_a_subclass_of_a_built_in_is_copied_as_python_copies_it_fields_and_all(
    builtin: type[Any],
) -> None:
    # A fresh fixable-first subclass raised AttributeError: its groups were made at first use.
    @attrs.define(eq=False)
    class Counted(builtin):  # type: ignore[misc,valid-type]
        calls: int = attrs.field(init=False, default=0)

    counted = Counted()
    counted.calls = 2

    copied = copy.copy(counted)
    assert copied.calls == 2
    assert copied.pick(["a", "b"], 0) in ("a", "b")
    with pytest.raises(TypeError, match=r"pickle '_thread\.lock' object"):
        copy.deepcopy(counted)  # its lock cannot be copied, as configuration.md says


def test_a_deep_copy_keeps_a_served_sampler_and_what_it_serves_one_object() -> None:
    served = synchronized(create("difficulty-weighted"))
    one, other = copy.deepcopy([served, served.wrapped])

    assert one.wrapped is other
    assert one.lock is not None
    assert one.lock is not served.lock


def test_a_durable_sampler_refuses_a_shallow_or_deep_copy_too(tmp_path: Path) -> None:
    durable = create("round-robin", state=tmp_path / "state.sqlite")
    with durable:
        for copied in (copy.copy, copy.deepcopy):
            with pytest.raises(TypeError, match="cannot be copied or pickled"):
                copied(durable)


HUGE = "x" * 1_000_000
HUGE_ENTRIES = {
    "difficulty-weighted": ("stats", {HUGE: [2, 1]}),
    "informative-band": ("tasks", {"a": {"passes": 2, "trials": 1, "note": HUGE}}),
    "fixable-first-credit": ("credit", {HUGE: 0.5}),
    "fixable-first-verified": ("verified", [HUGE]),
    "fixable-first-evidenced": ("evidenced", [HUGE]),
}


@pytest.mark.parametrize(("key", "value"), HUGE_ENTRIES.values(), ids=HUGE_ENTRIES)
def test_a_bad_state_entry_is_quoted_cut_not_whole(key: str, value: object) -> None:
    # Each was quoted whole: a state file's 100 MB task id made a 100 MB error message.
    sampler = create(
        "fixable-first" if key in ("credit", "verified", "evidenced") else
        "difficulty-weighted" if key == "stats" else "informative-band"
    )  # fmt: skip
    state = {**sampler.state_dict(), key: value}

    with pytest.raises(StateError) as refused:
        sampler.load_state_dict(state)

    assert "xxx..." in str(refused.value)
    assert len(str(refused.value)) < 1_000
