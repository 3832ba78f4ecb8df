"""RoundRobin: cycle through the shard in order, the engine's default."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from ..protocol import check_keys, check_score
from ..state import check_state

__all__ = ["RoundRobin"]


@attrs.define(eq=False)
class RoundRobin:
    """Cycle through the shard in order, the engine's deterministic default.

    ``pick`` returns ``keys[round_index % len(keys)]``.

    Reproducible and dependency-free. It spends rollouts uniformly, including on
    tasks the agent already solves, which teach nothing; that is fine while most
    tasks still fail. ``record`` validates the score and learns nothing.
    """

    name: ClassVar[str] = "round-robin"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return ``keys[round_index % len(keys)]``."""
        keys = check_keys(keys)
        return keys[operator.index(round_index) % len(keys)]

    def record(self, task_id: str, score: float) -> None:
        """Check the score; round-robin has nothing to learn from it."""
        check_score(task_id, score)

    def state_dict(self) -> dict[str, Any]:
        """Round-robin keeps no statistics: its picks depend only on ``round_index``."""
        return {"sampler": self.name, "version": 1}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Check that ``state`` is a round-robin state; there is nothing to restore."""
        check_state(state, self.name, 1)
