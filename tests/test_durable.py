"""``create(spec, state=PATH)``: statistics that survive a stop, a crash and a mismatch."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import (
    DurableSampler,
    InvalidSamplerConfig,
    StateError,
    TaskSampler,
    check_keys,
    check_score,
    create,
    load_state,
    save_state,
)
from agentdescent_sampling.state import check_state

BUILT_INS = ["round-robin", "difficulty-weighted", "informative-band", "fixable-first"]
SHARDS = [["a", "b", "c", "d"], ["e", "f", "g"]]


def outcome(task: str, trial: int) -> float:
    """A deterministic reward: each task passes on its own share of trials."""
    return 1.0 if (trial * (ord(task) % 5 + 1)) % 3 == 0 else 0.0


def drive(sampler: TaskSampler, rounds: range, trials: dict[str, int]) -> list[str]:
    """Roll out one pick per shard per round, as evolve()'s sequential path does."""
    picks = []
    for round_index in rounds:
        for shard in SHARDS:
            picked = sampler.pick(shard, round_index)
            trials[picked] = trials.get(picked, 0) + 1
            sampler.record(picked, outcome(picked, trials[picked]))
            picks.append(picked)
    return picks


@pytest.mark.parametrize("name", BUILT_INS)
def test_a_resumed_sampler_picks_exactly_as_if_it_had_never_stopped(
    tmp_path: Path, name: str
) -> None:
    state = tmp_path / "sampler.json"
    uninterrupted = drive(create(name), range(12), {})

    trials: dict[str, int] = {}
    before = drive(create(name, state=state), range(5), trials)
    # A new process: the engine numbers its rounds from 0 again.
    after = drive(create(name, state=state), range(7), trials)

    assert before + after == uninterrupted


@pytest.mark.parametrize("name", BUILT_INS)
def test_every_record_is_on_disk_when_record_returns(tmp_path: Path, name: str) -> None:
    state = tmp_path / "sampler.json"
    sampler = create(name, state=state)
    assert not state.exists()

    for count in range(1, 9):
        picked = sampler.pick(SHARDS[0], count)
        sampler.record(picked, outcome(picked, count))

        reloaded = create(name, state=state)
        assert isinstance(reloaded, DurableSampler)
        assert reloaded.records == count
        assert reloaded.state_dict() == sampler.state_dict()


def test_a_missing_directory_is_created_at_the_first_save(tmp_path: Path) -> None:
    state = tmp_path / "runs" / "csv-total" / "sampler.json"
    sampler = create("difficulty-weighted", state=state)

    sampler.record(sampler.pick(["a"], 0), 1.0)

    assert json.loads(state.read_text(encoding="utf-8"))["records"] == 1


def test_a_state_file_from_save_state_is_loaded(tmp_path: Path) -> None:
    state = tmp_path / "sampler.json"
    plain = create("difficulty-weighted")
    plain.record(plain.pick(["a", "b"], 0), 1.0)
    save_state(plain, state)

    assert create("difficulty-weighted", state=state).state_dict() == plain.state_dict()


def test_a_durable_state_file_is_readable_by_load_state(tmp_path: Path) -> None:
    state = tmp_path / "sampler.json"
    durable = create("informative-band", state=state)
    durable.record(durable.pick(["a", "b"], 0), 0.0)
    plain = create("informative-band")

    load_state(plain, state)

    assert plain.state_dict() == durable.state_dict()


def _saved(tmp_path: Path, spec: str) -> Path:
    state = tmp_path / "sampler.json"
    sampler = create(spec, state=state)
    sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    return state


@pytest.mark.parametrize(
    ("saved_by", "loaded_by", "message"),
    [
        (
            "informative-band",
            "difficulty-weighted",
            "holds the state of sampler 'informative-band'",
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
    before = state.read_bytes()

    with pytest.raises(StateError, match=message) as raised:
        create(loaded_by, state=state)

    assert "the file was left as it is" in str(raised.value)
    assert state.read_bytes() == before
    assert [path.name for path in tmp_path.iterdir()] == ["sampler.json"]


@pytest.mark.parametrize(
    "content",
    [
        "",
        '{"format": "agentdescent-sampling/state", "state": {"sampler": "difficulty-weighted"',
        "not json",
        '{"state": {}}',
        '{"format": "agentdescent-sampling/state", "records": -1, "state": {}}',
        '{"format": "agentdescent-sampling/state", "rounds": "3", "state": {}}',
    ],
    ids=["empty", "truncated", "not-json", "no-marker", "negative-records", "string-rounds"],
)
def test_a_corrupt_state_file_raises_and_is_left_untouched(tmp_path: Path, content: str) -> None:
    state = tmp_path / "sampler.json"
    state.write_text(content, encoding="utf-8")

    with pytest.raises(StateError):
        create("difficulty-weighted", state=state)

    assert state.read_text(encoding="utf-8") == content


def test_a_directory_as_the_state_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidSamplerConfig, match="is a directory"):
        create("round-robin", state=tmp_path)


def test_a_plugin_sampler_without_state_methods_is_refused_with_a_clear_error(
    tmp_path: Path,
) -> None:
    # hardest-first is the plugin in plugins/agentdescent-sampling-hardest, installed by the
    # README's test command.
    with pytest.raises(InvalidSamplerConfig) as raised:
        create("hardest-first", state=tmp_path / "sampler.json")

    assert str(raised.value).startswith(
        "sampler 'hardest-first' (Hardest) cannot keep its state in "
    )
    assert "no state_dict() and load_state_dict() methods" in str(raised.value)
    assert not (tmp_path / "sampler.json").exists()


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


def test_any_sampler_with_state_methods_keeps_its_state(tmp_path: Path) -> None:
    state = tmp_path / "sampler.json"
    first = DurableSampler(LastScore(), state)
    first.record("a", 1.0)
    first.record("b", 0.5)

    resumed = DurableSampler(LastScore(), state)

    assert resumed.wrapped.seen == {"a": 1.0, "b": 0.5}
    assert resumed.pick(["a", "b", "c"], 0) == "c"


def test_another_plugin_samplers_file_is_refused_even_without_its_own_checks(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.json"
    DurableSampler(Checked(), state).record("a", 1.0)
    before = state.read_bytes()

    with pytest.raises(StateError, match="holds the state of sampler 'checked', not 'last-score'"):
        DurableSampler(LastScore(), state)

    assert state.read_bytes() == before


def test_a_plugin_samplers_own_error_on_a_foreign_state_is_a_state_error(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.json"
    save_state(create("difficulty-weighted"), state)  # no envelope: only the sampler can judge
    before = state.read_bytes()

    with pytest.raises(
        StateError, match="sampler 'last-score' could not load this state: KeyError"
    ):
        DurableSampler(LastScore(), state)

    assert state.read_bytes() == before


def test_a_failed_save_raises_state_error_and_keeps_the_record_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("", encoding="utf-8")
    sampler = create("difficulty-weighted", state=blocker / "sampler.json")

    with pytest.raises(StateError, match="cannot create the directory"):
        sampler.record("a", 1.0)

    assert sampler.stats() == {"a": (1, 1)}


def test_concurrent_records_all_reach_the_file(tmp_path: Path) -> None:
    state = tmp_path / "sampler.json"
    sampler = create("difficulty-weighted", state=state)
    keys = [f"task-{i}" for i in range(10)]

    def worker() -> None:
        for step in range(25):
            sampler.record(sampler.pick(keys, step), 1.0 if step % 2 else 0.0)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    saved = json.loads(state.read_text(encoding="utf-8"))
    assert saved["records"] == 200
    assert sum(trials for _, trials in saved["state"]["stats"].values()) == 200


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


@pytest.mark.parametrize("name", BUILT_INS)
def test_a_process_killed_mid_run_loses_no_record_that_returned(tmp_path: Path, name: str) -> None:
    state = tmp_path / "sampler.json"
    run = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_RUN, name, str(state), str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert run.stdout is not None
    acknowledged = 0
    while acknowledged < 60:
        acknowledged = int(run.stdout.readline())
    run.kill()  # SIGKILL, possibly in the middle of a save
    run.wait()

    resumed = create(name, state=state)
    assert isinstance(resumed, DurableSampler)
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
