"""on_round_for and propose_for: the engine's commit counts and each failure's proposal reach the
sampler, and your callback and reflector still run."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentdescent_sampling import create, on_round_for, propose_for


def failed_once(sampler: Any, task: str = "a") -> Any:
    sampler.pick([task], 0)
    sampler.record(task, 0.0)
    return sampler


def test_on_round_for_passes_the_commits_then_calls_your_callback() -> None:
    sampler = failed_once(create("fixable-first"))
    seen: list[tuple[int, dict[str, float]]] = []

    def yours(info: Any) -> None:
        seen.append((info.committed, sampler.state_dict()["credit"]))

    on_round_for(sampler, then=yours)(SimpleNamespace(committed=1))
    assert seen == [(1, {"a": 1.0})]  # the sampler had the commits before yours ran


def test_on_round_for_reaches_fixable_first_through_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    sampler = failed_once(create("fixable-first", state=state))
    on_round_for(sampler)(SimpleNamespace(committed=1))  # on disk when it returns
    assert sampler.state_dict()["credit"] == {"a": 1.0}
    sampler.close()
    assert create("fixable-first", state=state).state_dict()["credit"] == {"a": 1.0}


def test_on_round_for_refuses_a_sampler_that_cannot_use_commits() -> None:
    with pytest.raises(TypeError, match=r"sampler 'round-robin' has no end_round\(committed\)"):
        on_round_for(create("round-robin"))


def test_on_round_for_refuses_a_callback_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match="then must be your on_round callback or None; got 3"):
        on_round_for(create("fixable-first"), then=3)  # type: ignore[arg-type]


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
def test_propose_for_returns_your_answer_and_tells_the_sampler_whether_it_is_a_proposal(
    answer: str | None, credit: dict[str, float], no_commit: list[str]
) -> None:
    sampler = failed_once(create("fixable-first"))
    yours = reflector(answer)
    told = propose_for(sampler, yours)
    assert told("playbook", SimpleNamespace(id="a"), "output", 0.0) == answer
    assert yours.calls == [("playbook", "a", "output", 0.0)]
    assert sampler.state_dict()["credit"] == credit
    assert sampler.state_dict()["no_commit"] == no_commit


def test_propose_for_passes_on_an_exception_from_your_reflector_and_tells_nothing() -> None:
    sampler = failed_once(create("fixable-first"))
    before = sampler.state_dict()

    def broken(rendered: str, task: Any, output: str, reward: float) -> str:
        raise RuntimeError("no API key")

    with pytest.raises(RuntimeError, match="no API key"):
        propose_for(sampler, broken)("playbook", SimpleNamespace(id="a"), "output", 0.0)
    assert sampler.state_dict() == before


def test_propose_for_reaches_fixable_first_through_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    sampler = failed_once(create("fixable-first", state=state))
    propose_for(sampler, reflector(None))("playbook", SimpleNamespace(id="a"), "output", 0.0)
    sampler.close()  # the told call is on disk when it returns
    resumed: Any = create("fixable-first", state=state)
    assert resumed.state_dict()["no_commit"] == ["a"]


def test_propose_for_refuses_a_sampler_that_cannot_use_proposals() -> None:
    with pytest.raises(TypeError, match=r"sampler 'round-robin' has no reflected\(task_id"):
        propose_for(create("round-robin"), reflector(None))


def test_propose_for_refuses_a_reflector_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match=r"propose must be your reflector, .* got 3"):
        propose_for(create("fixable-first"), 3)  # type: ignore[arg-type]
