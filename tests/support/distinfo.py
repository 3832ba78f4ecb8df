"""A minimal installed plugin distribution, written straight onto a ``sys.path`` entry."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_plugin(
    directory: Path, module: str, source: str, entry_points: Mapping[str, str], name: str
) -> None:
    """Write ``source`` as ``directory/module.py`` and a ``.dist-info`` beside it naming the
    distribution ``name`` 0.1, with ``entry_points`` (``{"sampler-name": "Class"}``, in
    that module) in the ``agentdescent.samplers`` group: what pip would install, minus pip."""
    (directory / f"{module}.py").write_text(source, encoding="utf-8")
    dist_info = directory / f"{module}-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = [f"{sampler} = {module}:{target}" for sampler, target in entry_points.items()]
    (dist_info / "entry_points.txt").write_text(
        "[agentdescent.samplers]\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
