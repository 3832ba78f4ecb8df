"""What the kit reports: a violation, a note, and the report of one sampler."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from .._display import shown


class ConformanceNote(UserWarning):
    """A note of the conformance kit, as the ``sampler_conformance`` fixture warns it: what a
    check could not observe, or advice, never a violation. ``-W error::...ConformanceNote``
    (or ``filterwarnings``) makes notes fail a test suite that wants none."""


@attrs.frozen
class Violation:
    """One broken rule: which check found it, and what exactly was wrong."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"[{self.check}] {shown(self.message, 1000)}"


@attrs.frozen
class ConformanceReport:
    """The outcome of :func:`check_sampler`: every check that ran, every violation found."""

    sampler: str
    checks: tuple[str, ...]
    violations: tuple[Violation, ...]
    #: What a check could not observe, such as lost records without ``stats()``.
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the sampler passed every check."""
        return not self.violations

    def __str__(self) -> str:
        if self.ok:
            lines = [
                f"{self.sampler}: all {len(self.checks)} checks passed ({', '.join(self.checks)})"
            ]
        else:
            lines = [f"{self.sampler}: {len(self.violations)} violation(s) of the sampler contract"]
            lines += [f"  - {violation}" for violation in self.violations]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


Factory = Callable[..., Any]


@attrs.frozen
class _NotApplicable:
    """What a check yields when it does not apply to the sampler (the state check of a
    sampler without state), or when it could observe nothing: the report leaves it out of
    the checks that ran."""


_NOT_APPLICABLE = _NotApplicable()


@attrs.frozen
class _Fault:
    """A violation with the fault it shows: ``"non-member"`` for a pick that returned a
    non-member, else what a call raised and where (:func:`_fault_of`). A check does not
    report again a fault that an earlier check reported: one bug, one violation."""

    violation: Violation
    fault: str


#: The fault of every pick that returned a non-member, whatever it returned.
_NON_MEMBER = "non-member"

#: The fault of a record() that counts a task outside the shard it last picked from other
#: than once: told by record-outside-the-shard, and by threads of a sampler served one call
#: at a time, whose threads record tasks of one another's shards.
_MISCOUNTS_OUTSIDE = "miscounts outside"

#: What a check yields: a violation (with its fault, or not), a note (a ``str``: what it
#: could not observe), or :data:`_NOT_APPLICABLE`.
Finding = Violation | _Fault | str | _NotApplicable

Check = Callable[[Factory, dict[str, Any]], Iterator[Finding]]
