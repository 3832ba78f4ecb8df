"""The ``policies`` entry points for agentdescent's run specs: the sampler, and the evidence.

A run spec names a sampler with a ref the engine resolves inside the spec's ``allow``
list and calls with the ref's other keys::

    "policies": {"task_sampler": {"ref": "agentdescent_sampling:from_run_spec",
                                  "spec": "informative-band",
                                  "state": "~/.agentdescent/csv-total-sampler.sqlite"}},
    "allow": ["agentdescent_sampling."]

:func:`create` alone would resolve too, but the engine reports only ``ValueError`` as a
spec error: an unknown name (a ``LookupError``) would reach the user as a traceback.
And ``agentdescent resume`` runs in the run's directory while ``agentdescent evolve``
runs where it was typed, so a relative path would name two different files.

To give the sampler the engine's evidence, as :func:`~agentdescent_sampling.wire` does in
Python, name the acceptance and promotion slots too, all three with one ``link``::

    "policies": {
      "task_sampler": {"ref": "agentdescent_sampling:from_run_spec",
                       "spec": "fixable-first", "link": "main"},
      "acceptance": {"ref": "agentdescent_sampling:evidence_acceptance", "link": "main"},
      "promotion": {"ref": "agentdescent_sampling:evidence_promotion", "link": "main"}
    }
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import InvalidSamplerConfig, SamplerError
from .protocol import Sampler, short_repr
from .registry import create
from .spec import SpecLike, spec_from_file
from .wiring import EvidenceAcceptance, EvidencePromotion, EvidenceTap

__all__ = ["evidence_acceptance", "evidence_promotion", "from_run_spec"]

#: One tap per ``link`` name: the three refs of a spec are resolved apart, in any order.
_TAPS: dict[str, EvidenceTap] = {}
#: Each state path this process built a sampler on: that sampler, with its record and
#: round counts when built. ``agentdescent evolve`` builds a spec twice in one process (to
#: check it, then to run it) and leaves the first sampler open.
_BUILT: dict[Path, tuple[weakref.ref[Any], int, int]] = {}


def from_run_spec(
    spec: SpecLike | Mapping[str, Any] | None = None,
    *,
    file: str | None = None,
    key: str = "task_sampler",
    state: str | None = None,
    link: str | None = None,
) -> Sampler:
    """Build the sampler a run spec's ``policies.task_sampler`` ref names.

    Args:
        spec: what :func:`create` takes: ``"difficulty-weighted:c=0.1"`` or
            ``{"name": "difficulty-weighted", "c": 0.1, "provider": "..."}``.
        file: instead of ``spec``, a TOML or JSON file to read the spec from under ``key``;
            an absolute path or one starting with ``~``.
        key: the (dotted) key ``file`` holds the spec under.
        state: a state file that keeps the sampler's statistics across a stop and
            ``agentdescent resume``; an absolute path or one starting with ``~``.
        link: a name that :func:`evidence_acceptance` and :func:`evidence_promotion`
            refs also give, so the engine's evidence reaches this sampler.

    Raises:
        InvalidSamplerConfig: neither or both of ``spec`` and ``file``, a relative path,
            a bad parameter, or any error of :func:`create` that is not a ``ValueError``
            (an unknown name, a conflict, a plugin that failed to load), with its message.
        StateError: the ``state`` file belongs to another sampler or other parameters.

    Every message starts with ``policies.task_sampler:``, the slot it is about.
    """
    if (spec is None) == (file is None):
        raise InvalidSamplerConfig(
            "policies.task_sampler: give exactly one of 'spec' (for example "
            '"spec": "informative-band") and \'file\' (a TOML or JSON file with a '
            f"[task_sampler] table); got {'both' if file is not None else 'neither'}"
        )
    path = None if state is None else _absolute(state, "state")
    again = path is not None and _close_unused(path)
    try:
        if spec is None:  # then file is not None
            spec = spec_from_file(_absolute(file, "file"), key)
        sampler = create(spec, state=path)
    except SamplerError as error:
        # Every error of this slot names it; the engine reports only a ValueError as a spec
        # error, so one that is not (an unknown name, a conflict) becomes InvalidSamplerConfig.
        kind = type(error) if isinstance(error, ValueError) else InvalidSamplerConfig
        raise kind(f"policies.task_sampler: {error}") from error
    if link is not None:
        try:
            _tap(link).attach(sampler)
        except TypeError as error:
            raise InvalidSamplerConfig(f"policies.task_sampler: {error}") from error
    if path is not None:
        from .durable import DurableSampler  # only a sampler with a state file is one

        if isinstance(sampler, DurableSampler):
            _BUILT[path] = (weakref.ref(sampler), sampler.records, sampler.rounds)
        if isinstance(sampler, DurableSampler) and sampler.records and not again:
            # A run spec names one state path for every run made from it: say so when a run
            # takes up earlier records, which a fresh run would not want.
            print(
                f"agentdescent-sampling: continuing {sampler.records} records from {sampler.path} "
                f"(a fresh run needs its own state path, or that file deleted)",
                file=sys.stderr,
            )
    return sampler


def _close_unused(path: Path) -> bool:
    """Close the sampler this process built earlier on ``path``, if it has neither picked
    nor recorded since (nothing of it is lost); whether there was one."""
    built = _BUILT.pop(path, None)
    sampler = None if built is None else built[0]()
    if sampler is None or built is None:
        return False
    if (sampler.records, sampler.rounds) != built[1:]:
        _BUILT[path] = built  # in use: opening the path again is refused, as it should be
        return False
    sampler.close()
    return True


def evidence_acceptance(link: str, self_verify: bool = True) -> EvidenceAcceptance:
    """The ``policies.acceptance`` of a run spec: the engine's own rule, telling the sampler
    whose ``policies.task_sampler`` has the same ``link`` which cards each candidate holds.

    Args:
        link: the name the three refs share.
        self_verify: ``false`` when the spec turns self-verify off (the directory kinds do
            by default; ``"evolve": {"self_verify": true}`` turns it on), so the sampler is
            not told a gain the engine never measured.

    Raises:
        InvalidSamplerConfig: ``link`` is not a name, or ``self_verify`` not a bool.
    """
    if not isinstance(self_verify, bool):
        raise InvalidSamplerConfig(
            f"policies.acceptance: 'self_verify' must be true or false, as the spec's "
            f"evolve.self_verify is; got {short_repr(self_verify)}"
        )
    tap = _tap(link, "acceptance")
    tap.self_verify = self_verify
    return tap.acceptance()


def evidence_promotion(link: str) -> EvidencePromotion:
    """The ``policies.promotion`` of a run spec: the engine's own rule, telling the sampler
    whose ``policies.task_sampler`` has the same ``link`` what each merge decided.

    Raises:
        InvalidSamplerConfig: ``link`` is not a name.
    """
    return _tap(link, "promotion").promotion()


def _tap(link: object, slot: str = "task_sampler") -> EvidenceTap:
    if not (isinstance(link, str) and link.isidentifier()):
        raise InvalidSamplerConfig(
            f"policies.{slot}: 'link' must be a short name shared by the task_sampler, "
            f'acceptance and promotion refs, such as "main"; got {short_repr(link)}'
        )
    tap = _TAPS.get(link)
    # A slot this link's tap already has starts the next build of a spec (agentdescent
    # evolve builds one twice; a server may build several): a fresh tap, so that a part a
    # later spec misspells is missing from it, not given by an earlier spec's.
    if tap is None or slot in tap._parts:
        tap = _TAPS[link] = EvidenceTap(link=link)
    return tap


def _absolute(path: object, field: str) -> Path:
    if not isinstance(path, str):
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field!r} must be a path string, got "
            f"{type(path).__name__} {short_repr(path)}"
        )
    from ._files import checked_path  # imported here: a spec without paths reads none

    try:
        expanded = checked_path(path)
    except ValueError as error:
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field} path {short_repr(path)}: {error}"
        ) from None
    if not expanded.is_absolute():
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field} path {short_repr(path)} is relative, but "
            f"'agentdescent evolve' reads it from the directory it was started in and "
            f"'agentdescent resume' from the run's directory, so it would name two files. "
            f"Give an absolute path or one starting with '~', for example "
            f"{str(Path(os.getcwd(), path))!r}"
        )
    return expanded
