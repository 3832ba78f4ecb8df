"""The pytest plugin (entry point ``pytest11``): the ``sampler_conformance`` fixture."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

from .errors import SamplerError
from .spec import SpecLike
from .testing import ConformanceNote, ConformanceReport, check_sampler

__all__ = ["sampler_conformance"]


@pytest.fixture
def sampler_conformance() -> Callable[..., ConformanceReport]:
    """A pytest fixture: call it with a factory (or a name or spec) and params; it fails on any
    violation, and warns each note of a sampler that passes as a :class:`ConformanceNote`,
    which pytest's warnings summary shows without failing the test (where notes are made errors,
    one ``ConformanceNote`` is raised holding every note). A sampler the kit cannot
    build (an unknown name, a bad or missing parameter), and an instance where its class or a
    factory is wanted, fails the test with the error's message alone.

    Example::

        def test_my_sampler_conforms(sampler_conformance):
            sampler_conformance(MySampler, seed=1)
    """

    def check(
        factory_or_name: Callable[..., Any] | SpecLike, /, **params: Any
    ) -> ConformanceReport:
        __tracebackhide__ = True  # a failure shows the test's line, not this fixture's code
        unbuilt: str | None = None
        try:
            report = check_sampler(factory_or_name, **params)
        except SamplerError as error:  # its message says what to fix; the traceback, nothing
            unbuilt = f"{type(error).__name__}: {error}"
        except TypeError as error:  # an instance, or nothing callable: told for this call
            unbuilt = f"TypeError: {error}".replace("check_sampler(", "sampler_conformance(")
        if unbuilt is not None:  # outside the except: no "during handling" chain
            pytest.fail(unbuilt, pytrace=False)
        if not report.ok:
            pytest.fail(str(report), pytrace=False)  # its text holds the notes too
        raised: list[str] = []  # notes made errors (-W error::...ConformanceNote)
        for note in report.notes:
            try:
                warnings.warn(f"{report.sampler}: {note}", ConformanceNote, stacklevel=2)
            except ConformanceNote as error:
                raised.append(str(error))
        if raised:  # every note, not the first alone
            raise ConformanceNote("\n".join(raised))
        return report

    return check
