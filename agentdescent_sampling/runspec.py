"""The ``policies.task_sampler`` entry point for agentdescent's run specs.

A run spec names a sampler with a ref the engine resolves inside the spec's ``allow``
list and calls with the ref's other keys::

    "policies": {"task_sampler": {"ref": "agentdescent_sampling:from_run_spec",
                                  "spec": "informative-band",
                                  "state": "~/.agentdescent/csv-total-sampler.json"}},
    "allow": ["agentdescent_sampling."]

:func:`create` alone would resolve too, but the engine reports only ``ValueError`` as a
spec error: an unknown name (a ``LookupError``) would reach the user as a traceback.
And ``agentdescent resume`` runs in the run's directory while ``agentdescent evolve``
runs where it was typed, so a relative path would name two different files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import InvalidSamplerConfig, SamplerError
from .protocol import TaskSampler, short_repr
from .registry import create
from .spec import SpecLike, spec_from_file

__all__ = ["from_run_spec"]


def from_run_spec(
    spec: SpecLike | Mapping[str, Any] | None = None,
    *,
    file: str | None = None,
    key: str = "task_sampler",
    state: str | None = None,
) -> TaskSampler:
    """Build the sampler a run spec's ``policies.task_sampler`` ref names.

    Args:
        spec: what :func:`create` takes: ``"difficulty-weighted:c=0.1"`` or
            ``{"name": "difficulty-weighted", "c": 0.1, "provider": "..."}``.
        file: instead of ``spec``, a TOML or JSON file to read the spec from under ``key``;
            an absolute path or one starting with ``~``.
        key: the (dotted) key ``file`` holds the spec under.
        state: a state file that keeps the sampler's statistics across a stop and
            ``agentdescent resume``; an absolute path or one starting with ``~``.

    Raises:
        InvalidSamplerConfig: neither or both of ``spec`` and ``file``, a relative path,
            or any error of :func:`create` that is not already a ``ValueError`` (an
            unknown name, a conflict, a plugin that failed to load), with its message.
        StateError: the ``state`` file belongs to another sampler or other parameters.
    """
    if (spec is None) == (file is None):
        raise InvalidSamplerConfig(
            "policies.task_sampler: give exactly one of 'spec' (for example "
            '"spec": "informative-band") and \'file\' (a TOML or JSON file with a '
            f"[task_sampler] table); got {'both' if file is not None else 'neither'}"
        )
    try:
        if spec is None:  # then file is not None
            spec = spec_from_file(_absolute(file, "file"), key)
        return create(spec, state=None if state is None else _absolute(state, "state"))
    except SamplerError as error:
        if isinstance(error, ValueError):
            raise
        raise InvalidSamplerConfig(f"policies.task_sampler: {error}") from error


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
