"""Tell a sampler what the engine learned from each failure: :func:`wire`.

For every failure the engine asks the reflector for a proposal, re-runs the failing task
with the proposal applied (``self_verify``, on by default) and files the result as an
evidence card: the task it came from (``card.trajectory_refs``) and the re-run's gain
(``card.before_after_delta``). At the round's merge the acceptance policy is shown the
cards behind each candidate, and the promotion policy every merge report, committed or
not. :func:`wire` wraps those two policies (yours, or the engine's defaults) so that each
card reaches the sampler once, as ``sampler.evidence(task_id, gain, committed)``:

- ``gain``: the self-verify re-run's score minus the failing score, or ``None`` when
  self-verify is off (then the sampler has the commits alone);
- ``committed``: whether the card's proposal is part of a candidate that was committed.

A card the engine discards before the gate (stale, screened out) is never reported, which
a sampler reads as "not fixed", the same as having no evidence at all.

Nothing here imports agentdescent at module level; :func:`wire` imports it when called.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .protocol import TaskSampler, short_repr

__all__ = ["EvidenceAcceptance", "EvidencePromotion", "EvidenceTap", "wire"]

#: ``evidence(task_id, gain, committed)``: what a sampler must have for :func:`wire`.
Evidence = Callable[[str, "float | None", bool], object]


def wire(sampler: Any, **yours: Any) -> dict[str, Any]:
    """Return the keyword arguments for ``evolve()`` that feed ``sampler`` the engine's evidence.

    >>> from agentdescent_sampling import create, wire
    >>> sampler = create("fixable-first")
    >>> # evolve(tasks, reward, agent=agent, rounds=20, **wire(sampler, on_round=mine))

    ``yours`` are any other ``evolve()`` keyword arguments; they come back unchanged, with
    ``task_sampler`` set to ``sampler`` and ``policies`` holding your acceptance and
    promotion policies (or the engine's defaults) wrapped, not replaced: each decides
    exactly as before, and the sampler is told each evidence card's task, its self-verify
    gain and whether it was committed. On the synchronous path, a sampler that also has
    ``end_round(committed)`` is told each round's commit count by an ``on_round`` that then
    calls yours. Pass ``self_verify=False`` here, not beside the call, if you turn self-verify
    off, so the sampler is not told a gain the engine never measured; and ``artifact_id``
    likewise, so the cards of ``extra_artifacts`` are told apart. Works on both engine paths
    (``asynchronous=True`` included) and with any merge policies, but not with an
    ``aggregator_factory``, which replaces the policies.

    Raises:
        TypeError: ``sampler`` is not a sampler or has no ``evidence(task_id, gain,
            committed)`` method, ``task_sampler`` is among ``yours``, ``policies`` is not
            agentdescent's ``Policies``, or ``on_round`` is not callable.
    """
    if "task_sampler" in yours:
        raise TypeError(
            "wire(sampler, ...) sets task_sampler itself; pass the sampler as the first "
            "argument and leave task_sampler out"
        )
    if isinstance(sampler, type) or not isinstance(sampler, TaskSampler):
        got = (f"the class {sampler.__name__}; pass an instance, wire({sampler.__name__}())"
               if isinstance(sampler, type) else
               f"{type(sampler).__name__} {short_repr(sampler)}")  # fmt: skip
        raise TypeError(
            f"wire() takes the sampler to wire first, one with pick() and record(); got {got}: "
            f'for example wire(create("fixable-first"))'
        )
    on_round = yours.get("on_round")
    if on_round is not None and not callable(on_round):
        raise TypeError(
            f"wire(on_round=...) takes the function evolve() calls after each round, or None; "
            f"got {type(on_round).__name__} {short_repr(on_round)}"
        )
    from dataclasses import replace

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
    tap = EvidenceTap(
        sampler,
        self_verify=bool(yours.get("self_verify", True)),
        artifact_id=yours.get("artifact_id", "artifact"),
    )
    wired = {
        **yours,
        "task_sampler": sampler,
        "policies": replace(
            policies,
            acceptance=tap.acceptance(policies.acceptance),
            promotion=tap.promotion(policies.promotion),
        ),
    }
    end_round = getattr(sampler, "end_round", None)
    if callable(end_round) and not yours.get("asynchronous", False):
        wired["on_round"] = _closing(end_round, on_round)
    return wired


def _closing(
    end_round: Callable[[int], object], then: Callable[[Any], object] | None
) -> Callable[[Any], None]:
    """An ``on_round`` that tells the sampler the round's commit count, then calls yours."""

    def on_round(info: Any) -> None:
        end_round(info.committed)
        if then is not None:
            then(info)

    return on_round


class EvidenceTap:
    """Pairs the cards an acceptance policy is shown with the merge reports that follow.

    Build one per run with the sampler to tell, then install :meth:`acceptance` and
    :meth:`promotion` in the run's policies (:func:`wire` does both).

    Args:
        sampler: has ``evidence(task_id, gain, committed)``; or None, to :meth:`attach`
            one later.
        self_verify: whether the run re-runs each proposal (``evolve(self_verify=...)``);
            without it a card's gain is not a measurement and the sampler is told ``None``
            (as it is of a gain that is not a finite number).
        artifact_id: the artifact whose rollouts the sampler records; the cards of
            ``evolve(extra_artifacts=...)`` come from rollouts it never saw, and are skipped.
            None: every card.
        link: the run spec ``link`` the three refs share: the run then stops, naming it,
            if a ref with this link is missing (a typo in one link would leave the run
            unwired); None outside a run spec.

    Raises:
        TypeError: ``sampler`` has no ``evidence`` method.
    """

    def __init__(
        self,
        sampler: Any = None,
        *,
        self_verify: bool = True,
        artifact_id: str | None = None,
        link: str | None = None,
    ) -> None:
        self.self_verify = self_verify
        self._artifact_id = artifact_id
        self._link = link
        # Which of the sampler, acceptance and promotion this tap has been given.
        self._parts: set[str] = set()
        self._evidence: Evidence | None = None
        self._lock = threading.Lock()
        # Candidate diff id -> (task id, gain, part of the candidate) for each card shown.
        self._pending: dict[str, list[tuple[str, float | None, bool]]] = {}
        if sampler is not None:
            self.attach(sampler)

    def attach(self, sampler: Any) -> None:
        """Tell ``sampler`` from now on (a run spec builds the sampler and the policies apart).

        Raises:
            TypeError: ``sampler`` has no ``evidence`` method.
        """
        evidence = getattr(sampler, "evidence", None)
        if not callable(evidence):
            name = getattr(sampler, "name", type(sampler).__name__)
            unwired = (
                "pass the sampler to evolve(task_sampler=...) without wire()"
                if self._link is None
                else f"remove 'link' from policies.task_sampler and remove the "
                f"policies.acceptance and policies.promotion refs "
                f"(agentdescent_sampling:evidence_acceptance and :evidence_promotion) that "
                f"give link {self._link!r}"
            )
            raise TypeError(
                f"sampler {name!r} has no evidence(task_id, gain, committed) method, so it "
                f"cannot use the engine's evidence; select fixable-first, or {unwired}"
            )
        self._evidence = evidence
        self._parts.add("task_sampler")

    def acceptance(self, inner: Any = None) -> EvidenceAcceptance:
        """``inner`` (the engine's default when None), noting the cards of each candidate."""
        if inner is None:
            from agentdescent.defaults import DefaultAcceptance

            inner = DefaultAcceptance()
        self._parts.add("acceptance")
        return EvidenceAcceptance(inner, self)

    def promotion(self, inner: Any = None) -> EvidencePromotion:
        """``inner`` (the engine's default when None), telling the sampler each outcome."""
        if inner is None:
            from agentdescent.defaults import DefaultPromotion

            inner = DefaultPromotion()
        self._parts.add("promotion")
        return EvidencePromotion(inner, self)

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
            delta = float(card.before_after_delta)
            gain = delta if self.self_verify and math.isfinite(delta) else None
            noted.append((task_id, gain, card.diff is diff or card.diff.diff_id in parts))
        with self._lock:
            self._pending[diff.diff_id] = noted

    def reported(self, reports: Sequence[Any]) -> None:
        """Tell the sampler the fate of every noted card whose candidate was reported.

        Raises:
            RuntimeError: no sampler was attached; or, in a run spec, no acceptance ref
                gives this tap's link either.
        """
        self._require()
        evidence = self._evidence
        assert evidence is not None  # for mypy: _require() checked
        for report in reports:
            diff = getattr(report, "candidate_diff", None)
            if diff is None:
                continue
            with self._lock:
                noted = self._pending.pop(diff.diff_id, [])
            committed = report.committed_version is not None
            for task_id, gain, part in noted:
                evidence(task_id, gain, committed and part)

    def _require(self) -> None:
        """Refuse to run with a part missing: its cards would reach no sampler, silently."""
        if self._link is None:
            if self._evidence is None:
                raise RuntimeError(
                    "this EvidenceTap has no sampler to tell: build it with the sampler, or "
                    "attach() one before the run"
                )
            return
        parts = ("task_sampler", "acceptance", "promotion")
        missing = [part for part in parts if part not in self._parts]
        if missing:
            given = [part for part in parts if part in self._parts]
            raise RuntimeError(
                f"the run spec's policies.{' and policies.'.join(given)} give link "
                f"{self._link!r}, but no policies.{' or policies.'.join(missing)} ref does, so "
                f"the engine's evidence would reach no sampler; give policies.task_sampler, "
                f"policies.acceptance and policies.promotion the same 'link' (check each for a "
                f"typo)"
            )


class _Wrapped:
    """Forwards what the engine looks up on a policy (bind, configure, checkpoints)."""

    def __init__(self, inner: Any, tap: EvidenceTap) -> None:
        self.inner = inner
        self.tap = tap

    def __getattr__(self, name: str) -> Any:
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
        """``inner.observe(reports)``, after telling the sampler what each report decided."""
        self.tap.reported(reports)
        return self.inner.observe(reports)


def _parts(diff_id: str) -> set[str]:
    """The worker diff ids a candidate is made of: ``fused(a+b)`` and ``synth(a+b)`` name
    theirs; any other id names itself."""
    for prefix in ("fused(", "synth("):
        if diff_id.startswith(prefix) and diff_id.endswith(")"):
            return set(diff_id[len(prefix) : -1].split("+"))
    return {diff_id}


def _task_id(card: Any) -> str | None:
    """The id of the task whose failure produced ``card``, if it names one."""
    for ref in getattr(card, "trajectory_refs", ()):
        task_id = getattr(ref, "id", None)
        if isinstance(task_id, str):
            return task_id
    return None
