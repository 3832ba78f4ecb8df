"""A minimal installed plugin distribution, written straight onto a ``sys.path`` entry."""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from agentdescent_sampling import registry as registry_module
from agentdescent_sampling.policy import BUILTINS
from agentdescent_sampling.registry import Registry


def write_plugin(
    directory: Path, module: str, source: str, entry_points: Mapping[str, str], name: str
) -> None:
    """Write ``source`` as ``directory/module.py`` and a ``.dist-info`` beside it naming the
    distribution ``name`` 0.1, with ``entry_points`` (``{"sampler-name": "Class"}``, in
    that module; ``""`` for a hook-form entry point naming the module) in the
    ``agentdescent.samplers`` group: what pip would install, minus pip."""
    (directory / f"{module}.py").write_text(source, encoding="utf-8")
    dist_info = directory / f"{module}-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = [  # an empty target: a hook-form entry point, naming the module
        f"{sampler} = {module}{f':{target}' if target else ''}"
        for sampler, target in entry_points.items()
    ]
    (dist_info / "entry_points.txt").write_text(
        "[agentdescent.samplers]\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )


_plugin_modules = itertools.count()


def install_plugins(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    distributions: Mapping[str, tuple[str, Mapping[str, str]]],
    *,
    builtins: bool = True,
) -> Registry:
    """Put minimal plugin distributions on ``sys.path`` and make a registry of only them
    (and the built-ins, unless ``builtins`` is false) the default one.

    ``distributions`` maps each distribution's name to its module's source and its
    ``agentdescent.samplers`` entry points (``{"name": "Class"}``, in that module).
    """
    for distribution, (source, entry_points) in distributions.items():
        module = f"kit_test_plugin_{next(_plugin_modules)}"
        write_plugin(tmp_path, module, textwrap.dedent(source), entry_points, distribution)
    monkeypatch.syspath_prepend(str(tmp_path))
    disabled = () if builtins else [builtin.name for builtin in BUILTINS]
    registry = Registry(disable=disabled, only=tuple(distributions), strict=False)
    monkeypatch.setattr(registry_module, "_default", registry)
    return registry


FIRST_KEY = """
    from agentdescent_sampling.plugin import check_keys, check_score

    class FirstKey:
        name = "kit-dup"

        def pick(self, keys, round_index):
            return check_keys(keys)[0]

        def record(self, task_id, score):
            check_score(task_id, score)
"""
#: A hook-form plugin's module whose hook registers one class-form sampler, ``shuffled``.
HOOK_FORM = """
    from agentdescent_sampling.plugin import hookimpl

    class Shuffled:
        name = "shuffled"

        def pick(self, keys, round_index):
            return keys[0]

        def record(self, task_id, score):
            pass

    @hookimpl
    def agentdescent_register_samplers(register):
        register(Shuffled)
"""
#: ``FIRST_KEY`` with a ``pick`` that empties the shard it is handed: a contract violation.
EMPTIES_KEYS = FIRST_KEY.replace(
    "return check_keys(keys)[0]",
    "first = check_keys(keys)[0]\n            keys.clear()\n            return first",
)
#: Two distributions that both provide ``kit-dup``: a's breaks the contract, b's keeps it.
TWO_PROVIDERS = {
    "kit-test-dup-a": (EMPTIES_KEYS, {"kit-dup": "FirstKey"}),
    "kit-test-dup-b": (FIRST_KEY, {"kit-dup": "FirstKey"}),
}
