"""SPEED: screen each task with a few rollouts, continue on the informative ones (2025)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    TTL_PICKS,
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

__all__ = ["Speed"]

_STATE_VERSION = 1

_Entry = tuple[int, int, int]  # (visits, seeded order within the epoch, position)


@attrs.define
class _Cycle:
    assigned: int  # rollouts handed out in this phase
    outcomes: int = 0  # of which recorded (screening only)
    passes: int = 0
    last: int = 0  # pick number of the latest hand-out


class _EpochShard(Shard):
    """A shard's idle tasks in seeded epoch order: fewest visits first, then a seeded shuffle."""

    def __init__(self, keys: list[str], entry: Callable[[str, int], _Entry | None]) -> None:
        super().__init__(keys)
        self.idle = LazyHeap[_Entry](
            lambda: [e for key, i in self.position.items() if (e := entry(key, i)) is not None]
        )


@attrs.define(eq=False)
class Speed:
    """SPEED, selective prompting with efficient estimation of difficulty (Zhang, Arora, Mei &
    Zanette, 2025, arXiv:2506.09016).

    Tasks are taken in a seeded random order, each once per epoch. A task taken is
    first screened with ``screen`` rollouts; if they are neither all passes nor all
    failures, it is continued with ``continuation`` more rollouts, otherwise it is
    dropped until its next epoch. A pick serves, in order: a continued task's next
    rollout, a screening still short of rollouts, then the next task of the epoch.
    Defaults are the paper's code (Zanette-Labs/speed-rl): 4 screening and 20
    continuation rollouts per prompt.

    Departs from the paper: it screens a batch of prompts at once and trains on the
    continued ones in batches; here a pick is one rollout, so a task's screening and
    continuation rollouts are spread over consecutive picks of its shard. A
    screening rollout not recorded within 256 picks is handed out again.

    Screening rollouts of one task may run concurrently, as in the paper; no task
    is handed more rollouts in a phase than the phase needs. Picks cost
    O(log keys) plus the tasks in a phase. One lock guards ``pick`` and ``record``;
    ``state_dict()`` saves everything a pick depends on. The epoch order is a seeded
    hash, so there is no generator state.

    Args:
        screen: N_init, the screening rollouts per task and epoch (at least 2).
        continuation: N_cont, the further rollouts of a task that qualified.
        pass_threshold: the score at which a rollout counts as a pass. Keep it
            equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's default.
        seed: seeds the epoch order; the same seed and calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: a parameter is out of range.
    """

    name: ClassVar[str] = "speed"

    screen: int = attrs.field(default=4, validator=whole(2, 4))
    continuation: int = attrs.field(default=20, validator=whole(1, 20))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
    _visits: dict[str, int] = attrs.field(init=False, factory=dict, repr=False)
    _screening: dict[str, _Cycle] = attrs.field(init=False, factory=dict, repr=False)
    _continuing: dict[str, _Cycle] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _shards: ShardCache[_EpochShard] = attrs.field(init=False, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._shards = ShardCache(lambda keys: _EpochShard(keys, self._entry))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Continue a qualified task, finish a screening, or screen the epoch's next task."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            for task, cycle in self._continuing.items():
                if task in shard.position:
                    cycle.assigned += 1
                    if cycle.assigned >= self.continuation:
                        del self._continuing[task]
                        self._now_idle(task)
                    return task
            for task, cycle in self._screening.items():
                short = cycle.assigned < self.screen or now - cycle.last > TTL_PICKS
                if short and task in shard.position:
                    cycle.assigned += 1
                    cycle.last = now
                    return task
            entry = shard.idle.first(lambda e: self._entry(shard.keys[e[2]], e[2]) == e)
            if entry is None:  # every task of the shard is being screened: one more rollout
                task = next(task for task in self._screening if task in shard.position)
                self._screening[task].assigned += 1
                return task
            task = shard.keys[entry[2]]
            self._visits[task] = self._visits.get(task, 0) + 1
            self._screening[task] = _Cycle(assigned=1, last=now)
            return task

    def record(self, task_id: str, score: float) -> None:
        """Count the rollout; a screening decides once its ``screen`` outcomes are in."""
        value = check_score(task_id, score)
        passed = value >= self.pass_threshold
        with self._lock:
            count_outcome(self._stats, task_id, passed)
            cycle = self._screening.get(task_id)
            if cycle is None:
                return
            cycle.outcomes += 1
            cycle.passes += passed
            if cycle.outcomes >= self.screen:
                del self._screening[task_id]
                if 0 < cycle.passes < cycle.outcomes:
                    self._continuing[task_id] = _Cycle(assigned=0)
                else:
                    self._now_idle(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``."""
        with self._lock:
            return dict(self._stats)

    def _entry(self, task: str, index: int) -> _Entry | None:
        """The task's place in the epoch order, or None while it is screened or continued."""
        if task in self._screening or task in self._continuing:
            return None
        visits = self._visits.get(task, 0)
        return (visits, order_key(self.seed, visits, task), index)

    def _now_idle(self, task: str) -> None:
        for shard, index in self._shards.holding(task):
            entry = self._entry(task, index)
            assert entry is not None  # for mypy: the task just left its phase
            shard.idle.push(entry)

    def state_dict(self) -> dict[str, Any]:
        """Everything a pick depends on, JSON-ready."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "stats": saved_counts(self._stats),
                "visits": dict(self._visits),
                "screening": [[key, *attrs.astuple(c)] for key, c in self._screening.items()],
                "continuing": [[key, *attrs.astuple(c)] for key, c in self._continuing.items()],
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
        visits = check_entries(self.name, state.get("visits"), "visits")
        if not is_count(picks) or not all(map(is_count, visits.values())):
            raise StateError(f"{self.name}: 'picks' and every visit count must be whole numbers")
        phases = []
        for what in ("screening", "continuing"):
            rows = state.get(what)
            if not (
                isinstance(rows, list)
                and all(
                    isinstance(row, list)
                    and len(row) == 5
                    and isinstance(row[0], str)
                    and all(map(is_count, row[1:]))
                    for row in rows
                )
            ):
                raise StateError(
                    f"{self.name}: {what!r} must list [task, assigned, outcomes, passes, last]"
                )
            phases.append({row[0]: _Cycle(*row[1:]) for row in rows})
        screening, continuing = phases
        if both := sorted(screening.keys() & continuing.keys())[:3]:
            raise StateError(f"{self.name}: tasks {both} are both screening and continuing")
        # A record needs no pick before it, so outcomes may outrun the rollouts handed out.
        for task, cycle in screening.items():
            if cycle.passes > cycle.outcomes or cycle.outcomes >= self.screen:
                raise StateError(
                    f"{self.name}: screening row of {task!r} has {cycle.passes} passes of "
                    f"{cycle.outcomes} outcomes; expected passes <= outcomes < screen="
                    f"{self.screen} (a screening ends at its screen-th outcome)"
                )
        with self._lock:
            self._picks = picks
            self._stats = stats
            self._visits = dict(visits)
            self._screening, self._continuing = phases
            self._shards.clear()

    def _params(self) -> dict[str, Any]:
        return {
            "screen": self.screen,
            "continuation": self.continuation,
            "pass_threshold": self.pass_threshold,
            "seed": self.seed,
        }
