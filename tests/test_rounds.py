"""on_round_for: the engine's commit count reaches the sampler, and your callback still runs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentdescent_sampling import create, on_round_for


def failed_once(sampler: Any, task: str = "a") -> Any:
    sampler.pick([task], 0)
    sampler.record(task, 0.0)
    return sampler


def test_it_passes_the_commits_then_calls_your_callback() -> None:
    sampler = failed_once(create("fixable-first"))
    seen: list[tuple[int, dict[str, float]]] = []

    def yours(info: Any) -> None:
        seen.append((info.committed, sampler.state_dict()["credit"]))

    on_round_for(sampler, then=yours)(SimpleNamespace(committed=1))
    assert seen == [(1, {"a": 1.0})]  # the sampler had the commits before yours ran


def test_it_reaches_fixable_first_through_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "sampler.json"
    sampler = failed_once(create("fixable-first", state=state))
    on_round_for(sampler)(SimpleNamespace(committed=1))
    assert sampler.state_dict()["credit"] == {"a": 1.0}
    failed_once(sampler, "b")  # the next record saves it
    assert create("fixable-first", state=state).state_dict()["credit"] == {"a": 1.0}


def test_it_refuses_a_sampler_that_cannot_use_commits() -> None:
    with pytest.raises(TypeError, match=r"sampler 'round-robin' has no end_round\(committed\)"):
        on_round_for(create("round-robin"))


def test_it_refuses_a_callback_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match="then must be your on_round callback or None; got 3"):
        on_round_for(create("fixable-first"), then=3)  # type: ignore[arg-type]
