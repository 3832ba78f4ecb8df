"""The engine workloads and their reflectors in the real ``evolve()``: they measure what they say
they do; with the call curve and the wiring hook of ``run_engine``."""

from __future__ import annotations

import itertools
import re
import threading
import warnings
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from agentdescent_sampling import Registry, TaskSampler, create
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
from agentdescent_sampling.bench.engine import workloads as engine_workloads
from agentdescent_sampling.bench.engine.workloads import ASYNC_LATENCY, LUCKY, SLIP, passes

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


def round_robin(built: Built) -> TaskSampler:
    """The baseline, for a run."""
    return create("round-robin")


def _recorded(
    workload: EngineWorkload,
    make: Callable[[Built], TaskSampler],
    seed: int = 0,
    reflector: str = "llm-like",
) -> tuple[Recorder, list[str | None]]:
    """One run; the recorder of its rollouts, and every answer its reflector gave."""
    recorders: list[Recorder] = []
    answers: list[str | None] = []

    def wrapped(built: Built) -> TaskSampler:
        recorders.append(Recorder(make(built), built))
        return recorders[-1]

    def watched(sampler: TaskSampler, built: Built, options: Any) -> dict[str, Any]:
        def propose(rendered: str, task: Any, output: str, reward: float) -> str | None:
            answer: str | None = built.agent.propose(rendered, task, output, reward)
            answers.append(answer)
            return answer

        return {"propose": propose}

    run_engine(workload, wrapped, seed, reflector=reflector, wiring=watched)
    return recorders[0], answers


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
    # Enough rounds for the oracle: every rule at its most failures (twice that when lucky
    # passes get in the way), spread over the workers.
    most = max(workload.failures_needed)
    failures = most * (workload.lessons + workload.regressions) * (2 if workload.flaky else 1)
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
    recorder, _ = _recorded(workload, round_robin)
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


def slipped(built: Built, tasks: Sequence[Any], draws: int) -> list[tuple[str, str]]:
    """The kind and the artifact (``"none"`` or ``"every rule"``) of each answer, of ``draws``
    per task and artifact, that came out the other way from what the artifact earns."""
    by_id = built.agent.by_id
    every_rule = "\n".join(plan.rule or "" for plan in by_id.values())
    return [(by_id[task.id].kind, name) for task in tasks
            for name, playbook in (("none", ""), ("every rule", every_rule))
            for _ in range(draws)
            if (built.reward(task, built.agent.solve(playbook, task)) == 1.0)
            != passes(by_id[task.id], playbook)]  # fmt: skip


def test_a_noisy_agent_answers_a_train_task_the_other_way_one_time_in_ten() -> None:
    built = build(ENGINE_WORKLOADS["lessons"], 0, "llm-like-noisy")
    train = [task for task in built.tasks if task.id.endswith("-train")]
    slips = slipped(built, train, 100)
    assert 0.07 < len(slips) / (len(train) * 200) < 0.13  # 3,600 draws at 1 in 10: sd 0.005
    assert ("never", "none") in slips  # a hopeless task passes
    assert ("always", "none") in slips  # a solved one fails
    assert ("lesson", "every rule") in slips  # a fix's re-run can fail
    held_out = [task for task in built.tasks if not task.id.endswith("-train")]
    assert not slipped(built, held_out, 20)
    quiet = build(ENGINE_WORKLOADS["lessons"], 0, "llm-like")
    assert not any(SLIP in quiet.agent.solve("", task) for task in train for _ in range(50))


def test_a_noisy_gate_measures_a_held_out_task_the_other_way_one_time_in_ten() -> None:
    built = build(ENGINE_WORKLOADS["lessons"], 0, "llm-like-gate")
    held_out = [task for task in built.tasks if not task.id.endswith("-train")]
    slips = slipped(built, held_out, 100)
    assert 0.07 < len(slips) / (len(held_out) * 200) < 0.13  # 3,600 draws at 1 in 10: sd 0.005
    assert ("lesson", "every rule") in slips  # a fix can be measured as failing
    assert ("lesson", "none") in slips  # and a note, beside no fix, as passing
    train = [task for task in built.tasks if task.id.endswith("-train")]
    assert not slipped(built, train, 20)
    assert built.noisy_gate
    assert not build(ENGINE_WORKLOADS["lessons"], 0, "llm-like").noisy_gate
    # A fix proposed again is worded afresh, so the engine's cache measures it again.
    by_id = built.agent.by_id
    lesson = next(
        task
        for task in train
        if by_id[task.id].kind == "lesson" and by_id[task.id].failures_needed == 1
    )
    fixes = {built.agent.propose("", lesson, "", 0.0) for _ in range(3)}
    assert len(fixes) == 3
    assert all(by_id[lesson.id].rule in str(fix) for fix in fixes)
    every_rule = "\n".join(plan.rule or "" for plan in by_id.values())
    assert (built.held_out_of(""), built.held_out_of(every_rule)) == (
        built.start,
        built.attainable,
    )


@pytest.mark.parametrize("name", ["lessons", "concurrent"])
def test_with_a_noisy_gate_the_gain_is_that_of_the_artifact_each_round_committed(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    workload = ENGINE_WORKLOADS[name]
    gate: list[float] = []  # what the engine's gate measured the committed artifact at

    def watched(sampler: TaskSampler, built: Built, options: Any) -> dict[str, Any]:
        return {"on_round": lambda info: gate.append(info.held_out_reward)}

    noisy = run_engine(workload, lambda b: create("round-robin"), 1, reflector="llm-like-gate",
                       wiring=watched)  # fmt: skip
    rewards = [reward for _, reward in noisy.curve]
    assert rewards == sorted(rewards)  # notes and rules only add: the exact gain never falls
    assert rewards[1:] != gate  # the gate's noisy figures reached the engine, not the curve
    assert len(gate) == noisy.rounds  # the bench's own on_round calls the wiring's
    # With no slips the gate is llm-like's, and the curve read from the artifacts the rounds'
    # rollouts saw is the engine's own held-out reward, round by round.
    monkeypatch.setattr(engine_workloads, "SLIP_SHARE", 0.0)
    exact = run_engine(workload, lambda b: create("round-robin"), 1, reflector="llm-like-gate")
    assert exact.curve == run_engine(workload, lambda b: create("round-robin"), 1).curve


def test_a_noisy_gate_is_refused_on_the_asynchronous_path() -> None:
    with pytest.raises(ValueError, match="'llm-like-gate' runs on the synchronous path only"):
        run_engine(ENGINE_WORKLOADS["lessons"], lambda b: create("round-robin"), 0,
                   reflector="llm-like-gate", asynchronous=True)  # fmt: skip
    with pytest.raises(ValueError, match="EngineBenchConfig: the reflector 'llm-like-gate'"):
        EngineBenchConfig(reflector="llm-like-gate", asynchronous=True)


def test_late_lessons_take_from_one_to_six_failures_to_find_their_rule() -> None:
    built = build(ENGINE_WORKLOADS["late"], 0)
    lessons = [t for t in built.agent.by_id.values() if t.kind == "lesson" and "train" in t.id]
    assert sorted(t.failures_needed for t in lessons) == [1, 2, 3, 4, 5, 6]


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


@pytest.mark.parametrize(
    ("sampler", "raised"),
    [("Broken", "RuntimeError: no pick today"), ("Exits", "SystemExit: 3")],
    ids=["raises", "exits"],  # exits: it ended the bench with no word
)
def test_a_sampler_that_fails_in_a_worker_process_is_named_with_its_seed(
    sampler: str, raised: str
) -> None:
    made = {"Broken": Broken, "Exits": Exits}[sampler]
    broken = EngineEntrant("broken", lambda built: made())  # a closure: forked, not pickled
    config = EngineBenchConfig(
        workloads=[attrs.evolve(ENGINE_WORKLOADS["lessons"], rounds=2)],
        samplers=[],
        extra=[broken],
        seeds=1,
        first_seed=7,
        processes=2,
    )
    [failure] = run_engine_bench(config).failures
    message = failure.message
    assert message.startswith("sampler 'broken' failed on engine workload lessons, seed 7: ")
    assert raised in message
    assert message.endswith("workloads=[...], first_seed=7, seeds=1, ceilings=False))")


class Exits(Broken):
    """A sampler whose every pick ends the process, as sys.exit() would."""

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        raise SystemExit(3)


class Stray(Broken):
    """A sampler whose every pick is a task of no shard."""

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return "not-a-task"


@pytest.mark.parametrize(
    ("sampler", "error", "message"),
    [(Broken, RuntimeError, "no pick today"),
     (Stray, ValueError, "pick\\(\\) returned 'not-a-task', not a task of the shard"),
     (Exits, SystemExit, "3")],
    ids=["raises", "strays", "exits"],
)  # fmt: skip
def test_a_sampler_that_fails_on_the_asynchronous_path_is_raised_not_waited_on(
    sampler: type[Broken], error: type[BaseException], message: str
) -> None:
    # The engine lets the exception (or its lookup of a stray pick) end the worker's thread,
    # and the run would wait out its hour; the bench picks for the broken sampler instead and
    # raises after the run. Bounded here, so that a regression fails instead of hanging.
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            run_engine(ENGINE_WORKLOADS["lessons"], lambda built: sampler(), 0, asynchronous=True)
        except BaseException as raised:  # noqa: BLE001  # checked below
            outcome.append(raised)
        else:
            outcome.append(None)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(120)
    assert outcome, "the asynchronous run was still waiting after 120 s"
    assert isinstance(outcome[0], error)
    assert re.search(message, str(outcome[0]))


def test_a_failure_on_a_workload_of_your_own_names_no_workload_flag() -> None:
    registry = Registry(disable=(), only=(), strict=False)
    registry.register(Broken, "broken")
    own = attrs.evolve(ENGINE_WORKLOADS["lessons"], name="from-run", rounds=2)
    config = EngineBenchConfig(workloads=[own], samplers=["broken"], seeds=1, processes=1)
    [failure] = run_engine_bench(config, registry=registry).failures
    assert failure.message.endswith(
        "rerun it alone on the same workload, as you gave it, with --engine --sampler 'broken' "
        "--first-seed 0 --seeds 1"
    )


def test_the_latency_asked_for_reaches_the_agent_and_the_rerun_command() -> None:
    latencies: list[float] = []

    def make(built: Built) -> Broken:
        latencies.append(built.agent.latency)
        return Broken()

    config = EngineBenchConfig(
        workloads=["lessons"], samplers=[], extra=[EngineEntrant("broken", make)], seeds=1,
        processes=1, asynchronous=True, latency=0.001,
    )  # fmt: skip
    [failure] = run_engine_bench(config).failures
    assert latencies == [0.001]
    assert failure.message.endswith("seeds=1, ceilings=False, asynchronous=True, latency=0.001))")


def test_the_learner_ceiling_is_told_the_make_up_the_workload_was_built_with() -> None:
    from agentdescent_sampling.bench.engine.ceiling import MakeUp

    make_up = MakeUp.of(build(ENGINE_WORKLOADS["regressions"], 0))
    assert sum(make_up.failures_needed.values()) == 8 + 3  # lessons and victims' patches
    assert (make_up.hopeless, make_up.solved, make_up.victims, make_up.flaky) == (8, 10, 3, 0)
    flaky = MakeUp.of(build(ENGINE_WORKLOADS["flaky"], 0))
    assert (flaky.flaky, flaky.luck) == (4, 0.5)
    assert not make_up.at_random
    assert MakeUp.of(build(ENGINE_WORKLOADS["regressions"], 0, "llm-like-random")).at_random


def test_the_learner_ceiling_knows_when_a_fix_comes_at_random() -> None:
    from agentdescent_sampling.bench.engine.ceiling import InformedLearner, MakeUp

    def hazards(reflector: str) -> list[float]:
        built = build(ENGINE_WORKLOADS["lessons"], 0, reflector)  # k = 1, 2, 3, twice each
        learner = InformedLearner(pass_threshold=0.999, make_up=MakeUp.of(built))
        return learner._values()._hazard[1:5]

    # On the k-th failure: of 6 hopeless and 6 lessons, 2 fix on the first failure, 2 of the
    # 4 left on the second, both left on the third, none after.
    assert hazards("llm-like") == pytest.approx([2 / 12, 2 / 10, 2 / 8, 0.0])
    # At random, with chance 1/k on each failure: a lesson of k = 3 may take any number.
    expected = [
        sum(2 * (1 - 1 / k) ** j / k for k in (1, 2, 3))
        / (6 + sum(2 * (1 - 1 / k) ** j for k in (1, 2, 3)))
        for j in range(4)
    ]
    assert hazards("llm-like-random") == pytest.approx(expected)
    assert all(h > 0 for h in hazards("llm-like-random"))


LESSONS = ENGINE_WORKLOADS["lessons"]
LATE = ENGINE_WORKLOADS["late"]
NOTE = re.compile(r"\[note [^\]]*\]")


def failures(recorder: Recorder) -> int:
    return sum(score < recorder.built.pass_threshold for _, score, _ in recorder.records)


def test_llm_like_proposes_something_on_every_failure() -> None:
    recorder, answers = _recorded(LESSONS, round_robin, reflector="llm-like")
    assert len(answers) == failures(recorder) > 0
    assert all(answers)
    assert any(answer and NOTE.fullmatch(answer) for answer in answers)
    silent, quiet = _recorded(LESSONS, round_robin, reflector="silent")
    assert len(quiet) == failures(silent)
    assert None in quiet


def test_notes_never_flip_a_task() -> None:
    recorder, _ = _recorded(ENGINE_WORKLOADS["regressions"], round_robin)
    by_id = recorder.built.agent.by_id
    noted = [(task, playbook) for task, _, playbook in recorder.records if NOTE.search(playbook)]
    assert noted, "no note ever reached the artifact"
    for task, playbook in noted:
        assert passes(by_id[task], playbook) == passes(by_id[task], NOTE.sub("", playbook))
    # Round-robin picks the same tasks whatever the reflector says, so the held-out curve
    # against rollouts is the silent reflector's: the notes cost calls, never a pass.
    for workload in (LESSONS, ENGINE_WORKLOADS["regressions"]):
        robin = {
            reflector: run_engine(workload, round_robin, 0,
                                  reflector=reflector)
            for reflector in ("silent", "llm-like")
        }  # fmt: skip
        assert robin["llm-like"].curve == robin["silent"].curve
        assert robin["llm-like"].calls > robin["silent"].calls


def test_a_wrong_rule_breaks_exactly_one_passing_task_and_its_twin_until_its_patch() -> None:
    built = build(LESSONS, 0, "llm-like-wrong")
    agent = built.agent
    never = next(task for task in built.tasks if task.id == "never0-train")
    answers = [agent.propose("", never, "", 0.0) for _ in range(60)]
    wrong = [answer for answer in answers if answer and answer.startswith("[wrong rule")]
    assert 2 <= len(wrong) <= 30, "about one note in six is a wrong rule"
    rule = wrong[0]
    target = re.search(r"\(it breaks (\w+)\)", rule)
    assert target is not None
    stem = target.group(1)

    def failing(playbook: str) -> set[str]:
        return {task.id for task in built.tasks if built.reward(task, playbook) < 0.999}

    broken = failing(rule) - failing("")
    assert broken == {f"{stem}-train", f"{stem}-held-out"}
    # The reflector finds the patch on the broken task's failure, and the patch mends both.
    victim = next(task for task in built.tasks if task.id == f"{stem}-train")
    patch = agent.propose(rule, victim, "", 0.0)
    assert patch == f"[patch for {stem}]"
    assert failing(f"{rule}\n{patch}") == failing("")


def first_fix(reflector: str, seed: int) -> int:
    """The failure on which the reflector first proposes the rule of ``late``'s lesson that
    takes six failures (k=6)."""
    built = build(LATE, seed, reflector)
    plan = next(plan for plan in built.agent.by_id.values()
                if plan.kind == "lesson" and plan.failures_needed == 6)  # fmt: skip
    task = next(task for task in built.tasks if task.id == plan.id)
    for failed in itertools.count(1):
        answer = built.agent.propose("", task, "", 0.0)
        assert answer, "every failure proposes something"
        if plan.rule in answer:  # as it is, or worded afresh (llm-like-gate)
            return failed
    raise AssertionError("unreachable")


def test_llm_like_random_finds_a_rule_after_k_failures_on_average_not_on_the_kth() -> None:
    assert {first_fix("llm-like", seed) for seed in range(200)} == {6}
    drawn = [first_fix("llm-like-random", seed) for seed in range(200)]
    assert 5.0 <= sum(drawn) / len(drawn) <= 7.0  # geometric, mean 6: sd 0.4 over 200 seeds
    assert min(drawn) == 1
    assert max(drawn) > 12


def test_llm_like_all_departs_from_llm_like_in_each_way_its_three_parts_do() -> None:
    def departures(reflector: str) -> tuple[bool, bool, bool]:
        built = build(LESSONS, 0, reflector)
        never = next(task for task in built.tasks if task.id == "never0-train")
        answers = [built.agent.propose("", never, "", 0.0) for _ in range(60)]
        train = [task for task in built.tasks if task.id.endswith("-train")]
        slips = [SLIP in built.agent.solve("", task) for task in train for _ in range(20)]
        random = {first_fix(reflector, seed) for seed in range(40)} != {6}
        return random, any("[wrong rule" in str(a) for a in answers), any(slips)

    assert departures("llm-like") == (False, False, False)
    assert departures("llm-like-random") == (True, False, False)
    assert departures("llm-like-wrong") == (False, True, False)
    assert departures("llm-like-noisy") == (False, False, True)
    assert departures("llm-like-all") == (True, True, True)
    assert departures("llm-like-gate") == (False, False, False)  # its slips are held-out ones


def test_llm_like_repeat_counts_a_look_only_on_an_artifact_its_task_has_not_failed_on() -> None:
    def answers(reflector: str, artifacts: Sequence[str]) -> list[str | None]:
        built = build(LATE, 0, reflector)
        plan = next(plan for plan in built.agent.by_id.values()
                    if plan.kind == "lesson" and plan.failures_needed == 6)  # fmt: skip
        task = next(task for task in built.tasks if task.id == plan.id)
        found = [built.agent.propose(artifact, task, "", 0.0) for artifact in artifacts]
        return ["rule" if answer == plan.rule else answer for answer in found]

    same = answers("llm-like-repeat", [""] * 12)
    assert same == [same[0]] * 12  # the same note, twelve times
    assert same[0] != "rule"
    assert answers("llm-like", [""] * 12)[5] == "rule"  # every failure is a look
    # the sixth artifact is the sixth look, after seven failures
    changed = answers("llm-like-repeat", ["v0", "v0"] + [f"v{n}" for n in range(1, 7)] + ["v5"])
    assert changed[1] == changed[0]
    assert "rule" not in changed[:6]
    assert changed[6:] == ["rule", changed[0].replace("1]", "7]"), "rule"]  # v5 seen: the rule


def warm_looks(seed: int, artifacts: Sequence[str]) -> list[int]:
    """The look each failure of a never-pass task on ``artifacts`` is, by ``llm-like-warm``."""
    built = build(LESSONS, seed, "llm-like-warm")
    never = next(task for task in built.tasks if task.id == "never0-train")
    notes = [str(built.agent.propose(artifact, never, "", 0.0)) for artifact in artifacts]
    return [int(note.rsplit(" ", 1)[1].rstrip("]")) for note in notes]


def test_llm_like_warm_repeats_a_failure_on_a_seen_artifact_half_the_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # v0 again and again, each time after a fresh artifact
    artifacts = [f"v{n // 2 + 1}" if n % 2 else "v0" for n in range(400)]
    looks = warm_looks(0, artifacts)
    assert looks[:2] == [1, 2]
    repeats = 0
    for n in range(2, len(looks)):
        newest = max(looks[:n])
        if n % 2:  # a fresh artifact: always a new look
            assert looks[n] == newest + 1
        else:  # v0 again: what its last look there proposed, or a new look
            assert looks[n] in (looks[n - 2], newest + 1)
            repeats += looks[n] == looks[n - 2]
    assert 0.4 <= repeats / 199 <= 0.6  # REPEAT_SHARE, sd 0.035 over 199
    assert warm_looks(1, artifacts) != looks  # seeded
    monkeypatch.setattr(engine_workloads, "REPEAT_SHARE", 0.2)
    steps = [after - before for before, after in itertools.pairwise(warm_looks(0, ["v0"] * 400))]
    assert 0.1 <= steps.count(0) / len(steps) <= 0.3  # sd 0.02 over 399
    # a fix comes on its k-th look, as with llm-like-repeat
    late = build(LATE, 0, "llm-like-warm")
    plan = next(plan for plan in late.agent.by_id.values()
                if plan.kind == "lesson" and plan.failures_needed == 6)  # fmt: skip
    task = next(task for task in late.tasks if task.id == plan.id)
    answers = []
    for _ in range(40):
        answers.append(late.agent.propose("v0", task, "", 0.0))
        look = late.agent.looked[plan.id]
        assert answers[-1] == (plan.rule if look % 6 == 0 else f"[note {plan.id} {look}]")
    assert plan.rule in answers


def test_a_wrong_rule_in_a_run_breaks_only_its_target_while_unpatched() -> None:
    recorder, answers = _recorded(ENGINE_WORKLOADS["regressions"], round_robin, 1, "llm-like-wrong")
    assert any(answer and answer.startswith("[wrong rule") for answer in answers)
    by_id = recorder.built.agent.by_id
    for task, score, playbook in recorder.records:
        if by_id[task].kind == "always":
            stem = task.split("-")[0]
            broken = f"(it breaks {stem})" in playbook and f"[patch for {stem}]" not in playbook
            assert (score < 0.999) == broken, (task, playbook)


def held_out_reward(built: Built, playbook: str) -> float:
    held = [task for task in built.tasks if "held-out" in task.id]
    return sum(built.reward(task, playbook) for task in held) / len(held)


def test_in_regressions_held_out_a_breaker_nets_one_task_and_costs_two_until_the_patch() -> None:
    built = build(ENGINE_WORKLOADS["regressions-held-out"], 0)
    held = sum("held-out" in task.id for task in built.tasks)
    victim, breaker = next(iter(built.breaker_rule.items()))
    patch = f"[patch for {victim}]"
    empty = held_out_reward(built, "")
    # The breaker's twin counts three times and the victim's twice: +3 - 2 = +1 task.
    assert held_out_reward(built, breaker) == pytest.approx(empty + 1 / held)
    assert held_out_reward(built, f"{breaker}\n{patch}") == pytest.approx(empty + 3 / held)
    # In plain regressions the victim's twin counts once: +2 - 1 = +1, and the patch +1.
    plain = build(ENGINE_WORKLOADS["regressions"], 0)
    held = sum("held-out" in task.id for task in plain.tasks)
    victim, breaker = next(iter(plain.breaker_rule.items()))
    empty = held_out_reward(plain, "")
    assert held_out_reward(plain, breaker) == pytest.approx(empty + 1 / held)
    patched = held_out_reward(plain, f"{breaker}\n[patch for {victim}]")
    assert patched == pytest.approx(empty + 2 / held)


def lessons_only(built: Built) -> TaskSampler:
    """Picks the train lessons in turn and never re-tests a passing task."""
    return InTurn({t.id for t in built.tasks if t.id.startswith("lesson") and "train" in t.id})


def test_a_sampler_that_never_re_tests_passing_tasks_misses_75_percent_there() -> None:
    run = run_engine(ENGINE_WORKLOADS["regressions-held-out"], lessons_only, 0)
    assert run.rollouts_to(0.75) is None
    assert run.gain(run.final) == pytest.approx(8 / 14)  # every rule, no patch


def test_the_call_curve_is_each_rounds_calls_and_never_falls() -> None:
    seen: list[int] = []

    def watch(sampler: TaskSampler, built: Built, options: Any) -> dict[str, Any]:
        return {"on_round": lambda info: seen.append(info.calls)}

    run = run_engine(LESSONS, round_robin, 0, wiring=watch)
    assert run.call_curve == (0, *seen)
    assert all(a <= b for a, b in zip(run.call_curve, run.call_curve[1:], strict=False))
    assert run.calls == seen[-1]
    assert run.calls_to(0.75) is not None


def before_llm_like(built: Built) -> Callable[..., str | None]:
    """The bench's reflector as it was before llm-like: a task's rule on its k-th failure,
    else nothing; other tasks are not counted."""
    counts: dict[str, int] = {}

    def propose(rendered: str, task: Any, output: str, reward: float) -> str | None:
        plan = built.agent.by_id[task.id]
        if plan.rule is None or not task.id.endswith("-train"):
            return None
        counts[task.id] = counts.get(task.id, 0) + 1
        return plan.rule if counts[task.id] % plan.failures_needed == 0 else None

    return propose


@pytest.mark.parametrize("sampler", ["round-robin", "fixable-first"])
def test_the_silent_reflector_reproduces_the_bench_before_llm_like(sampler: str) -> None:
    workload = ENGINE_WORKLOADS["regressions"]
    make: Callable[[Built], TaskSampler] = lambda built: create(sampler)  # noqa: E731
    silent = run_engine(workload, make, 3, reflector="silent")
    before = run_engine(
        workload, make, 3, wiring=lambda s, built, options: {"propose": before_llm_like(built)}
    )
    assert silent == before


def test_a_wiring_may_hand_the_engine_another_sampler_and_it_is_still_counted() -> None:
    handed: list[TaskSampler] = []

    def swap(sampler: TaskSampler, built: Built, options: Any) -> dict[str, Any]:
        handed.append(create("round-robin"))
        return {"task_sampler": handed[-1]}

    short = attrs.evolve(LESSONS, rounds=3)
    run = run_engine(short, lambda built: create("fixable-first"), 0, wiring=swap)
    assert run.rollouts == short.budget
    with pytest.raises(ValueError, match="the wiring returned agent, which the bench passes"):
        run_engine(short, round_robin, 0, wiring=lambda s, b, options: {"agent": 1})


def test_an_asynchronous_run_spends_the_workloads_budget() -> None:
    run = run_engine(LESSONS, round_robin, 0, asynchronous=True)
    assert LESSONS.budget <= run.rollouts <= LESSONS.budget + LESSONS.workers
    assert run.gain(run.final) > 0


def test_an_asynchronous_runs_workers_take_turns_as_real_model_calls_would() -> None:
    # Answering in microseconds, one worker's thread ran a stretch of up to 40 rollouts
    # before the other got the interpreter (13 to 16 turns in a run of 121 picks); each agent
    # call now waits as a model call does, without holding the interpreter (65 to 81 turns,
    # with three busy loops beside it too). How many picks each worker makes is the
    # engine's: a shard with more failures spends more of its thread's time on proposals.
    regressions = ENGINE_WORKLOADS["regressions"]
    order: list[str] = []

    class Counting:
        def __init__(self) -> None:
            self.inner = create("round-robin")

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            order.append(keys[0])  # a shard's first key names its worker
            return self.inner.pick(keys, round_index)

        def record(self, task_id: str, score: float) -> None:
            self.inner.record(task_id, score)

    run_engine(regressions, lambda built: Counting(), 0, asynchronous=True)
    assert len(set(order)) == regressions.workers
    turns = 1 + sum(1 for before, after in itertools.pairwise(order) if before != after)
    assert turns >= len(order) / 3


@pytest.mark.parametrize(
    ("asynchronous", "latency", "waits"),
    [
        (False, None, set()),
        (False, 0.004, {0.004}),
        (True, None, {ASYNC_LATENCY}),
        (True, 0, set()),
    ],
)
def test_each_agent_call_waits_the_latency_asked_for_or_the_paths_default(
    asynchronous: bool, latency: float | None, waits: set[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    # Only the simulated agent's clock: the engine's own waits are left alone.
    monkeypatch.setattr(engine_workloads, "time", SimpleNamespace(sleep=slept.append))
    lessons = ENGINE_WORKLOADS["lessons"]
    run_engine(lessons, lambda built: create("round-robin"), 0, asynchronous=asynchronous,
               latency=latency)  # fmt: skip
    assert set(slept) == waits
    assert not waits or len(slept) >= lessons.budget  # at least one call a rollout
