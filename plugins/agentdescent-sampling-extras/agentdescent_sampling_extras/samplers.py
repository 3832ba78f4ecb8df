"""EpochShuffle and UniformRandom: seeded, locked, cheap, and resumable."""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    StateError,
    check_pick,
    check_score,
    check_state,
    check_task_ids,
    restore_rng,
    rng_state,
    seed_number,
)

__all__ = ["EpochShuffle", "UniformRandom"]


@attrs.define(eq=False)
class _Seeded:
    """What both samplers share: a seed, their own generator, a lock, nothing to learn."""

    name: ClassVar[str]

    seed: int = attrs.field(default=0, validator=seed_number("; for example seed=0"))
    _rng: random.Random = attrs.field(init=False, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def record(self, task_id: str, score: float) -> None:
        """Validate the score; the picks do not depend on outcomes."""
        check_score(task_id, score)

    def state_dict(self) -> dict[str, Any]:
        """The seed and the generator's state, as JSON: a resumed run picks as if never
        stopped."""
        with self._lock:
            return self._state()

    def _state(self) -> dict[str, Any]:
        return {
            "sampler": self.name,
            "version": 1,
            "params": {"seed": self.seed},
            "rng": rng_state(self._rng),
        }

    def load_state_dict(self, state: Any) -> None:
        """Restore what :meth:`state_dict` saved; a malformed state raises
        :class:`~agentdescent_sampling.errors.StateError` and changes nothing."""
        rng = self._restored_rng(state)
        with self._lock:
            self._rng = rng

    def _restored_rng(self, state: Any) -> random.Random:
        """The generator ``state`` saved, once the rest of it is checked; changes nothing."""
        state = check_state(state, self.name, 1, {"seed": self.seed})
        return restore_rng(self.name, state.get("rng"))


@attrs.define(eq=False)
class EpochShuffle(_Seeded):
    """Every task in the shard once per epoch, in a seeded random order.

    The usual default of dataset-driven optimizers: full coverage, no task repeated
    before every other task in the shard has had a rollout, and a fresh order each
    epoch. Shards may rotate: a task counts as seen for the epoch whichever shard
    it was picked from.
    """

    name: ClassVar[str] = "epoch-shuffle"

    _seen: set[str] = attrs.field(init=False, factory=set, repr=False)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return an unseen task of this epoch, starting a new epoch when all are seen."""
        keys, _ = check_pick(keys, round_index)
        check_task_ids(keys)  # a task id that is not a string would leave 'seen' unsaveable
        with self._lock:
            unseen = [key for key in keys if key not in self._seen]
            if not unseen:
                self._seen.difference_update(keys)
                unseen = list(keys)
            picked = unseen[self._rng.randrange(len(unseen))]
            self._seen.add(picked)
            return picked

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "seen": sorted(self._seen)}  # and the epoch's tasks seen

    def load_state_dict(self, state: Any) -> None:
        """Restore what :meth:`state_dict` saved; a malformed state raises
        :class:`~agentdescent_sampling.errors.StateError` and changes nothing."""
        seen = state.get("seen") if isinstance(state, Mapping) else None
        if not isinstance(seen, list):
            raise StateError(
                f"{self.name}: 'seen' must be the list of task ids state_dict() wrote, got "
                f"{type(seen).__name__}"
            )
        for task in seen:
            if not isinstance(task, str):
                raise StateError(
                    f"{self.name}: 'seen' must be the list of task ids state_dict() wrote; it "
                    f"holds {type(task).__name__}"
                )
        rng = self._restored_rng(state)
        # Both under one lock: a pick between them drew from the loaded generator over the
        # old epoch, and the loaded epoch then forgot that pick.
        with self._lock:
            self._rng, self._seen = rng, set(seen)


@attrs.define(eq=False)
class UniformRandom(_Seeded):
    """A task drawn uniformly at random from the shard, with replacement, seeded."""

    name: ClassVar[str] = "uniform-random"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return a uniformly random key."""
        keys, _ = check_pick(keys, round_index)
        check_task_ids(keys)  # before the draw: a pick that raises changes nothing
        with self._lock:
            return keys[self._rng.randrange(len(keys))]
