"""Test helpers for the run-spec tests: a sampler's state file, read while a run holds it.

The CLI workspace itself, and the logging sampler the tests name as a ref, are in
``benchmarks/_runspec.py``, which ``benchmarks/resume.py`` shares.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agentdescent_sampling.durable import read_durable_state
from benchmarks._runspec import TIMEOUT


def read_state(path: Path) -> dict[str, Any]:
    """A state file's ``sampler``, ``spec``, ``records``, ``rounds`` and ``state``, read-only
    (the run may hold it), or an empty dict before the first record."""
    if not path.exists():
        return {}
    saved = read_durable_state(path)
    return {key: saved[key] for key in ("sampler", "spec", "records", "rounds", "state")}


def wait_for_records(path: Path, at_least: int) -> dict[str, Any]:
    """Poll a state file until it holds ``at_least`` records; its document."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        document = read_state(path)
        if document.get("records", 0) >= at_least:
            return document
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {at_least} records: {read_state(path)}")
