"""MoPPS: Model Predictive Prompt Selection (Qu et al., 2025)."""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from agentdescent_sampling.plugin import (
    SOLVED,
    Pending,
    check_pick,
    check_score,
    check_state,
    is_tally,
    number_in,
    solved_if_none,
    solved_threshold,
)

from ._common import (
    Shard,
    ShardCache,
    check_picks_and_entries,
    check_seed,
    count_outcome,
    load_counts,
    load_entries,
    restore_rng,
    rng_state,
    saved_counts,
    whole,
)

__all__ = ["ModelPredictivePromptSelection"]

_STATE_VERSION = 2  # 2: each task's passes and trials, for stats()
#: The paper's Beta(1, 1) prior on every task's pass rate.
_PRIOR = 1.0
#: Rollouts per prompt and step in the paper's runs (``rollout.n = 8``); the decay
#: applies once per step there, so per rollout here it is ``decay ** (1 / 8)``.
_ROLLOUTS_PER_STEP = 8


@attrs.define(eq=False)
class ModelPredictivePromptSelection:
    """Model Predictive Prompt Selection (Qu et al., 2025, arXiv:2507.04632).

    Each task's pass rate has a Beta posterior, from a Beta(1, 1) prior, updated
    with temporal discounting: ``alpha <- λ alpha + (1 - λ) alpha0 + passes`` and
    likewise ``beta`` with failures. A pick draws ``candidates`` tasks of the shard
    at random, takes one Thompson sample of each posterior, and returns the task
    whose sample lies closest to ``target``. Defaults follow the paper's code
    (thu-rllab/MoPPS, top-k strategy): target 0.5, λ = 0.5 and 8 candidates per
    selected prompt (the countdown and geometry scripts; the MATH script draws 16
    and leaves λ at the config default 1.0, so "the paper's" λ is not one number).

    Departs from the paper: it selects a batch of B prompts from ``8 B`` candidates
    and rolls each out 8 times per step; here a pick is one rollout, so B = 1, the
    candidates are drawn uniformly from the shard at each pick (not from a shuffled
    data loader), and the decay applies per rollout as ``λ ** (1 / 8)``, which
    forgets earlier evidence at the paper's rate per 8 rollouts.

    A candidate in flight is passed over while another candidate is free, as a batch
    never selects one prompt twice. A pick costs O(candidates) once its shard is known:
    as in every rule here, a shard's task ids are checked when it is first seen, and a
    pick recognises it by comparing it, in C, with the copy kept of it. One lock guards
    ``pick`` and ``record``; ``state_dict()`` saves the posteriors, the generator, and
    each task's passes and trials, undiscounted, which ``stats()`` returns.

    Args:
        target: gamma*, the pass rate a selected task should have.
        decay: λ, how much of a posterior survives each step (1 keeps all).
        candidates: how many random tasks a pick chooses among.
        pass_threshold: the score at which a rollout counts as a pass. Keep it
            equal to ``evolve(solved_threshold=...)``; ``None`` is the engine's default.
        seed: seeds the generator; the same seed and calls give the same picks.

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: a parameter is out of range.
    """

    name: ClassVar[str] = "mopps"

    target: float = attrs.field(
        default=0.5, validator=number_in(0.0, 1.0, hint="; the paper's code uses 0.5")
    )
    decay: float = attrs.field(
        default=0.5, validator=number_in(0.0, 1.0, hint="; the paper's scripts use 0.5")
    )
    candidates: int = attrs.field(default=8, validator=whole(1, 8))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    seed: int = attrs.field(default=0, validator=check_seed)
    _posterior: dict[str, tuple[float, float]] = attrs.field(init=False, factory=dict, repr=False)
    _stats: dict[str, tuple[int, int]] = attrs.field(init=False, factory=dict, repr=False)
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
        """Return the candidate whose Thompson sample is closest to ``target``."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            shard = self._shards.get(keys)  # before any change: it refuses a bad id
            self._picks += 1
            now = self._picks
            pool = [
                shard.keys[i]
                for i in self._rng.sample(range(len(keys)), min(self.candidates, len(keys)))
            ]
            free = [key for key in pool if not self._in_flight.holds(key, now)] or pool
            picked = min(free, key=self._distance)
            self._in_flight.add(picked, now)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Discount ``task_id``'s posterior and add this rollout's pass or failure."""
        value = check_score(task_id, score)
        passed = float(value >= self.pass_threshold)
        keep = self.decay ** (1.0 / _ROLLOUTS_PER_STEP)
        with self._lock:
            alpha, beta = self._posterior.get(task_id, (_PRIOR, _PRIOR))
            self._posterior[task_id] = (
                keep * alpha + (1.0 - keep) * _PRIOR + passed,
                keep * beta + (1.0 - keep) * _PRIOR + 1.0 - passed,
            )
            count_outcome(self._stats, task_id, bool(passed))
            self._in_flight.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``, every record counted in full."""
        with self._lock:
            return dict(self._stats)

    def posterior(self, task_id: str) -> tuple[float, float]:
        """The ``(alpha, beta)`` of ``task_id``'s posterior (the prior if it has none)."""
        with self._lock:
            return self._posterior.get(task_id, (_PRIOR, _PRIOR))

    def _distance(self, key: str) -> float:
        alpha, beta = self._posterior.get(key, (_PRIOR, _PRIOR))
        return (self._rng.betavariate(alpha, beta) - self.target) ** 2

    def state_dict(self) -> dict[str, Any]:
        """The posteriors and the generator, JSON-ready. Picks still in flight are not
        saved: their rollouts do not survive a restart."""
        with self._lock:
            return {
                "sampler": self.name,
                "version": _STATE_VERSION,
                "params": self._params(),
                "rng": rng_state(self._rng),
                "picks": self._picks,
                "posterior": {key: list(ab) for key, ab in self._posterior.items()},
                "stats": saved_counts(self._stats),
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with other parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        rng = restore_rng(self.name, state.get("rng"))
        picks, entries = check_picks_and_entries(self.name, state, "posterior")
        stats = load_counts(self.name, state)
        posterior = load_entries(
            self.name,
            entries,
            lambda entry: (
                isinstance(entry, list)
                and len(entry) == 2
                and all(is_tally(x) and x > 0 for x in entry)
            ),
            lambda entry: (float(entry[0]), float(entry[1])),
            "[alpha, beta], both > 0 and at most 2**53 (each counts discounted rollouts; a "
            "larger one stalls the beta draw)",
            "posterior",
        )
        with self._lock:
            self._posterior = posterior
            self._stats = stats
            self._picks = picks
            self._rng = rng
            self._in_flight = Pending()

    def _params(self) -> dict[str, float]:
        return {
            "target": self.target,
            "decay": self.decay,
            "candidates": self.candidates,
            "pass_threshold": self.pass_threshold,
        }
