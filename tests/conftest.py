import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdescent_sampling.testing import fast_thread_switching as switching

pytest_plugins = ["pytester"]

#: The marker of a slow scenario whose outcome does not depend on the Python version: the
#: full session runs it, and the fast sessions (noxfile.py) leave it out.
VERSION_INDEPENDENT = "version_independent"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{VERSION_INDEPENDENT}: a slow scenario whose outcome is the same on every Python; "
        "nox's fast sessions leave it out, the full session runs it",
    )


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every microsecond, so an unguarded read-modify-write races visibly."""
    with switching():
        yield


@pytest.fixture(scope="session")
def unprivileged() -> list[str]:
    """A command prefix that runs a command as a user the file modes apply to.

    Empty unless the tests run as root, who searches and writes any directory; then
    ``setpriv`` to ``nobody``, or a skip if this machine cannot run this Python as another user.
    """
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv to run as another user")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = [*nobody, sys.executable, "-c", "import agentdescent_sampling"]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        pytest.skip("another user cannot run this Python and its packages here")
    return nobody


@pytest.fixture(scope="session")
def repo_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This package built into a wheel once per session, for every throwaway venv."""
    from tests.support.venv import REPO, build_wheel

    return build_wheel(REPO, tmp_path_factory.mktemp("repo-wheel"))
