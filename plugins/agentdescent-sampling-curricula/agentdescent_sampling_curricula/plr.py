"""PLR: Prioritized Level Replay (Jiang, Grefenstette and Rocktäschel, ICML 2021)."""

from __future__ import annotations

import bisect
import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    TTL_PICKS,
    Pending,
    check_pick,
    check_score,
    check_state,
    is_count,
    is_real,
    number_in,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    Shard,
    ShardCache,
    check_picks_and_entries,
    check_seed,
    draw_free,
    load_entries,
    restore_rng,
    rng_state,
    state_head,
)

__all__ = ["PrioritizedLevelReplay"]

_STATE_VERSION = 2  # 2: each task's passes and trials, for stats()
#: The value baseline of a task's first rollout, before any outcome of it is known.
_FIRST_BASELINE = 0.5
#: Staleness draws tried before falling back to the ranked replay.
_TRIES = 8


@attrs.define
class _Task:
    last: int = 0  # the pick number of the task's latest pick; 0: never picked
    total: float = 0.0  # the sum of its scores
    count: int = 0  # its recorded rollouts
    score: float = 0.0  # the learning potential of its latest rollout
    passes: int = 0  # its recorded rollouts that reached pass_threshold, for stats()


class _Staleness:
    """Fenwick sums over shard positions of (seen, last pick), to draw by ``now - last``."""

    def __init__(self, seen: list[int], last: list[int]) -> None:
        size = len(seen)
        self.size = size
        self.seen = [0, *seen]
        self.last = [0, *last]
        for index in range(1, size + 1):  # the O(n) Fenwick build
            parent = index + (index & -index)
            if parent <= size:
                self.seen[parent] += self.seen[index]
                self.last[parent] += self.last[index]
        self.top = 1 << (size.bit_length() - 1) if size else 0

    def add(self, position: int, seen: int, last: int) -> None:
        index = position + 1
        while index <= self.size:
            self.seen[index] += seen
            self.last[index] += last
            index += index & -index

    def total(self, now: int) -> int:
        seen = last = 0
        index = self.size
        while index:
            seen += self.seen[index]
            last += self.last[index]
            index -= index & -index
        return now * seen - last

    def find(self, now: int, target: int) -> int:
        """The position whose cumulative weight first exceeds ``target``."""
        position, step = 0, self.top
        while step:
            nxt = position + step
            if nxt <= self.size:
                weight = now * self.seen[nxt] - self.last[nxt]
                if weight <= target:
                    target -= weight
                    position = nxt
            step >>= 1
        return position


class _PlrShard(Shard):
    """Per shard: the never-seen tasks, the seen ones ranked by score, and their staleness.

    The never-seen tasks are kept in shard order, so that a draw among them depends on
    which tasks they are, never on the order in which the others were seen: a resumed
    run, whose shards are rebuilt from the statistics, picks as an uninterrupted one does.
    A task picked and never recorded counts as never seen once its pick has expired (it
    is then no longer in ``unrecorded``): its rollout was lost.
    """

    def __init__(
        self, keys: list[str], tasks: Mapping[str, _Task], unrecorded: Mapping[str, int]
    ) -> None:
        super().__init__(keys)
        self.unseen: list[int] = []  # positions, ascending
        self.ranked: list[tuple[float, int]] = []
        seen, last = [0] * len(keys), [0] * len(keys)
        for key, index in self.position.items():
            task = tasks.get(key)
            if task is not None and task.count:
                self.ranked.append((-task.score, index))
                seen[index], last[index] = 1, task.last
            elif task is None or key not in unrecorded:
                self.unseen.append(index)
        self.ranked.sort()
        self.staleness = _Staleness(seen, last)

    def drop_unseen(self, index: int) -> None:
        at = bisect.bisect_left(self.unseen, index)
        if at < len(self.unseen) and self.unseen[at] == index:
            del self.unseen[at]

    def add_unseen(self, index: int) -> None:
        at = bisect.bisect_left(self.unseen, index)
        if at == len(self.unseen) or self.unseen[at] != index:
            self.unseen.insert(at, index)


@attrs.define(eq=False)
class PrioritizedLevelReplay:
    """Prioritized Level Replay (Jiang, Grefenstette & Rocktäschel, ICML 2021, arXiv:2010.03934).

    Replay the tasks with the highest learning potential, by rank, mixed with the
    tasks left unplayed for longest. As the paper and its code
    (facebookresearch/level-replay, run with ``value_l1``, ``rank``, temperature 0.1
    and staleness coefficient 0.1):

    - While the shard has a task never rolled out, one of those is drawn uniformly
      (the code's proportionate schedule with its default ``rho = 1``: replay starts
      once every level has been seen).
    - Then task ``i`` is replayed with probability
      ``(1 - staleness) * P_S(i) + staleness * P_C(i)``, where
      ``P_S(i)`` ∝ ``(1 / rank_i) ** (1 / temperature)`` (rank 1 is the highest score)
      and ``P_C(i)`` ∝ the picks since task ``i`` was last picked.
    - A task's score is that of its latest rollout (the code's ``alpha = 1``).
    - A task stays unseen until a rollout of it is recorded, as a level stays unseen
      in the code until it is scored: a task whose first rollout is lost (the engine
      records nothing for a failed rollout) is drawn among the unseen again once its
      pick expires, 256 picks later, or at once after ``load_state_dict``, which does
      not restore picks in flight.

    Departs from the paper: it scores a level by its L1 value loss (mean absolute GAE
    of the last episode); a pass/fail reward comes without a value network, so the
    score here is ``|score - the task's mean earlier score|`` (0.5 before any), whose
    mean is ``2p(1 - p)`` at pass rate ``p``. Equal scores rank the earlier key first.
    Staleness counts the pick being made: a task last picked ``k`` picks ago weighs
    ``k`` in ``P_C``, where the code's ``_update_staleness`` (zeroed at a task's pick,
    raised by one at each later pick) and the paper's ``c - C_i`` give ``k - 1``, so
    the task picked last keeps a weight of 1 rather than 0 (with picks at 1, 2 and 3,
    the weights of pick 4 are 3 : 2 : 1 here, 2 : 1 : 0 in the code).

    A task in flight (picked, not yet recorded) is not drawn again while another
    task can be, so concurrent workers spread. Picks cost O(log keys): a Fenwick tree
    draws by staleness and a sorted list holds the ranks. One lock guards ``pick``
    and ``record``; ``state_dict()`` saves everything a pick depends on, the
    generator included, and each task's passes and trials, which ``stats()`` returns.

    Args:
        temperature: beta, how sharply the rank decides (0.1 in the paper: rank 1 takes
            99.9% of ``P_S``).
        staleness: rho, the share of ``P_C`` in the replay distribution (0.1 in the paper).
        pass_threshold: the score at which a rollout counts as a pass in ``stats()``.
            Keep it equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's
            default.
        seed: seeds the generator; the same seed and calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``temperature`` is not > 0, or ``staleness`` is outside [0, 1], or
            ``pass_threshold`` outside (0, 1].
    """

    name: ClassVar[str] = "plr"

    temperature: float = attrs.field(
        default=0.1, validator=number_in(0.0, low_open=True, hint="; the paper uses 0.1")
    )
    staleness: float = attrs.field(
        default=0.1, validator=number_in(0.0, 1.0, hint="; the paper uses 0.1")
    )
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _tasks: dict[str, _Task] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _rng: random.Random = attrs.field(init=False, repr=False)
    _rank_weights: list[float] = attrs.field(init=False, factory=list, repr=False)
    _shards: ShardCache[_PlrShard] = attrs.field(init=False, repr=False)
    _in_flight: Pending = attrs.field(init=False, factory=Pending, repr=False)
    # Tasks picked and never recorded, with their latest pick, until that pick expires.
    _unrecorded: dict[str, int] = attrs.field(init=False, factory=dict, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._shards = ShardCache(lambda keys: _PlrShard(keys, self._tasks, self._unrecorded))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return an unseen task while there is one, else a replay by rank or staleness."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            self._readmit_lost(now)
            picked = self._choose(shard, now)
            task = self._tasks.setdefault(picked, _Task())
            for held, index in self._shards.holding(picked):
                held.drop_unseen(index)
                if task.count:
                    held.staleness.add(index, 0, now - task.last)
            if not task.count:
                self._unrecorded[picked] = now
            task.last = now
            self._in_flight.add(picked, now)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Score the rollout's learning potential: its distance from the task's mean so far."""
        value = check_score(task_id, score)
        with self._lock:
            task = self._tasks.setdefault(task_id, _Task())
            baseline = task.total / task.count if task.count else _FIRST_BASELINE
            old, new = task.score, abs(value - baseline)
            for shard, index in self._shards.holding(task_id):
                if task.count:
                    del shard.ranked[bisect.bisect_left(shard.ranked, (-old, index))]
                else:
                    shard.drop_unseen(index)
                    shard.staleness.add(index, 1, task.last)
                bisect.insort(shard.ranked, (-new, index))
            self._unrecorded.pop(task_id, None)
            task.total += value
            task.count += 1
            task.passes += value >= self.pass_threshold
            task.score = new
            self._in_flight.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}`` for the tasks with a record."""
        with self._lock:
            return {key: (t.passes, t.count) for key, t in self._tasks.items() if t.count}

    def _readmit_lost(self, now: int) -> None:
        """Return to the unseen every task whose only picks were lost: expired unrecorded."""
        lost = [key for key, last in self._unrecorded.items() if now - last > TTL_PICKS]
        for key in lost:
            del self._unrecorded[key]
            for held, index in self._shards.holding(key):
                held.add_unseen(index)

    def _choose(self, shard: _PlrShard, now: int) -> str:
        if shard.unseen:
            return shard.keys[shard.unseen[self._rng.randrange(len(shard.unseen))]]
        if not shard.ranked:  # every task picked, none recorded yet
            return draw_free(shard.keys, self._rng, self._in_flight, now)
        if self._rng.random() < self.staleness:
            total = shard.staleness.total(now)
            for _ in range(_TRIES if total > 0 else 0):
                key = shard.keys[shard.staleness.find(now, self._rng.randrange(total))]
                if not self._in_flight.holds(key, now):
                    return key
        return self._by_rank(shard, now)

    def _by_rank(self, shard: _PlrShard, now: int) -> str:
        """Draw a rank from ``(1 / rank) ** (1 / temperature)`` among tasks not in flight."""
        busy = sorted(
            bisect.bisect_left(shard.ranked, (-self._tasks[key].score, index))
            for key in self._in_flight.tasks(now)
            if (index := shard.position.get(key)) is not None and self._tasks[key].count
        )
        free = len(shard.ranked) - len(busy)
        if not free:
            return shard.keys[shard.ranked[0][1]]
        weights = self._rank_weights
        exponent = 1.0 / self.temperature
        while len(weights) < free:
            weights.append((weights[-1] if weights else 0.0) + (len(weights) + 1) ** -exponent)
        target = self._rng.random() * weights[free - 1]
        at = min(bisect.bisect_right(weights, target, 0, free), free - 1)
        for taken in busy:  # skip the ranks held by tasks in flight
            if taken <= at:
                at += 1
        return shard.keys[shard.ranked[at][1]]

    def state_dict(self) -> dict[str, Any]:
        """Everything a pick depends on, JSON-ready. Picks still in flight are not saved:
        their rollouts do not survive a restart."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "rng": rng_state(self._rng),
                "tasks": {
                    key: [task.last, task.total, task.count, task.score, task.passes]
                    for key, task in self._tasks.items()
                },
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with other parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        rng = restore_rng(self.name, state.get("rng"))
        picks, entries = check_picks_and_entries(self.name, state, "tasks")

        def valid(entry: Any) -> bool:
            return (
                isinstance(entry, list)
                and len(entry) == 5
                and is_count(entry[0])
                and entry[0] <= picks
                and is_real(entry[1])
                and is_count(entry[2])
                and is_real(entry[3])
                and entry[3] >= 0
                and is_count(entry[4])
                and entry[4] <= entry[2]
            )

        tasks = load_entries(
            self.name,
            entries,
            valid,
            lambda entry: _Task(entry[0], float(entry[1]), entry[2], float(entry[3]), entry[4]),
            "[last pick, score sum, rollouts, latest score, passes] with passes <= rollouts",
        )
        with self._lock:
            self._tasks = tasks
            self._picks = picks
            self._rng = rng
            self._in_flight = Pending()
            self._unrecorded = {}
            self._shards.clear()

    def _params(self) -> dict[str, float]:
        return {
            "temperature": self.temperature,
            "staleness": self.staleness,
            "pass_threshold": self.pass_threshold,
        }
