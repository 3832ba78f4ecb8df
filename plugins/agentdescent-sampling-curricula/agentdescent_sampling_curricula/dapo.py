"""DAPO-style dynamic filtering: skip tasks observed all-pass or all-fail (Yu et al., 2025)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    StateError,
    check_pick,
    check_score,
    check_state,
    is_count,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    LazyHeap,
    Shard,
    ShardCache,
    check_entries,
    check_seed,
    count_outcome,
    load_counts,
    order_key,
    saved_counts,
    state_head,
    whole,
)

__all__ = ["DynamicFiltering"]

_STATE_VERSION = 1

_Entry = tuple[int, int, int]  # (visits, seeded order within the epoch, position)


class _FilterShard(Shard):
    """A shard in seeded epoch order twice: its unfiltered tasks, and all of them."""

    def __init__(
        self, keys: list[str], entry: Callable[[str, int], _Entry], kept: Callable[[str], bool]
    ) -> None:
        super().__init__(keys)
        self.kept = LazyHeap[_Entry](
            lambda: [entry(key, i) for key, i in self.position.items() if kept(key)]
        )
        self.every = LazyHeap[_Entry](lambda: [entry(key, i) for key, i in self.position.items()])


@attrs.define(eq=False)
class DynamicFiltering:
    """DAPO's dynamic sampling (Yu et al., 2025, arXiv:2503.14476), one rollout at a time.

    DAPO drops prompts whose group of G rollouts all passed or all failed: they
    carry no advantage, so no gradient. G = 16 is the responses per prompt of the
    paper's training setup and of its released script (volcengine/verl,
    ``recipe/dapo/run_dapo_qwen2.5_32b.sh``: ``n_resp_per_prompt=16``, filtering on
    ``acc``). Here
    tasks are taken in a seeded random order, each once per epoch, and a task whose
    last ``group`` outcomes are all passes or all failures is skipped; if every task
    of the shard is skipped, the epoch order is followed regardless.

    Departs from the paper: DAPO rolls out a group of G responses at once and
    discards a uniform group after paying for it; a pick here is one rollout, so
    a task is judged by its last ``group`` rollouts and, once uniform, gets no more,
    which saves the rollouts instead of filtering them after the fact. A skipped
    task stays skipped until a record breaks its run of equal outcomes, so while
    another task of the shard is kept it is never rolled out again, however the
    artifact changes; DAPO judges a prompt afresh each time its data loader draws it
    (its script trains one epoch, so it draws each prompt once). With the
    paper's G = 16 a task must be rolled out 16 times before it can be skipped.

    Consecutive picks go to different tasks (each pick advances the epoch), so
    concurrent workers spread. Picks cost O(log keys). One lock guards ``pick`` and
    ``record``; ``state_dict()`` saves everything a pick depends on. The epoch order
    is a seeded hash, so there is no generator state.

    Args:
        group: G, how many latest outcomes must agree before a task is skipped.
        pass_threshold: the score at which a rollout counts as a pass. Keep it
            equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's default.
        seed: seeds the epoch order; the same seed and calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``group`` below 2 or ``pass_threshold`` outside (0, 1].
    """

    name: ClassVar[str] = "dapo-filter"

    group: int = attrs.field(default=16, validator=whole(2, 16))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
    # The latest outcome of each task and how many outcomes in a row agree with it.
    _streak: dict[str, tuple[bool, int]] = attrs.field(init=False, factory=dict, repr=False)
    _visits: dict[str, int] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _shards: ShardCache[_FilterShard] = attrs.field(init=False, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._shards = ShardCache(lambda keys: _FilterShard(keys, self._entry, self._kept))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return the epoch's next task that is not skipped, or the next one if all are."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1

            def current(entry: _Entry) -> bool:
                return self._visits.get(shard.keys[entry[2]], 0) == entry[0]

            entry = shard.kept.first(lambda e: current(e) and self._kept(shard.keys[e[2]]))
            entry = entry or shard.every.first(current)
            assert entry is not None  # for mypy: every key has a current entry
            task = shard.keys[entry[2]]
            self._visits[task] = entry[0] + 1
            for held, index in self._shards.holding(task):
                following = self._entry(task, index)
                held.every.push(following)
                if self._kept(task):
                    held.kept.push(following)
            return task

    def record(self, task_id: str, score: float) -> None:
        """Count the outcome and extend or restart the task's run of equal outcomes."""
        value = check_score(task_id, score)
        passed = value >= self.pass_threshold
        with self._lock:
            count_outcome(self._stats, task_id, passed)
            was_kept = self._kept(task_id)
            latest, run = self._streak.get(task_id, (passed, 0))
            self._streak[task_id] = (passed, run + 1 if latest == passed else 1)
            if self._kept(task_id) and not was_kept:
                for shard, index in self._shards.holding(task_id):
                    shard.kept.push(self._entry(task_id, index))

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``."""
        with self._lock:
            return dict(self._stats)

    def skipped(self, task_id: str) -> bool:
        """Whether ``task_id``'s last ``group`` outcomes all agree, so picks skip it."""
        with self._lock:
            return not self._kept(task_id)

    def _kept(self, task: str) -> bool:
        return self._streak.get(task, (False, 0))[1] < self.group

    def _entry(self, task: str, index: int) -> _Entry:
        visits = self._visits.get(task, 0)
        return (visits, order_key(self.seed, visits, task), index)

    def state_dict(self) -> dict[str, Any]:
        """Everything a pick depends on, JSON-ready."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "stats": saved_counts(self._stats),
                "streaks": {key: [latest, run] for key, (latest, run) in self._streak.items()},
                "visits": dict(self._visits),
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with other parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        picks = state.get("picks")
        stats = load_counts(self.name, state)
        streaks = check_entries(self.name, state.get("streaks"), "streaks")
        visits = check_entries(self.name, state.get("visits"), "visits")
        if not is_count(picks) or not all(map(is_count, visits.values())):
            raise StateError(f"{self.name}: 'picks' and every visit count must be whole numbers")
        if not all(
            isinstance(e, list) and len(e) == 2 and isinstance(e[0], bool) and is_count(e[1])
            for e in streaks.values()
        ):
            raise StateError(f"{self.name}: streaks must be [latest outcome, run length] pairs")
        with self._lock:
            self._picks = picks
            self._stats = stats
            self._streak = {key: (e[0], e[1]) for key, e in streaks.items()}
            self._visits = dict(visits)
            self._shards.clear()

    def _params(self) -> dict[str, Any]:
        return {"group": self.group, "pass_threshold": self.pass_threshold, "seed": self.seed}
