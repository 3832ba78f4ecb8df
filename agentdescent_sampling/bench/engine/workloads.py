"""Engine workloads: a task set, a simulated reflective agent and a reward for ``evolve()``.

Nothing here imports agentdescent at module level: :func:`build` imports it when a run starts,
so the core package never depends on the engine.

Every workload is made of these kinds of task, each with a train copy (which the sampler can
pick) and a held-out twin (which only the engine's held-out gate scores):

- **lesson**: fails until its rule is in the artifact. The reflector finds the rule only on the
  ``k``-th failure of the train copy (``k`` differs by task), so a rule costs ``k`` failing
  rollouts. *Flaky* lessons pass by luck while the rule is missing, on the train side only.
- **always**: passes whatever the artifact says.
- **never**: fails whatever the artifact says; the reflector has nothing to offer.
- **victim** (the regressions workloads): an always-pass task that breaks when a particular
  rule is committed, and passes again once its own patch is: a fix that costs another task,
  found only by re-testing a task that used to pass. Its held-out twin breaks with it.

With ``graded`` scores, a pass is a score at or above 0.8 (the run's ``solved_threshold``);
scores spread inside each band instead of sitting at 0 and 1.

The reflector (:data:`REFLECTORS`) says what the agent proposes on a failure:

- ``llm-like`` (the default) proposes something on every failure, as a real model does: a
  task's fix on its ``k``-th failure, otherwise a *note*, ``[note TASK N]``, that fixes
  nothing and breaks nothing. The engine's default fusion commits the union of a round's
  surviving proposals, so notes ride into the artifact beside real fixes.
- ``silent`` returns ``None`` unless the failure yields the task's fix: the bench's reflector
  before ``llm-like``, kept to compare against.
- ``llm-like-wrong`` is ``llm-like`` where about one note in six (seeded) is a *wrong rule*
  instead: it breaks one always-pass task, train copy and held-out twin, until that task's
  patch is committed, which the reflector finds on the broken task's
  ``patch_failures``-th failure, as for a victim.
- ``llm-like-random`` is ``llm-like`` where a fix comes at a random failure: on each failure
  with chance ``1/k`` (seeded), so after ``k`` failures on average, and now and then after
  many more, as a model that sees one failure at a time finds a rule by luck.
- ``llm-like-noisy`` is ``llm-like`` with an agent that is not sure of its own answers: each
  rollout of a train task, self-verify re-runs included, comes out the other way with chance
  :data:`SLIP_SHARE` (seeded): a solved task fails now and then, a hopeless one passes, a
  fix's re-run can fail and a note's can pass. The held-out side is scored without slips, so
  the gate and the measure of the gain stay exact and only what the sampler sees is noisy.
- ``llm-like-all`` departs from ``llm-like`` in all three ways at once: a fix at a random
  failure, a wrong rule in about one note of six, and an agent that slips one time in ten:
  every way of the three that a real model is less tidy than ``llm-like``.
- ``llm-like-gate`` is ``llm-like`` with a gate that is not sure either: each held-out
  measurement comes out the other way with chance :data:`SLIP_SHARE` (seeded), as a real
  model's answers on the held-out tasks do, so the gate can refuse a fix and take a note on
  luck. As a model does, it words each proposal of a fix afresh, so the engine's evaluation
  cache, keyed by the artifact's text, measures a fix proposed again instead of recalling the
  score that refused it. Train rollouts are exact, and the bench's measure of the gain is the
  exact held-out reward of the committed artifact (:attr:`Built.held_out_of`), not the gate's
  noisy one.
- ``llm-like-repeat`` is ``llm-like`` with a model that repeats itself: a failure on an
  artifact its task has already failed on gets the proposal that failure got, and is no new
  look, as a model at temperature 0 shown the same failure again writes the same thing. Only a
  failure on a changed artifact counts toward ``k``. The others count every failure, so the
  workers handed one task in one round (round-robin on a shared shard) give its reflector a
  look each for one held-out measurement. A repeated proposal is the same text on the same
  artifact, so the engine's evaluation cache answers its gate without a measurement.
- ``llm-like-warm`` is ``llm-like-repeat`` at a temperature above 0: a failure on an artifact
  its task has already failed on gets, with chance :data:`REPEAT_SHARE` (seeded), what the
  task's last look there proposed, and is otherwise a new look (a note then worded afresh; a fix
  is the same text whenever it comes). A real model lies somewhere between ``llm-like`` (never
  repeats) and ``llm-like-repeat`` (always does).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ...protocol import MAX_COUNT
from ...validators import whole_number_in

__all__ = [
    "ENGINE_WORKLOADS",
    "REFLECTORS",
    "REFLECTOR_SUMMARIES",
    "Built",
    "EngineWorkload",
    "SharedShard",
    "build",
    "check_path",
    "unit",
]

GRADED_THRESHOLD = 0.8
LUCKY = "(lucky guess)"
SLIP = "(slip)"
#: What each reflector :func:`build` can give the agent proposes, in a line; the first is the
#: default. Reports and ``--reflector``'s help say it in these words.
REFLECTOR_SUMMARIES = {
    "llm-like": "a proposal on every failure, a harmless note where it has no fix",
    "silent": "a proposal only where it has a fix",
    "llm-like-wrong": "llm-like, with a wrong rule that breaks a passing task in 1 note of 6",
    "llm-like-random": "llm-like, with a fix on each failure by chance 1/k, not on the k-th",
    "llm-like-noisy": "llm-like, with each train rollout coming out the other way 1 time in 10",
    "llm-like-all": "llm-like-random, -wrong and -noisy at once",
    "llm-like-gate": "llm-like, with each held-out measurement coming out the other way 1 in 10",
    "llm-like-repeat": "llm-like, with a failure on an artifact seen failing before no new look",
    "llm-like-warm": "llm-like, with a failure on an artifact seen failing before a new look "
    "1 time in 2",
}
#: The reflectors :func:`build` can give the agent; the first is the default.
REFLECTORS = tuple(REFLECTOR_SUMMARIES)
#: Which of ``llm-like``'s departures each reflector makes: a fix at a random failure
#: (``random``), wrong rules (``wrong``), an agent that slips (``noisy``), a gate whose
#: held-out measurements slip (``gate``), a model that repeats itself on an artifact it has
#: seen fail the task (``repeat``), and does so only with chance :data:`REPEAT_SHARE` (``warm``).
_DEPARTURES: dict[str, frozenset[str]] = {
    "llm-like-wrong": frozenset({"wrong"}),
    "llm-like-random": frozenset({"random"}),
    "llm-like-noisy": frozenset({"noisy"}),
    "llm-like-all": frozenset({"random", "wrong", "noisy"}),
    "llm-like-gate": frozenset({"gate"}),
    "llm-like-repeat": frozenset({"repeat"}),
    "llm-like-warm": frozenset({"repeat", "warm"}),
}


def check_path(reflector: str, asynchronous: bool) -> None:
    """Refuse a reflector whose gate slips (``llm-like-gate``) on the asynchronous path: the
    bench reads the gain from the artifact each round's first rollout saw, and the
    asynchronous path has no rounds whose rollouts all see one artifact.

    Raises:
        ValueError: both hold.
    """
    if asynchronous and "gate" in _DEPARTURES.get(reflector, frozenset()):
        raise ValueError(
            f"the reflector {reflector!r} runs on the synchronous path only: the bench measures "
            f"its gain on the artifact each round's rollouts saw, and asynchronous rollouts see "
            f"several; run it on the synchronous path (without --async, or asynchronous=False)"
        )


#: The share of ``llm-like-wrong``'s would-be notes that are wrong rules instead.
WRONG_SHARE = 1 / 6
#: The chance ``llm-like-noisy``'s agent answers a train task the other way, and
#: ``llm-like-gate``'s a held-out one.
SLIP_SHARE = 1 / 10
#: The chance ``llm-like-warm``'s model repeats what it proposed on an artifact its task has
#: already failed on, rather than taking a new look.
REPEAT_SHARE = 1 / 2
#: Seconds each agent call takes on the asynchronous path (see :class:`SimulatedReflector`).
ASYNC_LATENCY = 0.002


def unit(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts``: reproducible luck without shared RNG state."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@attrs.frozen(kw_only=True)
class EngineWorkload:
    """One engine workload: the make-up of its task set and how ``evolve()`` runs it.

    Args:
        name: what the bench calls it.
        summary: one line on what it stands for.
        lessons: lesson tasks (one rule each).
        failures_needed: the ``k`` values lessons draw from, in turn, after a seeded shuffle.
        flaky: how many of the lessons pass by luck while their rule is missing (train side).
        luck: the chance a flaky lesson passes by luck.
        always: always-pass tasks on the train side.
        never: never-pass tasks on the train side.
        held_out_always: always-pass tasks on the held-out side.
        held_out_never: never-pass tasks on the held-out side.
        regressions: lessons whose rule breaks one always-pass task (its victim), train copy
            and held-out twin, until the victim's patch is committed.
        victim_weight: held-out copies of a victim's twin. A breaker's held-out twin counts
            ``victim_weight + 1`` times, so committing a breaker alone moves the held-out sum
            by ``(victim_weight + 1) - victim_weight = +1`` task: the gate takes it, and the
            held-out reward lacks ``victim_weight`` tasks until the victim's patch lands.
        patch_failures: failures of a broken task (a victim, or an always-pass task a wrong
            rule broke) before the reflector finds its patch.
        graded: scores spread inside [0, 0.8) for a fail and [0.8, 1] for a pass.
        workers: ``evolve(n_workers=...)``.
        max_concurrency: ``evolve(max_concurrency=...)``.
        shared_shard: hand every worker the whole train list instead of a split shard.
        rounds: rounds per run; the budget is ``rounds * workers`` rollouts.
        notes: what reports say of where the workload came from: for ``bench --from-run``'s,
            what is wrong with the run's ``rounds.jsonl`` when its rounds are a floor.
    """

    name: str
    summary: str
    # With no lesson, the attainable held-out reward is the start's: no gain to measure.
    lessons: int = attrs.field(
        validator=whole_number_in(
            1, MAX_COUNT, hint="; a sampler buys only what lessons teach, for example lessons=6"
        )
    )
    failures_needed: tuple[int, ...] = (1, 2, 3)
    flaky: int = 0
    luck: float = 0.5
    always: int
    never: int
    held_out_always: int | None = None
    held_out_never: int | None = None
    regressions: int = 0
    victim_weight: int = 1
    patch_failures: int = 1
    graded: bool = False
    workers: int = attrs.field(
        default=2, validator=whole_number_in(1, MAX_COUNT, hint="; for example workers=2")
    )
    max_concurrency: int = 1
    shared_shard: bool = False
    rounds: int = attrs.field(
        default=60, validator=whole_number_in(1, MAX_COUNT, hint="; for example rounds=40")
    )
    notes: tuple[str, ...] = ()

    @property
    def budget(self) -> int:
        """Rollouts per run."""
        return self.rounds * self.workers

    @property
    def solved_threshold(self) -> float:
        """The score that counts as a pass, in the engine and in the samplers."""
        return GRADED_THRESHOLD if self.graded else 0.999

    def evolve_options(self, asynchronous: bool = False) -> dict[str, Any]:
        """Keyword arguments for ``evolve()`` besides tasks, reward, agent and sampler.

        With ``asynchronous``, the run goes by ``evolve(asynchronous=True)``, which has no
        rounds: its budget is the same ``budget`` rollouts, with no time limit, and
        ``workers`` rollouts in flight on data-parallel shards (the async runtime has no
        ``max_concurrency`` and no shared shard), and the engine's default
        ``eval_concurrency``.
        """
        options: dict[str, Any] = {
            "rounds": self.rounds,
            "n_workers": self.workers,
            "max_concurrency": self.max_concurrency,
            "solved_threshold": self.solved_threshold,
            # The simulated agent answers in microseconds, so a thread pool for held-out
            # scoring only adds overhead; scoring one task at a time gives the same
            # scores, commits and calls (checked on every workload, seeds 0-1).
            "eval_concurrency": 1,
        }
        if asynchronous:
            # Without max_seconds the async path stops after 20 s, and it reads rounds as
            # a rollout budget unless max_rollouts says so outright. Its agent calls take
            # ASYNC_LATENCY each, so the gate scores held-out tasks as the engine does by
            # default, several at a time, while the workers roll out.
            del options["max_concurrency"], options["eval_concurrency"]
            options.update(asynchronous=True, max_rollouts=self.budget, max_seconds=3600.0)
        elif self.shared_shard:
            options["parallel"] = SharedShard()
        return options


@attrs.frozen
class SharedShard:
    """A parallel strategy that hands every worker the whole train list (a shared shard)."""

    name: str = "shared"

    def plan(self, n_workers: int, round_index: int, keys: Sequence[str]) -> list[Any]:
        """One work unit per worker, each holding every key."""
        from agentdescent.parallel import WorkUnit

        return [WorkUnit(worker=i, keys=list(keys)) for i in range(n_workers)]


@attrs.frozen
class _Task:
    """A task's part in the workload, before it becomes an engine ``Task``."""

    id: str
    kind: str  # lesson, always, never, victim
    rule: str | None = None  # a lesson's rule, a victim's patch
    failures_needed: int = 1
    luck: float = 0.0
    breaks: str | None = None  # the victim this lesson's rule breaks
    weight: int = 1  # held-out copies


@attrs.frozen
class Built:
    """One seeded instance of a workload, ready for ``evolve()``.

    Attributes:
        tasks: engine ``Task`` objects, train first, then held-out.
        held_out_frac: the fraction that makes exactly the held-out tail held out.
        agent: the simulated reflective agent (``solve`` and ``propose``).
        reward: the reward function.
        fixable: train task ids whose failures can teach the reflector something.
        start: the held-out reward of the empty artifact.
        attainable: the held-out reward with every rule and patch committed.
        breaker_rule: victim name -> the rule that breaks it (regressions only).
        seed: the seed this instance was built from.
        pass_threshold: the score that counts as a pass, for the engine and the sampler.
        held_out_of: the exact held-out reward of an artifact rendered as the given text:
            what the gate measures when no held-out measurement slips.
    """

    tasks: list[Any]
    held_out_frac: float
    agent: Any
    reward: Any
    fixable: frozenset[str]
    start: float
    attainable: float
    breaker_rule: dict[str, str]
    seed: int
    pass_threshold: float
    held_out_of: Callable[[str], float]

    @property
    def noisy_gate(self) -> bool:
        """Whether held-out measurements slip (``llm-like-gate``), so that the engine's
        held-out reward is not :attr:`held_out_of` the committed artifact."""
        return bool(self.agent.gate_slips)


def _plan(workload: EngineWorkload, seed: int) -> tuple[list[_Task], list[_Task]]:
    """The train and held-out task lists of one seed, shuffled by it."""
    import random

    rng = random.Random(seed)
    ks = list(workload.failures_needed) * (workload.lessons // len(workload.failures_needed) + 1)
    ks = ks[: workload.lessons]
    rng.shuffle(ks)
    flaky = set(rng.sample(range(workload.lessons), workload.flaky))
    breakers = rng.sample(range(workload.lessons), workload.regressions)
    train: list[_Task] = []
    held: list[_Task] = []
    for i in range(workload.lessons):
        victim = f"victim{breakers.index(i)}" if i in breakers else None
        # Bracketed, so no rule's text contains another's ("rule 1" is in "rule 10").
        rule = f"[rule {i}]" + (f" {_breaks(victim)}" if victim else "")
        train.append(
            _Task(
                f"lesson{i}-train",
                "lesson",
                rule,
                ks[i],
                workload.luck if i in flaky else 0.0,
                victim,
            )
        )
        held.append(_Task(f"lesson{i}-held-out", "lesson", rule, breaks=victim,
                          weight=workload.victim_weight + 1 if victim else 1))  # fmt: skip
    for v in range(workload.regressions):
        patch = _patch(f"victim{v}")
        train.append(_Task(f"victim{v}-train", "victim", patch, workload.patch_failures))
        held.append(_Task(f"victim{v}-held-out", "victim", patch, weight=workload.victim_weight))
    for split, always, never in (
        (train, workload.always, workload.never),
        (
            held,
            workload.always if workload.held_out_always is None else workload.held_out_always,
            workload.never if workload.held_out_never is None else workload.held_out_never,
        ),
    ):
        side = "train" if split is train else "held-out"
        split += [_Task(f"always{i}-{side}", "always", failures_needed=workload.patch_failures)
                  for i in range(always)]  # fmt: skip
        split += [_Task(f"never{i}-{side}", "never") for i in range(never)]
    rng.shuffle(train)
    rng.shuffle(held)
    return train, held


def _band(graded: bool, passed: bool, task_id: str, *jitter: object) -> float:
    """A score: 1 or 0, or a spread inside the pass or fail band when graded."""
    if not graded:
        return 1.0 if passed else 0.0
    low, high = (GRADED_THRESHOLD, 1.0) if passed else (0.2, 0.7)
    base = low + (high - low) * unit("base", task_id)
    if jitter:
        base += 0.1 * (unit("jitter", task_id, *jitter) - 0.5)
    return min(high if passed else GRADED_THRESHOLD - 0.01, max(low, base))


def _stem(task_id: str) -> str:
    """The task a copy belongs to: ``victim0`` for ``victim0-train`` and ``victim0-held-out#1``."""
    return task_id.split("-")[0]


def _patch(stem: str) -> str:
    """The patch that mends ``stem`` after a rule broke it (bracketed, as every rule is)."""
    return f"[patch for {stem}]"


def _breaks(stem: str) -> str:
    """What a rule that breaks ``stem`` says; no marker contains another's."""
    return f"(it breaks {stem})"


class SimulatedReflector:
    """Answers with the playbook, and finds a task's rule only on its ``k``-th failure (its
    ``k``-th look: see ``llm-like-repeat``).

    What it proposes on the other failures depends on ``style``, one of :data:`REFLECTORS`
    (see the module docstring). Thread-safe: the engine scores held-out tasks and runs
    workers on thread pools.

    Each call (``solve`` or ``propose``) first waits ``latency`` seconds, without holding
    the interpreter, as a model call does. On the asynchronous path this keeps the workers
    abreast: answering in microseconds, one worker's thread ran most of the rollouts while
    the other's waited for the interpreter (79 to 42 rollouts under round-robin, measured),
    and a worker whose rollouts fail, and so make three calls each, was not slowed as a
    real one is.
    """

    def __init__(
        self,
        seed: int,
        by_id: dict[str, _Task],
        style: str = REFLECTORS[0],
        wrong_targets: tuple[str, ...] = (),
        latency: float = 0.0,
    ) -> None:
        if style not in REFLECTORS:
            raise ValueError(
                f"unknown reflector {style!r}; expected one of {', '.join(REFLECTORS)}"
            )
        self.seed = seed
        self.by_id = by_id
        self.style = style
        departures = _DEPARTURES.get(style, frozenset())
        #: A fix comes on each failure with chance 1/k, not on the k-th.
        self.at_random = "random" in departures
        #: About one note in six is a wrong rule, and broken always-pass tasks get patches.
        self.writes_wrong_rules = "wrong" in departures
        #: A train rollout comes out the other way with chance SLIP_SHARE.
        self.slips = "noisy" in departures
        #: A held-out measurement comes out the other way with chance SLIP_SHARE.
        self.gate_slips = "gate" in departures
        #: A failure on an artifact its task already failed on gets that failure's proposal.
        self.repeats = "repeat" in departures
        #: ... with chance REPEAT_SHARE only, and is otherwise a new look.
        self.warm = "warm" in departures
        self.wrong_targets = wrong_targets
        self.latency = latency
        self.solves: dict[str, int] = {}
        self.failures: dict[str, int] = {}
        #: train task id -> a digest of each artifact it failed on (``repeat``), with its last
        #: look there: 16 bytes an artifact, whatever its size
        self.looks: dict[str, dict[bytes, int]] = {}
        #: train task id -> its looks so far (``repeat``): 1 for its first
        self.looked: dict[str, int] = {}
        #: train task id -> the failure (1 for its first) on which its fix was first proposed
        self.found: dict[str, int] = {}
        self.playbook = ""
        #: The artifact each round's first train rollout saw (a rollout, not a self-verify
        #: re-run, which sees a proposal applied), kept once :meth:`next_round` is called.
        self.round_artifacts: list[str] = []
        self._round_begun = False
        self.lock = threading.Lock()

    def next_round(self) -> None:
        """Keep the artifact the next train rollout sees in :attr:`round_artifacts`: call it
        before the first round and at each round's end, on the synchronous path, where a
        round's first rollout sees what the round before committed."""
        with self.lock:
            self._round_begun = True

    def solve(self, rendered: str, task: Any) -> str:
        """Return the playbook, marked lucky with the task's luck, and, with ``llm-like-noisy``
        and ``llm-like-all``, marked as a slip (the answer the other way) on a train task with
        chance :data:`SLIP_SHARE`; with ``llm-like-gate``, on a held-out task."""
        if self.latency:
            time.sleep(self.latency)
        with self.lock:
            attempt = self.solves[task.id] = self.solves.get(task.id, 0) + 1
            if task.id.endswith("-train"):
                self.playbook = rendered
                if self._round_begun:
                    self.round_artifacts.append(rendered)
                    self._round_begun = False
        marks = ""
        luck = self.by_id[task.id].luck
        if luck and unit(self.seed, task.id, attempt) < luck:
            marks += f"\n{LUCKY}"
        slips = self.slips if task.id.endswith("-train") else self.gate_slips
        if slips and unit(self.seed, "slip", task.id, attempt) < SLIP_SHARE:
            marks += f"\n{SLIP}"
        return f"{rendered}{marks}\nattempt {attempt}"

    def propose(self, rendered: str, task: Any, output: str, reward: float) -> str | None:
        """Return the task's fix on every ``k``-th failure (with ``llm-like-repeat``, on every
        ``k``-th look: a failure on an artifact the task has not failed on, or with
        ``llm-like-warm`` on one it has, by chance), else what ``style`` says."""
        if self.latency:
            time.sleep(self.latency)
        plan = self.by_id[task.id]
        if not task.id.endswith("-train"):
            return None
        artifact = hashlib.blake2b(rendered.encode(), digest_size=16).digest()
        with self.lock:
            failed = look = self.failures[task.id] = self.failures.get(task.id, 0) + 1
            if self.repeats:
                seen = self.looks.setdefault(task.id, {})
                look = seen.get(artifact, 0)
                if not look or (
                    self.warm and unit(self.seed, "repeat", task.id, failed) >= REPEAT_SHARE
                ):
                    look = seen[artifact] = self.looked[task.id] = self.looked.get(task.id, 0) + 1
        fix = self.fix(plan)
        if fix is not None and self.finds(plan, look):
            with self.lock:
                self.found.setdefault(task.id, failed)
            # A model words each proposal afresh: the engine's cache, keyed by the artifact's
            # text, then measures a fix proposed again instead of recalling a slipped score.
            return f"{fix} (worded {look})" if self.gate_slips else fix
        if self.style == "silent":
            return None
        if (
            self.writes_wrong_rules
            and self.wrong_targets
            and unit(self.seed, "wrong", task.id, look) < WRONG_SHARE
        ):
            pick = unit(self.seed, "target", task.id, look) * len(self.wrong_targets)
            return f"[wrong rule {task.id} {look}] {_breaks(self.wrong_targets[int(pick)])}"
        return f"[note {task.id} {look}]"

    def finds(self, plan: _Task, failed: int) -> bool:
        """Whether the ``failed``-th failure (the look, with ``llm-like-repeat``) of ``plan``'s
        task yields its fix: every ``k``-th one, or, with ``llm-like-random`` and
        ``llm-like-all``, each with chance ``1/k``."""
        if self.at_random:
            return unit(self.seed, "find", plan.id, failed) < 1 / plan.failures_needed
        return failed % plan.failures_needed == 0

    def fix(self, plan: _Task) -> str | None:
        """What mends ``plan``'s task: a lesson's rule, a victim's patch, or, when this
        reflector writes wrong rules, the patch of an always-pass task one of them broke."""
        if plan.kind == "always" and self.writes_wrong_rules:
            return _patch(_stem(plan.id))
        return plan.rule


def passes(plan: _Task, output: str) -> bool:
    """Whether a task passes with ``output`` (the rendered playbook, maybe lucky).

    An always-pass task or a victim fails while a rule that breaks it is in ``output`` and
    its patch is not; a note never changes the answer.
    """
    if plan.kind == "never":
        return False
    if plan.kind == "lesson":
        return (plan.rule or "") in output or LUCKY in output
    stem = _stem(plan.id)
    return _breaks(stem) not in output or _patch(stem) in output


def build(
    workload: EngineWorkload, seed: int, reflector: str = REFLECTORS[0], latency: float = 0.0
) -> Built:
    """Make the seeded task set, agent and reward of ``workload`` (imports agentdescent).

    Args:
        workload: the make-up and run shape.
        seed: fixes the task order, ``k`` values, luck and the wrong rules.
        reflector: what the agent proposes on a failure, one of :data:`REFLECTORS`.
        latency: seconds each agent call takes: :data:`ASYNC_LATENCY` on the asynchronous
            path; none on the synchronous one, where it would change only the time taken.

    Raises:
        ValueError: ``reflector`` is not one of :data:`REFLECTORS`.
    """
    from agentdescent import Task
    from agentdescent.evolution import held_out_size

    train, held = _plan(workload, seed)
    held_rows = [plan for plan in held for _ in range(plan.weight)]
    held_tasks = [
        Task(id=f"{plan.id}#{copy}" if plan.weight > 1 else plan.id, prompt="", meta={})
        for plan in held
        for copy in range(plan.weight)
    ]
    by_id = {plan.id: plan for plan in train}
    by_id.update({task.id: plan for task, plan in zip(held_tasks, held_rows, strict=True)})
    breaker_rule = {plan.breaks: plan.rule or "" for plan in train if plan.breaks}
    tasks = [Task(id=plan.id, prompt="", meta={}) for plan in train] + held_tasks
    frac = len(held_tasks) / len(tasks)
    if held_out_size(len(tasks), frac) != len(held_tasks):  # pragma: no cover - rounding guard
        raise AssertionError(f"held_out_frac {frac} does not hold out {len(held_tasks)} tasks")
    graded = workload.graded

    def reward(task: Any, output: str) -> float:
        plan = by_id[task.id]
        attempt = output.rsplit("attempt ", 1)[-1] if task.id.endswith("-train") else None
        jitter = (seed, attempt) if attempt is not None else ()
        return _band(graded, passes(plan, output) != (SLIP in output), task.id, *jitter)

    every_rule = "\n".join(plan.rule or "" for plan in train)

    def held_out_of(rendered: str) -> float:
        scores = [_band(graded, passes(p, rendered), t.id)
                  for t, p in zip(held_tasks, held_rows, strict=True)]  # fmt: skip
        return sum(scores) / len(scores)

    fixable = frozenset(plan.id for plan in train if plan.rule is not None)
    # A wrong rule breaks an always-pass task that has a held-out twin to break with it.
    twins = {_stem(plan.id) for plan in held if plan.kind == "always"}
    targets = tuple(sorted({_stem(p.id) for p in train if p.kind == "always"} & twins))
    agent = SimulatedReflector(seed, by_id, reflector, targets, latency)
    return Built(
        tasks, frac, agent, reward, fixable,
        held_out_of(""), held_out_of(every_rule), breaker_rule, seed, workload.solved_threshold,
        held_out_of,
    )  # fmt: skip


ENGINE_WORKLOADS: dict[str, EngineWorkload] = {
    workload.name: workload
    for workload in (
        EngineWorkload(
            name="lessons",
            summary="6 lessons (k=1-3), 6 always-pass, 6 never-pass",
            lessons=6, always=6, never=6, rounds=40,
        ),
        EngineWorkload(
            name="sparse",
            summary="240 train tasks, a mature artifact: 168 solved, 60 hopeless, 12 lessons",
            lessons=12, always=168, never=60, held_out_always=24, held_out_never=24,
            workers=4, rounds=150,
        ),
        EngineWorkload(
            name="flaky",
            summary="as lessons, but 4 of 8 lessons pass by luck half the time while unfixed",
            lessons=8, flaky=4, always=8, never=8, rounds=50,
        ),
        EngineWorkload(
            name="regressions",
            summary="3 of 8 rules break a passing task until its patch is found by re-testing it",
            lessons=8, regressions=3, always=10, never=8, rounds=60,
        ),
        EngineWorkload(
            name="regressions-held-out",
            summary="as regressions, held-out twins weighted 2 (a victim) and 3 (its breaker)",
            lessons=8, regressions=3, victim_weight=2, always=10, never=8, rounds=60,
        ),
        EngineWorkload(
            name="concurrent",
            summary="4 workers, 4 in flight, each on a split shard of 48 tasks",
            lessons=12, always=18, never=18, workers=4, max_concurrency=4, rounds=40,
        ),
        EngineWorkload(
            name="concurrent-shared",
            summary="4 workers, 4 in flight, all on one shared shard of 48 tasks",
            lessons=12, always=18, never=18, workers=4, max_concurrency=4, shared_shard=True,
            rounds=40,
        ),
        EngineWorkload(
            name="graded",
            summary="as lessons with scores spread in bands; a pass is 0.8 in engine and sampler",
            lessons=8, always=8, never=8, graded=True, rounds=50,
        ),
        EngineWorkload(
            name="late",
            summary="as lessons, but a rule takes 1 to 6 failures to find",
            lessons=6, always=6, never=6, failures_needed=(1, 2, 3, 4, 5, 6), rounds=80,
        ),
    )
}  # fmt: skip
