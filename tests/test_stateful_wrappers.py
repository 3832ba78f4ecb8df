"""A sampler behind a wrapper (durable state, a lock, a name) is saved and loaded on every
Python. From 3.12, ``isinstance(x, Stateful)`` looks its methods up statically and missed the
ones a wrapper hands on through ``__getattr__``, so ``save_state`` and ``load_state`` refused a
durable sampler there. This file runs in every lane of ``nox`` (see noxfile.FAST_TESTS)."""

from __future__ import annotations

from pathlib import Path

from agentdescent_sampling import create, load_state, save_state
from agentdescent_sampling.plugin import synchronized
from agentdescent_sampling.protocol import is_stateful
from agentdescent_sampling.samplers import DifficultyWeighted

KEYS = [f"task{i}" for i in range(6)]


def test_a_durable_samplers_state_is_saved_and_loaded_into_another(tmp_path: Path) -> None:
    first = create("difficulty-weighted", state=tmp_path / "first.sqlite")
    for round_index in range(4):
        first.record(first.pick(KEYS, round_index), float(round_index % 2))
    save_state(first, tmp_path / "export.json")
    second = create("difficulty-weighted", state=tmp_path / "second.sqlite")
    load_state(second, tmp_path / "export.json")
    assert second.state_dict() == first.state_dict()
    first.close()
    second.close()


def test_a_locked_sampler_is_saved_and_loaded(tmp_path: Path) -> None:
    locked = synchronized(DifficultyWeighted())
    locked.record("task0", 1.0)
    save_state(locked, tmp_path / "locked.json")
    again = synchronized(DifficultyWeighted())
    load_state(again, tmp_path / "locked.json")
    assert again.state_dict() == locked.state_dict()


def test_is_stateful_sees_the_methods_a_wrapper_hands_on_and_not_missing_ones() -> None:
    assert is_stateful(synchronized(DifficultyWeighted()))
    assert is_stateful(DifficultyWeighted())

    class Half:
        def state_dict(self) -> dict[str, object]:
            return {}

    assert not is_stateful(Half())
    assert not is_stateful(object())
