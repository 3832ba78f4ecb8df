"""``hardest-first``: always roll out the task whose last score was lowest."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from agentdescent_sampling.plugin import check_pick, check_score

__all__ = ["Hardest"]


class Hardest:
    """Roll out the task whose last score was lowest; an untried task counts as 0.

    Ties go to the earliest key. The sampler from the "Writing your own" section of
    agentdescent's task-sampling guide, with the lock the guide asks of any sampler
    that keeps state.
    """

    name = "hardest-first"

    def __init__(self) -> None:
        self._seen: dict[str, float] = {}
        # evolve(max_concurrency > 1) shares one instance between worker threads.
        self._lock = threading.Lock()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return the key with the lowest last score, never mutating ``keys``."""
        keys, _ = check_pick(keys, round_index)
        with self._lock:
            return min(keys, key=lambda key: self._seen.get(key, 0.0))

    def record(self, task_id: str, score: float) -> None:
        """Remember the score of ``task_id``'s latest rollout (0..1)."""
        value = check_score(task_id, score)
        with self._lock:
            self._seen[task_id] = value

    def __repr__(self) -> str:
        return "Hardest()"
