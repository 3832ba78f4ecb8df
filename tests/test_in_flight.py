"""Samplers that spread in-flight picks hand concurrent workers different tasks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentdescent_sampling import (
    DifficultyWeighted,
    FixableFirst,
    InformativeBand,
    RoundRobin,
    TaskSampler,
)
from agentdescent_sampling.plugin import Pending

SPREADING = [
    pytest.param(lambda: RoundRobin(spread_in_flight=True), id="round-robin"),
    pytest.param(lambda: DifficultyWeighted(spread_in_flight=True), id="difficulty-weighted"),
    pytest.param(InformativeBand, id="informative-band"),
    pytest.param(FixableFirst, id="fixable-first"),
]


@pytest.mark.parametrize("factory", SPREADING)
def test_in_flight_workers_are_handed_different_tasks(factory: Callable[[], TaskSampler]) -> None:
    sampler = factory()
    keys = ["a", "b", "c"]
    assert [sampler.pick(keys, 0) for _ in range(3)] == ["a", "b", "c"]
    assert sampler.pick(keys, 0) == "a"  # every task in flight: the rule applies as usual
    sampler.record("b", 1.0)
    assert sampler.pick(keys, 0) == "b"  # b came back; a and c are still in flight


def test_a_pending_tracker_reprs_as_its_call_with_a_few_of_its_tasks() -> None:
    pending = Pending()
    assert repr(pending) == "Pending()"

    pending.add("a", 0)
    pending.add("a", 1)
    pending.add("b", 2)
    assert repr(pending) == "Pending(in_flight={'a': 2, 'b': 1})"

    for pick in range(100):
        pending.add(f"task-{pick}", pick)
    assert repr(pending) == "Pending(in_flight={'a': 2, 'b': 1, 'task-0': 1, 'task-1': 1, ...})"
