from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdescent_sampling.testing import fast_thread_switching as switching

pytest_plugins = ["pytester"]


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every microsecond, so an unguarded read-modify-write races visibly."""
    with switching():
        yield


@pytest.fixture(scope="session")
def repo_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This package built into a wheel once per session, for every throwaway venv."""
    from tests.support.venv import REPO, build_wheel

    return build_wheel(REPO, tmp_path_factory.mktemp("repo-wheel"))
