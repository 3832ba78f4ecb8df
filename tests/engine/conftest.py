"""A small deterministic workload for running the real ``agentdescent.evolve()``.

The train and held-out halves have the same make-up: ``LESSONS`` tasks that pass once
their lesson is in the artifact, one task that always passes and one that never does.
The agent echoes the artifact and, when a task fails, proposes that task's lesson, so a
run learns by committing lessons and nothing calls a model. A run takes well under a
second.

``agentdescent`` is imported inside the fixtures, not at the top of this file: the
test modules skip with a reason when the engine is not installed. CI sets
``AGENTDESCENT_SAMPLING_REQUIRE_ENGINE=1`` so that a missing engine fails the run
instead, and these tests can never pass by being skipped.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from agentdescent_sampling import SOLVED, TaskSampler

if TYPE_CHECKING:
    from agentdescent import EvolutionResult, Task

REQUIRE_ENGINE = "AGENTDESCENT_SAMPLING_REQUIRE_ENGINE"

#: Tasks per half that pass once their lesson has been committed.
LESSONS = 3
#: The asynchronous path stops on its rollout budget long before this.
ASYNC_SECONDS = 30.0


def pytest_configure(config: pytest.Config) -> None:
    """Fail the run, rather than skip the engine tests, when CI requires the engine."""
    if os.environ.get(REQUIRE_ENGINE) != "1":
        return
    try:
        importlib.import_module("agentdescent")
    except ImportError as error:
        raise pytest.UsageError(
            f"{REQUIRE_ENGINE}=1 but the agentdescent engine cannot be imported ({error}); "
            f"install it with python -m pip install '.[engine]' in this clone, or python -m pip "
            f"install agentdescent==0.7.0"
        ) from error


class HintAgent:
    """Answers with the artifact itself and proposes the failed task's lesson."""

    def solve(self, rendered: str, task: Task) -> str:
        """Return the rendered artifact: the reward looks for a lesson in it."""
        return rendered

    def propose(self, rendered: str, task: Task, output: str, reward: float) -> str | None:
        """Return the task's lesson, or None for a task no lesson can fix."""
        lesson = task.meta.get("lesson")
        return lesson if isinstance(lesson, str) else None


@dataclass(frozen=True)
class ToyWorkload:
    """The task set, its reward and the engine settings every test here shares.

    Args:
        train: the tasks the workers roll out.
        held_out: the tasks the engine scores the artifact on; same make-up as ``train``.
        pass_score: the reward of a passing task; below 1.0 it is a graded scorer.
        rounds: rounds on the synchronous path; on the asynchronous one, which has no
            rounds, the rollout budget is ``rounds * n_workers``.
        n_workers: workers, all running at once on both paths.
    """

    train: list[Task]
    held_out: list[Task]
    pass_score: float = 1.0
    rounds: int = 4
    n_workers: int = 2

    @property
    def tasks(self) -> list[Task]:
        """Train tasks first: the engine holds out the tail of the list."""
        return self.train + self.held_out

    @property
    def train_ids(self) -> set[str]:
        """The ids of the tasks the workers roll out."""
        return {task.id for task in self.train}

    @property
    def always_pass_id(self) -> str:
        """The id of the train task that passes whatever the artifact says."""
        return next(task.id for task in self.train if task.meta["kind"] == "always")

    @property
    def held_out_frac(self) -> float:
        """The fraction of ``tasks`` that makes exactly ``held_out`` the engine's held-out set."""
        return len(self.held_out) / len(self.tasks)

    @property
    def baseline(self) -> float:
        """The held-out reward of the empty artifact: only the always-pass task scores."""
        return sum(self.reward(task, "") for task in self.held_out) / len(self.held_out)

    def reward(self, task: Task, output: str) -> float:
        """``pass_score`` for the always-pass task and for a task whose lesson is present."""
        kind = task.meta["kind"]
        if kind == "always" or (kind == "lesson" and task.meta["lesson"] in output):
            return self.pass_score
        return 0.0

    def run(
        self,
        sampler: TaskSampler,
        *,
        asynchronous: bool = False,
        solved_threshold: float = SOLVED,
    ) -> EvolutionResult:
        """Run ``evolve()`` with ``sampler`` on the synchronous or asynchronous path."""
        from agentdescent import evolve

        if asynchronous:
            rollouts = self.rounds * self.n_workers
            budget = {"max_rollouts": rollouts, "max_seconds": ASYNC_SECONDS}
        else:
            budget = {"rounds": self.rounds, "max_concurrency": self.n_workers}
        return evolve(
            self.tasks,
            self.reward,
            agent=HintAgent(),
            task_sampler=sampler,
            n_workers=self.n_workers,
            held_out_frac=self.held_out_frac,
            solved_threshold=solved_threshold,
            asynchronous=asynchronous,
            **budget,
        )


def _half(split: str) -> list[Task]:
    """One half of the workload: the lesson tasks, then the always- and never-pass ones."""
    from agentdescent import Task

    tasks = [
        Task(
            id=f"lesson{k}-{split}",
            prompt=f"task {k}",
            meta={"kind": "lesson", "lesson": f"rule {k}"},
        )
        for k in range(LESSONS)
    ]
    tasks.append(Task(id=f"always-{split}", prompt="easy", meta={"kind": "always"}))
    tasks.append(Task(id=f"never-{split}", prompt="impossible", meta={"kind": "never"}))
    return tasks


def _workload(pass_score: float) -> ToyWorkload:
    return ToyWorkload(train=_half("train"), held_out=_half("held-out"), pass_score=pass_score)


@pytest.fixture
def toy() -> ToyWorkload:
    """The workload with a binary reward: 1.0 for a pass, 0.0 otherwise."""
    return _workload(1.0)


@pytest.fixture
def graded_toy() -> ToyWorkload:
    """The workload with a graded reward: a pass scores 0.8, as a ROUGE or judge score might."""
    return _workload(0.8)
