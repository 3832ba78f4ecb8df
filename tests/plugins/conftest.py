"""A fresh venv with this package and the plugins/ distributions, installed as a user would."""

from __future__ import annotations

import pytest

from tests.support.venv import REPO, Venv

HARDEST = REPO / "plugins" / "agentdescent-sampling-hardest"
EXTRAS = REPO / "plugins" / "agentdescent-sampling-extras"


@pytest.fixture(scope="session")
def plugins_env(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """This package, then each plugin with its test extra."""
    env = Venv.create(tmp_path_factory.mktemp("plugins") / "venv", REPO)
    env.pip("install", "--no-build-isolation", f"{HARDEST}[test]", f"{EXTRAS}[test]")
    return env
