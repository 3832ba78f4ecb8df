"""EpochShuffle and UniformRandom: seeded, locked, and cheap."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from typing import ClassVar

import attrs

from agentdescent_sampling.protocol import check_pick, check_score
from agentdescent_sampling.validators import integer

__all__ = ["EpochShuffle", "UniformRandom"]


@attrs.define(eq=False)
class _Seeded:
    """What both samplers share: a seed, their own generator, a lock, nothing to learn."""

    seed: int = attrs.field(default=0, validator=integer("; for example seed=0"))
    _rng: random.Random = attrs.field(init=False, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def record(self, task_id: str, score: float) -> None:
        """Validate the score; the picks do not depend on outcomes."""
        check_score(task_id, score)


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
        with self._lock:
            unseen = [key for key in keys if key not in self._seen]
            if not unseen:
                self._seen.difference_update(keys)
                unseen = list(keys)
            picked = unseen[self._rng.randrange(len(unseen))]
            self._seen.add(picked)
            return picked


@attrs.define(eq=False)
class UniformRandom(_Seeded):
    """A task drawn uniformly at random from the shard, with replacement, seeded."""

    name: ClassVar[str] = "uniform-random"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return a uniformly random key."""
        keys, _ = check_pick(keys, round_index)
        with self._lock:
            return keys[self._rng.randrange(len(keys))]
