"""Another process that holds a state file, for the tests of what a second opener sees."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

#: Builds ``argv[1]`` with ``state=argv[2]``, picks and records each shard of ``argv[3:]``
#: (comma-separated keys), says "ready" and holds the file until its stdin closes.
_HOLD = """
import sys
from agentdescent_sampling import create

sampler = create(sys.argv[1], state=sys.argv[2])
for round_index, shard in enumerate(sys.argv[3:]):
    sampler.record(sampler.pick(shard.split(","), round_index), float(round_index % 2 == 0))
print("ready", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def holding(spec: str, path: Path, *shards: str) -> Iterator[subprocess.Popen[str]]:
    """A process that has recorded one pick from each shard into ``path`` and holds it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, spec, str(path), *shards],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline() == "ready\n"
        yield holder
    finally:
        holder.stdin.close()
        holder.wait()
