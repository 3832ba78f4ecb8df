"""The suite's own ordering: modules of tests that wait run first (tests/conftest.py)."""

from __future__ import annotations

import pytest


def test_the_modules_of_waiting_tests_run_first_and_keep_their_order(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        "from tests.conftest import pytest_collection_modifyitems, pytest_configure"
    )
    pytester.makepyfile(
        test_a="def test_a1(): pass\ndef test_a2(): pass\n",
        test_b="import pytest\ndef test_b1(): pass\n@pytest.mark.waits\ndef test_b2(): pass\n",
        test_c="def test_c1(): pass\n",
    )
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    collected = [line for line in result.outlines if "::" in line]
    assert collected == [
        "test_b.py::test_b1",
        "test_b.py::test_b2",
        "test_a.py::test_a1",
        "test_a.py::test_a2",
        "test_c.py::test_c1",
    ]
