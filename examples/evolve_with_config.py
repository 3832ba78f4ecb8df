"""Pick evolve()'s task sampler from a TOML file, run the engine, see where rollouts went.

Usage::

    python -m pip install '.[engine]'                      # in a clone of this repository
    python examples/evolve_with_config.py                  # uses evolve_with_config.toml
    python examples/evolve_with_config.py examples/fixable_first.toml         # any such TOML file
    python examples/evolve_with_config.py examples/fixable_first.toml --tell  # and tell it more

The toy task set needs no model: an answer passes once the playbook holds the rule its
task needs, and the agent proposes that rule when a task fails. One task passes
whatever the playbook says and one never does: rollouts spent on those two teach
nothing. The counts printed at the end show where the configured sampler spent them,
and the last line how many rollouts it took to reach the best held-out reward there is.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentdescent import RoundInfo, Task, evolve

from agentdescent_sampling import (
    SamplerError,
    TaskSampler,
    create,
    spec_from_file,
    wire,
)

CONFIG = Path(__file__).with_name("evolve_with_config.toml")
RULES = {
    "dates": "Write dates as YYYY-MM-DD.",
    "units": "Give every quantity its SI unit.",
    "names": "Spell names exactly as the source does.",
    "money": "Put the currency code before an amount.",
}


class RuleAgent:
    """Answers with the playbook itself; on a failure, proposes the rule the task needs."""

    def solve(self, rendered: str, task: Task) -> str:
        """Return the rendered playbook: the reward looks for the task's rule in it."""
        return rendered

    def propose(self, rendered: str, task: Task, output: str, reward: float) -> str | None:
        """Return the missing rule, or None for a task no rule can fix."""
        rule = task.meta.get("rule")
        return rule if isinstance(rule, str) else None


class RolloutTally:
    """Wraps a sampler and counts the rollouts ``evolve()`` reports to its ``record()``."""

    def __init__(self, sampler: TaskSampler) -> None:
        self.sampler = sampler
        self.rollouts: Counter[str] = Counter()
        self._lock = threading.Lock()  # evolve(max_concurrency > 1) records from many threads

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Let the wrapped sampler choose."""
        return self.sampler.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        """Count the rollout, then pass its score on."""
        with self._lock:
            self.rollouts[task_id] += 1
        self.sampler.record(task_id, score)


class HeldOutWatch:
    """An ``on_round`` callback: the rollouts spent when the held-out reward first hit a target."""

    def __init__(self, tally: RolloutTally, target: float) -> None:
        self.tally = tally
        self.target = target
        self.reached: int | None = None

    def __call__(self, info: RoundInfo) -> None:
        """Note the rollouts so far, the first round the held-out reward reaches the target."""
        if self.reached is None and info.held_out_reward >= self.target:
            self.reached = sum(self.tally.rollouts.values())


def reward(task: Task, output: str) -> float:
    """1.0 when the task's rule is in the answer, or for the task that always passes."""
    rule = task.meta.get("rule")
    if task.meta.get("always_passes") or (isinstance(rule, str) and rule in output):
        return 1.0
    return 0.0


def toy_tasks(split: str) -> list[Task]:
    """One task per rule, one that always passes and one that never does."""
    tasks = [
        Task(id=f"{topic}-{split}", prompt=topic, meta={"rule": rule})
        for topic, rule in RULES.items()
    ]
    tasks.append(Task(id=f"greeting-{split}", prompt="say hello", meta={"always_passes": True}))
    tasks.append(Task(id=f"riddle-{split}", prompt="an unanswerable riddle"))
    return tasks


def report(watch: HeldOutWatch, train: list[Task], baseline: float, final: float) -> None:
    """Print the rollouts per train task, the held-out reward before and after, and when the
    held-out reward reached its target."""
    spent = sum(watch.tally.rollouts.values())
    print(f"rollouts per task ({spent} in total):")
    for task in train:
        count = watch.tally.rollouts[task.id]
        print(f"  {task.id:<16} {count:>3}  {'#' * count}")
    print(f"held-out reward: {baseline:.2f} with an empty playbook, {final:.2f} after evolve()")
    heading = f"held-out target {watch.target:.2f} (every rule):"
    if watch.reached is None:
        print(f"{heading} not reached in {spent} rollouts")
    else:
        print(f"{heading} reached after {watch.reached} rollouts")


def main(argv: list[str] | None = None) -> int:
    """Run the example; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", type=Path, default=CONFIG, help="a TOML file")
    parser.add_argument(
        "--tell",
        action="store_true",
        help="also tell the sampler the engine's evidence: each proposal's self-verify "
        "gain and whether it was committed (wire(); fixable-first uses it)",
    )
    args = parser.parse_args(argv)
    agent = RuleAgent()
    train, held_out = toy_tasks("train"), toy_tasks("held-out")
    every_rule = "\n".join(RULES.values())
    target = sum(reward(task, every_rule) for task in held_out) / len(held_out)
    try:
        spec = spec_from_file(args.config)
        sampler = create(spec)
    except SamplerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    watch = HeldOutWatch(RolloutTally(sampler), target)
    try:
        told: dict[str, Any] = wire(sampler, on_round=watch) if args.tell else {"on_round": watch}
    except TypeError as error:  # its advice is for a Python caller of wire()
        print(f"error: --tell: {spec.name} takes none of the engine's evidence ({error}); "
              f"run it without --tell", file=sys.stderr)  # fmt: skip
        return 2
    print(f"task sampler: {spec} (from {args.config})" + (", told" if args.tell else ""))

    result = evolve(
        train + held_out,
        reward,
        agent=agent,
        rounds=6,
        n_workers=2,
        held_out_frac=0.5,  # the second half of the list is held out
        **{**told, "task_sampler": watch.tally},
    )
    baseline = sum(reward(task, "") for task in held_out) / len(held_out)
    report(watch, train, baseline, result.final_reward)
    return 0


if __name__ == "__main__":
    # End quietly when the reader of a pipe stops early (`... | head -1`), as Unix tools do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
