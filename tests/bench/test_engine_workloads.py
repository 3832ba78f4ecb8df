"""The engine workloads in the real ``evolve()``: they measure what they say they do."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import attrs
import pytest

from agentdescent_sampling import TaskSampler, create
from agentdescent_sampling.bench import BenchError
from agentdescent_sampling.bench.engine import (
    ENGINE_WORKLOADS,
    Built,
    EngineBenchConfig,
    EngineEntrant,
    EngineOracle,
    EngineWorkload,
    build,
    run_engine,
    run_engine_bench,
)
from agentdescent_sampling.bench.engine.workloads import LUCKY, passes

pytest.importorskip("agentdescent", reason="the engine extra (agentdescent) is not installed")


class Recorder:
    """Wraps a sampler; keeps every rollout's task, score and the playbook it ran with."""

    def __init__(self, sampler: TaskSampler, built: Built) -> None:
        self.sampler = sampler
        self.built = built
        self.records: list[tuple[str, float, str]] = []

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return self.sampler.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        # Sequential runs only: the playbook is the one this rollout was solved with.
        self.records.append((task_id, score, self.built.agent.playbook))
        self.sampler.record(task_id, score)


class FirstOfKind:
    """Always picks the first key of one kind (``always``, ``never``, ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return next(key for key in keys if key.startswith(self.kind))

    def record(self, task_id: str, score: float) -> None:
        return None


class InTurn:
    """Picks the given keys in turn, ignoring the rest."""

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids
        self.picks = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        chosen = [key for key in keys if key in self.ids]
        self.picks += 1
        return chosen[self.picks % len(chosen)]

    def record(self, task_id: str, score: float) -> None:
        return None


def _recorded(
    workload: EngineWorkload, make: Callable[[Built], TaskSampler], seed: int = 0
) -> tuple[Recorder, float]:
    recorders: list[Recorder] = []

    def wrapped(built: Built) -> TaskSampler:
        recorders.append(Recorder(make(built), built))
        return recorders[-1]

    run = run_engine(workload, wrapped, seed)
    return recorders[0], run.final


def test_the_ceilings_reach_the_gain_in_fewer_rollouts_than_round_robin() -> None:
    config = EngineBenchConfig(workloads=["lessons"], samplers=[], seeds=3, processes=2)
    [lessons] = run_engine_bench(config).workloads
    assert [s.label for s in lessons.samplers] == ["round-robin", "learner-ceiling", "oracle"]
    oracle = lessons.sampler("oracle")
    assert oracle.at(0.75).ratio_to_round_robin.low > 1.5
    assert oracle.area_vs_round_robin.low > 0
    learner = lessons.sampler("learner-ceiling")
    assert learner.at(0.75).ratio_to_round_robin.value > 1
    assert learner.at(0.75).ratio_to_round_robin.value < oracle.at(0.75).ratio_to_round_robin.low


@pytest.mark.parametrize("name", list(ENGINE_WORKLOADS))
def test_the_engine_measures_the_start_and_the_oracle_reaches_the_attainable(name: str) -> None:
    workload = ENGINE_WORKLOADS[name]
    idle = run_engine(attrs.evolve(workload, rounds=1), lambda built: FirstOfKind("always"), 0)
    assert idle.curve[-1][1] == pytest.approx(idle.start)  # nothing failed, nothing learned
    # Enough rounds for the oracle: every rule at k <= 3 failures (twice that when lucky
    # passes get in the way), spread over the workers.
    failures = 3 * (workload.lessons + workload.regressions) * (2 if workload.flaky else 1)
    rounds = failures // workload.workers + 4
    oracle = run_engine(attrs.evolve(workload, rounds=rounds), EngineOracle, 0)
    assert oracle.start < oracle.attainable
    assert oracle.final == pytest.approx(oracle.attainable)
    assert oracle.taught == oracle.fixable


def test_a_regression_victim_breaks_when_its_breaker_lands_and_recovers_with_its_patch() -> None:
    def focus(built: Built) -> TaskSampler:
        # Only the breakers and their victims, in turn: each victim is re-tested often.
        plans = built.agent.by_id.values()
        return InTurn(
            {f"{p.id}" for p in plans if p.breaks or p.kind == "victim"}
            & {task.id for task in built.tasks if task.id.endswith("-train")}
        )

    recorder, _ = _recorded(ENGINE_WORKLOADS["regressions"], focus)
    breakers = recorder.built.breaker_rule
    assert len(breakers) == 3
    passed_first = 0
    for victim, breaker in breakers.items():
        patch = f"[patch for {victim}]"
        scores = [(score, playbook) for task, score, playbook in recorder.records
                  if task == f"{victim}-train"]  # fmt: skip
        for score, playbook in scores:  # broken exactly while the breaker is in, unpatched
            assert (score == 0.0) == (breaker in playbook and patch not in playbook)
        assert any(score == 0.0 for score, _ in scores), f"{victim} never broke"
        assert scores[-1][0] == 1.0
        assert patch in scores[-1][1]
        passed_first += scores[0][0] == 1.0
    assert passed_first  # some victim was seen passing before its breaker landed


def test_flaky_lessons_pass_by_luck_on_the_train_side_only() -> None:
    workload = ENGINE_WORKLOADS["flaky"]
    recorder, _ = _recorded(workload, lambda b: create("round-robin"))
    by_id = recorder.built.agent.by_id
    lessons = [(task, score, playbook) for task, score, playbook in recorder.records
               if by_id[task].kind == "lesson"]  # fmt: skip
    lucky = [task for task, score, playbook in lessons
             if score == 1.0 and str(by_id[task].rule) not in playbook]  # fmt: skip
    assert lucky, "no flaky lesson passed by luck"
    assert {by_id[task].luck for task in lucky} == {workload.luck}
    built = build(workload, 0)
    held_out = [task for task in built.tasks if task.id.endswith("-held-out")]
    flaky = [t for t in built.tasks if built.agent.by_id[t.id].luck]
    assert len(flaky) == workload.flaky
    for _ in range(20):  # the train copies get lucky; the held-out copies never do
        assert not any(LUCKY in built.agent.solve("", task) for task in held_out)
    assert any(LUCKY in built.agent.solve("", task) for task in flaky for _ in range(20))


def test_graded_scores_pass_at_the_threshold_and_spread_inside_the_bands() -> None:
    workload = ENGINE_WORKLOADS["graded"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # informative-band warns when the threshold is wrong
        recorder, _ = _recorded(
            workload, lambda b: create(f"informative-band:pass_threshold={b.pass_threshold}")
        )
    by_id = recorder.built.agent.by_id
    scores = [score for _, score, _ in recorder.records]
    assert len(set(scores)) > 10
    assert all(0.0 < score < 1.0 for score in scores)
    for task, score, playbook in recorder.records:
        assert (score >= 0.8) == passes(by_id[task], playbook), (task, score)


class Broken:
    """A sampler whose every pick fails."""

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        raise RuntimeError("no pick today")

    def record(self, task_id: str, score: float) -> None:
        return None


def test_a_sampler_that_fails_in_a_worker_process_is_named_with_its_seed() -> None:
    broken = EngineEntrant("broken", lambda built: Broken())  # a closure: forked, not pickled
    config = EngineBenchConfig(
        workloads=[attrs.evolve(ENGINE_WORKLOADS["lessons"], rounds=2)],
        samplers=[],
        extra=[broken],
        seeds=1,
        first_seed=7,
        processes=2,
    )
    with pytest.raises(BenchError) as failed:
        run_engine_bench(config)
    message = str(failed.value)
    assert message.startswith("sampler 'broken' failed on engine workload lessons, seed 7: ")
    assert "RuntimeError: no pick today" in message
    assert message.endswith("--sampler 'broken' --workload lessons --first-seed 7 --seeds 1")


def test_the_learner_ceiling_is_told_the_make_up_the_workload_was_built_with() -> None:
    from agentdescent_sampling.bench.engine.ceiling import MakeUp

    make_up = MakeUp.of(build(ENGINE_WORKLOADS["regressions"], 0))
    assert sum(make_up.failures_needed.values()) == 8 + 3  # lessons and victims' patches
    assert (make_up.hopeless, make_up.solved, make_up.victims, make_up.flaky) == (8, 10, 3, 0)
    flaky = MakeUp.of(build(ENGINE_WORKLOADS["flaky"], 0))
    assert (flaky.flaky, flaky.luck) == (4, 0.5)
