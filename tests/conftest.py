import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
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


#: Runs ``sh -c SCRIPT sh SOURCE TARGET COMMAND...``: a tmpfs over TARGET holding SOURCE's files,
#: mounted read-only, then COMMAND, in a user and mount namespace of its own (no root needed).
_ON_READ_ONLY = (
    'mount -t tmpfs tmpfs "$2" && cp -a "$1"/. "$2"/ && mount -o remount,ro "$2" && shift 2 '
    '&& exec "$@"'
)


@pytest.fixture(scope="session")
def read_only_file_system() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run(source, target, *command)``: run ``command`` with the directory ``target`` on a
    file system mounted read-only that holds ``source``'s files (Errno 30 on every write).

    Made by ``unshare`` in namespaces of the command's own; a skip where this machine cannot.
    """

    def run(source: Path, target: Path, *command: str) -> subprocess.CompletedProcess[str]:
        target.mkdir(exist_ok=True)
        return subprocess.run(
            ["unshare", "-rm", "sh", "-c", _ON_READ_ONLY, "sh", str(source), str(target), *command],
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip

    if shutil.which("unshare") is None:
        pytest.skip("no unshare to mount a read-only file system with")
    with tempfile.TemporaryDirectory() as probe:
        Path(probe, "files").mkdir()
        target = Path(probe, "ro")
        done = run(Path(probe, "files"), target, "sh", "-c", f"! touch {target}/x 2>/dev/null")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a read-only file system here: {done.stderr.strip()[:200]}")
    return run


@pytest.fixture(scope="session")
def repo_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This package built into a wheel once per session, for every throwaway venv."""
    from tests.support.venv import REPO, build_wheel

    return build_wheel(REPO, tmp_path_factory.mktemp("repo-wheel"))
