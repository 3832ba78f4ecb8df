"""Compare task samplers inside the real agentdescent ``evolve()`` on a toy workload.

Usage::

    python benchmarks/engine_compare.py [--seeds 10] [--rounds 60]

Each half of the task list (train, then held-out) has ``LESSONS`` tasks that pass once
their rule is in the playbook, ``ALWAYS`` that always pass and ``NEVER`` that never do.
The reflector finds a task's rule only on every ``TRIES``-th failure of that task, so a
rule takes more than one rollout to learn. In the ``flaky`` workload a train task whose
rule is missing still passes by luck half the time (held-out scoring is never lucky),
which gives the pass rates between 0 and 1 that difficulty weighting looks for.

Each seed shuffles the order of both halves (and the luck), never which tasks are held
out, so every run can reach the same held-out maximum. Runs are synchronous with one
worker at a time (``max_concurrency=1``), so each (sampler, workload, seed) is
reproducible. Per run it measures the rollouts until the held-out reward first reached
the run's own peak, the final held-out reward, whether that is the attainable maximum,
the share of rollouts that landed on a lesson task (the targeting the design doc
measures), and the share that were useful: a lesson task that failed, so the reflector
had something to learn from.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import statistics
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version

from agentdescent import Task, evolve
from agentdescent.sampling import DifficultyWeighted as EngineDifficultyWeighted

from agentdescent_sampling import TaskSampler, create

LESSONS, ALWAYS, NEVER = 6, 6, 6
TRIES = 2
N_WORKERS = 2
LUCKY = "(lucky guess)"
#: The held-out reward once every rule is learned: the lesson and always-pass tasks.
ATTAINABLE = (LESSONS + ALWAYS) / (LESSONS + ALWAYS + NEVER)

#: What the table calls each sampler, and how to build a fresh one for a run.
SAMPLERS: dict[str, Callable[[], TaskSampler]] = {
    "round-robin": lambda: create("round-robin"),
    "difficulty-weighted": lambda: create("difficulty-weighted"),
    "difficulty-weighted:c=0.1": lambda: create("difficulty-weighted:c=0.1"),
    "difficulty-weighted:c=1.4": lambda: create("difficulty-weighted:c=1.4"),
    "engine's own DifficultyWeighted": EngineDifficultyWeighted,
}
#: Workload name -> the chance that a train task whose rule is missing passes anyway.
WORKLOADS = {"deterministic": 0.0, "flaky": 0.5}


def _unit(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts``: reproducible luck without shared RNG state."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _half(split: str, luck: float) -> list[Task]:
    """One half of the workload, in a fixed order."""
    tasks = [
        Task(id=f"lesson{k}-{split}", prompt="", meta={"rule": f"rule {k}", "luck": luck})
        for k in range(LESSONS)
    ]
    tasks += [
        Task(id=f"always{k}-{split}", prompt="", meta={"always": True}) for k in range(ALWAYS)
    ]
    tasks += [Task(id=f"never{k}-{split}", prompt="") for k in range(NEVER)]
    return tasks


def toy_tasks(seed: int, luck: float) -> list[Task]:
    """Train then held-out, each half shuffled by ``seed``; only train tasks get lucky."""
    rng = random.Random(seed)
    train, held_out = _half("train", luck), _half("held-out", 0.0)
    rng.shuffle(train)
    rng.shuffle(held_out)
    return train + held_out


def reward(task: Task, output: str) -> float:
    """1.0 for an always-pass task, or a lesson task whose rule (or luck) is in the output."""
    rule = task.meta.get("rule")
    passed = rule is not None and (rule in output or LUCKY in output)
    return 1.0 if task.meta.get("always") or passed else 0.0


@dataclass
class SlowReflector:
    """Answers with the playbook; finds a task's rule only on every ``TRIES``-th failure."""

    seed: int
    solves: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def solve(self, rendered: str, task: Task) -> str:
        """Return the playbook, marked lucky with the task's ``luck`` probability."""
        with self.lock:  # held-out tasks are scored on a thread pool
            attempt = self.solves[task.id] = self.solves.get(task.id, 0) + 1
        lucky = _unit(self.seed, task.id, attempt) < task.meta.get("luck", 0.0)
        return f"{rendered}\n{LUCKY}" if lucky else rendered

    def propose(self, rendered: str, task: Task, output: str, reward: float) -> str | None:
        """Return the task's rule on every ``TRIES``-th failure, else nothing."""
        rule = task.meta.get("rule")
        if rule is None:
            return None
        with self.lock:
            failed = self.failures[task.id] = self.failures.get(task.id, 0) + 1
        return rule if failed % TRIES == 0 else None


class LessonTally:
    """Wraps a sampler and counts the rollouts on lesson tasks, and those that failed."""

    def __init__(self, sampler: TaskSampler, lesson_ids: set[str]) -> None:
        self.sampler = sampler
        self.lesson_ids = lesson_ids
        self.rollouts = 0
        self.on_lessons = 0
        self.useful = 0

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Let the wrapped sampler choose."""
        return self.sampler.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        """Count the rollout (runs are sequential, so no lock), then pass it on."""
        self.rollouts += 1
        if task_id in self.lesson_ids:
            self.on_lessons += 1
            self.useful += score < 1.0
        self.sampler.record(task_id, score)


@dataclass(frozen=True)
class Run:
    """What one ``evolve()`` run measured."""

    rollouts_to_peak: int
    final: float
    lesson_share: float
    useful_share: float

    @property
    def reached_max(self) -> bool:
        """Whether the final held-out reward is the attainable maximum."""
        return abs(self.final - ATTAINABLE) < 1e-9


def run_once(make: Callable[[], TaskSampler], luck: float, seed: int, rounds: int) -> Run:
    """Run ``evolve()`` once and measure it."""
    tasks = toy_tasks(seed, luck)
    lesson_ids = {task.id for task in tasks if "rule" in task.meta}
    tally = LessonTally(make(), lesson_ids)
    result = evolve(
        tasks,
        reward,
        agent=SlowReflector(seed),
        task_sampler=tally,
        rounds=rounds,
        n_workers=N_WORKERS,
        held_out_frac=0.5,
    )
    if result.error is not None:
        raise RuntimeError(f"evolve() failed on seed {seed}: {result.error}")
    peak = max(info.held_out_reward for info in result.history)
    first = next(info for info in result.history if info.held_out_reward == peak)
    return Run(
        first.rollouts,
        result.final_reward,
        tally.on_lessons / tally.rollouts,
        tally.useful / tally.rollouts,
    )


def row(label: str, runs: list[Run]) -> str:
    """One markdown table row summarising ``runs``."""
    to_peak = [run.rollouts_to_peak for run in runs]
    finals = [run.final for run in runs]
    on_lessons = statistics.mean(run.lesson_share for run in runs)
    useful = statistics.mean(run.useful_share for run in runs)
    reached = sum(run.reached_max for run in runs)
    return (
        f"| {label} | {statistics.median(to_peak):g} ({min(to_peak)}-{max(to_peak)}) "
        f"| {statistics.mean(finals):.3f} ± {statistics.pstdev(finals):.3f} "
        f"| {reached}/{len(runs)} | {on_lessons:.0%} | {useful:.0%} |"
    )


def main(argv: list[str] | None = None) -> None:
    """Run every sampler on every workload and seed; print markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    parser.add_argument("--rounds", type=int, default=60, help="rounds per run (default 60)")
    args = parser.parse_args(argv)
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, "
        f"agentdescent {version('agentdescent')}; {args.seeds} seeds, {args.rounds} rounds x "
        f"{N_WORKERS} workers = {args.rounds * N_WORKERS} rollouts per run; "
        f"attainable held-out reward {ATTAINABLE:.3f}"
    )
    for workload, luck in WORKLOADS.items():
        print(f"\n### {workload}\n")
        print(
            "| sampler | rollouts to peak, median (range) | final reward, mean ± sd "
            "| reached max | on lesson tasks | useful |"
        )
        print("|---|---|---|---|---|---|")
        for label, make in SAMPLERS.items():
            runs = [run_once(make, luck, seed, args.rounds) for seed in range(args.seeds)]
            print(row(label, runs), flush=True)


if __name__ == "__main__":
    main()
