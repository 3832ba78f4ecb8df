"""SFL: Sampling For Learnability (Rutherford et al., NeurIPS 2024)."""

from __future__ import annotations

import heapq
import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    Pending,
    StateError,
    check_pick,
    check_score,
    check_state,
    is_count,
    number_in,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    Shard,
    ShardCache,
    check_seed,
    count_outcome,
    draw_free,
    load_counts,
    restore_rng,
    rng_state,
    saved_counts,
    state_head,
    whole,
)

__all__ = ["SamplingForLearnability"]

_STATE_VERSION = 1


@attrs.define(eq=False)
class SamplingForLearnability:
    """Sampling For Learnability (Rutherford et al., NeurIPS 2024, arXiv:2408.15099).

    Train on the tasks of highest learnability ``p(1 - p)``, where ``p`` is the
    task's pass rate: every ``refresh`` picks the ``buffer_size`` tasks of highest
    learnability form the buffer; each pick draws uniformly from the buffer's
    tasks in the shard with probability ``sample_ratio``, and uniformly from the
    whole shard otherwise. Defaults are the paper's JaxNav settings in its code
    (amacrutherford/sampling-for-learnability): K = 100 buffered levels, half of
    each batch from the buffer, a refresh every 50 updates.

    Departs from the paper: SFL spends separate evaluation rollouts (5,000 levels)
    on each refresh; here every rollout is a pick, so ``p`` comes from all the
    task's recorded rollouts, a refresh is counted in picks rather than PPO
    updates, and a task enters the buffer only once it has both passed and failed
    (on a 40-task shard, K = 100 would otherwise buffer every task and the rule
    would be uniform).

    A task in flight is not drawn again while another task can be. Picks cost
    O(buffer_size), a refresh O(tasks with mixed outcomes). One lock guards
    ``pick`` and ``record``; ``state_dict()`` saves everything a pick depends on.

    Args:
        buffer_size: K, how many tasks the buffer holds.
        sample_ratio: rho, the probability that a pick comes from the buffer.
        refresh: T, the picks between two rebuilds of the buffer.
        pass_threshold: the score at which a rollout counts as a pass. Keep it
            equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's default.
        seed: seeds the generator; the same seed and calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: a parameter is out of range.
    """

    name: ClassVar[str] = "sfl"

    buffer_size: int = attrs.field(default=100, validator=whole(1, 100))
    sample_ratio: float = attrs.field(
        default=0.5, validator=number_in(0.0, 1.0, hint="; the paper uses 0.5")
    )
    refresh: int = attrs.field(default=50, validator=whole(1, 50))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
    # Tasks that have both passed and failed, in the order they first did (a dict
    # rather than a set, so iteration never depends on string hashing).
    _mixed: dict[str, None] = attrs.field(init=False, factory=dict, repr=False)
    _buffer: list[str] = attrs.field(init=False, factory=list, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _rng: random.Random = attrs.field(init=False, repr=False)
    _shards: ShardCache[Shard] = attrs.field(
        init=False, factory=lambda: ShardCache(Shard), repr=False
    )
    _in_flight: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return a buffered task of the shard with probability ``sample_ratio``, else any."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            if (now - 1) % self.refresh == 0:
                self._buffer = heapq.nsmallest(
                    self.buffer_size, self._mixed, key=lambda key: (-self._learnability(key), key)
                )
            picked = None
            if self._rng.random() < self.sample_ratio:
                members = [
                    key
                    for key in self._buffer
                    if key in shard.position and not self._in_flight.holds(key, now)
                ]
                if members:
                    picked = members[self._rng.randrange(len(members))]
            if picked is None:
                picked = draw_free(shard.keys, self._rng, self._in_flight, now)
            self._in_flight.add(picked, now)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Count one trial of ``task_id``, and a pass if ``score >= pass_threshold``."""
        value = check_score(task_id, score)
        with self._lock:
            passes, trials = count_outcome(self._stats, task_id, value >= self.pass_threshold)
            if 0 < passes < trials:
                self._mixed.setdefault(task_id)
            self._in_flight.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``."""
        with self._lock:
            return dict(self._stats)

    def buffer(self) -> list[str]:
        """The buffer as of the latest refresh, highest learnability first."""
        with self._lock:
            return list(self._buffer)

    def _learnability(self, key: str) -> float:
        passes, trials = self._stats[key]
        p = passes / trials
        return p * (1.0 - p)

    def state_dict(self) -> dict[str, Any]:
        """Everything a pick depends on, JSON-ready. Picks still in flight are not saved:
        their rollouts do not survive a restart."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "rng": rng_state(self._rng),
                "buffer": list(self._buffer),
                "stats": saved_counts(self._stats),
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with other parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        picks, buffer = state.get("picks"), state.get("buffer")
        rng = restore_rng(self.name, state.get("rng"))
        stats = load_counts(self.name, state)
        if not is_count(picks) or not isinstance(buffer, list):
            raise StateError(f"{self.name}: state needs a whole number 'picks' and a 'buffer' list")
        if not all(key in stats for key in buffer):
            raise StateError(f"{self.name}: the buffer names tasks without statistics")
        with self._lock:
            self._stats = stats
            self._mixed = {key: None for key, (p, t) in stats.items() if 0 < p < t}
            self._buffer = list(buffer)
            self._picks = picks
            self._rng = rng
            self._in_flight = Pending()
            self._shards.clear()

    def _params(self) -> dict[str, float]:
        return {
            "buffer_size": self.buffer_size,
            "sample_ratio": self.sample_ratio,
            "refresh": self.refresh,
            "pass_threshold": self.pass_threshold,
        }
