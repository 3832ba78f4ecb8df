"""DifficultyWeighted: UCB over the learning signal 4p(1-p), as the engine defines it."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from ..errors import StateError
from ..pending import Pending
from ..protocol import SOLVED, check_pick, check_score, check_state, is_count, short_repr
from ..validators import boolean, number_in, solved_if_none, solved_threshold
from ._copies import CopiedByState
from ._graded import GradedScoreWatch
from ._index import ShardIndex

__all__ = ["DifficultyWeighted"]

_STATE_VERSION = 1
#: The learning signal is at most 1, so beyond this ``c`` only explores; a larger one
#: would overflow the score to infinity and every tried task would tie.
_MAX_C = 1e6
#: What the engine adds to every tried task's signal (``difficulty_weight(p, floor=1e-3)``).
#: It moves every score alike, but rounds differently: without it, a pick can differ from
#: the engine's where two scores meet within a rounding error.
_FLOOR = 1e-3


@attrs.define(eq=False)
class DifficultyWeighted(CopiedByState):
    """Prefer tasks that still carry learning signal, with a small UCB exploration bonus.

    Each task keeps ``(passes, trials)``; a rollout passes when its score reaches
    ``pass_threshold``. ``pick`` returns the key with the highest

        4p(1-p) + 0.001 + c * sqrt(ln(t + 1) / trials)

    where ``p = passes / trials``, ``t`` counts the picks made so far, this one
    included, and 0.001 is the engine's floor under the signal, computed in the engine's
    order so that every pick is the engine's to the last bit. The signal peaks at
    ``p = 0.5`` and vanishes for tasks that always or never pass. An untried task wins
    outright, so every task in a shard is tried once before any is repeated; ties go to
    the earliest key.

    Picks cost O(distinct statistics) rather than O(keys): tasks with equal
    ``(passes, trials)`` score equally and are grouped (see ``_index.py``). The
    result is exactly the straightforward loop's.

    One lock guards ``pick`` and ``record``: workers share one instance when
    ``evolve(max_concurrency > 1)``. ``state_dict()`` and ``load_state_dict()``
    save and restore the statistics (see :func:`agentdescent_sampling.save_state`).

    Args:
        c: exploration constant. Lower focuses harder, higher explores more; the
            default 0.2 is the choice agentdescent's task-sampling guide measured.
        pass_threshold: the score at which a rollout counts as a pass. Keep it
            equal to ``evolve(solved_threshold=...)``; lower both for graded scorers.
            ``None`` is the engine's default, as in agentdescent.
            If most scores are graded and none reaches it, a ``GradedScoreWarning``
            says so once.
        prior: the pass rate assumed for an untried task. The engine's rule lets an
            untried task win outright, so the prior never changes a pick; it is
            kept for parity with the engine's constructor.
        spread_in_flight: when true, a task picked but not yet recorded is not
            picked again while another task in the shard is free, so concurrent
            workers spread out instead of all taking the same argmax. Off by
            default, which keeps the engine's rule exactly.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``c`` outside [0, 1e6], ``pass_threshold`` outside (0, 1] or
            ``prior`` outside [0, 1]; NaN and infinities are refused.
    """

    name: ClassVar[str] = "difficulty-weighted"

    c: float = attrs.field(default=0.2, validator=number_in(0.0, _MAX_C, hint="; try 0.2"))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    prior: float = attrs.field(default=0.5, validator=number_in(0.0, 1.0, hint="; try 0.5"))
    spread_in_flight: bool = attrs.field(
        default=False,
        validator=boolean("; spread_in_flight=true gives concurrent workers different tasks"),
    )
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _pending: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _index: ShardIndex[tuple[int, int]] = attrs.field(init=False, repr=False)
    _watch: GradedScoreWatch = attrs.field(init=False, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._index = ShardIndex(self._signature)
        self._watch = GradedScoreWatch(self.name, self.pass_threshold)

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return the key with the highest UCB score; the first untried key wins outright."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            # Nothing changes until the pick is known: a pick that raises leaves no trace.
            shard = self._index.shard(keys)
            now = self._picks + 1
            log_t = math.log(now + 1.0)

            def score(signature: tuple[int, int]) -> float:
                passes, trials = signature
                if trials == 0:
                    return math.inf
                p = passes / trials
                return 4.0 * p * (1.0 - p) + _FLOOR + self.c * math.sqrt(log_t / trials)

            if not self.spread_in_flight:
                picked = self._index.pick(shard, score)
            else:
                picked = self._index.pick(shard, score, exclude=self._pending.tasks(now))
                self._pending.add(picked, now)
            self._picks = now
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Count one trial of ``task_id``, and a pass if ``score >= pass_threshold``."""
        value = check_score(task_id, score)
        with self._lock:
            # First: under -W error the warning raises, and then nothing is counted.
            self._watch.observe(value)
            passes, trials = self._stats.get(task_id, (0, 0))
            self._stats[task_id] = (passes + (value >= self.pass_threshold), trials + 1)
            self._index.moved(task_id)
            self._pending.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``."""
        with self._lock:
            return dict(self._stats)

    def state_dict(self) -> dict[str, Any]:
        """The statistics and pick count, JSON-ready. Picks still in flight are not saved:
        their rollouts do not survive a restart."""
        with self._lock:
            return {
                "sampler": self.name,
                "version": _STATE_VERSION,
                "params": self._params(),
                "picks": self._picks,
                "stats": {task: [passes, trials] for task, (passes, trials) in self._stats.items()},
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the statistics with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with a different ``c`` or ``pass_threshold``.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        picks: Any = state.get("picks")
        stats: Any = state.get("stats")
        if not is_count(picks) or not isinstance(stats, Mapping):
            raise StateError(f"{self.name}: state needs an int 'picks' and a 'stats' mapping")
        restored = {}
        for task, entry in stats.items():
            if not (
                isinstance(task, str)
                and isinstance(entry, (list, tuple))
                and len(entry) == 2
                and all(map(is_count, entry))
                and entry[0] <= entry[1]
            ):
                raise StateError(
                    f"{self.name}: bad statistics for task {short_repr(task)}: "
                    f"{short_repr(entry)}; expected [passes, trials] with 0 <= passes <= trials"
                )
            restored[task] = (int(entry[0]), int(entry[1]))
        with self._lock:
            self._stats = restored
            self._picks = picks
            self._pending = Pending()
            self._index = ShardIndex(self._signature)

    def _params(self) -> dict[str, float]:
        """The parameters the saved statistics depend on."""
        return {"c": self.c, "pass_threshold": self.pass_threshold}

    def _signature(self, task_id: str) -> tuple[int, int]:
        return self._stats.get(task_id, (0, 0))
