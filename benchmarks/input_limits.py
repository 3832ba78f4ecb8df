"""What hostile plugin metadata and configs at their limits cost, ours against an unbounded read.

Run it with ``python benchmarks/input_limits.py [--case NAME]``. Each
case writes its input to a temporary directory, then reads it twice, each time in a fresh
interpreter, one at a time: once as this package reads it (``ours``), once as a reader without
limits does (``unbounded``: ``importlib.metadata`` reading each entry point's distribution, or
the file's parser on its whole text). Each read prints its wall time and its peak memory beyond
the same interpreter's before the read (Linux's ``VmHWM``). Ours is held to **2 s and 64 MiB**
a read, the bound ``tests/test_bounded_parsing.py`` holds its parsers to: a measuring script,
not a test, it exits 1 when one of ours misses it, and asserts nothing else.

The cases are those ``SECURITY.md`` quotes:

- a plugin whose METADATA holds a 300 MB description after its headers: looking its sampler
  up, where ours reads the headers alone;
- a distribution declaring 66,000 sampler entry points: listing them, where ours refuses a
  distribution past ``discovery.MAX_ENTRY_POINTS`` (1,000) unimported;
- a 0.8 MB zip archive on ``sys.path`` whose ``entry_points.txt`` inflates to 400 MB:
  listing, where ours inflates a chunk at a time up to ``discovery.METADATA_LIMIT`` (1 MiB);
- config files at the limits a config is read to (1 MiB and 32,768 values, each dot and line
  break a value): the most values of each shape that ``spec_from_file`` still reads, and
  1 MiB of each, which it refuses before parsing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentdescent_sampling._files import (  # after the path
    CONFIG_MARKS,
    MAX_CONFIG_VALUES,
    YAML_MARKS,
    count_values,
)
from agentdescent_sampling.spec_file import _MAX_FILE_BYTES
from benchmarks._peak import measure

#: Ours is held to this many seconds and bytes of peak memory a read.
TARGET_SECONDS = 2.0
TARGET_BYTES = 64 << 20

GROUP = "agentdescent.samplers"
PLUGIN = "class Sampler:\n    name = 'good'\n    def pick(self, keys, round_index):\n" \
    "        return keys[0]\n    def record(self, task_id, score):\n        pass\n"  # fmt: skip
HEADERS = "Metadata-Version: 2.1\nName: {}\nVersion: 0.1\n"

#: What each read runs, after ``sys.path`` holds the case's directory: this package's read,
#: and a reader without limits.
LOOKUP = (
    "from agentdescent_sampling import Registry\nRegistry(disable=(), strict=False).create('good')"
)
LISTING = (
    "from agentdescent_sampling import Registry\nRegistry(disable=(), strict=False).available()"
)
UNBOUNDED_METADATA = (
    "from importlib.metadata import entry_points\n"
    f"[point.dist.metadata['Version'] for point in entry_points(group={GROUP!r})]"
)
OURS_CONFIG = (
    "from agentdescent_sampling import InvalidSamplerConfig, spec_from_file\n"
    "try:\n    spec_from_file(PATH)\nexcept InvalidSamplerConfig:\n    pass"
)
PARSERS = {
    # A line of strings is no TOML: the parser's cost is what it reads before it says so.
    ".toml": "import tomllib\ntry:\n    tomllib.loads(open(PATH, encoding='utf-8').read())\n"
    "except tomllib.TOMLDecodeError:\n    pass",
    ".yaml": "import yaml\nyaml.safe_load(open(PATH, encoding='utf-8').read())",
    ".json": "import json\njson.loads(open(PATH, encoding='utf-8').read())",
}


def _dist_info(directory: Path, module: str, metadata: bytes, entry_points: str) -> None:
    (directory / f"{module}.py").write_text(PLUGIN, encoding="utf-8")
    info = directory / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_bytes(metadata)
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def long_description(directory: Path, megabytes: int = 300) -> tuple[str, str]:
    """A plugin whose METADATA holds ``megabytes`` of description after its headers."""
    line = b"a line of a README of a plugin, written out at length.\n"
    metadata = HEADERS.format("long-dist").encode() + b"\n"
    _dist_info(directory, "long_plugin", metadata, f"[{GROUP}]\ngood = long_plugin:Sampler\n")
    block = line * ((1 << 20) // len(line))
    with open(directory / "long_plugin-0.1.dist-info" / "METADATA", "ab") as file:
        for _ in range(megabytes * 1_000_000 // len(block)):
            file.write(block)
    return str(directory), ""


def many_entry_points(directory: Path) -> tuple[str, str]:
    """A distribution declaring 66,000 sampler entry points."""
    points = "".join(f"s{i} = many_plugin:Sampler\n" for i in range(66_000))
    _dist_info(
        directory, "many_plugin", HEADERS.format("many-dist").encode(), f"[{GROUP}]\n{points}"
    )
    return str(directory), ""


def inflating_zip(directory: Path, megabytes: int = 400) -> tuple[str, str]:
    """A zip archive of a plugin whose ``entry_points.txt`` inflates to ``megabytes``."""
    archive = directory / "plugins.zip"
    padding = "# padding\n" * (megabytes * 100_000)
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("zip_plugin.py", PLUGIN)
        zipped.writestr("zip_plugin-0.1.dist-info/METADATA", HEADERS.format("zip-dist"))
        zipped.writestr(
            "zip_plugin-0.1.dist-info/entry_points.txt",
            f"[{GROUP}]\ngood = zip_plugin:Sampler\n{padding}",
        )
    return str(archive), ""


#: Config shapes that make many values of few characters, as in
#: ``tests/test_hostile_configs.py``: each is its suffix, its head, and a piece repeated
#: (``{}`` numbers the pieces, so that no table or key is declared twice).
CONFIGS: dict[str, tuple[str, str, str]] = {
    "yaml block list": (".yaml", "task_sampler: {name: round-robin}\nx:\n", "- 0\n"),
    "yaml flow lists": (".yaml", "task_sampler: {name: round-robin}\nx: [", "[],"),
    "toml dotted headers": (".toml", '[task_sampler]\nname = "round-robin"\n', "[h.p{}.q.r]\n"),
    "json object": (".json", '{"task_sampler": {"name": "round-robin"}, "x": {', '"k{}": 0,'),
    # Carriage returns break YAML lines as line feeds do: a file of them was one line to the
    # count, and 71,000 values passed the limit.
    "yaml lines broken by CR": (".yaml", "task_sampler: {name: round-robin}\rx:\r", "- 0\r"),
    # PyYAML reads a base-60 number (1:1:1) in time that grows with the square of its length.
    "yaml base-60 number": (".yaml", "task_sampler:\n  name: round-robin\n  c: 1", ":1"),
    # A string of escapes was searched again from each escape to its end, and each string
    # of a line of them to the line's end.
    "toml escapes": (".toml", '[task_sampler]\nname = "round-robin"\nnote = "', "\\\\"),
    "toml line of strings": (".toml", '[task_sampler]\nname = "round-robin"\nx = ', '"" '),
}


def config(shape: str, *, at_most_values: bool) -> Callable[[Path], tuple[str, str]]:
    """The config of ``shape``: with ``at_most_values``, the most pieces ``spec_from_file``
    still reads (a binary search on the values it counts before parsing); else as many as fit
    in the 1 MiB a config is read to."""
    suffix, head, piece = CONFIGS[shape]
    marks = YAML_MARKS if suffix == ".yaml" else CONFIG_MARKS
    closing = {
        "yaml flow lists": "]\n",
        "json object": '"end": 0}}',
        "yaml base-60 number": "\n",
        "toml escapes": '"\n',
    }.get(shape, "")

    def text(pieces: int) -> str:
        return head + "".join(map(piece.format, range(pieces))) + closing

    def write(directory: Path) -> tuple[str, str]:
        path = directory / f"run{suffix}"
        if not at_most_values:
            size, pieces = len(head) + len(closing), 0
            while size + len(piece.format(pieces)) <= _MAX_FILE_BYTES:
                size += len(piece.format(pieces))
                pieces += 1
            path.write_text(text(pieces))
            return str(directory), str(path)
        low, high = 1, MAX_CONFIG_VALUES
        while low < high:
            middle = (low + high + 1) // 2
            if count_values(text(middle), marks) <= MAX_CONFIG_VALUES:
                low = middle
            else:
                high = middle - 1
        path.write_text(text(low))
        return str(directory), str(path)

    return write


#: Each case: what writes its input (a ``sys.path`` entry and a file's path), the read of ours
#: and the unbounded read.
CASES: dict[str, tuple[Callable[[Path], tuple[str, str]], str, str]] = {
    "long description, lookup": (long_description, LOOKUP, UNBOUNDED_METADATA),
    "66,000 entry points, list": (many_entry_points, LISTING, UNBOUNDED_METADATA),
    "0.8 MB zip to 400 MB, list": (inflating_zip, LISTING, UNBOUNDED_METADATA),
    **{
        f"{shape}, {extent}": (
            config(shape, at_most_values=extent == "most values read"),
            OURS_CONFIG,
            PARSERS[CONFIGS[shape][0]],
        )
        for shape in CONFIGS
        for extent in ("most values read", "1 MiB")
    },
}


def read(entry: str, path: str, code: str) -> tuple[float, int]:
    """Seconds and bytes of peak memory (beyond the interpreter's before it) that ``code``
    takes in a fresh interpreter, ``entry`` first on its ``sys.path``."""
    return measure(
        "sys.path.insert(0, sys.argv[1])\nPATH = sys.argv[2]",
        "exec(sys.argv[3])",
        entry,
        path,
        code,
    )


def main() -> None:
    """Measure each case, ours then unbounded, and print a row each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=CASES)
    arguments = parser.parse_args()
    print(f"{'case':44} {'MB input':>8}   {'ours s':>7} {'MB':>6}   {'unbounded s':>11} {'MB':>6}")
    missed = []
    for case in arguments.case or CASES:
        write, ours, unbounded = CASES[case]
        with tempfile.TemporaryDirectory() as scratch:
            directory = Path(scratch)
            entry, path = write(directory)
            size = sum(file.stat().st_size for file in directory.rglob("*") if file.is_file())
            seconds, peak = read(entry, path, ours)
            free_seconds, free_peak = read(entry, path, unbounded)
        print(
            f"{case:44} {size / 1e6:>8.1f}   {seconds:>7.2f} {peak / 1e6:>6.0f}"
            f"   {free_seconds:>11.2f} {free_peak / 1e6:>6.0f}",
            flush=True,
        )
        if seconds > TARGET_SECONDS or peak > TARGET_BYTES:
            missed.append(case)
    targets = {"target_seconds": TARGET_SECONDS, "target_bytes": TARGET_BYTES}
    print(json.dumps({**targets, "missed": missed}))
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
