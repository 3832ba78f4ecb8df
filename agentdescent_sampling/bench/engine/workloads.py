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
- **victim** (the regressions workload): an always-pass task that breaks when a particular
  rule is committed, and passes again once its own patch is: a fix that costs another task,
  found only by re-testing a task that used to pass.

With ``graded`` scores, a pass is a score at or above 0.8 (the run's ``solved_threshold``);
scores spread inside each band instead of sitting at 0 and 1.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import attrs

__all__ = ["ENGINE_WORKLOADS", "Built", "EngineWorkload", "build", "unit"]

GRADED_THRESHOLD = 0.8
LUCKY = "(lucky guess)"


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
        regressions: lessons whose rule breaks one always-pass task (its victim) until the
            victim's patch is committed; their held-out twin counts twice, so the gate still
            takes the rule.
        patch_failures: failures of a broken victim before the reflector finds its patch.
        graded: scores spread inside [0, 0.8) for a fail and [0.8, 1] for a pass.
        workers: ``evolve(n_workers=...)``.
        max_concurrency: ``evolve(max_concurrency=...)``.
        shared_shard: hand every worker the whole train list instead of a split shard.
        rounds: rounds per run; the budget is ``rounds * workers`` rollouts.
    """

    name: str
    summary: str
    lessons: int
    failures_needed: tuple[int, ...] = (1, 2, 3)
    flaky: int = 0
    luck: float = 0.5
    always: int
    never: int
    held_out_always: int | None = None
    held_out_never: int | None = None
    regressions: int = 0
    patch_failures: int = 1
    graded: bool = False
    workers: int = 2
    max_concurrency: int = 1
    shared_shard: bool = False
    rounds: int = 60

    @property
    def budget(self) -> int:
        """Rollouts per run."""
        return self.rounds * self.workers

    @property
    def solved_threshold(self) -> float:
        """The score that counts as a pass, in the engine and in the samplers."""
        return GRADED_THRESHOLD if self.graded else 0.999

    def evolve_options(self) -> dict[str, Any]:
        """Keyword arguments for ``evolve()`` besides tasks, reward, agent and sampler."""
        return {
            "rounds": self.rounds,
            "n_workers": self.workers,
            "max_concurrency": self.max_concurrency,
            "solved_threshold": self.solved_threshold,
            # The simulated agent answers in microseconds, so a thread pool for held-out
            # scoring only adds overhead; scoring one task at a time gives the same
            # scores, commits and calls (checked on every workload, seeds 0-1).
            "eval_concurrency": 1,
        }


@attrs.frozen
class _Task:
    """A task's part in the workload, before it becomes an engine ``Task``."""

    id: str
    kind: str  # lesson, always, never, victim
    rule: str | None = None
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
        rule = f"[rule {i}]" + (f" (it breaks {victim})" if victim else "")
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
                          weight=2 if victim else 1))  # fmt: skip
    for v in range(workload.regressions):
        patch = f"[patch for victim{v}]"
        train.append(_Task(f"victim{v}-train", "victim", patch, workload.patch_failures))
        held.append(_Task(f"victim{v}-held-out", "victim", patch))
    for split, always, never in (
        (train, workload.always, workload.never),
        (
            held,
            workload.always if workload.held_out_always is None else workload.held_out_always,
            workload.never if workload.held_out_never is None else workload.held_out_never,
        ),
    ):
        side = "train" if split is train else "held-out"
        split += [_Task(f"always{i}-{side}", "always") for i in range(always)]
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


class SimulatedReflector:
    """Answers with the playbook, and finds a task's rule only on its ``k``-th failure.

    Thread-safe: the engine scores held-out tasks and runs workers on thread pools.
    """

    def __init__(self, seed: int, by_id: dict[str, _Task]) -> None:
        self.seed = seed
        self.by_id = by_id
        self.solves: dict[str, int] = {}
        self.failures: dict[str, int] = {}
        self.playbook = ""
        self.lock = threading.Lock()

    def solve(self, rendered: str, task: Any) -> str:
        """Return the playbook, marked lucky with the task's luck."""
        with self.lock:
            attempt = self.solves[task.id] = self.solves.get(task.id, 0) + 1
            if task.id.endswith("-train"):
                self.playbook = rendered
        luck = self.by_id[task.id].luck
        if luck and unit(self.seed, task.id, attempt) < luck:
            return f"{rendered}\n{LUCKY}\nattempt {attempt}"
        return f"{rendered}\nattempt {attempt}"

    def propose(self, rendered: str, task: Any, output: str, reward: float) -> str | None:
        """Return the task's rule on every ``k``-th failure, else nothing."""
        plan = self.by_id[task.id]
        if plan.rule is None or not task.id.endswith("-train"):
            return None
        with self.lock:
            failed = self.failures[task.id] = self.failures.get(task.id, 0) + 1
        return plan.rule if failed % plan.failures_needed == 0 else None


def passes(plan: _Task, output: str, by_victim_rules: dict[str, str]) -> bool:
    """Whether a task passes with ``output`` (the rendered playbook, maybe lucky)."""
    if plan.kind == "always":
        return True
    if plan.kind == "never":
        return False
    if plan.kind == "victim":
        breaker = by_victim_rules[plan.id.split("-")[0]]
        return breaker not in output or (plan.rule or "") in output
    return (plan.rule or "") in output or LUCKY in output


def build(workload: EngineWorkload, seed: int) -> Built:
    """Make the seeded task set, agent and reward of ``workload`` (imports agentdescent)."""
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
        return _band(graded, passes(plan, output, breaker_rule), task.id, *jitter)

    every_rule = "\n".join(plan.rule or "" for plan in train)

    def held_reward(done: bool) -> float:
        text = every_rule if done else ""
        scores = [_band(graded, passes(p, text, breaker_rule), t.id)
                  for t, p in zip(held_tasks, held_rows, strict=True)]  # fmt: skip
        return sum(scores) / len(scores)

    fixable = frozenset(plan.id for plan in train if plan.rule is not None)
    return Built(
        tasks, frac, SimulatedReflector(seed, by_id), reward, fixable,
        held_reward(False), held_reward(True), breaker_rule, seed, workload.solved_threshold,
    )  # fmt: skip


ENGINE_WORKLOADS: dict[str, EngineWorkload] = {
    workload.name: workload
    for workload in (
        EngineWorkload(
            name="lessons",
            summary="6 lessons (k=1-3), 6 always-pass, 6 never-pass: the old engine_compare.py",
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
    )
}  # fmt: skip
