"""Between the user and a sampler stands one wrapper at most, whatever it adds."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import DurableSampler, Registry, RoundRobin, StateError
from agentdescent_sampling.plugin import check_pick, check_score, check_state, synchronized
from agentdescent_sampling.served import ServedSampler


class Tally:
    """Counts the rollouts of each task, without a lock, and says so."""

    name = "tally"
    thread_safe = False

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self.trials: dict[str, int] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        keys, _ = check_pick(keys, round_index)
        return min(keys, key=lambda key: self.trials.get(key, self.start))

    def record(self, task_id: str, score: float) -> None:
        check_score(task_id, score)
        self.trials[task_id] = self.trials.get(task_id, self.start) + 1

    def stats(self) -> dict[str, tuple[int, int]]:
        return {key: (0, trials) for key, trials in self.trials.items()}

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name, "version": 1, "trials": dict(self.trials)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.trials = dict(check_state(state, self.name, 1)["trials"])

    def __repr__(self) -> str:
        return f"Tally(start={self.start})"


@pytest.fixture
def registry() -> Registry:
    registry = Registry(disable=(), only=())
    registry.register(functools.partial(Tally, start=1), name="tally-from-one")
    return registry


def test_a_preset_of_a_thread_unsafe_class_gets_one_wrapper_with_its_name_and_a_lock(
    registry: Registry,
) -> None:
    sampler = registry.create("tally-from-one")
    assert isinstance(sampler, ServedSampler)
    assert type(sampler.wrapped) is Tally
    assert (sampler.name, sampler.lock is not None) == ("tally-from-one", True)
    assert repr(sampler) == "ServedSampler(Tally(start=1), name='tally-from-one', lock=True)"
    sampler.record(sampler.pick(["a"], 0), 1.0)
    assert sampler.stats() == {"a": (0, 2)}  # forwarded, under the lock
    assert synchronized(sampler) is sampler  # locked already: not wrapped again


def test_with_state_the_durable_sampler_is_the_one_wrapper_and_keeps_the_presets_name(
    registry: Registry, tmp_path: Path
) -> None:
    with registry.create("tally-from-one", state=tmp_path / "s.sqlite") as sampler:
        assert isinstance(sampler, DurableSampler)
        assert type(sampler.wrapped) is Tally
        assert sampler.name == "tally-from-one"
        assert repr(sampler) == (
            f"DurableSampler(ServedSampler(Tally(start=1), name='tally-from-one', lock=True), "
            f"{str(tmp_path / 's.sqlite')!r})"
        )
        sampler.record("a", 1.0)
        state = sampler.state_dict()
    assert state["sampler"] == "tally-from-one"  # its state is the preset's, not tally's
    with pytest.raises(StateError, match="belongs to sampler 'tally-from-one', not 'tally'"):
        Tally().load_state_dict(state)
    with registry.create("tally-from-one", state=tmp_path / "s.sqlite") as resumed:
        assert resumed.stats() == {"a": (0, 2)}


def test_a_sampler_that_needs_nothing_is_served_unwrapped() -> None:
    assert type(Registry(disable=(), only=()).create("round-robin")) is RoundRobin


def test_synchronizing_a_sampler_served_under_a_name_adds_the_lock_to_that_wrapper() -> None:
    served = synchronized(ServedSampler(RoundRobin(), name="rr2"))
    assert type(served.wrapped) is RoundRobin
    assert (
        repr(served) == "ServedSampler(RoundRobin(spread_in_flight=False), name='rr2', lock=True)"
    )


def test_a_misspelt_attribute_of_a_wrapper_names_the_wrapper_and_the_closest_name(
    tmp_path: Path,
) -> None:
    # It read "'RoundRobin' object has no attribute 'clsoe'", naming a class the caller never
    # held, so Python's own "Did you mean" had nothing to go on (helper-110).
    with DurableSampler(RoundRobin(), tmp_path / "state.sqlite") as durable:
        with pytest.raises(AttributeError) as missing:
            durable.clsoe()  # type: ignore[attr-defined]
        assert str(missing.value) == (
            "DurableSampler has no attribute 'clsoe', and neither has the RoundRobin it "
            "serves; did you mean 'close'?"
        )
        assert not hasattr(durable, "nothing_like_it")
    served = synchronized(RoundRobin())
    with pytest.raises(
        AttributeError, match=r"ServedSampler has no attribute 'stat_dict'.*'state_dict'"
    ):
        served.stat_dict()


def test_an_attribute_error_raised_inside_the_served_samplers_own_code_is_its_own() -> None:
    class Broken(RoundRobin):
        @property
        def stats_now(self) -> Any:
            return self.missing_inside  # type: ignore[attr-defined]

    with pytest.raises(AttributeError, match="'Broken' object has no attribute 'missing_inside'"):
        synchronized(Broken()).stats_now  # noqa: B018
