"""A fresh venv with this package and the plugins/ distributions, installed as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.venv import REPO, Venv

HARDEST = REPO / "plugins" / "agentdescent-sampling-hardest"
EXTRAS = REPO / "plugins" / "agentdescent-sampling-extras"


@pytest.fixture(scope="session")
def plugins_env(tmp_path_factory: pytest.TempPathFactory, repo_wheel: Path) -> Venv:
    """This package, then each plugin with its test extra."""
    path = tmp_path_factory.mktemp("plugins") / "venv"
    # with_pip: the author's guide runs `pip install` in it, as its reader would.
    return Venv.create(path, repo_wheel, f"{HARDEST}[test]", f"{EXTRAS}[test]", with_pip=True)
