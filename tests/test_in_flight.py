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
