"""The pytest plugin (entry point ``pytest11``): the ``sampler_conformance`` fixture."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .spec import SpecLike
from .testing import ConformanceReport, check_sampler

__all__ = ["sampler_conformance"]


@pytest.fixture
def sampler_conformance() -> Callable[..., ConformanceReport]:
    """A pytest fixture: call it with a factory (or a name or spec) and params; it fails on any
    violation.

    Example::

        def test_my_sampler_conforms(sampler_conformance):
            sampler_conformance(MySampler, seed=1)
    """

    def check(
        factory_or_name: Callable[..., Any] | SpecLike, /, **params: Any
    ) -> ConformanceReport:
        report = check_sampler(factory_or_name, **params)
        if not report.ok:
            pytest.fail(str(report), pytrace=False)
        return report

    return check
