"""propose_for: each failure's proposal reaches the sampler, and your reflector still answers."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentdescent_sampling import create, propose_for


def failed_once(sampler: Any, task: str = "a") -> Any:
    sampler.pick([task], 0)
    sampler.record(task, 0.0)
    return sampler


def reflector(answer: str | None) -> Any:
    """A reflector that records its calls and answers ``answer``."""
    calls: list[tuple[str, str, str, float]] = []

    def propose(rendered: str, task: Any, output: str, reward: float) -> str | None:
        calls.append((rendered, task.id, output, reward))
        return answer

    propose.calls = calls  # type: ignore[attr-defined]
    return propose


@pytest.mark.parametrize(
    ("answer", "credit", "no_commit"),
    [("[a rule]", {"a": 0.9}, []), (None, {}, ["a"]), ("", {}, ["a"])],
    ids=["proposal", "none", "empty"],
)
def test_it_returns_your_answer_and_tells_the_sampler_whether_it_is_a_proposal(
    answer: str | None, credit: dict[str, float], no_commit: list[str]
) -> None:
    sampler = failed_once(create("fixable-first"))
    yours = reflector(answer)
    told = propose_for(sampler, yours)
    assert told("playbook", SimpleNamespace(id="a"), "output", 0.0) == answer
    assert yours.calls == [("playbook", "a", "output", 0.0)]
    assert sampler.state_dict()["credit"] == credit
    assert sampler.state_dict()["no_commit"] == no_commit


def test_an_exception_from_your_reflector_reaches_the_engine_and_tells_nothing() -> None:
    sampler = failed_once(create("fixable-first"))
    before = sampler.state_dict()

    def broken(rendered: str, task: Any, output: str, reward: float) -> str:
        raise RuntimeError("no API key")

    with pytest.raises(RuntimeError, match="no API key"):
        propose_for(sampler, broken)("playbook", SimpleNamespace(id="a"), "output", 0.0)
    assert sampler.state_dict() == before


def test_it_reaches_fixable_first_through_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "sampler.json"
    sampler = failed_once(create("fixable-first", state=state))
    propose_for(sampler, reflector(None))("playbook", SimpleNamespace(id="a"), "output", 0.0)
    failed_once(sampler, "b")  # the next record saves it
    resumed: Any = create("fixable-first", state=state)
    assert resumed.state_dict()["no_commit"] == ["a"]


def test_it_refuses_a_sampler_that_cannot_use_proposals() -> None:
    with pytest.raises(TypeError, match=r"sampler 'round-robin' has no reflected\(task_id"):
        propose_for(create("round-robin"), reflector(None))


def test_it_refuses_a_reflector_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match=r"propose must be your reflector, .* got 3"):
        propose_for(create("fixable-first"), 3)  # type: ignore[arg-type]
