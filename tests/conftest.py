from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdescent_sampling.testing import fast_thread_switching as switching

pytest_plugins = ["pytester"]

#: The marker of a slow scenario whose outcome does not depend on the Python version: the
#: full session runs it, and the fast sessions (noxfile.py) leave it out.
VERSION_INDEPENDENT = "version_independent"
#: The marker of a test that spends much of its wall time waiting on purpose (a paced run it
#: cancels or kills, a lock hand-off under fast thread switching): its module runs first.
WAITS = "waits"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{VERSION_INDEPENDENT}: a slow scenario whose outcome is the same on every Python; "
        "nox's fast sessions leave it out, the full session runs it",
    )
    config.addinivalue_line(
        "markers",
        f"{WAITS}: waits much of its wall time on purpose; its module is run first",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the modules of tests that wait first, each module's tests still together.

    On two pytest workers beside nox's other sessions, a wait at the start overlaps the
    other sessions' work; at the end of the run it would leave a core idle.
    """
    waiting = {item.module for item in items if item.get_closest_marker(WAITS)}
    items.sort(key=lambda item: item.module not in waiting)


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
