"""The conformance kit: check any sampler against the contract and report every violation.

>>> from agentdescent_sampling.testing import check_sampler
>>> check_sampler("round-robin").ok
True

In a plugin's own test suite, the ``sampler_conformance`` pytest fixture (from
:mod:`agentdescent_sampling.pytest_plugin`, registered through the ``pytest11`` entry
point) does the same in one line::

    def test_conforms(sampler_conformance):
        sampler_conformance(MySampler, seed=1)

Each check has a module of its own: ``_contract`` (what every sampler keeps), ``_scores``,
``_state``, ``_threads``; ``_kit`` runs them, ``_time`` bounds each in time, and ``_notes``
gives the advice no check fails. ``CHECK_SECONDS``, ``THREADS``, ``OPERATIONS_PER_THREAD``
and ``THREAD_ROUNDS`` are settings a test suite may change here, on this module.
"""

from ._kit import InstalledCheck, check_installed, check_sampler, checking
from ._report import ConformanceNote, ConformanceReport, Violation
from ._settings import CHECK_SECONDS, OPERATIONS_PER_THREAD, THREAD_ROUNDS, THREADS
from ._threads import fast_thread_switching

# What tracebacks, warnings and help() print is the name to import and filter on, not the
# private module that defines it (-W error::agentdescent_sampling.testing.ConformanceNote).
for _public in (
    ConformanceNote, ConformanceReport, InstalledCheck, Violation, check_installed, check_sampler,
    checking, fast_thread_switching,
):  # fmt: skip
    _public.__module__ = __name__
del _public

__all__ = [
    "CHECK_SECONDS",
    "OPERATIONS_PER_THREAD",
    "THREADS",
    "THREAD_ROUNDS",
    "ConformanceNote",
    "ConformanceReport",
    "InstalledCheck",
    "Violation",
    "check_installed",
    "check_sampler",
    "checking",
    "fast_thread_switching",
]
