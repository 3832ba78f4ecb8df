"""What reading a JSON document at the value limit costs, in time and memory, by its shape.

Run it with ``python benchmarks/state_limit.py [--values N] [--shape NAME] [--size-limit]``.
A state file, a rollout-log line or a JSON spec is refused unparsed once it holds more than
``MAX_VALUES`` (2**24) values as ``count_values`` counts them; the limit is meant to bound a
parse to a gibibyte of objects beyond the text and the characters of its strings, **at most 64
bytes a counted value**, whatever the document's shape. For each shape below, the script
writes a document of about ``N`` counted values (default: the limit) and reads it with
``read_state_file`` in a fresh interpreter, one at a time, and prints its wall time, its peak
memory beyond the same interpreter's before the read (Linux's ``VmHWM``), less the text's
size, per counted value, against the 64-byte target, which is for the limit: far below it, the
interpreter's fixed costs (whole pages and arenas) swell the figure. A measuring script, not a
test: it exits 1 when a shape misses the target, and asserts nothing else.

The shapes are the ways a document makes many objects from few characters (each ``,``,
``"`` and ``:`` counted once, ``[`` and ``{`` twice, a line break not at all), and the states
of the two built-ins at the most tasks a state file takes. With ``--size-limit``, three more
are read at the 256 MiB a state file may hold, whose cost is in the length of a few values: a
string that one escape makes four bytes a character once decoded, one that a character in the
file makes so (and the file's text with it), and whole numbers of 4,300 digits, the most Python
reads. Their target is **at most 10 bytes of peak memory a byte of text**, 2.7 GB at the limit.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentdescent_sampling._files import MAX_VALUES, count_values  # after the path
from agentdescent_sampling.state import _MAX_FILE_BYTES
from benchmarks._peak import measure

#: The target: bytes of objects a counted value may cost a parse, beyond the text.
TARGET = 64
#: The target of a :data:`SIZED` shape: bytes of peak memory a byte of text may cost a parse.
SIZED_TARGET = 10


def _document(body: str, sampler: str) -> str:
    return (
        f'{{"format": "agentdescent-sampling/state", "sampler": "{sampler}", "records": 0, '
        f'"rounds": 0, "state": {body}}}'
    )


def _joined(opening: str, items: Callable[[int], str], n: int, closing: str) -> str:
    return opening + ",".join(map(items, range(n))) + closing


#: Each shape: how many items make about ``values`` counted values, and the document of them.
SHAPES: dict[str, tuple[int, Callable[[int], str]]] = {
    "one object of distinct keys": (4, lambda n: _joined("{", '"{:x}":0'.format, n, "}")),
    "objects of one distinct key": (6, lambda n: _joined("[", '{{"{:x}":0}}'.format, n, "]")),
    "empty objects": (3, lambda n: "[" + ",".join(["{}"] * n) + "]"),
    "empty lists": (3, lambda n: "[" + ",".join(["[]"] * n) + "]"),
    "distinct strings": (3, lambda n: _joined("[", '"{:x}"'.format, n, "]")),
    "floats": (1, lambda n: "[" + ",".join(["0.5"] * n) + "]"),
    "large integers": (1, lambda n: "[" + ",".join(["123456789"] * n) + "]"),
    "lists of one number": (3, lambda n: "[" + ",".join(["[0]"] * n) + "]"),
    "line breaks": (1, lambda n: "[" + ",\n".join(["0"] * n) + "]"),
    "lists nested 30 deep": (61, lambda n: "[" + ",".join(["[" * 30 + "0" + "]" * 30] * n) + "]"),
}

#: Shapes whose cost is in the length of a few values, not their number: each makes a
#: document of about the given size in bytes.
SIZED: dict[str, Callable[[int], str]] = {
    "one string with an escape": lambda size: '"' + "a" * size + '\\ud83d\\ude00"',
    "one string with an emoji": lambda size: '"' + "a" * (size - 4) + '\U0001f600"',
    "4,300-digit integers": lambda size: "[" + ",".join(["9" * 4300] * (size // 4301)) + "]",
}


def _state(
    sampler: str, rows: Callable[[int], str], per_task: int
) -> tuple[int, Callable[[int], str]]:
    def body(n: int) -> str:
        params = '{"pass_threshold": 0.999}'
        if sampler == "fixable-first":
            tasks = _joined("{", rows, n, "}")
            return (
                f'{{"sampler": "fixable-first", "version": 1, "params": {params}, "picks": '
                f'{n}, "changes": 0, "tasks": {tasks}, "evidence": [[1, 2], [1, 2], [1, 2], '
                f"[1, 2]]}}"
            )
        stats = _joined("{", rows, n, "}")
        return (
            f'{{"sampler": "difficulty-weighted", "version": 1, "params": {{"c": 0.2, '
            f'"pass_threshold": 0.999}}, "picks": 0, "stats": {stats}}}'
        )

    return per_task, body


STATES: dict[str, tuple[int, Callable[[int], str]]] = {
    "fixable-first state": _state("fixable-first", '"task-{0}": [1, 2, 0, 0, {0}, 0]'.format, 11),
    "difficulty-weighted state": _state("difficulty-weighted", '"task-{}": [1, 2]'.format, 7),
}


def write(shape: str, values: int, directory: str) -> tuple[str, int, int]:
    """Write the document of ``shape`` at about ``values`` counted values (of a
    :data:`SIZED` shape, about ``values`` bytes): its path, its counted values and its size
    in bytes."""
    if shape in SIZED:
        text = _document(SIZED[shape](values), "none")
    else:
        per_item, body = {**SHAPES, **STATES}[shape]
        sampler = shape.removesuffix(" state") if shape in STATES else "none"
        text = _document(body(max(values - 200, per_item) // per_item), sampler)
    path = os.path.join(directory, "document.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path, count_values(text), len(text.encode("utf-8"))


def read(path: str) -> tuple[float, int]:
    """Seconds and bytes of peak memory (beyond the interpreter's before it) that reading
    ``path`` takes in a fresh interpreter. The peak also holds the file's text, read in
    pieces and decoded: the script subtracts the text's size once."""
    return measure(
        "from agentdescent_sampling.state import read_state_file",
        "read_state_file(sys.argv[1])",
        path,
    )


def main() -> None:
    """Measure each shape at the limit (or ``--values``), one at a time, and print a row each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=MAX_VALUES, help="(default 2**24)")
    parser.add_argument("--shape", action="append", choices=[*SHAPES, *STATES, *SIZED])
    parser.add_argument(
        "--size-limit",
        action="store_true",
        help="also the shapes sized to the 256 MiB a state file may hold (2.2 GB of memory)",
    )
    arguments = parser.parse_args()
    shapes = arguments.shape or [*SHAPES, *STATES, *(SIZED if arguments.size_limit else ())]
    # B/value: peak memory less the text, per counted value; of a sized shape, B/byte: peak
    # memory per byte of text (its targets: TARGET and SIZED_TARGET).
    print(f"{'shape':28} {'counted':>11} {'MB text':>8} {'seconds':>8} {'MB peak':>8} B/value")
    missed = []
    with tempfile.TemporaryDirectory() as directory:
        for shape in shapes:
            budget = _MAX_FILE_BYTES - 1024 if shape in SIZED else arguments.values
            path, values, size = write(shape, budget, directory)
            seconds, peak = read(path)
            per_value = (peak - size) / values
            ratio = f"{peak / size:>7.1f} B/byte" if shape in SIZED else f"{per_value:>7.1f}"
            print(
                f"{shape:28} {values:>11,} {size / 1e6:>8.0f} {seconds:>8.1f} "
                f"{peak / 1e6:>8.0f} {ratio}",
                flush=True,
            )
            if peak > SIZED_TARGET * size if shape in SIZED else per_value > TARGET:
                missed.append(shape)
    targets = {"target_bytes_per_value": TARGET, "sized_target_bytes_per_byte": SIZED_TARGET}
    print(json.dumps({**targets, "missed": missed}))
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
