"""The kit's settings. A test suite may change each on the package
(``agentdescent_sampling.testing.CHECK_SECONDS = 120``); the kit reads them there, each time."""

from __future__ import annotations

import sys
import threading

#: The longest one check may take before it is reported as a hang, in seconds; ``math.inf``
#: for no limit (``agentdescent-sampling check --seconds`` sets it for one command).
CHECK_SECONDS = 60.0
#: The threads that share one instance in the threads check.
THREADS = 16
#: The picks and records each of those threads makes in one round of the check.
OPERATIONS_PER_THREAD = 1000
#: The rounds of the threads check: a race shows up in most rounds, not all.
THREAD_ROUNDS = 4


def _setting(name: str) -> float:
    """The setting ``name`` as the package holds it now; its default, here, before the
    package is."""
    return float(getattr(sys.modules.get(__package__ or ""), name, globals()[name]))


def _check_seconds() -> float:
    """The longest one check may take now, at most the longest wait a thread can make."""
    return min(_setting("CHECK_SECONDS"), threading.TIMEOUT_MAX)


def _threads() -> int:
    """The threads that share one instance in the threads check now."""
    return int(_setting("THREADS"))


def _operations() -> int:
    """The picks and records each thread makes in one round of the threads check now."""
    return int(_setting("OPERATIONS_PER_THREAD"))


def _thread_rounds() -> int:
    """The rounds of the threads check now."""
    return int(_setting("THREAD_ROUNDS"))
