"""InformativeBand: roll out the task most likely to be informative now, under noise and drift."""

from __future__ import annotations

import heapq
import math
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

import attrs

from ..errors import StateError
from ..pending import Pending
from ..protocol import (
    SOLVED,
    check_pick,
    check_score,
    check_state,
    is_count,
    is_real,
    short_repr,
)
from ..validators import boolean, number_in, solved_if_none, solved_threshold, whole_number_in
from ._copies import CopiedByState
from ._graded import GradedScoreWatch
from ._index import ShardIndex

__all__ = ["InformativeBand"]

_STATE_VERSION = 1

#: A task is informative while its true pass rate lies in this band (the bench's definition).
_BAND = (0.1, 0.9)
#: Failures seen before a task went this many sweeps (picks per task the sampler knows)
#: without a rollout no longer count against it in the short memory: the artifact may
#: have improved since.
_STALE_SWEEPS = 0.5
#: The log-likelihood lead of the best hypothesis (memory and flip rate) over any other
#: is held within this bound, so that a run whose behaviour changes (stationary, then
#: drifting, or clean, then flaky) is followed within a few dozen rollouts, not never.
_MAX_LEAD = 8.0
#: Passes beyond this no longer break ties; it keeps the tie-break below 1e-9.
_MAX_TIE_PASSES = 999
#: Graded scores are rounded to this step, so that tasks with similar histories share a
#: signature and picks stay cheap on large shards.
_GRADE_STEP = 0.25
#: The flip rates the likelihood weighs, and learns between, when ``noise`` is None.
_NOISE_GRID = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
#: A short memory this long is the long memory in practice; far longer ones overflow
#: the window's ``deque``.
_MAX_WINDOW = 1_000_000

# (passes, fails) in the short memory, then in the long memory. Graded counts are
# multiples of _GRADE_STEP, so they are exact floats.
_Signature = tuple[float, float, float, float]


@attrs.define(eq=False)
class InformativeBand(CopiedByState):
    """Roll out the task most likely to be informative now, robust to noisy and drifting rewards.

    A task is informative while its pass rate ``p`` lies in [0.1, 0.9]. Each task's
    outcomes feed a posterior on ``p`` under a prior that a task is equally likely
    hopeless (``p = 0``), solved (``p = 1``) or in between (``p`` uniform), and a
    likelihood in which each reward is flipped with some probability (the flip rate).
    ``pick`` returns the key with the highest posterior probability that ``p`` is in
    the band. An untried task is scored like any other, by its prior probability of
    being in the band (0.8 / 3): a task whose outcomes have mixed is kept ahead of
    untried ones, and a task that looks hopeless or solved falls behind them. Equal
    probabilities go to the task with more passes (a failure after a pass is the
    surest sign a task is still in the band), then to the earliest key.

    The posterior is computed over two memories and, unless ``noise`` is given, over
    the flip rates 0, 0.05, ..., 0.3; the pick averages these hypotheses:

    - the **long** memory counts every outcome of the task: right when pass rates
      hold still, since evidence keeps accumulating;
    - the **short** memory counts the last ``window`` outcomes, and drops failures
      seen before the task went half a sweep without a rollout: right when the
      artifact improves, since old failures go stale and a task that now passes
      is let go quickly.

    Each hypothesis (a memory and a flip rate) predicts every outcome before it is
    recorded, and its weight is its posterior probability given how well it has
    predicted this run (a Bayesian model average). Clean stationary runs settle on
    the long memory and no flips, so a single mixed pair of outcomes is trusted;
    flaky runs settle on a flip rate near the true one, so one stray pass is not;
    drifting runs settle on the short memory. There is no switch to set.

    Why it beats difficulty-weighted where that is weak: with 15% flipped rewards a
    never-passing task shows ``p ≈ 0.15`` and keeps a signal weight of 0.5 there, so
    the doc's rule can lock onto it; here the flip rate is part of the likelihood and
    such a task's band probability falls as its rollouts accumulate. And counts that
    never forget keep chasing solved tasks when the artifact improves; here the
    short memory forgets them.

    Measured with ``agentdescent-sampling bench share --workload stationary --workload noisy
    --workload drift --sampler informative-band`` (budget 200, one worker, seeds 0-99):
    the share of rollouts on informative tasks, mean and (p10), and the ratio of the
    mean to round-robin's in the same run:

    ===================  =============  ===========================  ===================
    workload             round-robin    difficulty-weighted          informative-band
    ===================  =============  ===========================  ===================
    stationary           15.0% (15.0%)  77.1% (71.5%) 5.14x          85.8% (68.7%) 5.72x
    noisy (15% flipped)  15.0% (15.0%)  25.8% (3.0%) 1.72x           64.1% (16.2%) 4.28x
    drift                20.6% (19.0%)  19.4% (10.0%) 0.94x          43.8% (33.0%) 2.12x
    ===================  =============  ===========================  ===================

    On held-out seeds 1000-1099 (``--first-seed 1000``) the ratios are 5.85x, 4.39x
    and 2.14x. Most of the gain on clean rewards comes from not sweeping the whole
    shard before repeating a task. Under noise it still locks onto a wrong task on
    some seeds (p10 16.2%), when a never-passing task's early flips look like a mixed
    task; the doc's rule does so on most seeds (median 3.5%).

    With several picks in flight (``evolve(max_concurrency > 1)``), a task picked but
    not yet recorded is not picked again while another task in the shard is free; a
    single worker is unaffected. Spreading costs share: with four picks in flight on
    one shared ``stationary`` shard it scores 58.2% with no duplicate picks, since
    each round needs four distinct tasks, found before their outcomes are back. On
    split shards, the engine's default, four in flight cost nothing (57.3% both ways
    over 500 seeds); ``benchmarks/in_flight.py`` measures both.

    Picks cost O(distinct signatures) rather than O(keys) (see ``_index.py``). One
    lock guards ``pick`` and ``record``. ``state_dict()`` and ``load_state_dict()``
    save and restore everything a pick depends on, the hypotheses' weights included.

    Args:
        noise: the probability that a reward is flipped, as the likelihood assumes it,
            or None (the default) to learn it from the run among 0, 0.05, ..., 0.3.
            A fixed rate that is higher is more robust to flaky rewards and slower to
            trust a task.
        window: how many recent outcomes the short memory holds.
        pass_threshold: the score at which a rollout counts as a pass. Keep it equal
            to ``evolve(solved_threshold=...)``. If most scores are graded and none
            reaches it, a ``GradedScoreWarning`` says so once. In graded mode it only
            decides what ``stats()`` counts as a pass.
        graded: use each score itself as a fractional outcome (``score`` passes and
            ``1 - score`` fails, rounded to quarters) instead of a pass/fail
            threshold, for ROUGE-like or judge scores. A task is then informative
            while its mean score is in [0.1, 0.9].

    Raises:
        TypeError: a parameter has the wrong type.
        ValueError: ``noise`` outside [0, 0.4], ``window`` outside [1, 1,000,000]
            or ``pass_threshold`` outside (0, 1]; NaN and infinities are refused.
    """

    name: ClassVar[str] = "informative-band"

    noise: float | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(
            number_in(0.0, 0.4, hint="; 0.1 assumes one reward in ten flipped, None learns it")
        ),
    )
    window: int = attrs.field(default=5, validator=whole_number_in(1, _MAX_WINDOW, hint="; try 5"))
    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    graded: bool = attrs.field(
        default=False, validator=boolean("; graded=true uses each score as a fractional outcome")
    )
    _tasks: dict[str, _Task] = attrs.field(init=False, factory=dict, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _log_scores: list[float] = attrs.field(init=False, repr=False)
    _stale_due: list[tuple[int, int, str]] = attrs.field(init=False, factory=list, repr=False)
    _pending: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _index: ShardIndex[_Signature] = attrs.field(init=False, repr=False)
    _watch: GradedScoreWatch = attrs.field(init=False, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def __attrs_post_init__(self) -> None:
        self._index = ShardIndex(self._signature)
        self._watch = GradedScoreWatch(self.name, self.pass_threshold)
        self._log_scores = [0.0] * (2 * len(self._noises()))

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return the key most likely to be informative now, skipping tasks in flight."""
        keys, round_index = check_pick(keys, round_index)
        with self._lock:
            # First: a shard that cannot be picked from leaves no trace.
            shard = self._index.shard(keys)
            self._picks += 1
            self._refile_stale()
            weights, noises = self._weights(), self._noises()

            def score(signature: _Signature) -> float:
                return _score(signature, weights, noises)

            picked = self._index.pick(shard, score, exclude=self._pending.tasks(self._picks))
            self._pending.add(picked, self._picks)
            return picked

    def record(self, task_id: str, score: float) -> None:
        """Learn from one rollout of ``task_id``: update both memories and their weights."""
        value = check_score(task_id, score)
        outcome = _grade(value) if self.graded else float(value >= self.pass_threshold)
        with self._lock:
            if not self.graded:
                # First: under -W error the warning raises, and then nothing is counted.
                self._watch.observe(value)
            task = self._tasks.get(task_id)
            if task is None:
                task = self._tasks[task_id] = _Task(deque(maxlen=self.window))
            else:
                self._score_predictions(task, outcome)
                if self._is_stale(task):
                    task.segment += 1
                    task.stale = False
            task.window.append((outcome, task.segment))
            task.score_sum += outcome
            task.trials += 1
            task.passes += value >= self.pass_threshold
            task.last = self._picks
            heapq.heappush(self._stale_due, (self._stale_at(task), task.trials, task_id))
            self._index.moved(task_id)
            self._pending.remove(task_id)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``; a pass reaches ``pass_threshold``."""
        with self._lock:
            return {task_id: (task.passes, task.trials) for task_id, task in self._tasks.items()}

    def state_dict(self) -> dict[str, Any]:
        """Everything a pick depends on, JSON-ready. Picks still in flight are not saved:
        their rollouts do not survive a restart."""
        with self._lock:
            return {
                "sampler": self.name,
                "version": _STATE_VERSION,
                "params": self._params(),
                "picks": self._picks,
                "log_scores": list(self._log_scores),
                "tasks": {
                    task_id: {
                        "passes": task.passes,
                        "trials": task.trials,
                        "score_sum": task.score_sum,
                        "segment": task.segment,
                        "last": task.last,
                        "stale": task.stale,
                        "window": [[outcome, segment] for outcome, segment in task.window],
                    }
                    for task_id, task in self._tasks.items()
                },
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was
                saved with different parameters.
        """
        state = check_state(state, self.name, _STATE_VERSION, self._params())
        picks, scores, tasks = state.get("picks"), state.get("log_scores"), state.get("tasks")
        hypotheses = 2 * len(self._noises())
        if not (
            is_count(picks)
            and isinstance(scores, list)
            and len(scores) == hypotheses
            and all(is_real(score) for score in scores)
            and isinstance(tasks, Mapping)
        ):
            raise StateError(
                f"{self.name}: state needs an int 'picks', a list 'log_scores' of "
                f"{hypotheses} numbers and a 'tasks' mapping"
            )
        restored = {task_id: self._restore(task_id, entry) for task_id, entry in tasks.items()}
        with self._lock:
            self._tasks = restored
            self._picks = int(picks)
            self._log_scores = _normalized([float(score) for score in scores])
            self._stale_due = [
                (self._stale_at(task), task.trials, task_id) for task_id, task in restored.items()
            ]
            heapq.heapify(self._stale_due)
            self._pending = Pending()
            self._index = ShardIndex(self._signature)

    # -- internals ----------------------------------------------------------------

    def _params(self) -> dict[str, Any]:
        return {
            "noise": self.noise,
            "window": self.window,
            "pass_threshold": self.pass_threshold,
            "graded": self.graded,
        }

    def _restore(self, task_id: object, entry: object) -> _Task:
        def problem() -> str:  # only on the error path: a state of many tasks is long to show
            return (
                f"{self.name}: bad statistics for task {short_repr(task_id)}: {short_repr(entry)}"
            )

        if not isinstance(task_id, str) or not isinstance(entry, Mapping):
            raise StateError(f"{problem()}; expected a task id mapped to an object")
        passes, trials, score_sum = entry.get("passes"), entry.get("trials"), entry.get("score_sum")
        segment, last, window = entry.get("segment"), entry.get("last"), entry.get("window")
        stale = entry.get("stale")
        if not (
            is_count(passes)
            and is_count(trials)
            and passes <= trials
            and is_real(score_sum)
            and 0 <= score_sum <= trials
            and is_count(segment)
            and is_count(last)
            and isinstance(stale, bool)
            and isinstance(window, list)
            and len(window) <= min(self.window, trials)
            and all(
                isinstance(item, list)
                and len(item) == 2
                and is_real(item[0])
                and 0 <= item[0] <= 1
                and is_count(item[1])
                and item[1] <= segment
                for item in window
            )
        ):
            raise StateError(
                f"{problem()}; expected passes <= trials, 0 <= score_sum <= trials, and a "
                f"window of at most {self.window} [outcome, segment] pairs"
            )
        restored = _Task(
            deque(((float(outcome), int(part)) for outcome, part in window), maxlen=self.window)
        )
        restored.passes, restored.trials = int(passes), int(trials)
        restored.score_sum, restored.segment, restored.last = float(score_sum), segment, last
        restored.stale = stale
        return restored

    def _tau(self) -> float:
        """The gap, in picks, after which a task's failures go stale: half a sweep."""
        return _STALE_SWEEPS * len(self._tasks)

    def _is_stale(self, task: _Task) -> bool:
        return task.stale or self._picks - task.last >= self._tau()

    def _stale_at(self, task: _Task) -> int:
        # A lower bound: the sweep may grow before then, and _refile_stale checks again.
        return task.last + math.ceil(self._tau())

    def _refile_stale(self) -> None:
        """Re-file the tasks that went stale since the last pick, so the index sees it."""
        due = self._stale_due
        while due and due[0][0] <= self._picks:
            _, trials, task_id = heapq.heappop(due)
            task = self._tasks[task_id]
            if task.trials != trials:
                continue  # recorded again since; a newer entry stands for it
            if self._is_stale(task):
                # Sticky until the next rollout: the sweep can grow faster than picks
                # under concurrency, and a stale task must not turn fresh unseen.
                task.stale = True
                self._index.moved(task_id)
            else:
                heapq.heappush(due, (self._stale_at(task), trials, task_id))

    def _noises(self) -> tuple[float, ...]:
        return _NOISE_GRID if self.noise is None else (self.noise,)

    def _weights(self) -> tuple[float, ...]:
        top = max(self._log_scores)
        raw = [math.exp(score - top) for score in self._log_scores]
        total = sum(raw)
        return tuple(value / total for value in raw)

    def _score_predictions(self, task: _Task, outcome: float) -> None:
        """Add each hypothesis's log predictive probability of ``outcome``."""
        counts = (self._short_counts(task), (task.score_sum, task.trials - task.score_sum))
        scores = self._log_scores
        i = 0
        for passes, fails in counts:
            for noise in self._noises():
                scores[i] += _log_likelihood(_pass_probability(passes, fails, noise), outcome)
                i += 1
        self._log_scores = _normalized(scores)

    def _short_counts(self, task: _Task) -> tuple[float, float]:
        current = -1 if self._is_stale(task) else task.segment
        passes = sum(outcome for outcome, _ in task.window)
        fails = sum(1.0 - outcome for outcome, part in task.window if part == current)
        return passes, fails

    def _signature(self, task_id: str) -> _Signature:
        task = self._tasks.get(task_id)
        if task is None:
            return (0.0, 0.0, 0.0, 0.0)
        return (*self._short_counts(task), task.score_sum, task.trials - task.score_sum)


class _Task:
    """One task's memories. ``segment`` counts the gaps of half a sweep between its rollouts."""

    # A plain class: an attrs class would cost every create() by name its definition.
    __slots__ = ("last", "passes", "score_sum", "segment", "stale", "trials", "window")

    def __init__(self, window: deque[tuple[float, int]]) -> None:
        self.window = window
        self.passes = 0
        self.trials = 0
        self.score_sum = 0.0
        self.segment = 0
        self.last = 0
        self.stale = False


def _score(signature: _Signature, weights: tuple[float, ...], noises: tuple[float, ...]) -> float:
    """The model-averaged probability that the task is informative.

    ``weights`` holds one weight per hypothesis: the short memory under each of
    ``noises``, then the long memory under each. An untried task scores its prior
    probability of being in the band (0.8 / 3), like any other.
    """
    short_passes, short_fails, long_passes, long_fails = signature
    k = len(noises)
    total = 0.0
    for i, noise in enumerate(noises):
        total += weights[i] * _band_probability(short_passes, short_fails, noise)
        total += weights[k + i] * _band_probability(long_passes, long_fails, noise)
    # Probabilities equal in exact arithmetic (one pass or one fail tells nothing, by
    # the prior's symmetry) must tie on every platform, so they are rounded to 1e-9.
    # Ties then go to the task with more passes (counted below 1e-9, so never against
    # the probability): a failure after a pass is the surest sign a task is still in
    # the band. Measured on held-out seeds, this finds band tasks sooner under noise
    # and drift than ties by key order alone.
    probability = round(total, 9)
    return probability + min(long_passes, _MAX_TIE_PASSES) * 1e-12


def _normalized(log_scores: list[float]) -> list[float]:
    """Shift the best hypothesis to 0 and hold the others within ``_MAX_LEAD`` of it."""
    top = max(log_scores)
    return [max(-_MAX_LEAD, score - top) for score in log_scores]


def _grade(score: float) -> float:
    return round(score / _GRADE_STEP) * _GRADE_STEP


def _log_likelihood(pass_probability: float, outcome: float) -> float:
    p = min(max(pass_probability, 1e-12), 1.0 - 1e-12)
    return outcome * math.log(p) + (1.0 - outcome) * math.log1p(-p)


# -- the posterior ------------------------------------------------------------------
# A task is hopeless (p = 0), solved (p = 1) or in between (p uniform on [0, 1]), each
# with prior probability 1/3. A rollout passes with probability q = noise + (1 - 2 noise) p.
# Counts may be fractional (graded mode); the formulas hold for any real counts >= 0.

_LOG_THIRD = math.log(1.0 / 3.0)


@lru_cache(maxsize=1 << 16)
def _log_evidence(passes: float, fails: float, noise: float) -> tuple[float, float, float]:
    """Log prior-times-likelihood of the outcomes for hopeless, solved and in-between tasks.

    The in-between term is split further by the caller; this returns it whole.
    """
    return (
        _LOG_THIRD + _log_spike(noise, passes, fails),
        _LOG_THIRD + _log_spike(1.0 - noise, passes, fails),
        _LOG_THIRD + _log_slab(passes, fails, noise, 0.0, 1.0),
    )


@lru_cache(maxsize=1 << 16)
def _band_probability(passes: float, fails: float, noise: float) -> float:
    """Posterior probability that the task's pass rate lies in the informative band."""
    terms = _log_evidence(passes, fails, noise)
    in_band = _LOG_THIRD + _log_slab(passes, fails, noise, *_BAND)
    return math.exp(in_band - _log_sum(terms))


@lru_cache(maxsize=1 << 16)
def _pass_probability(passes: float, fails: float, noise: float) -> float:
    """Posterior predictive probability that the next rollout passes."""
    return math.exp(
        _log_sum(_log_evidence(passes + 1.0, fails, noise))
        - _log_sum(_log_evidence(passes, fails, noise))
    )


def _log_spike(q: float, passes: float, fails: float) -> float:
    """Log-likelihood of the outcomes when every rollout passes with probability ``q``."""
    log_pass = math.log(q) if q > 0.0 else (-math.inf if passes else 0.0)
    log_fail = math.log1p(-q) if q < 1.0 else (-math.inf if fails else 0.0)
    return (passes * log_pass if passes else 0.0) + (fails * log_fail if fails else 0.0)


def _log_slab(passes: float, fails: float, noise: float, low: float, high: float) -> float:
    """Log of the integral over p in [low, high] of q^passes (1 - q)^fails dp."""
    a, b = passes + 1.0, fails + 1.0
    scale = 1.0 - 2.0 * noise
    mass = _beta_cdf(a, b, noise + scale * high) - _beta_cdf(a, b, noise + scale * low)
    if mass <= 0.0:
        return -math.inf
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b) + math.log(mass / scale)


def _log_sum(terms: tuple[float, ...]) -> float:
    top = max(terms)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(term - top) for term in terms))


def _beta_cdf(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by Lentz's continued fraction."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # The fraction converges fast on the side of the distribution's mean; use symmetry.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 1000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return result
