"""The ceiling: a sampler that knows which train tasks the reflector can still learn from."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .workloads import Built, passes

__all__ = ["EngineOracle"]


class EngineOracle:
    """Picks a task that needs the fewest more failures for its fix, skipping in-flight ones.

    It reads the playbook the agent last rolled out and each task's plan, which no real
    sampler can see: the ceiling the bench reports beside the real samplers.
    """

    name = "oracle"

    def __init__(self, built: Built) -> None:
        self._built = built
        self._lock = threading.Lock()
        self._pending: dict[str, int] = {}

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The failing task of ``keys`` whose fix is fewest failures away, one not in flight
        first; round-robin once no task in ``keys`` has a fix left to find."""
        agent = self._built.agent
        with agent.lock:
            playbook, failures = agent.playbook, dict(agent.failures)
        with self._lock:
            best, best_cost = keys[0], float("inf")
            for key in keys:
                plan = agent.by_id[key]
                if agent.fix(plan) is None or passes(plan, playbook):
                    continue
                cost = plan.failures_needed - failures.get(key, 0) % plan.failures_needed
                cost += 1000 * self._pending.get(key, 0)
                if cost < best_cost:
                    best, best_cost = key, cost
            if best_cost == float("inf"):
                best = keys[round_index % len(keys)]
            self._pending[best] = self._pending.get(best, 0) + 1
            return best

    def record(self, task_id: str, score: float) -> None:
        """Take ``task_id`` out of flight; the score itself teaches the oracle nothing."""
        with self._lock:
            if self._pending.get(task_id):
                self._pending[task_id] -= 1
