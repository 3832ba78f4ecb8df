"""wire() in the real ``evolve()``: each evidence card reaches the sampler, on both paths."""

from __future__ import annotations

import collections
import copy
import itertools
import math
import re
import sys
import types
from fractions import Fraction
from typing import Any

import attrs
import pytest

from agentdescent_sampling import FixableFirst, create, wire
from tests.engine.conftest import ASYNC_SECONDS, HintAgent, ToyWorkload

pytest.importorskip(
    "agentdescent",
    reason='needs the agentdescent engine: python -m pip install ".[engine]"',
)

Told = tuple[str, "float | None", bool]


@attrs.define(eq=False)
class Listening(FixableFirst):
    """fixable-first that keeps what it was told."""

    told: list[Told] = attrs.field(factory=list)

    def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
        self.told.append((task_id, gain, committed))
        super().evidence(task_id, gain, committed)


class NoteAgent(HintAgent):
    """Proposes the failed task's lesson, or, as a language model would, a note that fixes
    nothing on a task no lesson can fix."""

    def propose(self, rendered: str, task: Any, output: str, reward: float) -> str | None:
        return super().propose(rendered, task, output, reward) or f"note on {task.id}"


class FreshNoteAgent(NoteAgent):
    """Words each proposal afresh, as a model sampled at a temperature does."""

    def __init__(self) -> None:
        self.words = itertools.count()

    def propose(self, rendered: str, task: Any, output: str, reward: float) -> str | None:
        proposal = super().propose(rendered, task, output, reward)
        return f"{proposal} (worded {next(self.words)})"


def _evolve(toy: ToyWorkload, sampler: Listening, agent: Any = None, **yours: Any) -> Any:
    from agentdescent import evolve

    if yours.get("asynchronous", False):
        budget = {"max_rollouts": 16, "max_seconds": ASYNC_SECONDS}
    else:
        budget = {"rounds": 8, "max_concurrency": toy.n_workers}
    return evolve(
        toy.tasks,
        toy.reward,
        agent=agent or NoteAgent(),
        n_workers=toy.n_workers,
        held_out_frac=toy.held_out_frac,
        **budget,
        **wire(sampler, **yours),
    )


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_each_card_reaches_the_sampler_with_its_gain_and_whether_it_committed(
    toy: ToyWorkload, asynchronous: bool
) -> None:
    sampler = Listening()
    result = _evolve(toy, sampler, asynchronous=asynchronous)

    assert result.error is None
    assert sampler.told, "no evidence reached the sampler"
    lessons = {task_id for task_id, _, _ in sampler.told if task_id.startswith("lesson")}
    assert lessons, sampler.told
    for task_id, gain, _ in sampler.told:
        # A lesson's re-run passes with its lesson applied; a note fixes nothing.
        assert gain == (1.0 if task_id.startswith("lesson") else 0.0), sampler.told
    assert sum(info.committed for info in result.history) >= 1
    assert any(committed for _, _, committed in sampler.told)


@attrs.define(eq=False)
class Repeats(Listening):
    """fixable-first that keeps what ``repeated()`` told it."""

    repeats: list[tuple[str, bool]] = attrs.field(factory=list)

    def repeated(self, task_id: str, same: bool) -> None:
        self.repeats.append((task_id, same))
        super().repeated(task_id, same)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_card_proposing_again_what_its_tasks_card_did_on_one_artifact_is_told_repeated(
    toy: ToyWorkload, asynchronous: bool
) -> None:
    sampler = Repeats()  # NoteAgent words a task's note the same each time, as at temperature 0
    assert _evolve(toy, sampler, asynchronous=asynchronous).error is None
    assert sampler.repeats, "no card was made where its task's card before was"
    assert all(same for _, same in sampler.repeats), sampler.repeats
    assert sampler.state_dict()["repeats"], "the sampler should hold what it was told"
    fresh = Repeats()
    assert _evolve(toy, fresh, FreshNoteAgent(), asynchronous=asynchronous).error is None
    assert fresh.repeats, "no card was made where its task's card before was"
    assert not any(same for _, same in fresh.repeats), fresh.repeats
    assert not fresh.state_dict()["repeats"]


def test_your_acceptance_still_decides_and_a_refused_card_is_told_not_committed(
    toy: ToyWorkload,
) -> None:
    from agentdescent.policies import AcceptDecision, Policies

    asked: list[Any] = []

    class RefuseAll:
        def accept(self, ctx: Any) -> AcceptDecision:
            asked.append(ctx)
            return AcceptDecision(False, "below-threshold", "refused by the test")

    sampler = Listening()
    result = _evolve(toy, sampler, policies=Policies(acceptance=RefuseAll()))

    assert asked, "your acceptance policy was not consulted"
    assert sum(info.committed for info in result.history) == 0
    assert sampler.told
    assert not any(committed for _, _, committed in sampler.told)


def test_your_on_round_still_runs_and_without_self_verify_the_gain_is_none(
    toy: ToyWorkload,
) -> None:
    rounds: list[int] = []
    sampler = Listening()
    _evolve(toy, sampler, on_round=lambda info: rounds.append(info.round), self_verify=False)

    assert rounds == list(range(8))
    assert sampler.told
    assert {gain for _, gain, _ in sampler.told} == {None}


def test_self_verify_given_beside_wire_is_a_type_error_not_a_gain_the_engine_never_measured(
    toy: ToyWorkload,
) -> None:
    from agentdescent import evolve

    with pytest.raises(TypeError, match="multiple values for keyword argument 'self_verify'"):
        evolve(
            toy.tasks, toy.reward, agent=NoteAgent(), rounds=1, **wire(Listening()),
            self_verify=False,
        )  # fmt: skip


def test_under_a_token_budget_a_failed_rerun_is_told_until_the_engine_may_skip_it(
    toy: ToyWorkload,
) -> None:
    from agentdescent import evolve
    from agentdescent.agents import Usage
    from agentdescent.policies import AcceptDecision, Policies

    class RefuseAll:  # so that every task fails, and is proposed and re-run, every round
        def accept(self, ctx: Any) -> AcceptDecision:
            return AcceptDecision(False, "below-threshold", "refused by the test")

    usage = Usage()
    sampler = Listening()
    rounds: list[int] = []

    def spend(info: Any) -> None:
        rounds.append(len(sampler.told))  # how many cards had been told by each round's end
        usage.add_tokens(prompt_tokens=100)

    result = evolve(
        toy.tasks,
        toy.reward,
        agent=NoteAgent(),
        n_workers=toy.n_workers,
        held_out_frac=toy.held_out_frac,
        rounds=12,
        usage=usage,
        # 100 tokens a round: from round 9 on, 90% of the budget is spent, and the engine's
        # governor skips each re-run, filing a gain of 0.0 for it.
        **wire(sampler, max_tokens=1000, policies=Policies(acceptance=RefuseAll()), on_round=spend),
    )

    assert result.error is None
    by_round = [sampler.told[start:end] for start, end in itertools.pairwise([0, *rounds])]

    def expected(round_index: int, task_id: str) -> float | None:
        made = round_index < 9  # the re-runs the engine made
        if task_id.startswith("lesson"):  # its re-run passes: never the 0.0 of a skipped one
            return 1.0 if made else None
        # A note's re-run fails: its 0.0 is told from the third round (a round's spend is
        # known once two rounds have ended, on_round's spend with it) until one round before
        # the budget's 90%.
        return 0.0 if made and round_index > 1 else None

    told = [(r, t, g, expected(r, t)) for r, cards in enumerate(by_round) for t, g, _ in cards]
    assert [card for card in told if card[2] != card[3]] == []
    assert {(g, t.startswith("lesson")) for _, t, g, _ in told} >= {
        (1.0, True), (None, True), (0.0, False),
    }  # fmt: skip


class NeverDeep:
    """An allocator that refuses the expensive evaluation whenever the budget lets it decide."""

    budget_start = 0.5

    def decide(self, ctx: Any) -> Any:
        return types.SimpleNamespace(deep_eval=False)

    def observe(self, ctx: Any, committed: bool) -> None:
        pass


def test_a_rerun_skipped_for_what_your_on_round_spent_is_not_told_as_a_gain(
    toy: ToyWorkload,
) -> None:
    # RoundInfo.tokens is read before on_round: the 600 tokens each on_round spends reach the
    # engine's governor at the next round's start, and its allocator skips that round's re-runs.
    from agentdescent import evolve
    from agentdescent.agents import Usage

    usage = Usage()
    sampler = Listening()
    evolve(
        toy.tasks, toy.reward, agent=NoteAgent(), n_workers=toy.n_workers,
        held_out_frac=toy.held_out_frac, rounds=8, usage=usage,
        **wire(sampler, max_tokens=1000, allocator=NeverDeep(),
               on_round=lambda info: usage.add_tokens(prompt_tokens=600)),
    )  # fmt: skip

    lessons = [gain for task_id, gain, _ in sampler.told if task_id.startswith("lesson")]
    assert 0.0 not in lessons  # a lesson's re-run, when made, passes: its gain is 1.0
    assert None in lessons  # the skipped re-runs, told without a gain


def test_a_tap_reused_for_another_run_forgets_the_last_runs_spend() -> None:
    from agentdescent.defaults import DefaultAcceptance

    from agentdescent_sampling.wiring import EvidenceTap

    tap = EvidenceTap(Listening(), self_verify=True)
    tap.budget(1000)
    acceptance = tap.acceptance()
    card = types.SimpleNamespace(before_after_delta=0.0, trace_ids=("rollout",))
    tap.round_ended(100)
    tap.round_ended(200)
    assert tap._gain(card) == 0.0  # the spend and a round's step are known
    acceptance.configure(DefaultAcceptance())  # the engine installs it in a new run
    assert tap._gain(card) is None  # that run's first round: its spend is not known


def test_a_card_whose_proposal_the_committed_candidate_makes_is_told_committed() -> None:
    # Two tasks fixed by one rule fail in one round: the engine sends one of the two agreeing
    # diffs to the gate ("nothing-to-fuse"), and commits it; the other card's proposal is in.
    from agentdescent import Task, evolve

    def half(split: str) -> list[Any]:
        same = [Task(id=f"{name}-{split}", prompt=name, meta={"kind": "lesson", "lesson": "rule A"})
                for name in ("a1", "a2")]  # fmt: skip
        never = [Task(id=f"never{n}-{split}", prompt="no", meta={"kind": "never"}) for n in (1, 2)]
        return [*same, *never]

    def reward(task: Any, output: str) -> float:
        return float(task.meta["kind"] == "lesson" and task.meta["lesson"] in output)

    sampler = Listening()
    evolve(
        half("train") + half("held-out"), reward, agent=NoteAgent(), n_workers=2,
        max_concurrency=2, rounds=1, held_out_frac=0.5, **wire(sampler),
    )  # fmt: skip

    assert sorted(sampler.told) == [("a1-train", 1.0, True), ("a2-train", 1.0, True)]
    assert sorted(sampler.state_dict()["verified"]) == ["a1-train", "a2-train"]


@attrs.define(eq=False)
class Counting(Listening):
    """fixable-first counting its picks."""

    picks: collections.Counter[str] = attrs.field(factory=collections.Counter)

    def pick(self, keys: Any, round_index: int) -> str:
        picked = super().pick(keys, round_index)
        self.picks[picked] += 1
        return picked


class HalfMute(HintAgent):
    """Proposes the first lesson alone: the other failures bring the sampler no card."""

    def propose(self, rendered: str, task: Any, output: str, reward: float) -> str | None:
        return task.meta.get("lesson") if task.id.startswith("lesson0") else None


def test_a_sampler_wired_for_a_synchronous_run_holds_no_failure_in_an_asynchronous_one(
    toy: ToyWorkload,
) -> None:
    # The synchronous run's ends of rounds must not leave it waiting for one on a path
    # that has none: 26 of 30 rollouts went to the task that always passes.
    from agentdescent import evolve

    sampler = Counting()
    shared = {"agent": HalfMute(), "n_workers": 1, "held_out_frac": toy.held_out_frac}
    evolve(toy.tasks, toy.reward, rounds=3, **shared, **wire(sampler))
    sampler.picks.clear()
    evolve(
        toy.tasks, toy.reward, max_rollouts=30, max_seconds=ASYNC_SECONDS, **shared,
        **wire(sampler, asynchronous=True),
    )  # fmt: skip

    assert sampler.picks[toy.always_pass_id] <= 12, sampler.picks


@pytest.mark.parametrize(
    ("method", "call"),
    [("evidence", "evidence(task_id, gain, committed)"), ("end_round", "end_round(committed)")],
)
def test_a_hook_that_cannot_take_what_the_run_passes_is_a_type_error_before_the_run(
    method: str, call: str
) -> None:
    class Short(FixableFirst):
        def evidence(self, task_id: str, gain: float | None) -> None:  # type: ignore[override]
            pass

        def end_round(self) -> None:  # type: ignore[override]
            pass

    if method == "end_round":
        Short.evidence = FixableFirst.evidence  # type: ignore[method-assign]

    with pytest.raises(TypeError, match=re.escape(f"cannot be called as {call}")) as raised:
        wire(Short())
    assert f"define {call.replace('(', '(self, ')}" in str(raised.value)


def test_an_end_round_the_asynchronous_path_never_calls_is_taken_as_it_is() -> None:
    class Roundless(FixableFirst):
        def end_round(self) -> None:  # type: ignore[override]
            pass

    sampler = Roundless()
    assert wire(sampler, asynchronous=True)["task_sampler"] is sampler


def test_a_wired_policy_can_be_copied() -> None:
    acceptance = wire(create("fixable-first"))["policies"].acceptance
    assert copy.copy(acceptance).inner is acceptance.inner


@pytest.mark.parametrize(
    "beside",
    [{"artifact_id": "artifact"}, {"asynchronous": False}, {"max_tokens": 10**9},
     {"allocator": None}, {"self_verify": False}],
    ids=lambda beside: next(iter(beside)),
)  # fmt: skip
def test_an_argument_wire_reads_given_beside_it_is_a_type_error(
    toy: ToyWorkload, beside: dict[str, Any]
) -> None:
    from agentdescent import evolve

    (name,) = beside
    with pytest.raises(TypeError, match=f"multiple values for keyword argument '{name}'"):
        evolve(toy.tasks, toy.reward, agent=NoteAgent(), rounds=1, **wire(Listening()), **beside)


@pytest.mark.parametrize(
    ("spec", "yours"),
    [
        pytest.param("fixable-first", {"solved_threshold": 0.8}, id="engine-lowered-alone"),
        pytest.param("fixable-first:pass_threshold=0.8", {"solved_threshold": 0.999},
                     id="sampler-lowered-alone"),
        pytest.param("fixable-first:pass_threshold=0.5", {"solved_threshold": 0.8},
                     id="both-lowered-apart"),
    ],
)  # fmt: skip
def test_a_pass_threshold_other_than_the_runs_solved_threshold_is_a_value_error_naming_both(
    spec: str, yours: dict[str, Any]
) -> None:
    sampler = create(spec)
    solved, own = yours["solved_threshold"], sampler.pass_threshold
    with pytest.raises(ValueError, match="would disagree on which rollouts pass") as got:
        wire(sampler, **yours)
    assert str(got.value) == (
        f"wire(solved_threshold={solved!r}): sampler 'fixable-first' counts a pass at "
        f"pass_threshold={own!r}, so it and evolve() would disagree on which rollouts pass: "
        f"give both the same value (a sampler built with pass_threshold={solved!r}, or "
        f"solved_threshold={own!r})"
    )


def test_a_sampler_without_evidence_is_told_so_before_its_threshold() -> None:
    with pytest.raises(TypeError, match="evidence"):
        wire(create("difficulty-weighted:pass_threshold=0.8"), solved_threshold=0.999)


@attrs.define(eq=False)
class GradedListening(Listening):
    """A sampler that scores by grade, as ``informative-band:graded=true`` does."""

    graded: bool = True


class Thresholdless:
    """A sampler with evidence() and no pass threshold."""

    name = "thresholdless"

    def pick(self, keys: list[str], round_index: int) -> str:
        return keys[round_index % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        pass

    def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
        pass


@pytest.mark.parametrize(
    ("sampler", "solved"),
    [
        pytest.param(Listening(pass_threshold=0.8), 0.8, id="both-lowered"),
        pytest.param(Listening(), 1.1, id="engine-counts-nothing-solved"),
        pytest.param(GradedListening(), 0.8, id="graded-sampler"),
        pytest.param(Thresholdless(), 0.8, id="no-threshold"),
    ],
)
def test_a_threshold_that_agrees_or_cannot_disagree_is_wired_and_passed_on(
    sampler: Any, solved: float
) -> None:
    assert wire(sampler, solved_threshold=solved)["solved_threshold"] == solved


def test_what_wire_returned_reused_for_another_run_decides_by_that_runs_config(
    toy: ToyWorkload,
) -> None:
    from agentdescent import evolve
    from agentdescent.aggregator import AggregatorConfig

    wired = wire(Listening())
    survived = []
    for base_delta in (0.3, 0.05, 0.05):
        evolve(
            toy.tasks, toy.reward, agent=NoteAgent(), rounds=3, held_out_frac=toy.held_out_frac,
            agg_config=AggregatorConfig(base_delta=base_delta), **wired,
        )  # fmt: skip
        assert wired["policies"].acceptance.inner.base_delta == base_delta
        survived.append(dict(wired["policies"].promotion.inner.survival))
    # The promotion rule's counts start afresh: the same run again counts the same.
    assert survived[1] == survived[2], survived


def test_the_samplers_failing_hooks_leave_your_on_round_and_promotion_called(
    toy: ToyWorkload,
) -> None:
    from agentdescent import evolve
    from agentdescent.defaults import DefaultPromotion
    from agentdescent.policies import Policies

    class Failing(Listening):
        def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
            raise RuntimeError("the sampler's evidence")

        def end_round(self, committed: int) -> None:
            raise RuntimeError("the sampler's end_round")

    rounds: list[int] = []
    observed: list[Any] = []

    class Promotion(DefaultPromotion):
        def observe(self, reports: Any) -> Any:
            observed.append(reports)
            return super().observe(reports)

    wired = wire(Failing(), on_round=lambda info: rounds.append(info.round))
    with pytest.warns(RuntimeWarning, match="end_round\\(\\) of sampler 'fixable-first' raised"):
        wired["on_round"](type("Info", (), {"round": 0, "committed": 0, "tokens": 0})())
    assert rounds == [0]
    with pytest.warns(RuntimeWarning, match="stopped early"):
        result = evolve(
            toy.tasks, toy.reward, agent=NoteAgent(), rounds=2, held_out_frac=toy.held_out_frac,
            **wire(Failing(), policies=Policies(promotion=Promotion())),
        )  # fmt: skip
    assert "the sampler's evidence" in str(result.error)
    assert observed, "your promotion policy was not called"


def test_the_samplers_failing_end_round_is_reported_as_its_own_not_as_your_on_round(
    toy: ToyWorkload,
) -> None:
    import warnings

    from agentdescent import evolve

    class Failing(Listening):
        def end_round(self, committed: int) -> None:
            raise KeyError("the sampler's end_round")

    def run(mine: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = evolve(
                toy.tasks, toy.reward, agent=NoteAgent(), rounds=2,
                held_out_frac=toy.held_out_frac, **wire(Failing(), on_round=mine),
            )  # fmt: skip
        assert result.error is None
        return [str(warning.message) for warning in caught if "raised" in str(warning.message)]

    rounds: list[int] = []
    said = run(lambda info: rounds.append(info.round))
    assert rounds == [0, 1]
    assert all("on_round callback raised" not in message for message in said), said
    assert len(said) == 2
    assert all("end_round() of sampler 'fixable-first' raised KeyError" in m for m in said), said

    def yours(info: Any) -> None:
        raise ValueError(f"your on_round, round {info.round}")

    # Both fail: each is reported, as its own.
    said = run(yours)
    assert sum("on_round callback raised: ValueError: your on_round" in m for m in said) == 2
    assert sum("end_round() of sampler 'fixable-first' raised" in m for m in said) == 2, said


def test_wiring_twice_or_around_an_aggregator_factory_is_a_type_error() -> None:
    from agentdescent.defaults import DefaultAcceptance
    from agentdescent.policies import Policies

    first = wire(Listening(), policies=Policies(acceptance=DefaultAcceptance()))
    with pytest.raises(TypeError, match="policies an earlier wire\\(\\) returned"):
        wire(Listening(), policies=first["policies"])
    with pytest.raises(TypeError, match="got task_sampler=Listening"):
        wire(Listening(), **first)
    with pytest.raises(TypeError, match="an aggregator_factory replaces them"):
        wire(Listening(), aggregator_factory=lambda *args: None)


def test_policies_with_an_aggregator_factory_are_a_type_error_as_the_argument_is() -> None:
    from agentdescent.policies import Policies

    def factory(*args: Any) -> None:
        return None

    # evolve() would only warn that the wrapped policies go unused: the sampler told nothing.
    with pytest.raises(TypeError, match=r"your policies' aggregator_factory \(<function .*factory"):
        wire(Listening(), policies=Policies(aggregator_factory=factory))


def test_policies_with_another_task_sampler_is_a_type_error_not_a_sampler_silently_replaced(
    toy: ToyWorkload,
) -> None:
    from agentdescent.policies import Policies

    from agentdescent_sampling import create

    mine = create("round-robin")
    with pytest.raises(
        TypeError,
        match=r"got policies whose task_sampler is RoundRobin\(.*\), but wire\(\) sets "
        r"task_sampler to the sampler it wires, Listening\(.*leave task_sampler out",
    ):
        wire(Listening(), policies=Policies(task_sampler=mine))
    # The sampler wired, given in the policies too, is the one that runs and is told.
    sampler = Listening()
    result = _evolve(toy, sampler, policies=Policies(task_sampler=sampler))
    assert result.error is None
    assert sampler.told


@pytest.mark.parametrize("record", [True, False], ids=["recorded", "not-recorded"])
def test_run_spec_refs_tell_a_gain_of_zero_only_where_the_card_shows_its_rerun(
    toy: ToyWorkload, record: bool
) -> None:
    # The refs of a run spec cannot see its self_verify: each card says whether it was re-run.
    from agentdescent import evolve
    from agentdescent.policies import Policies

    from agentdescent_sampling.refs import evidence_acceptance, evidence_promotion
    from agentdescent_sampling.runspec import _tap

    sampler = Listening()
    link = f"python_{record}"
    _tap(link).attach(sampler)
    evolve(
        toy.tasks,
        toy.reward,
        agent=NoteAgent(),
        task_sampler=sampler,
        n_workers=toy.n_workers,
        held_out_frac=toy.held_out_frac,
        rounds=8,
        record_trajectories=record,
        policies=Policies(acceptance=evidence_acceptance(link), promotion=evidence_promotion(link)),
    )

    lessons = {gain for task_id, gain, _ in sampler.told if task_id.startswith("lesson")}
    notes = {gain for task_id, gain, _ in sampler.told if not task_id.startswith("lesson")}
    assert lessons == {1.0}, sampler.told
    # A note's re-run still fails, 0.0, as the engine files a card it did not re-run. It is
    # told so where the card has two trace ids, the rollout's and the re-run's (one may be a
    # duplicate the store does not keep), and without a gain where the run records none.
    assert 0.0 in notes if record else notes == {None}, sampler.told


def test_a_sampler_without_evidence_gets_a_type_error_that_names_the_fix() -> None:
    from agentdescent_sampling import create

    fix = "select fixable-first, or pass the sampler to evolve(task_sampler=...) without wire()"
    with pytest.raises(TypeError, match=rf"'round-robin' has no evidence\(.*{re.escape(fix)}$"):
        wire(create("round-robin"))
    with pytest.raises(TypeError, match="sets task_sampler itself"):
        wire(Listening(), task_sampler=Listening())


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        ((None,), {}, r"wire\(\) takes the sampler to wire first, one with pick\(\) and "
         r"record\(\); got NoneType None: for example wire\(create\(\"fixable-first\"\)\)"),
        (("fixable-first",), {}, "got str 'fixable-first'"),
        ((Listening,), {}, r"wire\(\) takes a sampler, not the class Listening: pass an instance, "
         r"Listening\(\)"),
        ((Listening(),), {"policies": 5}, r"wire\(policies=...\) takes "
         r"agentdescent.policies.Policies, .*; got int 5"),
        ((Listening(),), {"on_round": 5}, r"wire\(on_round=...\) takes the function evolve\(\) "
         r"calls after each round, or None; got int 5"),
        ((Listening(),), {"max_tokens": "1000"}, r"wire\(max_tokens=...\) takes the run's "
         r"token budget, a number, .*; got str '1000': convert it first"),
    ],
    ids=["no-sampler", "a-name", "a-class", "policies", "on-round", "max-tokens"],
)  # fmt: skip
def test_what_wire_cannot_use_is_a_type_error_that_names_it(
    args: tuple[Any, ...], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        wire(*args, **options)


@pytest.mark.parametrize(
    "max_tokens",
    [Fraction(50_000), math.inf],
    ids=["fraction", "infinity"],
)
def test_a_token_budget_evolve_takes_as_a_number_is_taken_by_wire_too(max_tokens: Any) -> None:
    # evolve() compares the spend with any real number; wire() refused one that is no int or
    # float subclass (a Fraction, a NumPy int) and an infinite budget as "not a number".
    wired = wire(create("fixable-first"), max_tokens=max_tokens, self_verify=True)

    assert wired["max_tokens"] is max_tokens


@pytest.mark.parametrize("max_tokens", [math.nan, True, 10**400], ids=["nan", "bool", "huge"])
def test_a_token_budget_that_is_no_usable_number_is_a_type_error_naming_it(
    max_tokens: Any,
) -> None:
    with pytest.raises(TypeError, match=r"wire\(max_tokens=...\) takes the run's token budget"):
        wire(create("fixable-first"), max_tokens=max_tokens, self_verify=True)


@pytest.mark.parametrize(
    "solved", ["0.8", None, math.nan, True], ids=["text", "none", "nan", "bool"]
)
def test_a_solved_threshold_that_is_no_number_is_a_type_error_naming_it(solved: Any) -> None:
    # It was passed on unchecked: evolve() then counted no task solved, and said nothing.
    with pytest.raises(
        TypeError,
        match=rf"wire\(solved_threshold=...\) takes the score at which evolve\(\) counts a "
        rf"task solved, a number; got {type(solved).__name__} ",
    ):
        wire(create("fixable-first"), solved_threshold=solved)


@pytest.mark.parametrize(
    "solved", [Fraction(4, 5), -math.inf], ids=["a-fraction", "minus-infinity"]
)
def test_a_solved_threshold_of_any_real_number_is_checked_against_the_samplers(
    solved: Any,
) -> None:
    # Only an int or a float was compared: a Fraction passed unchecked.
    with pytest.raises(ValueError, match=r"counts a pass at pass_threshold=0.999"):
        wire(create("fixable-first"), solved_threshold=solved)


@pytest.mark.parametrize("switch", ["self_verify", "asynchronous"])
@pytest.mark.parametrize("value", ["false", "no", None])
def test_a_switch_wire_reads_given_as_text_is_a_type_error_not_read_as_true(
    switch: str, value: Any
) -> None:
    with pytest.raises(TypeError, match=rf"wire\({switch}=...\) takes True or False, as evolve"):
        wire(Listening(), **{switch: value})


def test_on_the_asynchronous_path_your_on_round_is_passed_through_unchanged() -> None:
    def mine(info: Any) -> None:
        return None

    assert wire(Listening(), asynchronous=True, on_round=mine)["on_round"] is mine
    assert wire(Listening(), on_round=mine)["on_round"] is not mine  # wrapped, then called


def test_the_cards_of_an_extra_artifact_are_not_the_samplers() -> None:
    from agentdescent_sampling.wiring import EvidenceTap

    told: list[tuple[Any, ...]] = []

    class Card:
        def __init__(self, target: str) -> None:
            self.diff = type("Diff", (), {"diff_id": f"{target}:1", "target": target})()
            self.trajectory_refs = [type("Task", (), {"id": "a"})()]
            self.before_after_delta = 1.0

    class Report:
        def __init__(self, diff: Any) -> None:
            self.candidate_diff, self.committed_version = diff, 2

    class Recorder:
        def evidence(self, *args: Any) -> None:
            told.append(args)

    tap = EvidenceTap(Recorder(), artifact_id="artifact")
    for target in ("artifact", "extra"):
        card = Card(target)
        tap.shown(card.diff, [card])
        tap.reported([Report(card.diff)])
    assert told == [("a", 1.0, True)]


@attrs.define(eq=False)
class Logging(FixableFirst):
    """fixable-first that logs each pick's round and task and, once recorded, whether it
    passed (one rollout at a time: each record follows its pick)."""

    log: list[tuple[int, str, bool]] = attrs.field(factory=list)

    def record(self, task_id: str, score: float) -> None:
        super().record(task_id, score)
        self.log[-1] = (*self.log[-1][:2], score >= self.pass_threshold)

    def pick(self, keys: Any, round_index: int) -> str:
        task_id = super().pick(keys, round_index)
        self.log.append((round_index, task_id, True))
        return task_id


class ExactLogging(Logging):
    """Logging picking the exact best, not within the band: its picks go to one failed task
    whenever it is free, so a re-pick within the round shows unless the round holds it."""

    _band = 1.0


def _repicked_after_failing(sampler: Logging) -> list[tuple[int, str]]:
    """The picks of a task in a round after that task had failed in the same round."""
    again, failed = [], set()
    for round_index, task_id, passed in sampler.log:
        if (round_index, task_id) in failed:
            again.append((round_index, task_id))
        if not passed:
            failed.add((round_index, task_id))
    return again


def test_workers_sharing_a_shard_leave_a_task_that_failed_in_the_round_to_the_next(
    toy: ToyWorkload,
) -> None:
    from agentdescent import evolve

    from agentdescent_sampling.bench.engine.workloads import SharedShard

    def run(sampler: Logging, wired: bool) -> None:
        kwargs = wire(sampler) if wired else {"task_sampler": sampler}
        result = evolve(
            toy.tasks,
            toy.reward,
            agent=NoteAgent(),
            n_workers=3,  # one at a time, each on the whole train list of five tasks
            max_concurrency=1,
            rounds=6,
            parallel=SharedShard(),
            held_out_frac=toy.held_out_frac,
            **kwargs,
        )
        assert result.error is None
        assert len(sampler.log) == 18

    alone, wired = ExactLogging(), ExactLogging()
    run(alone, wired=False)
    run(wired, wired=True)
    assert _repicked_after_failing(alone), "from outcomes alone a failed task is retried at once"
    # Told that rounds end (from the first on_round), it waits for its round's merge.
    assert [pick for pick in _repicked_after_failing(wired) if pick[0] > 0] == []
    assert not all(passed for _, _, passed in wired.log)


@pytest.mark.parametrize("budget", [{}, {"max_tokens": 1000}], ids=["no-budget", "max-tokens"])
def test_your_on_round_is_called_with_a_round_info_that_has_no_token_count(
    budget: dict[str, Any],
) -> None:
    calls: list[Any] = []
    sampler = Listening()
    info = types.SimpleNamespace(round=0, committed=1)  # another engine's, or a test's

    wire(sampler, on_round=calls.append, **budget)["on_round"](info)

    assert calls == [info]
    assert sampler.state_dict()["closed_at"] == 0  # told of the round's end, before any pick


def test_wire_without_the_engine_installed_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentdescent_sampling.runspec import evidence_acceptance

    monkeypatch.setitem(sys.modules, "agentdescent", None)  # as if not installed
    for name in [name for name in sys.modules if name.startswith("agentdescent.")]:
        monkeypatch.delitem(sys.modules, name)
    for call, who in [
        (lambda: wire(create("fixable-first")), "wire()"),
        (lambda: evidence_acceptance(link="main"), "the evidence's acceptance policy"),
    ]:
        with pytest.raises(ModuleNotFoundError) as raised:
            call()
        assert raised.value.name == "agentdescent"
        assert str(raised.value) == (
            f"{who} hands the sampler agentdescent's evidence inside its evolve(), and "
            f'agentdescent is not installed: from a clone, python -m pip install ".[engine]"; '
            f"or python -m pip install agentdescent==0.7.0"
        )
