"""FixableFirst: spend the next rollout where a failure is most likely to teach a fix soon."""

from __future__ import annotations

import itertools
import math
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from ..errors import StateError
from ..pending import Pending
from ..protocol import (
    SOLVED,
    _real_float,
    check_pick,
    check_score,
    check_state,
    is_count,
    is_real,
    is_tally,
    short_repr,
)
from ..validators import number_in, solved_if_none, solved_threshold
from ._copies import CopiedByState
from ._graded import GradedScoreWatch
from ._groups import Filing, TaskGroups

__all__ = ["FixableFirst"]

_STATE_VERSION = 1
#: Prior chance that a fixable task's next failure is the one that yields its fix, for the
#: first ``_FLAT`` failures; ``_STEP`` times that at the next, then tenfold less with each
#: failure after, so a task is not retried far past the failure counts at which fixes have
#: been seen to arrive. Once a fix has been seen at a later failure than ``_FLAT + 1``, the
#: whole curve moves out until it is flat through that failure, at most ``_HORIZON`` failures
#: out (see ``_Values``).
_PRIOR_HAZARD = 0.3
_FLAT = 2
_STEP = 0.5
_TAIL = 0.1
#: How many pseudo-observations the prior is worth against the run's own evidence.
_PRIOR_WEIGHT = 1.0
#: The share of the best value a task must be worth to be picked; among those, the least
#: recently picked goes first, as round-robin would. The values come from a few dozen outcomes
#: and a prior: they rank a task worth several times another, not one worth a little more.
#: Where a fix comes at a random failure, not at a set count, the exact best lost to
#: round-robin (BENCHMARKS.md, "Picking within a band of the best").
_BAND = 0.5
#: A free task not picked in this many times as many picks as there are tasks goes first,
#: least recently picked first: no task waits much longer than two of round-robin's cycles, so a
#: fix that comes late, or a break, is still found.
_OVERDUE_CYCLES = 2
#: Until a card of the engine's evidence has come, a task that has failed is overdue after one
#: cycle instead, as round-robin retries it, even while it passes: outcomes do not say when a fix
#: its failures made was lost (the gate refused it, or a noisy agent failed its self-verify
#: re-run), and its next fix then comes only after as many failures again; a pass after its
#: failures may be luck (a flaky task, or a slipping agent) rather than that fix. With an agent
#: that slips 1 time in 10 such tasks were dropped, and the final reward ended lower than
#: round-robin's (BENCHMARKS.md, "Failing tasks retried every cycle, from outcomes alone", and
#: "Tasks that have failed retried every cycle"). A card says whether a failure's proposal
#: passed its re-run and whether the gate took it; a verified fix the gate refused counts its
#: task's failures afresh.
_FAILED_OVERDUE_CYCLES = 1
#: A task expected to pass that was re-tested since the artifact last changed is not re-tested
#: again within this many cycles: if the band's pick is one, the pick is round-robin's. Where
#: nothing left is worth much, the band held only passing tasks and re-tested them more often
#: than round-robin, starving failing tasks whose fix takes many failures; with a reflector that
#: finds a fix by chance the final reward ended lower than round-robin's (BENCHMARKS.md,
#: "Re-tests no more often than round-robin").
_RETEST_CYCLES = 1
#: How many rollouts ahead a task's value looks (a fix may take several failures).
_HORIZON = 6
#: A task's failures in a state: a pick's cost grows with the largest (a table of that
#: many rates), and a task failing this often has long stopped being a probable fix.
_MAX_FAILS = 100_000
#: The assumed chance that a lucky task passes, before its own record says otherwise.
_LUCK = 0.5
#: Prior pseudo-counts, as (events, trials), of the run-wide rates the sampler learns: a first
#: rollout fails; a flip to passing was luck; a passing task fails on a re-test; and a passing
#: task breaks, per artifact change since its last pass. A flip is taken for luck 1 time in 32
#: until the run's own flips say otherwise: at 1 in 8, a task fixed after five failures was
#: worth re-testing twice as often as round-robin re-tests it, and from outcomes alone that lost
#: to round-robin where fixes take many failures (BENCHMARKS.md, "Safe against round-robin").
_FIRST_FAIL_PRIOR = (1.0, 2.0)
_FLIP_LUCK_PRIOR = (0.5, 16.0)
_PASS_BREAKS_PRIOR = (0.5, 4.0)
_CHANGE_BREAKS_PRIOR = (0.5, 20.0)
#: The agent calls of a failed rollout against a pass's one, by default: the rollout, the
#: reflector's proposal and the engine's self-verify re-run (on by default in ``evolve()``).
#: Priced at 1, a failure looks as cheap as a pass, and the sampler retried failing tasks
#: before re-testing passing ones that a commit may have broken: with a reflector that finds
#: a fix by chance, it lost to round-robin where commits break passing tasks (BENCHMARKS.md,
#: "Safe against round-robin").
_FAILURE_COST = 3.0
_MAX_FAILURE_COST = 1000.0
#: The most a commit is credited with fixing one failure's task: even a committed proposal
#: that passed its self-verify re-run may not have fixed it, so the task is not dropped for good.
_MAX_CREDIT = 0.9
#: The most tasks held for a change of the artifact at once (see :meth:`FixableFirst.repeated`):
#: each pick skips the held tasks one by one, so a run whose artifact stops changing while a
#: model repeats itself on many tasks does not slow every pick; past it the oldest is let go.
_MAX_HELD = 1024
#: Failures x commits of a round up to which :func:`_credits` is exact.
_EXACT_CREDITS = 1 << 16


@attrs.define
class _Task:
    """What the sampler knows of one task: its outcomes, in the order that matters."""

    fails: int = 0
    passes: int = 0
    streak: int = 0  # passes since the last failure
    mixed: bool = False  # failed after a pass: flaky, or broken by a commit
    last: int = -1  # the pick number that last handed it out
    seen: int = 0  # the artifact changes counted when its last outcome came in
    # Chance its last failure made a commit (given end_round). Cleared by its next outcome, but
    # a mixed task keeps it through passes, which luck may explain, until it fails again.
    credit: float = 0.0
    # Its last failure is known to have made no commit (end_round said the round made none), so
    # a pass right after it is luck. Cleared as credit is.
    no_commit: bool = False
    # The score of its last failure, so a self-verify gain says whether the proposal passed.
    low: float = 0.0
    # Its last failure's proposal passed the self-verify re-run and was committed. If it fails
    # again, it can pass while unfixed (the re-run was luck) or broke: it is mixed. Cleared as
    # credit is.
    verified: bool = False
    # The failure count at which a proposal of its passed the self-verify re-run and the gate
    # refused it (0: never). Its fix has been seen, so its failures since count afresh.
    refused: int = 0
    # (wired) Its last card made on the artifact version its card before was made on
    # proposed the same change: the model repeats itself on it.
    repeats: bool = False

    @property
    def afresh(self) -> int:
        """Its failures since the gate refused its verified fix (all of them if it never did)."""
        return self.fails - self.refused

    def row(self) -> list[int]:
        return [self.fails, self.passes, self.streak, int(self.mixed), self.last, self.seen]

    def group_key(self) -> tuple[int, int, int, bool, float, bool, int, int]:
        """Every field :meth:`_Values.of` reads, ``seen`` last: tasks with equal keys are
        worth the same, and the value never rises with ``seen`` alone (see ``_groups.py``)."""
        return (
            self.fails,
            self.passes,
            self.streak,
            self.mixed,
            self.credit,
            self.no_commit,
            self.refused,
            self.seen,
        )

    def judged(self) -> bool:
        """Whether what a round says of its last failure still holds: it has failed and not
        passed since, or it is mixed, and its passes may be luck."""
        return bool(self.fails) and (not self.streak or self.mixed)


@attrs.define(eq=False)
class FixableFirst(CopiedByState):
    """Roll out a task whose next failure is among the likeliest to teach the reflector a fix.

    The artifact improves only when a rollout *fails* on a task the reflector can fix, often
    only after several failures of that task. A task that passes teaches nothing; one that
    never passes whatever the artifact says teaches nothing either, but looks the same as a
    fixable one until its fix arrives. So the sampler estimates, from the run's own outcomes,
    how many failures a fix takes (a hazard per failure count, learned from tasks seen to
    flip from failing to passing), and values each task by its expected fixes per agent call
    over the next few rollouts, a failure costing ``failure_cost`` calls and a pass one. Of
    the tasks worth at least half the best, it picks the one picked least recently, as
    round-robin would: the values rest on a few dozen outcomes and a prior, so they can tell
    a task worth several times another, not one worth a little more, and where a fix comes at
    a random failure rather than a set count the exact best lost to round-robin
    (BENCHMARKS.md, "Picking within a band of the best"). A task not picked for more than
    twice as many picks as there are tasks goes first whatever it is worth, so no task waits
    much longer than two of round-robin's cycles (one, as in round-robin, for a task that has
    failed, until a card of the engine's evidence comes: outcomes alone do not tell a fix the
    gate refused, or a noisy agent's failed re-run, from a task with no fix to find, nor a lucky
    pass from a fix; a card tells a refused fix from no fix); and a task expected to pass,
    re-tested since the artifact last changed, is not re-tested again within one cycle (the
    pick is then round-robin's), so where nothing left is worth much it spends no more on
    re-tests than round-robin does. Values:

    - a task that has only failed is worth its learned hazard, so it is retried while a fix
      is still likely and left to the overdue rule once its failures outrun every fix seen;
    - an untried task is worth that times the share of first rollouts that fail;
    - a task that flipped to passing is probably fixed, and is worth a retry only while luck
      could explain the pass (until a card comes, the overdue rule still retries it every
      cycle); a task that failed after passing (flaky, or broken by a commit) is
      known to be fixable and is kept in play;
    - a task that has only passed is retried as often as passing tasks have been seen to
      start failing, and more often the more the artifact has changed since its last pass
      (a task seen to flip from failing to passing marks a change, and, wired, a committed
      fix whose self-verify re-run passed, from its card): a committed fix can break
      another task.

    Opt-in, from the engine, all wired by :func:`agentdescent_sampling.wire`:
    :meth:`evidence` is told of each of the engine's evidence cards, its self-verify gain and
    whether it was committed. A committed proposal whose re-run passed has probably fixed its
    task, which is set aside instead of being re-tested to confirm it; any other failure
    fixed nothing, whatever the reflector wrote, so its task keeps its full value and a pass
    right after it is luck. A fix that passed its re-run and that the gate refused (for what
    was fused with it, say) shows that its task is fixable and how many failures its fix took:
    the task's failures since count afresh, as if it had none behind it, so it is retried as
    soon as a task that has just begun to fail would be. Until a card arrives (a reflector that
    proposes nothing), each round's commit count from :meth:`end_round` is shared among the
    round's failures by how likely each was to yield a fix. And :meth:`repeated` is told, of
    a card made on the artifact version its task's card before was made on, whether it
    proposes the same change again: a model that repeats itself learns nothing from that task
    until the artifact changes.

    Ties in recency go to the earliest key. A task with a rollout in flight is passed over
    while another is free, so concurrent workers spread. Once told that rounds end
    (:meth:`end_round`, which ``wire()`` calls on the synchronous path), so is a task that
    failed in the round not yet ended: the engine merges a round's proposals at its end, so a
    re-run before then tests the artifact that just failed it (workers sharing one shard would
    otherwise pick it again within the round). Rounds end no longer once no
    :meth:`end_round` has come for twice as many picks as a cycle or the longest round, if
    longer (an asynchronous run after a synchronous one, or a state resumed there): the hold
    lapses, rather than keep every task that failed since waiting for a round's end that
    never comes.
    As in the other built-ins, tasks worth the same are grouped (see ``_groups.py``), so a
    pick costs O(groups) rather than O(keys) and picks exactly what scoring every key
    would (``bench/reference.py``): see BENCHMARKS.md, "Pick cost against shard size".

    Measured in the real ``evolve()`` with ``agentdescent-sampling bench --engine``: see
    BENCHMARKS.md, "Inside the real engine: `bench --engine`", for what it buys and where it
    falls short.

    Args:
        pass_threshold: the score at which a rollout counts as a pass. Keep it equal to
            ``evolve(solved_threshold=...)``; lower both for graded scorers.
        failure_cost: the agent calls a failed rollout costs, against a pass's one; picks
            maximize expected fixes per call. 3 (the default) is what a failure costs with
            the engine's default ``self_verify``: the rollout, a proposal and its re-run;
            2 with ``self_verify`` off (a run spec's directory kinds turn it off). 1 values
            rollouts alone, and with a reflector that finds fixes by chance it
            needed more rollouts and calls than round-robin where commits break passing
            tasks (BENCHMARKS.md, "Safe against round-robin").

    Raises:
        TypeError: a parameter is not a number.
        ValueError: ``pass_threshold`` outside (0, 1] or ``failure_cost`` outside [1, 1000];
            NaN and infinities are refused.
    """

    name: ClassVar[str] = "fixable-first"
    #: The share of the best value a task must be worth to be picked (see ``_BAND``).
    _band: ClassVar[float] = _BAND
    #: Whether a re-test on an unchanged artifact waits a cycle (see ``_RETEST_CYCLES``).
    _cap_retests: ClassVar[bool] = True

    pass_threshold: float = attrs.field(
        default=SOLVED, converter=solved_if_none, validator=solved_threshold()
    )
    failure_cost: float = attrs.field(
        default=_FAILURE_COST,
        validator=number_in(
            1.0, _MAX_FAILURE_COST, hint="; try 3 (the default), 2 with self_verify off, or 1"
        ),
    )
    _tasks: dict[str, _Task] = attrs.field(init=False, factory=dict, repr=False)
    # Population evidence, each as [events, trials] with the prior's pseudo-counts included.
    _first_fail: list[float] = attrs.field(init=False, repr=False)
    _flip_luck: list[float] = attrs.field(init=False, repr=False)
    _pass_breaks: list[float] = attrs.field(init=False, repr=False)
    _change_breaks: list[float] = attrs.field(init=False, repr=False)
    _picks: int = attrs.field(init=False, default=0, repr=False)
    _changes: int = attrs.field(init=False, default=0, repr=False)
    # Tasks that failed since the last end_round(), in order, that no evidence() has told of.
    _round_failures: dict[str, None] = attrs.field(init=False, factory=dict, repr=False)
    # Whether evidence() has been called: then the cards, not the commit counts, say it all.
    _evidenced: bool = attrs.field(init=False, default=False, repr=False)
    # The pick count at the last end_round(), or None, and the most picks a round has taken:
    # while the last end_round() is recent, rounds are known to end, and the tasks in
    # _round_failures are passed over until the next end_round().
    _closed_at: int | None = attrs.field(init=False, default=None, repr=False)
    _longest_round: int = attrs.field(init=False, default=0, repr=False)
    # (wired) The tasks whose last outcome came in since the last commit told; and those of
    # them that failed and whose model repeats itself, each with the pick count when it was
    # held: each is passed over while another is free, until a commit or for a cycle.
    _unchanged: dict[str, None] = attrs.field(init=False, factory=dict, repr=False)
    _held: dict[str, int] = attrs.field(init=False, factory=dict, repr=False)
    _pending: Pending = attrs.field(init=False, factory=Pending, repr=False)
    _watch: GradedScoreWatch = attrs.field(init=False, repr=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)
    # The tasks grouped by what they are worth, and the _tasks dict they were grouped from.
    _groups: TaskGroups[_Task] = attrs.field(init=False, repr=False)
    _grouped: dict[str, _Task] | None = attrs.field(init=False, default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        self._watch = GradedScoreWatch(self.name, self.pass_threshold)
        # Made now so that a copy finds it, and made afresh at first use (_grouping).
        self._groups = TaskGroups(self._filing, self._specimen)
        priors = (_FIRST_FAIL_PRIOR, _FLIP_LUCK_PRIOR, _PASS_BREAKS_PRIOR, _CHANGE_BREAKS_PRIOR)
        self._first_fail, self._flip_luck, self._pass_breaks, self._change_breaks = map(
            list, priors
        )

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Return the least recently picked free key worth half the best, or overdue; see
        the class."""
        keys, _ = check_pick(keys, round_index)
        with self._lock:
            groups = self._grouping()
            shard = groups.shard(keys)  # checks the keys before anything changes
            value = self._values()

            def worth(task: _Task | None, seen: int) -> float:
                if task is not None:
                    task.seen = seen  # a private copy standing for its family
                return value.of(task)

            waiting = self._waiting(shard.size, lambda key: shard.at(key) >= 0)
            overdue = self._overdue(shard.size)
            best = groups.pick(shard, worth, exclude=waiting, band=self._band, overdue=overdue)
            if self._retested(best, value, shard.size):  # as round-robin: the least recent
                best = groups.pick(shard, worth, exclude=waiting, overdue=self._picks + 1)
            self._picks += 1
            if best in self._tasks:
                self._tasks[best].last = self._picks
                self._touch(best)
            self._pending.add(best, self._picks)
            return best

    def _overdue(self, size: int) -> Callable[[_Task | None], int]:
        """For a task (``None``: untried), the pick number before which its last pick makes
        it overdue, in a shard of ``size`` distinct keys: ``_OVERDUE_CYCLES`` times as many
        picks ago as there are tasks, counting every worker's picks, or
        ``_FAILED_OVERDUE_CYCLES`` times for a task that has failed while no card has come."""
        cycle = max(len(self._tasks), size)
        usual = self._picks - _OVERDUE_CYCLES * cycle
        if self._evidenced:
            return lambda task: usual
        failed = self._picks - _FAILED_OVERDUE_CYCLES * cycle
        return lambda task: failed if task is not None and task.fails else usual

    def _retested(self, task_id: str, value: _Values, size: int) -> bool:
        """Whether ``task_id`` is expected to pass and was re-tested within
        ``_RETEST_CYCLES`` cycles, in a shard of ``size`` distinct keys, with no artifact change
        since (see ``_RETEST_CYCLES``)."""
        task = self._tasks.get(task_id)
        if not self._cap_retests or task is None or task.seen < self._changes:
            return False
        cycle = _RETEST_CYCLES * max(len(self._tasks), size)
        return task.last > self._picks - cycle and value.fail_chance(task) < 0.5

    def _waiting(self, size: int, in_shard: Callable[[str], bool]) -> set[str]:
        """The tasks a pick passes over while another is free: those in flight; once rounds
        end, those that failed in this round; and the tasks held within a cycle of picks (see
        :meth:`repeated`). The held are let go first, then the round's failures, as long as
        passing over them would leave none of the shard's ``size`` distinct keys. Rounds end
        while the last :meth:`end_round` came within ``_OVERDUE_CYCLES`` times a cycle, or
        the longest round, of picks."""
        in_flight = self._pending.tasks(self._picks + 1)
        span = max(len(self._tasks), size, self._longest_round)
        closing = self._closed_at is not None and (
            self._picks - self._closed_at <= _OVERDUE_CYCLES * span
        )
        layers = [in_flight]
        if closing and self._round_failures:
            layers.append(layers[-1] | self._round_failures.keys())
        since = self._picks - max(len(self._tasks), size)
        for task_id in [task_id for task_id, at in self._held.items() if at <= since]:
            del self._held[task_id]  # held for a cycle of picks: let go
        if self._held:
            layers.append(layers[-1] | self._held.keys())
        for waiting in reversed(layers[1:]):
            if sum(map(in_shard, waiting)) < size:
                return waiting
        return in_flight

    def _grouping(self) -> TaskGroups[_Task]:
        """The groups of ``_tasks``, built afresh when ``_tasks`` was replaced."""
        if self._grouped is not self._tasks:
            self._groups = TaskGroups(self._filing, self._specimen)
            self._groups.touch(*self._tasks)
            self._grouped = self._tasks
        return self._groups

    def _touch(self, *task_ids: str) -> None:
        """Note that the state of ``task_ids`` may change: the groups refile them when next
        asked. Every change to a task's fields goes with a call."""
        if self._grouped is self._tasks:
            self._groups.touch(*task_ids)

    def _filing(self, task_id: str) -> Filing:
        task = self._tasks.get(task_id)
        if task is None:
            return (None, 0, -1)  # untried: one group, picked least recently of all
        key = task.group_key()
        return (key[:-1], key[-1], task.last)

    def _specimen(self, task_id: str) -> _Task:
        return attrs.evolve(self._tasks[task_id])

    def record(self, task_id: str, score: float) -> None:
        """Add one outcome of ``task_id`` (a pass if ``score >= pass_threshold``)."""
        value = check_score(task_id, score)
        passed = value >= self.pass_threshold
        with self._lock:
            self._touch(task_id)
            self._watch.observe(value)
            self._pending.remove(task_id)
            task = self._tasks.get(task_id)
            if task is None:
                task = self._tasks[task_id] = _Task(last=self._picks)
                _count(self._first_fail, not passed)
            elif task.fails == 0:
                _count(self._pass_breaks, not passed)
                if self._changes > task.seen:
                    self._change_breaks[0] += not passed
                    self._change_breaks[1] += self._changes - task.seen
            flip = passed and task.fails and not task.streak  # from failing to passing
            if flip and task.no_commit and not task.mixed:
                _count(self._flip_luck, True)  # nothing was committed since it failed: luck
                task.mixed = True
            elif flip and not task.verified:  # a verified fix counted at its card
                self._changes += 1  # the artifact probably changed
            task.seen = self._changes
            self._unchanged[task_id] = None
            self._held.pop(task_id, None)
            if not (passed and task.mixed):
                task.credit = 0.0
                task.no_commit = False
            verified, task.verified = task.verified, False
            if passed:
                if flip and not task.mixed:
                    self._flip_luck[1] += 1  # fixed, or lucky
                task.passes += 1
                task.streak += 1
                return
            if task.streak and task.fails and not task.mixed:
                self._flip_luck[0] += 1  # the flip to passing was luck, not a fix
            if task.streak or verified:
                task.mixed = True
            task.fails = min(task.fails + 1, _MAX_FAILS)  # long past any fix: a state loads
            task.streak = 0
            task.low = value
            self._round_failures[task_id] = None
            if task.repeats:
                self._hold(task_id)

    def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
        """Tell the sampler what the engine made of the last failure of ``task_id``.

        Opt-in: wire it with :func:`agentdescent_sampling.wire`, which calls it once for each
        evidence card that reaches the engine's gate. ``gain`` is the card's self-verify gain
        (the failing task re-run with the proposal applied, minus the failing score), or
        ``None`` when self-verify is off; ``committed`` says whether the proposal is part of
        a committed candidate. A proposal whose re-run still fails did not fix its task,
        committed or not (a note that rode in beside another task's fix), so the task keeps
        its full value and a pass right after is luck; so does a verified fix the gate
        refused, whose task has then shown it is fixable: its failures from then on count
        afresh. A verified fix that was committed has probably fixed its task: the task is
        set aside, by how likely the re-run's pass was a fix and not luck, and no later card
        undoes that before the task's next outcome (on the asynchronous path several cards of
        one task may reach one merge, in any order). Without
        self-verify, a committed proposal is credited as :meth:`end_round` would a commit.
        Ignored for a task whose last outcome is not a failure.

        Raises:
            TypeError: ``task_id`` is not a string, ``gain`` is not a number or None, or
                ``committed`` is not a bool.
        """
        if not isinstance(task_id, str):
            raise TypeError(
                f"{self.name}: evidence() takes the id of the task whose failure the card "
                f"speaks of, a str; got {type(task_id).__name__} {short_repr(task_id)}; pass "
                f"the card's task id (its trajectory_refs), not the task"
            )
        number = None if gain is None else _real_float(gain)
        refused = gain is not None and (number is None or not math.isfinite(number))
        if not isinstance(committed, bool) or refused:
            raise TypeError(
                f"{self.name}: evidence() takes a card's self-verify gain (a finite number, "
                f"or None without self-verify) and whether it was committed (True or False); "
                f"got gain={short_repr(gain)}, committed={short_repr(committed)} for task "
                f"{short_repr(task_id)}; pass the card's before_after_delta (None where the "
                f"engine made no re-run) and bool(committed)"
            )
        gain = number
        with self._lock:
            self._evidenced = True
            if committed:
                self._commit()
            self._touch(task_id)
            task = self._tasks.get(task_id)
            if task is None or not task.fails or task.streak:
                return
            self._round_failures.pop(task_id, None)
            verified = gain is not None and task.low + gain >= self.pass_threshold
            if task.verified and not (verified and committed):
                # A verified fix is already in since its last outcome. On the asynchronous
                # path a task can fail again before its first card is merged, and the later
                # cards (notes, or the same fix refused as a repeat) do not undo it.
                return
            chance = 0.0
            if committed and gain is None:
                chance = self._values().fix_chance(task)
            elif committed and verified and task.mixed:
                # It passes by luck now and then: so may the re-run have.
                fix = self._values().fix_chance(task)
                chance = fix / (fix + (1 - fix) * _luck_of(task))
            elif committed and verified:
                chance = 1.0
            fixed_in = verified and committed
            if verified and not committed and not task.mixed:
                task.refused = task.fails  # its fix was seen: count its failures afresh
            if fixed_in and not task.verified:
                self._changes += 1  # a fix is in: a passing task may break from now on
            task.verified = fixed_in
            task.credit = min(chance, _MAX_CREDIT)
            task.no_commit = not chance

    def end_round(self, committed: int) -> None:
        """Tell the sampler how many commits the engine made in the round just ended.

        Opt-in: :func:`agentdescent_sampling.wire` passes ``RoundInfo.committed`` on the
        synchronous path. Each task that failed in the round (and did not pass after) gets the
        chance that its failure yielded one of the commits, given how likely each failure was
        to and that at least ``committed`` did (the engine may fuse several workers' fixes into
        one commit); a task is retried the less, the likelier its fix is in, until its next
        outcome says (for a task that has failed after a pass, its next failure: luck may
        explain a pass). After a round with no commits, each task that failed in it is known
        not to be fixed by that failure: if it passes next, it passed by luck, and it is kept
        in play as fixable, and not fixed, until it fails again. Once :meth:`evidence` has
        been told of any card, the cards say it all and the counts are not used (the engine
        may merge a card a round late). From the first call on, a task that fails is passed
        over while another is free until the round ends (see the class). Without calls,
        nothing changes.

        Raises:
            TypeError: ``committed`` is not a whole number.
            ValueError: ``committed`` is negative.
        """
        if isinstance(committed, bool) or not isinstance(committed, int):
            raise TypeError(
                f"{self.name}: end_round() takes the number of commits the engine made in the "
                f"round (RoundInfo.committed), a whole number; got {short_repr(committed)}"
            )
        if committed < 0:
            raise ValueError(
                f"{self.name}: end_round() takes a commit count >= 0 (RoundInfo.committed); "
                f"got {committed}"
            )
        with self._lock:
            if committed:
                self._commit()
            self._touch(*self._round_failures)
            # A task that passed again within the round has said whether it is fixed.
            failed = [
                self._tasks[key] for key in self._round_failures if not self._tasks[key].streak
            ]
            self._round_failures = {}
            self._longest_round = max(self._longest_round, self._picks - (self._closed_at or 0))
            self._closed_at = self._picks
            if self._evidenced:
                return  # each card says what its failure made; a card may come a round late
            if not committed:
                for task in failed:
                    task.credit, task.no_commit = 0.0, True
                return
            values = self._values()
            chances = [min(values.fix_chance(task), 1.0) for task in failed]
            for task, credit in zip(failed, _credits(chances, committed), strict=True):
                task.credit = credit

    def repeated(self, task_id: str, same: bool) -> None:
        """Tell the sampler whether the card of the last failure of ``task_id``, made on the
        same artifact version as the task's card before it, proposes the same change.

        Opt-in: :func:`agentdescent_sampling.wire` calls it after the card's :meth:`evidence`,
        for each card made where the task's card before was. A model that proposes the same
        change again on the same artifact (at temperature 0, shown the same failure) learns
        nothing from another failure of that task until the artifact changes. So a failure
        whose card repeats is not counted among the failures its task's fix takes (a fix
        takes so many of the reflector's looks, not of rollouts). From ``same`` on, until a
        card of the task on one artifact version proposes something else, the task is held
        after each failure: passed over while another task is free, until a commit (a
        committed card, or :meth:`end_round`'s count) changes the artifact, or for one cycle
        of picks at most (as many as there are tasks) from its failure. At most
        ``_MAX_HELD`` tasks are held at once, the oldest let go first. Where a model words
        each proposal afresh, no card repeats, and nothing changes. Ignored for a task the
        sampler has not seen.

        Raises:
            TypeError: ``task_id`` is not a string or ``same`` is not a bool.
        """
        if not isinstance(task_id, str) or not isinstance(same, bool):
            raise TypeError(
                f"{self.name}: repeated() takes the id of the task whose card repeats the "
                f"artifact version of its card before, a str, and whether it proposes the same "
                f"change, True or False; got task_id={short_repr(task_id)}, "
                f"same={short_repr(same)}"
            )
        with self._lock:
            task = self._tasks.get(task_id)
            if task is None:
                return
            task.repeats = same
            failed = bool(task.fails) and not task.streak
            if not same:
                self._held.pop(task_id, None)
                return
            if failed and task.fails > task.refused and task.fails > 1:
                self._touch(task_id)
                task.fails -= 1  # no new look: the reflector learned nothing from it
            if failed and task_id in self._unchanged:
                self._hold(task_id)

    def _hold(self, task_id: str) -> None:
        """Pass over ``task_id`` while another task is free, until the next commit or for a
        cycle of picks."""
        self._held.setdefault(task_id, self._picks)  # held since its failure, if it was
        if len(self._held) > _MAX_HELD:
            del self._held[next(iter(self._held))]

    def _commit(self) -> None:
        """Note a commit: the artifact changed, and every held task is free again."""
        self._unchanged.clear()
        self._held.clear()

    def _values(self) -> _Values:
        """What each kind of task is worth now (a subclass may supply its own estimates)."""
        return _Values(self)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Return a copy of ``{task_id: (passes, trials)}``; wired, a failure whose card
        repeated the one before (see :meth:`repeated`) is not among the trials."""
        with self._lock:
            return {
                key: (task.passes, task.passes + task.fails) for key, task in self._tasks.items()
            }

    def state_dict(self) -> dict[str, Any]:
        """Every task's outcomes and the run's evidence, JSON-ready. Picks still in flight are
        not saved (their rollouts do not survive a restart), nor the failures of a round that
        :meth:`end_round` has not yet closed."""
        with self._lock:
            return {
                "sampler": self.name,
                "version": _STATE_VERSION,
                "params": {"pass_threshold": self.pass_threshold},
                "picks": self._picks,
                "changes": self._changes,
                "tasks": {task_id: task.row() for task_id, task in self._tasks.items()},
                "credit": {
                    task_id: task.credit for task_id, task in self._tasks.items() if task.credit
                },
                "no_commit": [task_id for task_id, task in self._tasks.items() if task.no_commit],
                "verified": [task_id for task_id, task in self._tasks.items() if task.verified],
                "refused": {
                    task_id: task.refused for task_id, task in self._tasks.items() if task.refused
                },
                "low": {  # graded: the last failure's score, which a self-verify gain adds to
                    task_id: task.low
                    for task_id, task in self._tasks.items()
                    if task.low and task.fails and not task.streak
                },
                "evidenced": self._evidenced,
                "closed_at": self._closed_at,
                "longest_round": self._longest_round,
                "unchanged": list(self._unchanged),
                "repeats": [task_id for task_id, task in self._tasks.items() if task.repeats],
                "held": dict(self._held),
                "evidence": [
                    self._first_fail,
                    self._flip_luck,
                    self._pass_breaks,
                    self._change_breaks,
                ],
            }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace everything with a ``state_dict()``; check it all before changing anything.

        Raises:
            StateError: the state is malformed, of another version or sampler, or was saved
                with a different ``pass_threshold``.
        """
        state = check_state(
            state, self.name, _STATE_VERSION, {"pass_threshold": self.pass_threshold}
        )
        picks: Any = state.get("picks")
        changes: Any = state.get("changes")
        rows: Any = state.get("tasks")
        evidence: Any = state.get("evidence")
        credits: Any = state.get("credit", {})
        no_commit: Any = state.get("no_commit", [])
        verified: Any = state.get("verified", [])
        refused: Any = state.get("refused", {})
        lows: Any = state.get("low", {})  # absent from states saved before it was kept
        evidenced: Any = state.get("evidenced", False)
        closed_at: Any = state.get("closed_at")
        longest: Any = state.get("longest_round", 0)
        unchanged: Any = state.get("unchanged", [])  # absent from states before repeated()
        repeats: Any = state.get("repeats", [])
        held: Any = state.get("held", {})
        if not (
            is_count(picks)
            and is_count(changes)
            and isinstance(rows, Mapping)
            and _is_evidence(evidence)
        ):
            raise StateError(
                f"{self.name}: state needs whole numbers 'picks' and 'changes', a 'tasks' "
                f"mapping and 'evidence' as four [events, trials] pairs (at most 2**53); "
                f"start fresh or load the file that state_dict() wrote"
            )
        tasks = {}
        for task_id, row in rows.items():
            if not (isinstance(task_id, str) and _is_row(row, changes)):
                raise StateError(
                    f"{self.name}: bad record for task {short_repr(task_id)}: {short_repr(row)}; "
                    f"expected [fails, passes, streak, mixed, last, seen] of whole numbers (last "
                    f"may be -1), fails <= {_MAX_FAILS:,}, streak <= passes, seen <= the "
                    f"state's changes ({changes})"
                )
            fails, passes, streak, mixed, last, seen = row
            tasks[task_id] = _Task(fails, passes, streak, bool(mixed), last, seen)
        _check_kind(self.name, "credit", credits, "chances in [0, 1]")
        for task_id, credit in credits.items():
            task = tasks.get(task_id)
            if task is None or not (is_real(credit) and 0 <= credit <= 1) or not task.judged():
                raise StateError(
                    f"{self.name}: bad credit for task {short_repr(task_id)}: "
                    f"{short_repr(credit)}; expected a chance in [0, 1] for a task in 'tasks' "
                    f"that has failed and not passed since, or has failed after a pass"
                )
            task.credit = float(credit)
        _check_kind(self.name, "no_commit", no_commit)
        for task_id in no_commit:
            task = tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None or not task.judged() or task.credit:
                raise StateError(
                    f"{self.name}: bad 'no_commit' entry {short_repr(task_id)}: expected the id "
                    f"of a task in 'tasks' that has failed and not passed since, or has failed "
                    f"after a pass, and has no credit (its round committed nothing)"
                )
            task.no_commit = True
        _check_kind(self.name, "verified", verified)
        for task_id in verified:
            task = tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None or not task.fails or task.streak:
                raise StateError(
                    f"{self.name}: bad 'verified' entry {short_repr(task_id)}: expected the id of "
                    f"a task in 'tasks' whose last outcome is a failure"
                )
            task.verified = True
        _check_kind(self.name, "refused", refused, "failure counts")
        for task_id, count in refused.items():
            task = tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None or not is_count(count) or not 1 <= count <= task.fails:
                raise StateError(
                    f"{self.name}: bad 'refused' entry {short_repr(task_id)}: "
                    f"{short_repr(count)}; expected the id of a task in 'tasks' and the failure "
                    f"count, from 1 to its failures, at which the gate refused its verified fix"
                )
            task.refused = count
        _check_kind(self.name, "low", lows, "scores")
        for task_id, low in lows.items():
            task = tasks.get(task_id) if isinstance(task_id, str) else None
            if (
                task is None
                or not task.fails
                or task.streak
                or not (is_real(low) and 0 <= low <= 1)
            ):
                raise StateError(
                    f"{self.name}: bad 'low' entry {short_repr(task_id)}: {short_repr(low)}; "
                    f"expected the id of a task in 'tasks' whose last outcome is a failure, "
                    f"and that failure's score, in [0, 1]"
                )
            task.low = float(low)
        if not isinstance(evidenced, bool):
            raise StateError(
                f"{self.name}: 'evidenced' must be true or false; got {short_repr(evidenced)}"
            )
        if closed_at is not None and not (is_count(closed_at) and closed_at <= picks):
            raise StateError(
                f"{self.name}: 'closed_at' must be null or the pick count, at most the state's "
                f"'picks' ({picks}), at which a round last ended; got {short_repr(closed_at)}"
            )
        if not (is_count(longest) and longest <= picks):
            raise StateError(
                f"{self.name}: 'longest_round' must be the most picks a round has taken, a "
                f"whole number at most the state's 'picks' ({picks}); got {short_repr(longest)}"
            )
        _check_kind(self.name, "unchanged", unchanged)
        _check_kind(self.name, "repeats", repeats)
        _check_kind(self.name, "held", held, "pick counts")
        since: dict[str, None] = {}
        for task_id in unchanged:
            if not isinstance(task_id, str) or task_id not in tasks or task_id in since:
                raise StateError(
                    f"{self.name}: bad 'unchanged' entry {short_repr(task_id)}: expected the id "
                    f"of a task in 'tasks', once each"
                )
            since[task_id] = None
        for task_id in repeats:
            task = tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None:
                raise StateError(
                    f"{self.name}: bad 'repeats' entry {short_repr(task_id)}: expected the id "
                    f"of a task in 'tasks'"
                )
            task.repeats = True
        kept: dict[str, int] = {}
        for task_id, at in held.items():
            task = tasks.get(task_id) if isinstance(task_id, str) else None
            if (
                task is None
                or not task.repeats
                or task_id not in since
                or not task.fails
                or task.streak
                or not (is_count(at) and at <= picks)
            ):
                raise StateError(
                    f"{self.name}: bad 'held' entry {short_repr(task_id)}: {short_repr(at)}; "
                    f"expected the id of a task in 'repeats' and 'unchanged' whose last outcome "
                    f"is a failure, and the pick count, at most the state's 'picks' ({picks}), "
                    f"when it was held"
                )
            kept[task_id] = at
        if len(kept) > _MAX_HELD:
            raise StateError(
                f"{self.name}: 'held' lists {len(kept)} tasks; at most {_MAX_HELD} are held"
            )
        with self._lock:
            self._evidenced = evidenced
            self._closed_at = closed_at
            self._longest_round = longest
            self._unchanged = since
            self._held = kept
            self._tasks = tasks
            self._picks = picks
            self._changes = changes
            self._first_fail, self._flip_luck, self._pass_breaks, self._change_breaks = (
                [float(events), float(trials)] for events, trials in evidence
            )
            self._pending = Pending()
            self._round_failures = {}


class _Values:
    """The expected fixes per agent call of each kind of task, from one moment's evidence."""

    def __init__(self, sampler: FixableFirst) -> None:
        # Tasks that have only failed, by failure count; and tasks seen to flip to passing
        # (and not fail since), by the failure count at which they flipped. Tasks alike are
        # counted together: a specimen of each group, and how many tasks it stands for.
        failing: Counter[int] = Counter()
        flipped: Counter[int] = Counter()
        deepest = 0  # the most failures a task has been seen to take before its fix
        for t, count in sampler._grouping().population():
            if t.fails and not t.mixed:
                if t.refused:  # (wired) a verified fix the gate refused: a fix seen there
                    flipped[t.refused] += count
                    deepest = max(deepest, t.refused)
                if t.afresh:
                    (flipped if t.streak else failing)[t.afresh] += count
                if t.streak or (sampler._evidenced and t.credit >= _MAX_CREDIT):
                    # flipped, or (wired) credited as a commit: a committed verified fix
                    deepest = max(deepest, t.afresh)
        self._flipped = flipped
        # Once a fix is seen past the prior's step, the prior is flat through the deepest fix
        # still believed (a flip undone by a later failure no longer counts) and steps down
        # after it, so a run whose fixes take more failures than the prior expects keeps
        # retrying tasks that far and one further (BENCHMARKS.md, "The prior flat through the
        # deepest fix seen"); bounded, so one lucky pass after many failures does not revive
        # every task.
        self._shift = min(_HORIZON, deepest - _FLAT) if deepest > _FLAT + 1 else 0
        top = max([*failing, *flipped, 0]) + _HORIZON + 1
        at_risk_above = [0] * (top + 2)
        for j in range(top, -1, -1):
            at_risk_above[j] = at_risk_above[j + 1] + failing[j + 1] + flipped[j + 1]
        # hazard[j]: chance the j-th failure of a task that has only failed yields its fix.
        self._hazard = [0.0] + [
            (flipped[j] + _PRIOR_WEIGHT * _prior(j - self._shift))
            / (at_risk_above[j] + flipped[j] + _PRIOR_WEIGHT)
            for j in range(1, top + 1)
        ]
        self._first_fail = _rate(sampler._first_fail)
        self._flip_luck = _rate(sampler._flip_luck)
        self._pass_breaks = _rate(sampler._pass_breaks)
        self._luck = _LUCK
        self._changes = sampler._changes
        self._change_breaks = _rate(sampler._change_breaks)
        self._failure_cost = sampler.failure_cost
        self._index: dict[int, float] = {}

    def of(self, task: _Task | None) -> float:
        """Expected fixes per agent call of spending the next rollout on ``task``."""
        if self._failure_cost == 1.0:  # rollouts alone: a pick costs no more than it did
            return self.per_rollout(task)
        calls = 1.0 + self.fail_chance(task) * (self._failure_cost - 1.0)
        return self.per_rollout(task) / calls

    def fail_chance(self, task: _Task | None) -> float:
        """The chance that the next rollout of ``task`` fails."""
        if task is None:
            return self._first_fail
        if task.mixed:
            return 1 - _luck_of(task)
        if not task.streak:
            return 1 - task.credit
        return min(1.0, self._fails_after_passes(task))

    def _fails_after_passes(self, task: _Task) -> float:
        """The chance that a task passing since its last failure, if any, fails next, the
        luck and breaks counted apart (so above 1 at times)."""
        if not task.fails:  # only passes so far: flaky, or broken by a change since
            odds = _posterior(self._pass_breaks, self._luck, task.streak - 1)
            broken = 1 - (1 - self._change_breaks) ** (self._changes - task.seen)
            return odds * (1 - self._luck) + broken
        # failures, then passes: fixed, unless the passes were luck
        odds = _posterior(self._flip_luck, self._luck, task.streak - 1)
        return odds * (1 - self._luck)

    def per_rollout(self, task: _Task | None) -> float:
        """Expected fixes per rollout of spending the next rollout on ``task``."""
        if task is None:
            return self._first_fail * self._failing(0)
        if task.mixed:  # failed after a pass: fixable, maybe lucky now and then
            luck = _luck_of(task)
            hazard = self._fixable(task.fails)
            if not task.streak:
                return (1 - luck) * hazard * (1 - task.credit)
            # The chance its last failure fixed it.
            fixed = 0.0 if task.no_commit else task.credit or hazard
            unfixed = (1 - fixed) * luck**task.streak
            return unfixed / (unfixed + fixed) * (1 - luck) * hazard
        if not task.streak:  # only failures so far; maybe fixed by a commit since
            return self._failing(task.afresh) * (1 - task.credit)
        return self._fails_after_passes(task) * self._fixable(task.fails)

    def fix_chance(self, task: _Task) -> float:
        """Chance that the last failure of ``task`` (failed, not passed since) yielded its fix."""
        if task.mixed:
            return self._fixable(task.fails - 1)
        return self._hazard[task.afresh]

    def _failing(self, fails: int) -> float:
        """The best fixes per rollout over the next few rollouts of a task that only failed.

        The best rate over any horizon, not the next rollout's, because a fix that takes
        three failures is worth pursuing even when the next failure alone is unlikely to
        yield it.
        """
        if fails not in self._index:
            best = fixes = spent = 0.0
            surviving = 1.0
            for j in range(fails + 1, min(len(self._hazard), fails + 1 + _HORIZON)):
                spent += surviving
                fixes += surviving * self._hazard[j]
                surviving *= 1 - self._hazard[j]
                best = max(best, fixes / spent)
            self._index[fails] = best
        return self._index[fails]

    def _fixable(self, fails: int) -> float:
        """Chance the next failure of a task known to be fixable yields its fix."""
        here = self._flipped[fails + 1]
        later = sum(count for j, count in self._flipped.items() if j > fails)
        prior = _prior(fails + 1 - self._shift)
        return (here + _PRIOR_WEIGHT * prior) / (later + _PRIOR_WEIGHT)


def _prior(failures: int) -> float:
    """The prior hazard of a task's ``failures``-th failure."""
    if failures <= _FLAT:
        return _PRIOR_HAZARD
    return _PRIOR_HAZARD * _STEP * _TAIL ** (failures - _FLAT - 1)


def _posterior(rate: float, luck: float, extra_passes: int) -> float:
    """Chance an event of prior ``rate`` still holds after ``extra_passes`` more passes, each
    lucky with chance ``luck``."""
    odds = rate * luck**extra_passes
    return odds / (odds + 1 - rate)


def _credits(chances: Sequence[float], commits: int) -> list[float]:
    """Each failure's chance of having yielded a commit, given ``commits`` commits in its round.

    Failures yield a fix independently, each with its ``chances`` entry. The engine may fuse
    several workers' fixes into one commit, so ``commits`` says that at least that many
    failures yielded one (capped at the number of failures). All zeros when nothing could.
    Exact in O(failures x commits) up to :data:`_EXACT_CREDITS` of that product (a round of
    a few hundred workers); past it, as a log no engine run writes would ask, in O(failures):
    each chance scaled up by the commits over the chances' sum, when that is over 1, and
    capped at 1.
    """
    commits = min(commits, len(chances))
    if not commits:
        return [0.0] * len(chances)
    if len(chances) * commits > _EXACT_CREDITS:
        expected = sum(chances)
        if expected <= 0:
            return [0.0] * len(chances)
        return [min(1.0, chance * max(1.0, commits / expected)) for chance in chances]

    def add(counts: list[float], chance: float) -> list[float]:
        grown = [count * (1 - chance) for count in counts]
        for k, count in enumerate(counts):
            grown[min(k + 1, commits)] += count * chance
        return grown

    # before[i]: how many of chances[:i] yielded one; after[i]: of chances[i:]; the last
    # bucket of each meaning "commits or more".
    before = [[1.0] + [0.0] * commits]
    for chance in chances:
        before.append(add(before[-1], chance))
    after = [[1.0] + [0.0] * commits]
    for chance in reversed(chances):
        after.append(add(after[-1], chance))
    after.reverse()
    total = before[-1][commits]
    if total <= 0:
        return [0.0] * len(chances)
    credits = []
    for i, chance in enumerate(chances):
        # at_least[t]: the chance that chances[i + 1:] yielded t or more.
        at_least = list(itertools.accumulate(reversed(after[i + 1]), initial=0.0))[::-1]
        # With failure i yielding one, the others need commits - 1 between them.
        others = sum(before[i][a] * at_least[max(0, commits - 1 - a)] for a in range(commits + 1))
        credits.append(min(1.0, chance * others / total))
    return credits


def _luck_of(task: _Task) -> float:
    """The chance a mixed task passes while unfixed, from its own record."""
    return (task.passes + 0.5) / (task.passes + task.fails + 2.0)


def _rate(counts: list[float]) -> float:
    return counts[0] / counts[1]


def _count(counts: list[float], event: bool) -> None:
    counts[0] += event
    counts[1] += 1


def _check_kind(name: str, key: str, value: object, values: str | None = None) -> None:
    """Refuse a state's ``key`` unless it lists task ids, or, given what it maps them to
    (``values``), unless it is a mapping."""
    if values is None and not isinstance(value, (list, tuple)):
        raise StateError(f"{name}: {key!r} must list task ids; got {type(value).__name__}")
    if values is not None and not isinstance(value, Mapping):
        raise StateError(
            f"{name}: {key!r} must map task ids to {values}; got {type(value).__name__}"
        )


def _is_row(row: object, changes: int) -> bool:
    return (
        isinstance(row, (list, tuple))
        and len(row) == 6
        and all(is_count(value) for value in (*row[:4], row[5]))
        and row[0] <= _MAX_FAILS
        and (row[4] == -1 or is_count(row[4]))
        and row[3] in (0, 1)
        and row[2] <= row[1]
        and row[5] <= changes
    )


def _is_evidence(evidence: object) -> bool:
    return (
        isinstance(evidence, (list, tuple))
        and len(evidence) == 4
        and all(
            isinstance(pair, (list, tuple))
            and len(pair) == 2
            and all(map(is_tally, pair))
            and 0 <= pair[0] <= pair[1]
            and pair[1] > 0
            for pair in evidence
        )
    )
