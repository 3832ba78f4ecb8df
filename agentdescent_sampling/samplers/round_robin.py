"""RoundRobin: cycle through the shard in order, the engine's default."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from ..pending import Pending
from ..protocol import check_pick, check_score, check_state, check_task_id
from ..validators import boolean
from ._copies import CopiedByState

__all__ = ["RoundRobin"]


@attrs.define(eq=False)
class RoundRobin(CopiedByState):
    """Cycle through the shard in order, the engine's deterministic default.

    ``pick`` returns ``keys[round_index % len(keys)]``.

    Reproducible and dependency-free. It spends rollouts uniformly, including on
    tasks the agent already solves, which teach nothing; that is fine while most
    tasks still fail. ``record`` validates the score and learns nothing.

    Args:
        spread_in_flight: when true, a task picked but not yet recorded is passed
            over for the next free key in cycle order, so workers that share a shard
            and pick in the same round get different tasks instead of all getting
            ``keys[round_index % len(keys)]``. Off by default, which keeps the engine's
            rule exactly; a single worker picks the same either way.

    Raises:
        TypeError: ``spread_in_flight`` is not a bool.
    """

    name: ClassVar[str] = "round-robin"

    spread_in_flight: bool = attrs.field(
        default=False,
        validator=boolean("; spread_in_flight=true gives concurrent workers different tasks"),
    )
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _pending: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return ``keys[round_index % len(keys)]``, or with spreading the first free key
        from there on."""
        keys, round_index = check_pick(keys, round_index)
        start = round_index % len(keys)
        if not self.spread_in_flight:
            return check_task_id(keys[start])
        with self._lock:
            # Nothing changes until the pick is known: a pick that raises leaves no trace.
            now = self._picks + 1
            in_flight = self._pending.tasks(now)
            size = len(keys)
            cycle = (check_task_id(keys[(start + step) % size]) for step in range(size))
            picked = next((key for key in cycle if key not in in_flight), keys[start])
            self._pending.add(picked, now)
            self._picks = now
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Check the score; round-robin learns nothing from it, but its rollout is back."""
        check_score(task_id, score)
        if self.spread_in_flight:
            with self._lock:
                self._pending.remove(task_id)

    def state_dict(self) -> dict[str, Any]:
        """Round-robin keeps no statistics: its picks depend only on ``round_index``.
        Picks still in flight are not saved: their rollouts do not survive a restart."""
        return {"sampler": self.name, "version": 1}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Check that ``state`` is a round-robin state; there is nothing to restore."""
        check_state(state, self.name, 1)
