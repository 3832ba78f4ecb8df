"""propose_for in the real ``evolve()``: each failure's proposal reaches fixable-first."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from agentdescent_sampling import FixableFirst, TaskSampler, on_round_for, propose_for

pytest.importorskip(
    "agentdescent",
    reason="needs the agentdescent engine: python -m pip install agentdescent==0.7.0",
)


@attrs.define(eq=False)
class Told(FixableFirst):
    """fixable-first that keeps what it was told."""

    told: list[tuple[str, bool]] = attrs.field(factory=list)

    def reflected(self, task_id: str, proposed: bool) -> None:
        self.told.append((task_id, proposed))
        super().reflected(task_id, proposed)


def test_every_answer_of_the_reflector_reaches_fixable_first_in_order() -> None:
    from agentdescent_sampling.bench.engine.run import run_engine
    from agentdescent_sampling.bench.engine.workloads import ENGINE_WORKLOADS

    answers: list[tuple[str, bool]] = []
    samplers: list[Told] = []

    def make(built: Any) -> TaskSampler:
        samplers.append(Told())
        return samplers[-1]

    def wired(sampler: TaskSampler, yours: Any) -> Any:
        def watched(rendered: str, task: Any, output: str, reward: float) -> Any:
            answer = yours(rendered, task, output, reward)
            answers.append((task.id, bool(answer)))
            return answer

        return propose_for(sampler, watched)

    run = run_engine(ENGINE_WORKLOADS["lessons"], make, 0, on_round=on_round_for, propose=wired)

    assert samplers[0].told == answers
    assert {proposed for _, proposed in answers} == {True, False}
    assert run.gain(run.final) == pytest.approx(1.0)  # and the run still learned every rule
