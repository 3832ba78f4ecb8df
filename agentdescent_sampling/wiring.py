"""Tell a sampler what the engine learned from each failure: :func:`wire`.

For every failure the engine asks the reflector for a proposal, re-runs the failing task
with the proposal applied (``self_verify``, on by default) and files the result as an
evidence card: the task it came from (``card.trajectory_refs``) and the re-run's gain
(``card.before_after_delta``). At the round's merge the acceptance policy is shown the
cards behind each candidate, and the promotion policy every merge report, committed or
not. :func:`wire` wraps those two policies (yours, or the engine's defaults) so that each
card reaches the sampler once, as ``sampler.evidence(task_id, gain, committed)``:

- ``gain``: the self-verify re-run's score minus the failing score, or ``None`` where the
  engine made no re-run (self-verify off, or skipped by a token budget near its end): then
  the sampler has the commit alone. The engine files ``0.0`` for a card it did not re-run,
  the same number as a re-run that still fails with the same score, so a card's ``0.0`` is
  told as a gain only where the run is known to re-run every failure (:func:`wire`) or the
  card shows its re-run (two trace ids: the rollout's and the re-run's);
- ``committed``: whether the card's proposal is part of a candidate that was committed.

A card the engine discards before the gate (stale, screened out) is never reported, which
a sampler reads as "not fixed", the same as having no evidence at all.

Nothing here imports agentdescent at module level; :func:`wire` imports it when called.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import numbers
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from .protocol import TaskSampler, is_real, refuse_a_class, short_repr, unbindable

__all__ = ["ENGINE_INSTALL", "EvidenceAcceptance", "EvidencePromotion", "EvidenceTap", "wire"]

#: How to install the engine, which :func:`wire`, the run-spec refs and the bench need.
ENGINE_INSTALL = (
    'from a clone, python -m pip install ".[engine]"; or python -m pip install agentdescent==0.7.0'
)

#: ``evidence(task_id, gain, committed)``: what a sampler must have for :func:`wire`.
Evidence = Callable[[str, "float | None", bool], object]
#: ``repeated(task_id, same)``: what a sampler may have to be told of proposals made again.
Repeated = Callable[[str, bool], object]


def wire(sampler: TaskSampler, **yours: Any) -> dict[str, Any]:
    """Return the keyword arguments for ``evolve()`` that feed ``sampler`` the engine's evidence.

    >>> from agentdescent_sampling import create, wire
    >>> sampler = create("fixable-first")
    >>> # evolve(tasks, reward, agent=agent, rounds=20, **wire(sampler, on_round=mine))

    ``yours`` are any other ``evolve()`` keyword arguments; they come back unchanged, with
    ``task_sampler`` set to ``sampler`` and ``policies`` holding your acceptance and
    promotion policies (or the engine's defaults, built afresh for each run) wrapped, not
    replaced: each decides exactly as before, and the sampler is told each evidence card's
    task, its self-verify gain and whether it was committed. On the synchronous path, a
    sampler that also has ``end_round(committed)`` is told each round's commit count by an
    ``on_round`` that then calls yours (yours is called even if the sampler's raises, which
    is reported in a warning of its own, as the engine reports what yours raises).

    Pass here every one of these that you give: ``self_verify``, ``artifact_id``
    (so the cards of ``extra_artifacts`` are told apart), ``asynchronous``, ``max_tokens``
    and ``allocator``. A ``solved_threshold`` given here is checked against the sampler's
    ``pass_threshold``. Each comes back, at the engine's default where you give none, so that
    giving one beside the call, ``evolve(**wire(sampler), self_verify=False)``, is Python's
    ``TypeError`` (multiple values), not a run whose sampler is told of a run it is not in.
    With ``max_tokens`` the engine skips the re-run once 90% of the budget is spent (or
    earlier, as an ``allocator`` decides): on the synchronous path the sampler is told a
    gain of 0.0 while the rounds' spend so far, plus one more round's, shows the re-run
    was made (what your ``on_round`` spends counts from the next round's end on, as
    ``RoundInfo.tokens`` is read before it); otherwise, as in the first two rounds, and on
    the asynchronous path, only where the card's two trace ids show the re-run
    (``record_trajectories=True``), else no gain.
    Works on both engine paths and with any merge policies, but not with an
    ``aggregator_factory``, which replaces the policies. What it returns may serve several
    runs one after another, not at once: the round's spend it reads is one run's.

    Raises:
        TypeError: ``sampler`` is not a sampler or has no ``evidence(task_id, gain,
            committed)`` method (or one, or an ``end_round(committed)`` or
            ``repeated(task_id, same)``, that cannot be called so), ``task_sampler`` or
            ``aggregator_factory`` is among ``yours``, ``policies`` is not agentdescent's
            ``Policies``, is already wired, has an ``aggregator_factory`` or a
            ``task_sampler`` other than ``sampler`` (which ``evolve()`` would run instead),
            ``on_round`` is not callable, ``self_verify`` or ``asynchronous`` is not a bool (a
            string ``'false'`` would read as true), or ``max_tokens`` or ``solved_threshold``
            is not a number.
        ValueError: ``solved_threshold`` is given and the sampler's ``pass_threshold``
            differs from it, so the two would count different passes; not for a
            ``solved_threshold`` above 1 (the engine then counts no task solved) or a sampler
            scoring by grade (``graded=True``).
    """
    if "task_sampler" in yours:
        raise TypeError(
            f"wire(sampler, ...) sets task_sampler itself; got task_sampler="
            f"{short_repr(yours['task_sampler'])} too: pass the sampler as the first argument "
            f"alone, and what an earlier wire() returned to evolve(), not to wire() again"
        )
    if yours.get("aggregator_factory") is not None:
        raise TypeError(
            "wire() wraps the merge policies, and an aggregator_factory replaces them, so the "
            "sampler would be told nothing: pass evolve(aggregator_factory=...) and "
            "task_sampler=sampler without wire()"
        )
    refuse_a_class(sampler, "wire()")
    if not isinstance(sampler, TaskSampler):
        raise TypeError(
            f"wire() takes the sampler to wire first, one with pick() and record(); got "
            f"{type(sampler).__name__} {short_repr(sampler)}: for example "
            f'wire(create("fixable-first"))'
        )
    on_round = yours.get("on_round")
    if on_round is not None and not callable(on_round):
        raise TypeError(
            f"wire(on_round=...) takes the function evolve() calls after each round, or None; "
            f"got {type(on_round).__name__} {short_repr(on_round)}"
        )
    for switch in ("self_verify", "asynchronous"):
        # Read here to decide what the sampler is told: a string from a config or the
        # environment ('false', 'no') would be true, to this and to evolve().
        if switch in yours and not isinstance(yours[switch], (bool, int)):
            given = yours[switch]
            raise TypeError(
                f"wire({switch}=...) takes True or False, as evolve() does; got "
                f"{type(given).__name__} {short_repr(given)}, which both would read as "
                f"{'true' if given else 'false'}: convert it first"
                + (" (a string 'false' is true)" if isinstance(given, str) else "")
            )
    solved = yours.get("solved_threshold")
    if "solved_threshold" in yours and not _a_number(solved):
        # Read here to check the sampler's pass_threshold against it; evolve() compares
        # rewards with it, and a text would pass unread, counting no task solved.
        raise TypeError(
            f"wire(solved_threshold=...) takes the score at which evolve() counts a task "
            f"solved, a number; got {type(solved).__name__} {short_repr(solved)}: convert it "
            f"first, for example solved_threshold=float(...)"
        )
    max_tokens = yours.get("max_tokens")
    if max_tokens is not None and not _a_number(max_tokens):
        # Read here to know when the engine may skip a re-run, as evolve() reads it.
        raise TypeError(
            f"wire(max_tokens=...) takes the run's token budget, a number, as evolve() does, "
            f"or None for none; got {type(max_tokens).__name__} {short_repr(max_tokens)}: "
            f"convert it first, for example max_tokens=int(...)"
        )
    from dataclasses import replace

    _require_engine("wire()")
    from agentdescent.policies import Policies

    policies = yours.get("policies")
    if policies is None:
        policies = Policies()
    elif not isinstance(policies, Policies):
        raise TypeError(
            f"wire(policies=...) takes agentdescent.policies.Policies, whose acceptance and "
            f"promotion it wraps, or None for the engine's defaults; got "
            f"{type(policies).__name__} {short_repr(policies)}"
        )
    elif isinstance(policies.acceptance, _Wrapped) or isinstance(policies.promotion, _Wrapped):
        raise TypeError(
            "wire(policies=...) got policies an earlier wire() returned, so each card would "
            "be told twice: pass wire() your own policies, and what it returns to evolve()"
        )
    elif policies.aggregator_factory is not None:
        raise TypeError(
            f"wire() wraps the merge policies, and your policies' aggregator_factory "
            f"({short_repr(policies.aggregator_factory)}) replaces them, so the sampler would "
            f"be told nothing: pass evolve(policies=...) and task_sampler=sampler without wire()"
        )
    elif policies.task_sampler is not None and policies.task_sampler is not sampler:
        # evolve()'s task_sampler, which wire() returns, wins over the bundle's.
        raise TypeError(
            f"wire(policies=...) got policies whose task_sampler is "
            f"{short_repr(policies.task_sampler)}, but wire() sets task_sampler to the sampler "
            f"it wires, {short_repr(sampler)}, which evolve() would run instead: wire the "
            f"sampler you mean to run, and leave task_sampler out of your policies "
            f"(dataclasses.replace(policies, task_sampler=None))"
        )
    wired = {**_READ, **yours}
    self_verify = bool(wired["self_verify"])
    tap = EvidenceTap(sampler, self_verify=self_verify, artifact_id=wired["artifact_id"])
    if "solved_threshold" in yours:
        _refuse_other_threshold(sampler, solved)
    synchronous = not wired["asynchronous"]
    if self_verify and wired["max_tokens"] is not None:
        if synchronous:
            tap.budget(wired["max_tokens"], wired["allocator"])
        else:  # the asynchronous path tells no round's spend before its merge
            tap.self_verify = None
    wired.update(
        self_verify=self_verify,
        task_sampler=sampler,
        policies=replace(
            policies,
            acceptance=tap.acceptance(policies.acceptance),
            promotion=tap.promotion(policies.promotion),
        ),
    )
    end_round = getattr(sampler, "end_round", None)
    if synchronous and callable(end_round):  # the asynchronous path ends no round
        _refuse_uncallable(sampler, end_round, "end_round(committed)", 0)
    if synchronous and (callable(end_round) or tap.budgeted):
        wired["on_round"] = _closing(
            tap,
            end_round if callable(end_round) else None,
            on_round,
            str(getattr(sampler, "name", type(sampler).__name__)),
        )
    return wired


#: The ``evolve()`` arguments :func:`wire` reads, at the engine's defaults: it returns each,
#: so that one given beside it, where wire() cannot see it, is a TypeError.
_READ: dict[str, Any] = {
    "self_verify": True,
    "artifact_id": "artifact",
    "asynchronous": False,
    "max_tokens": None,
    "allocator": None,
}


def _refuse_other_threshold(sampler: object, solved: object) -> None:
    """Raise ``ValueError`` if ``sampler`` counts a pass at another score than ``evolve()``
    will: each would see tasks the other counts solved as failing."""
    own = getattr(sampler, "pass_threshold", None)
    if not (is_real(own) and _a_number(solved)) or getattr(sampler, "graded", False) is True:
        return
    solved = float(solved)  # type: ignore[arg-type]  # a number: a Fraction, NumPy's float32
    if solved <= 1 and own != solved:  # above 1 the engine counts no task solved
        name = short_repr(str(getattr(sampler, "name", type(sampler).__name__)))
        raise ValueError(
            f"wire(solved_threshold={solved!r}): sampler {name} counts a pass at "
            f"pass_threshold={own!r}, so it and evolve() would disagree on which rollouts "
            f"pass: give both the same value (a sampler built with pass_threshold={solved!r}, "
            f"or solved_threshold={own!r})"
        )


def _a_number(value: object) -> bool:
    """Whether ``value`` is a number the engine compares with (a token budget, a solved
    threshold): any real number (a NumPy int, a Fraction, an infinity), not a bool, NaN or
    an int past floats."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return not math.isnan(float(value))
    except OverflowError:
        return False


def _closing(
    tap: EvidenceTap,
    end_round: Callable[[int], object] | None,
    then: Callable[[Any], object] | None,
    name: str,
) -> Callable[[Any], None]:
    """An ``on_round`` that tells the tap the round's token spend and the sampler its commit
    count, then calls yours, whatever the sampler's ``end_round`` raised.

    What yours raises reaches the engine as it is, which reports it as your ``on_round``'s
    (a warning; the run goes on). What the sampler's ``end_round`` raises is reported as
    the sampler's, in a warning of its own, not as yours."""

    def on_round(info: Any) -> None:
        failed: Exception | None = None
        try:
            if tap.budgeted:
                tap.round_ended(getattr(info, "tokens", None))
            if end_round is not None:
                end_round(info.committed)
        except Exception as error:  # noqa: BLE001 - reported below, as the engine would
            failed = error
        try:
            if then is not None:
                then(info)
        finally:
            if failed is not None:
                yours = "; not your on_round, which was called" if then is not None else ""
                warnings.warn(
                    f"wire(): the end_round() of sampler {name!r} raised "
                    f"{type(failed).__name__}: {failed} (the run goes on{yours})",
                    RuntimeWarning,
                    stacklevel=2,
                )

    return on_round


class EvidenceTap:
    """Pairs the cards an acceptance policy is shown with the merge reports that follow.

    Build one per run with the sampler to tell, then install :meth:`acceptance` and
    :meth:`promotion` in the run's policies (:func:`wire` does both).

    Args:
        sampler: has ``evidence(task_id, gain, committed)``, and perhaps
            ``repeated(task_id, same)``; or None, to :meth:`attach` one later.
        self_verify: whether the engine re-ran each failure with its proposal. ``True``:
            every one (``evolve(self_verify=True)`` without ``max_tokens``), so each card's
            ``before_after_delta`` is a gain; ``False``: none, so the sampler is told
            ``None``; ``None``: not known (a run spec's refs cannot see its ``evolve``
            block), so a card's ``0.0``, which is also what the engine files when it made no
            re-run, is told as a gain only if the card has two trace ids (the rollout's and
            the re-run's, when the run records rollouts), else as ``None``. A gain that is not
            a finite number is told as ``None`` too.
        artifact_id: the artifact whose rollouts the sampler records; the cards of
            ``evolve(extra_artifacts=...)`` come from rollouts it never saw, and are skipped.
            None: every card.
        link: the run spec ``link`` the three refs share: the run then stops at its first
            card or merge report, naming it, if a ref with this link is missing (a typo in
            one link would leave the run unwired; a spec the engine builds is checked before
            that, by :func:`~agentdescent_sampling.refs.from_run_spec` and the evidence refs);
            None outside a run spec.

    Raises:
        TypeError: ``sampler`` has no ``evidence`` method, or one (or a ``repeated``) that
            cannot be called as the run calls it.
    """

    def __init__(
        self,
        sampler: Any = None,
        *,
        self_verify: bool | None = None,
        artifact_id: str | None = None,
        link: str | None = None,
    ) -> None:
        self.self_verify = self_verify
        #: Under a token budget: the spend past which the engine may skip a re-run, and the
        #: rounds' cumulative spend (None until a round has ended) and last step (None until
        #: two have: only then does a step hold the spend of an on_round, yours included).
        self._limit: float | None = None
        self._spent: tuple[int, int | None] | None = None
        self._artifact_id = artifact_id
        self._link = link
        # Which of the sampler, acceptance and promotion this tap has been given.
        self._parts: set[str] = set()
        self._evidence: Evidence | None = None
        self._repeated: Repeated | None = None
        self._lock = threading.Lock()
        # Candidate diff id -> (task id, gain, part of the candidate, what it made) for each
        # card shown.
        self._pending: dict[str, list[tuple[str, float | None, bool, _Made | None]]] = {}
        # Task id -> what its last card told proposed, and on what, for repeated().
        self._made: dict[str, _Made] = {}
        if sampler is not None:
            self.attach(sampler)

    def attach(self, sampler: Any) -> None:
        """Tell ``sampler`` from now on (a run spec builds the sampler and the policies apart).

        Raises:
            TypeError: ``sampler`` has no ``evidence`` method, or one (or a ``repeated``)
                that cannot be called as the run calls it.
        """
        evidence = getattr(sampler, "evidence", None)
        if not callable(evidence):
            raise TypeError(
                no_evidence(sampler, "pass the sampler to evolve(task_sampler=...) without wire()")
            )
        _refuse_uncallable(sampler, evidence, "evidence(task_id, gain, committed)", "t", 0.0, True)
        repeated = getattr(sampler, "repeated", None)
        if callable(repeated):
            _refuse_uncallable(sampler, repeated, "repeated(task_id, same)", "t", True)
        self._evidence = evidence
        self._repeated = repeated if callable(repeated) else None
        self._parts.add("task_sampler")

    @property
    def budgeted(self) -> bool:
        """Whether :meth:`budget` was called: the tap then needs :meth:`round_ended`."""
        return self._limit is not None

    def budget(self, max_tokens: int, allocator: Any = None) -> None:
        """Tell a card's 0.0 as a gain only while the engine surely re-ran every card under
        ``evolve(max_tokens=...)``: its governor skips the re-run from 90% of the budget on
        (from ``1 - allocator.budget_start`` with an ``allocator`` that decides), checked
        against the spend at the start of the round, which :meth:`round_ended` tells. Until
        two rounds have ended, and from one round before that point, a 0.0 is told as with
        ``self_verify=None``."""
        from agentdescent.budget import HARD_FLOOR

        share = HARD_FLOOR
        if callable(getattr(allocator, "decide", None)):
            share = min(share, 1.0 - float(getattr(allocator, "budget_start", 0.5)))
        self._limit = float(max_tokens) * share

    def round_ended(self, tokens: object) -> None:
        """The run's cumulative token spend at the end of a round (``RoundInfo.tokens``);
        anything but a count makes the spend unknown again. ``RoundInfo.tokens`` is read
        before the ``on_round`` calls, so what an ``on_round`` spends is in the next round's:
        a step between two rounds' ends holds one ``on_round``'s spend."""
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            self._spent = None
            return
        step = None if self._spent is None else max(0, tokens - self._spent[0])
        self._spent = (tokens, step)

    def started(self) -> None:
        """Forget the spend and the cards of an earlier run: the engine installs the policies
        (and calls their ``configure``) as each run starts."""
        self._spent = None
        with self._lock:
            self._made.clear()

    def _rerun_sure(self) -> bool:
        """Whether the engine re-ran every card of this round (see :meth:`budget`)."""
        if self._limit is None:
            return True
        spent, step = self._spent or (0, None)
        return step is not None and spent + step < self._limit

    def acceptance(self, inner: Any = None) -> EvidenceAcceptance:
        """``inner`` (the engine's default, new for each run, when None), noting the cards
        of each candidate."""
        _require_engine("the evidence's acceptance policy")
        from agentdescent.defaults import DefaultAcceptance

        self._parts.add("acceptance")
        return EvidenceAcceptance(inner, self, DefaultAcceptance)

    def promotion(self, inner: Any = None) -> EvidencePromotion:
        """``inner`` (the engine's default, new for each run, when None), telling the
        sampler each outcome."""
        _require_engine("the evidence's promotion policy")
        from agentdescent.defaults import DefaultPromotion

        self._parts.add("promotion")
        return EvidencePromotion(inner, self, DefaultPromotion)

    def shown(self, diff: Any, cards: Sequence[Any]) -> None:
        """Note the cards behind the candidate ``diff``, until its merge report arrives.

        Raises:
            RuntimeError: no sampler was attached; or, in a run spec, no promotion ref
                gives this tap's link either.
        """
        self._require()
        if diff is None or self._artifact_id not in (None, diff.target):
            return
        parts = _parts(diff.diff_id)
        noted = []
        for card in cards:
            task_id = _task_id(card)
            if task_id is None:
                continue
            part = card.diff is diff or card.diff.diff_id in parts or _holds(diff, card.diff)
            made = _made(card) if self._repeated is not None else None
            noted.append((task_id, self._gain(card), part, made))
        with self._lock:
            self._pending[diff.diff_id] = noted

    def _gain(self, card: Any) -> float | None:
        """The card's self-verify gain, or None if the engine may not have measured one."""
        delta = float(card.before_after_delta)
        if self.self_verify is False or not math.isfinite(delta):
            return None
        # Without a re-run the engine files exactly 0.0, and the rollout's trace id alone.
        sure = self.self_verify is True and self._rerun_sure()
        if not sure and delta == 0.0 and len(getattr(card, "trace_ids", ())) < 2:
            return None
        return delta

    def reported(self, reports: Sequence[Any]) -> None:
        """Tell the sampler the fate of every noted card whose candidate was reported.

        Raises:
            RuntimeError: no sampler was attached; or, in a run spec, no acceptance ref
                gives this tap's link either.
        """
        self._require()
        evidence = self._evidence
        assert evidence is not None  # for mypy: _require() checked
        compared: set[int] = set()
        for report in reports:
            diff = getattr(report, "candidate_diff", None)
            if diff is None:
                continue
            with self._lock:
                noted = self._pending.pop(diff.diff_id, [])
            committed = report.committed_version is not None
            for task_id, gain, part, made in noted:
                evidence(task_id, gain, committed and part)
                # A card behind two candidates is compared once. The engine reports a whole
                # merge in one call (record_round, on both paths), and its cards live through
                # it, so their ids are unique here; across calls, CPython reuses them.
                if made is not None and made.card not in compared:
                    compared.add(made.card)
                    self._compare(task_id, made)

    def _compare(self, task_id: str, made: _Made) -> None:
        """Tell the sampler's ``repeated()`` whether the card just told of ``task_id``, made on
        the artifact version its card before was made on, proposes the same change."""
        assert self._repeated is not None  # for mypy: made only for a sampler that has it
        with self._lock:
            before = self._made.get(task_id)
            self._made[task_id] = made
        if before is not None and before.base == made.base:
            self._repeated(task_id, before.change == made.change)

    def _require(self) -> None:
        """Refuse to run with a part missing: its cards would reach no sampler, silently."""
        if self._link is None:
            if self._evidence is None:
                raise RuntimeError(
                    "this EvidenceTap has no sampler to tell: build it with the sampler, or "
                    "attach() one before the run"
                )
            return
        problem = links_problem(
            {slot: self._link if slot in self._parts else None for slot in LINKED}
        )
        if problem is not None:
            raise RuntimeError(problem)


#: The attributes a wrapped policy sets on itself, which are never looked up on its rule.
_OWN = frozenset({"inner", "tap", "_default"})


class _Wrapped:
    """Forwards what the engine looks up on a policy (bind, configure, checkpoints).

    Built with ``inner=None``, it holds the engine's ``default`` rule, and a new one for
    each run it is installed in (``configure``), as the engine builds its own: thresholds
    and counts never carry over from one run to the next.
    """

    def __init__(
        self, inner: Any, tap: EvidenceTap, default: Callable[[], Any] | None = None
    ) -> None:
        if inner is None and default is None:
            raise TypeError(f"{type(self).__name__}() needs the policy to wrap, or a default")
        self._default = default if inner is None else None
        self.inner = default() if inner is None and default is not None else inner
        self.tap = tap

    def configure(self, config: Any) -> None:
        """Fill ``inner``'s thresholds from the run's config (the engine calls this when it
        installs the policy), on a new default rule if it is one."""
        self.tap.started()
        if self._default is not None:
            self.inner = self._default()
        configure = getattr(self.inner, "configure", None)
        if callable(configure):
            configure(config)

    def __getattr__(self, name: str) -> Any:
        if name in _OWN:  # not set yet (a copy being built): never the inner rule's
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


class EvidenceAcceptance(_Wrapped):
    """An acceptance policy that decides as ``inner`` does and notes the candidate's cards."""

    def accept(self, ctx: Any) -> Any:
        """``inner.accept(ctx)``, after noting ``ctx.cards`` for ``ctx.diff``."""
        self.tap.shown(ctx.diff, ctx.cards)
        return self.inner.accept(ctx)


class EvidencePromotion(_Wrapped):
    """A promotion policy that promotes as ``inner`` does and reports each card's fate."""

    def observe(self, reports: Sequence[Any]) -> Any:
        """``inner.observe(reports)``, then the sampler told what each report decided."""
        promoted = self.inner.observe(reports)
        self.tap.reported(reports)
        return promoted


#: The run spec slots a ``link`` joins, in the order messages name them.
LINKED = ("task_sampler", "acceptance", "promotion")


def links_problem(links: dict[str, str | None]) -> str | None:
    """What is wrong with the ``link`` each of :data:`LINKED` gives (None: no ref of that slot
    gives one), or None if all give one link, or none does."""
    given: dict[str, list[str]] = {}
    for slot in LINKED:
        link = links.get(slot)
        if link is not None:
            given.setdefault(link, []).append(slot)
    missing = [slot for slot in LINKED if links.get(slot) is None]
    if not given or (len(given) == 1 and not missing):
        return None
    said = [
        f"{_slots(slots, 'and')} {'give' if len(slots) > 1 else 'gives'} link {_shown(link)}"
        for link, slots in given.items()
    ]
    if missing:
        what = f"link {_shown(next(iter(given)))}" if len(given) == 1 else "a link"
        said.append(f"no {_slots(missing, 'or')} ref gives {what}")
    refs = [
        f'{{"ref": "agentdescent_sampling.refs:evidence_{slot}", '
        f'"link": {json.dumps(next(iter(given))[:MAX_LINK])}}}'
        for slot in missing
        if slot != "task_sampler"
    ]
    shown = f"; the evidence refs are {' and '.join(refs)}" if refs else ""
    linked = [slot for slot in LINKED[1:] if slot not in missing]
    unlink = ["'link' from policies.task_sampler"] if "task_sampler" not in missing else []
    if linked:
        unlink.append(f"the {_slots(linked, 'and')} ref{'s' if len(linked) > 1 else ''}")
    return (
        f"policies: {', '.join(said[:-1])} but {said[-1]}, so the engine's evidence would reach "
        f"no sampler; give policies.task_sampler, policies.acceptance and policies.promotion "
        f"the same 'link' (check each for a typo{shown}), or remove {' and '.join(unlink)} to "
        f"run without the evidence"
    )


#: The longest ``link`` a run spec's refs take, and so how much of one a message shows: a
#: link read from a spec before it is checked may be anything.
MAX_LINK = 64


def _shown(link: str) -> str:
    """``link`` quoted for a message, every character not printable ASCII escaped (so a
    look-alike letter or a control character shows), and cut to :data:`MAX_LINK`."""
    cut = link[:MAX_LINK]
    return ascii(cut) + ("..." if len(link) > len(cut) else "")


def _refuse_uncallable(sampler: Any, method: Callable[..., object], call: str, *given: Any) -> None:
    """Raise ``TypeError`` if ``method`` cannot be called with ``given``, as the run will call
    it (``call``): told now, not at the run's first merge. A method whose signature cannot be
    read is taken as it is."""
    bare = unbindable(method, *given)
    if bare is not None:
        name = getattr(sampler, "name", type(sampler).__name__)
        own = call.partition("(")[0]
        raise TypeError(
            f"the {own}{bare} of sampler {short_repr(name)} cannot be called as {call}, "
            f"as wire() has the run call it: define {own}(self, {call.partition('(')[2]}"
        )


def no_evidence(sampler: Any, unwire: str) -> str:
    """Why ``sampler`` cannot be told the engine's evidence, and ``unwire``: what to do instead."""
    name = getattr(sampler, "name", type(sampler).__name__)
    return (
        f"sampler {name!r} has no evidence(task_id, gain, committed) method, so it cannot use "
        f"the engine's evidence; select fixable-first, or {unwire}"
    )


def _slots(slots: Sequence[str], conjunction: str) -> str:
    return f" {conjunction} ".join(f"policies.{slot}" for slot in slots)


def _parts(diff_id: str) -> set[str]:
    """The worker diff ids a candidate is made of: ``fused(a+b)`` and ``synth(a+b)`` name
    theirs; any other id names itself."""
    for prefix in ("fused(", "synth("):
        if diff_id.startswith(prefix) and diff_id.endswith(")"):
            return set(diff_id[len(prefix) : -1].split("+"))
    return {diff_id}


def _holds(candidate: Any, proposal: Any) -> bool:
    """Whether ``candidate`` makes every edit of ``proposal`` (a non-empty mapping of edits,
    as the engine's own kinds write them): the engine sends one diff to the gate in place of
    several that agree (``"nothing-to-fuse"``), whose cards' proposals it then holds."""
    edits, made = getattr(proposal, "ops", None), getattr(candidate, "ops", None)
    if not (isinstance(edits, Mapping) and isinstance(made, Mapping) and edits):
        return False
    try:
        return all(key in made and made[key] == value for key, value in edits.items())
    except Exception:  # noqa: BLE001  # an edit that cannot be compared is not known held
        return False


@attrs.frozen
class _Made:
    """What a card proposed and on what, as digests: the same ``change`` on the same ``base``
    is a model proposing again what it proposed before. ``card`` is the card's ``id()``,
    which tells it apart from itself shown again within one merge."""

    card: int
    base: bytes
    change: bytes


def _made(card: Any) -> _Made | None:
    """What ``card`` proposed (its diff's edits) and on which artifact version, or None where
    either is not JSON (a ``repr`` may abridge, or hold an address): never then a repeat."""
    try:
        base = json.dumps(card.base_version, sort_keys=True, allow_nan=False)
        change = json.dumps(card.diff.ops, sort_keys=True, allow_nan=False)
    except Exception:  # noqa: BLE001  # a card that cannot be read is never a repeat
        return None
    return _Made(id(card), _digest(base), _digest(change))


def _digest(text: str) -> bytes:
    """A short digest of ``text``: what the tap keeps of a card, whatever its size."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _task_id(card: Any) -> str | None:
    """The id of the task whose failure produced ``card``, if it names one."""
    for ref in getattr(card, "trajectory_refs", ()):
        task_id = getattr(ref, "id", None)
        if isinstance(task_id, str):
            return task_id
    return None


def _require_engine(what: str) -> None:
    """Raise ``ModuleNotFoundError`` saying that ``what`` needs agentdescent and how to install
    it, where it is not installed (a bare ``No module named 'agentdescent'`` says neither)."""
    if importlib.util.find_spec("agentdescent") is None:
        raise ModuleNotFoundError(
            f"{what} hands the sampler agentdescent's evidence inside its evolve(), and "
            f"agentdescent is not installed: {ENGINE_INSTALL}",
            name="agentdescent",
        )
