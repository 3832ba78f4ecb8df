"""on_round_for in the real ``evolve()``: each round's commits reach fixable-first."""

from __future__ import annotations

from typing import Any

import pytest

from agentdescent_sampling import FixableFirst, TaskSampler, create, on_round_for

pytest.importorskip(
    "agentdescent",
    reason="needs the agentdescent engine: python -m pip install agentdescent==0.7.0",
)


def test_each_rounds_commits_reach_fixable_first_and_your_callback_still_runs() -> None:
    from agentdescent_sampling.bench.engine.run import run_engine
    from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS

    workload = ENGINE_WORKLOADS["lessons"]
    rounds: list[tuple[int, int, dict[str, float]]] = []

    def with_commits(sampler: TaskSampler) -> Any:
        assert isinstance(sampler, FixableFirst)

        def yours(info: Any) -> None:
            rounds.append((info.round, info.committed, sampler.state_dict()["credit"]))

        return on_round_for(sampler, then=yours)

    run = run_engine(workload, lambda built: create("fixable-first"), 0, on_round=with_commits)

    assert [number for number, _, _ in rounds] == list(range(workload.rounds))
    # Every round that committed left credit on a task whose failure could have made it.
    credited = [credit for _, committed, credit in rounds if committed]
    assert credited
    assert all(credit for credit in credited)
    assert run.gain(run.final) == pytest.approx(1.0)  # and the run still learned every rule
