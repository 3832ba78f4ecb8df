"""Each number is bounded at the door by what it means, and every path error is our own."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import InvalidSamplerConfig, StateError, create, load_state, save_state
from agentdescent_sampling.protocol import is_count, is_tally
from agentdescent_sampling.refs import from_run_spec

SHARD = [f"task-{i}" for i in range(4)]


def _used(spec: str) -> Any:
    sampler = create(spec)
    for round_index in range(12):
        picked = sampler.pick(SHARD, round_index)
        sampler.record(picked, float(round_index % 3 == 0))
    return sampler


def _row(index: int, value: int) -> Callable[[dict[str, Any]], None]:
    def damage(state: dict[str, Any]) -> None:
        for row in state["tasks"].values():
            row[index] = value

    return damage


def _evidence(value: float) -> Callable[[dict[str, Any]], None]:
    def damage(state: dict[str, Any]) -> None:
        state["evidence"][0] = [value, value]

    return damage


def _posterior(value: float) -> Callable[[dict[str, Any]], None]:
    def damage(state: dict[str, Any]) -> None:
        for entry in state["posterior"].values():
            entry[0] = value

    return damage


DAMAGES = {
    "fixable-first fails 10**7": ("fixable-first", _row(0, 10**7)),
    "fixable-first fails just over the bound": ("fixable-first", _row(0, 100_001)),
    "fixable-first fails 2**63 - 1": ("fixable-first", _row(0, 2**63 - 1)),
    "fixable-first passes 2**53 + 1": ("fixable-first", _row(1, 2**53 + 1)),
    "fixable-first evidence 10**400": ("fixable-first", _evidence(10**400)),
    "fixable-first evidence 1e300": ("fixable-first", _evidence(1e300)),
    "fixable-first picks 2**63 - 1": ("fixable-first", lambda s: s.update(picks=2**63 - 1)),
    "difficulty-weighted picks 2**53 + 1": (
        "difficulty-weighted",
        lambda s: s.update(picks=2**53 + 1),
    ),
    "mopps alpha 1e308": ("mopps", _posterior(1e308)),
    "mopps alpha 2**53 * 2": ("mopps", _posterior(2.0**54)),
    "mopps alpha 10**400": ("mopps", _posterior(10**400)),
}


@pytest.mark.parametrize(("name", "damage"), DAMAGES.values(), ids=DAMAGES)
def test_a_state_number_past_its_meaning_is_refused_before_anything_is_replaced(
    name: str, damage: Callable[[dict[str, Any]], None]
) -> None:
    sampler = _used(name)
    before = copy.deepcopy(sampler.state_dict())
    state = copy.deepcopy(before)
    damage(state)
    with pytest.raises(StateError):
        sampler.load_state_dict(state)
    assert sampler.state_dict() == before


def test_the_largest_fails_a_state_holds_still_loads_and_picks_quickly() -> None:
    sampler = _used("fixable-first")
    state = sampler.state_dict()
    _row(0, 100_000)(state)
    for row in state["tasks"].values():
        row[1] = row[2] = 0
    sampler.load_state_dict(state)
    sampler.pick(SHARD, 99)


@pytest.mark.parametrize("name", ["difficulty-weighted", "fixable-first", "informative-band"])
def test_a_state_at_the_count_boundary_is_never_saved_past_what_loads(
    tmp_path: Path, name: str
) -> None:
    sampler = _used(name)
    state = sampler.state_dict()
    state["picks"] = 2**53 - 1
    sampler.load_state_dict(state)
    path = tmp_path / "state.json"
    sampler.record(sampler.pick(SHARD, 0), 1.0)
    save_state(sampler, path)  # picks == 2**53: the most a state holds
    load_state(create(name), path)  # type: ignore[arg-type]
    sampler.record(sampler.pick(SHARD, 1), 1.0)
    with pytest.raises(StateError, match="over the 9,007,199,254,740,992 a state file holds"):
        save_state(sampler, path)
    load_state(create(name), path)  # type: ignore[arg-type]  # the last good file stays


@pytest.mark.parametrize("value", [2**53, 0, 1, 7.5])
def test_counts_and_tallies_up_to_2_53_are_accepted(value: float) -> None:
    assert is_tally(value)
    assert is_count(value) == isinstance(value, int)


@pytest.mark.parametrize("value", [2**53 + 1, -1, 1e308, 10**400, float("nan"), True])
def test_counts_and_tallies_past_2_53_are_refused(value: float) -> None:
    assert not is_tally(value)
    assert not is_count(value)


@pytest.mark.parametrize("window", [2**63, 2**31, 1_000_001, 10**400])
def test_a_curricula_size_past_a_million_is_refused_when_built(window: int) -> None:
    with pytest.raises(InvalidSamplerConfig, match="1,000,000"):
        create({"name": "tscl", "window": window})


@pytest.mark.parametrize(
    "spec", ["sfl:buffer_size=1000001", "dapo:group=99999999999", "mopps:candidates=2000000"]
)
def test_every_curricula_size_is_bounded(spec: str) -> None:
    with pytest.raises(InvalidSamplerConfig, match="1,000,000"):
        create(spec)


class _NotJson:
    name = "not-json"

    def __init__(self, state: object) -> None:
        self.state = state

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": "not-json", "version": 1, "x": self.state}

    def load_state_dict(self, state: object) -> None:
        raise AssertionError


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", float("nan"), {(1, 2): 3}])
def test_saving_a_state_that_is_not_json_is_a_state_error(tmp_path: Path, value: object) -> None:
    path = tmp_path / "state.json"
    with pytest.raises(StateError, match="plain JSON data"):
        save_state(_NotJson(value), path)
    assert list(tmp_path.iterdir()) == []


BAD_PATHS = {
    "a NUL": ("state\0.json", "NUL"),
    "a NUL in a directory": ("dir\0/state.json", "NUL"),
    "an unknown user": ("~nosuchuser-agentdescent/state.json", "~user"),
    "an unknown user alone": ("~nosuchuser-agentdescent", "~user"),
}


@pytest.mark.parametrize(("path", "reason"), BAD_PATHS.values(), ids=BAD_PATHS)
def test_a_state_path_that_no_file_can_have_is_refused_at_create(
    tmp_path: Path, path: str, reason: str
) -> None:
    full = path if path.startswith("~") else str(tmp_path / path)
    with pytest.raises(StateError, match=reason):
        create("round-robin", state=full)
    with pytest.raises(StateError, match=reason):
        save_state(create("round-robin"), full)  # type: ignore[arg-type]


@pytest.mark.parametrize(("path", "reason"), BAD_PATHS.values(), ids=BAD_PATHS)
def test_a_run_spec_state_path_that_no_file_can_have_is_our_error(
    tmp_path: Path, path: str, reason: str
) -> None:
    full = path if path.startswith("~") else str(tmp_path / path)
    with pytest.raises(InvalidSamplerConfig, match=reason):
        from_run_spec(spec="round-robin", state=full)


@pytest.mark.parametrize("depth", ["state.json", "sub/state.json"])
def test_a_state_path_under_an_unsearchable_directory_is_our_error(
    unprivileged: list[str], depth: str
) -> None:
    # In a process of its own, as a user the modes apply to (root searches any directory).
    import shutil
    import subprocess
    import sys
    import tempfile

    parent = Path(tempfile.mkdtemp(prefix="ads-unsearchable-"))  # outside root's 0700 tmp_path
    locked = parent / "locked"
    (locked / "sub").mkdir(parents=True)
    parent.chmod(0o755)
    locked.chmod(0o600)
    script = (
        "import sys\n"
        "from agentdescent_sampling import StateError, create\n"
        "try:\n"
        "    create('round-robin', state=sys.argv[1])\n"
        "except StateError as error:\n"
        "    print(error)\n"
        "else:\n"
        "    print('no error')\n"
    )
    try:
        command = [*unprivileged, sys.executable, "-c", script, str(locked / depth)]
        ran = subprocess.run(command, capture_output=True, text=True, check=False)
        assert ran.returncode == 0, ran.stderr
        assert "chmod" in ran.stdout, ran.stdout
    finally:
        locked.chmod(0o700)
        shutil.rmtree(parent)


def test_an_unsearchable_directory_is_refused_by_the_path_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(self: Path, **_: object) -> os.stat_result:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "stat", denied)
    with pytest.raises(StateError, match=r"Permission denied.*chmod \+x"):
        create("round-robin", state=tmp_path / "state.json")


def test_the_state_file_written_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    save_state(_used("fixable-first"), path)
    assert json.loads(path.read_text())["format"] == "agentdescent-sampling/state"
    load_state(create("fixable-first"), path)  # type: ignore[arg-type]
