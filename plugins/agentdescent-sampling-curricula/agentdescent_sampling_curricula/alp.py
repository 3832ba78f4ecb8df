"""Absolute learning progress, as ALP-GMM measures it (Portelas et al., 2019/2020)."""

from __future__ import annotations

import random
import threading
from collections import deque
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
    is_real,
    number_in,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    Shard,
    ShardCache,
    check_entries,
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

__all__ = ["AbsoluteLearningProgress"]

_STATE_VERSION = 2  # 2: each task's passes and trials, for stats()


@attrs.define(eq=False)
class AbsoluteLearningProgress:
    """Absolute learning progress as in ALP-GMM (Portelas et al., CoRL 2019, PMLR 100 2020,
    arXiv:1910.07224).

    A rollout's absolute learning progress (ALP) is ``|score - the task's previous
    score|``. Until ``fit_rate`` rollouts are recorded, picks are uniformly random (the
    paper's bootstrap); after that, every ``fit_rate`` records each task's mean ALP over
    the last ``fit_rate`` rollouts is refitted, and a pick is uniformly random with
    probability ``random_ratio`` and otherwise draws a task in proportion to its
    mean ALP (uniformly if no task in the shard shows progress). Defaults are the
    paper's code (flowersteam/teachDeepRL): 20% random tasks, a refit every 250
    episodes on the last 250. OMNI-style curricula use the same absolute form.

    Departs from the paper: ALP-GMM fits a Gaussian mixture to (task parameters, ALP)
    in a continuous task space and compares a reward with the nearest earlier task;
    tasks here are discrete ids, so each task is its own component (drawn in
    proportion to its mean ALP) and a rollout is compared with the same task's
    previous one (a first rollout has ALP 0).

    A task in flight is not drawn again while another task can be. A pick costs
    O(tasks with progress in the last ``fit_rate`` records). One lock guards ``pick``
    and ``record``; ``state_dict()`` saves everything a pick depends on, and each task's
    passes and trials, which ``stats()`` returns.

    Args:
        random_ratio: the probability of a uniformly random pick after the bootstrap.
        fit_rate: the records between refits, the window each refit averages over,
            and the length of the random bootstrap.
        pass_threshold: the score at which a rollout counts as a pass in ``stats()``.
            Keep it equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's
            default.
        seed: seeds the generator; the same seed and calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``random_ratio`` outside [0, 1], or ``fit_rate`` below 1, or
            ``pass_threshold`` outside (0, 1].
    """

    name: ClassVar[str] = "learning-progress"

    random_ratio: float = attrs.field(
        default=0.2, validator=number_in(0.0, 1.0, hint="; the paper uses 0.2")
    )
    fit_rate: int = attrs.field(default=250, validator=whole(1, 250))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _previous: dict[str, float] = attrs.field(init=False, factory=dict, repr=False)
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
    _history: deque[tuple[str, float]] = attrs.field(init=False, repr=False)
    _fitted: dict[str, float] = attrs.field(init=False, factory=dict, repr=False)
    _records: int = attrs.field(init=False, default=0, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _rng: random.Random = attrs.field(init=False, repr=False)
    _shards: ShardCache[Shard] = attrs.field(
        init=False, factory=lambda: ShardCache(Shard), repr=False
    )
    _in_flight: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._history = deque(maxlen=self.fit_rate)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return a random task while bootstrapping or by chance, else one drawn by mean ALP."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            picked = None
            if self._records >= self.fit_rate and self._rng.random() >= self.random_ratio:
                members = [
                    (key, weight)
                    for key, weight in self._fitted.items()
                    if key in shard.position and not self._in_flight.holds(key, now)
                ]
                target = self._rng.random() * sum(weight for _, weight in members)
                for key, weight in members:
                    picked = key
                    target -= weight
                    if target < 0:
                        break
            if picked is None:
                picked = draw_free(shard.keys, self._rng, self._in_flight, now)
            self._in_flight.add(picked, now)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Log the rollout's ALP; every ``fit_rate`` records, refit each task's mean ALP."""
        value = check_score(task_id, score)
        with self._lock:
            previous = self._previous.get(task_id)
            self._previous[task_id] = value
            self._history.append((task_id, 0.0 if previous is None else abs(value - previous)))
            self._records += 1
            if self._records % self.fit_rate == 0:
                self._fitted = _fit(self._history)
            count_outcome(self._stats, task_id, value >= self.pass_threshold)
            self._in_flight.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``."""
        with self._lock:
            return dict(self._stats)

    def progress(self) -> dict[str, float]:
        """The mean ALP of each task with progress, as of the latest refit."""
        with self._lock:
            return dict(self._fitted)

    def state_dict(self) -> dict[str, Any]:
        """Everything a pick depends on, JSON-ready. Picks still in flight are not saved:
        their rollouts do not survive a restart."""
        with self._lock:
            return {
                **state_head(self.name, _STATE_VERSION, self._params(), self._picks),
                "records": self._records,
                "rng": rng_state(self._rng),
                "previous": dict(self._previous),
                "history": [[key, alp] for key, alp in self._history],
                "fitted": [[key, alp] for key, alp in self._fitted.items()],
                "stats": saved_counts(self._stats),
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with other parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        picks, records = state.get("picks"), state.get("records")
        history, fitted = state.get("history"), state.get("fitted")
        rng = restore_rng(self.name, state.get("rng"))
        previous = check_entries(self.name, state.get("previous"), "previous")
        stats = load_counts(self.name, state)
        if not is_count(picks) or not is_count(records):
            raise StateError(f"{self.name}: state needs whole numbers 'picks' and 'records'")
        if not all(is_real(value) and 0 <= value <= 1 for value in previous.values()):
            raise StateError(f"{self.name}: 'previous' scores must be numbers in [0, 1]")
        for what, pairs in (("history", history), ("fitted", fitted)):
            if not (
                isinstance(pairs, list)
                and len(pairs) <= self.fit_rate
                and all(
                    isinstance(pair, list)
                    and len(pair) == 2
                    and isinstance(pair[0], str)
                    and is_real(pair[1])
                    and 0 <= pair[1] <= 1
                    for pair in pairs
                )
            ):
                raise StateError(
                    f"{self.name}: bad {what!r}: expected up to {self.fit_rate} [task, ALP] pairs"
                )
        assert isinstance(history, list)  # for mypy: checked above
        assert isinstance(fitted, list)
        with self._lock:
            self._previous = {key: float(value) for key, value in previous.items()}
            self._history = deque(((k, float(a)) for k, a in history), maxlen=self.fit_rate)
            self._fitted = {key: float(alp) for key, alp in fitted}
            self._stats = stats
            self._picks = picks
            self._records = records
            self._rng = rng
            self._in_flight = Pending()
            self._shards.clear()

    def _params(self) -> dict[str, float]:
        return {
            "random_ratio": self.random_ratio,
            "fit_rate": self.fit_rate,
            "pass_threshold": self.pass_threshold,
        }


def _fit(history: deque[tuple[str, float]]) -> dict[str, float]:
    """Each task's mean ALP over ``history``, keeping the tasks whose mean is above 0."""
    sums: dict[str, list[float]] = {}
    for key, alp in history:
        entry = sums.setdefault(key, [0.0, 0.0])
        entry[0] += alp
        entry[1] += 1
    return {key: total / count for key, (total, count) in sums.items() if total > 0}
