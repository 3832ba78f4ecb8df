"""The oracle: a sampler that reads the true pass probabilities, as a ceiling for the rest."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

from ..protocol import check_keys, check_score
from .workloads import Scenario, is_informative

__all__ = ["Oracle"]


class Oracle:
    """Pick an informative task whenever the shard holds one, knowing every task's true p.

    No real sampler can see the true p, so the oracle's share is the ceiling for
    a workload. Among informative tasks it takes the one it has picked least
    (earliest key on ties), which spreads concurrent workers over different tasks;
    when none is informative it takes the task whose p is nearest 0.5.

    Args:
        scenario: the realization being rolled out.
        budget: the run's rollout budget; the oracle's n-th pick happens at
            progress ``n / budget``, as in :func:`~agentdescent_sampling.bench.drive`.
    """

    name = "oracle"

    def __init__(self, scenario: Scenario, budget: int) -> None:
        self.scenario = scenario
        self.budget = budget
        self._picked: Counter[str] = Counter()
        self._picks = 0
        self._lock = threading.Lock()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return the least-picked informative key, else the key with p nearest 0.5."""
        keys = check_keys(keys)
        with self._lock:
            progress = self._picks / self.budget
            self._picks += 1
            best, best_rank = keys[0], (2, 0.0)
            for key in keys:
                p = self.scenario.true_p(key, progress)
                rank = (0, float(self._picked[key])) if is_informative(p) else (1, abs(p - 0.5))
                if rank < best_rank:
                    best, best_rank = key, rank
            self._picked[best] += 1
            return best

    def record(self, task_id: str, score: float) -> None:
        """Check the score; the oracle already knows what it would learn."""
        check_score(task_id, score)
