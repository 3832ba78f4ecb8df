from collections.abc import Iterator

import pytest

from agentdescent_sampling.testing import fast_thread_switching as switching

pytest_plugins = ["pytester"]


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every microsecond, so an unguarded read-modify-write races visibly."""
    with switching():
        yield
