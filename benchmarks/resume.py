"""What ``agentdescent resume`` keeps of a sampler, and what a state file costs.

Usage::

    python benchmarks/resume.py            # both parts
    python benchmarks/resume.py --part save [--tasks 100 10000 1000000]
    python benchmarks/resume.py --part resume

**resume**: the real ``agentdescent`` CLI on the example workload (``examples/run_spec``,
the engine's offline agent, 11 train tasks in 2 shards, 2 workers). For each sampler a run
of ``2R`` rounds is compared with a run of ``R`` rounds that is then resumed (the engine
runs the spec's ``R`` rounds again on the same ledger): how many of the picks after the
resume equal the uninterrupted run's pick at the same position, and within the same round
in any order of its workers; with one worker at a time (``max_concurrency=1``) and with
both at once (the engine's default for a run spec). As a baseline, the same for two
uninterrupted runs.

**save**: milliseconds per ``record()`` of a sampler made with ``create(..., state=PATH)``
(one SQLite commit, WAL mode, ``synchronous=FULL``), beside the same sampler in memory, by
the number of tasks with statistics; and what a snapshot of that state costs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentdescent_sampling import TaskSampler, create  # noqa: E402  # after the path
from benchmarks._runspec import PickLog, Workspace, read_log  # noqa: E402

#: The ref the resume runs use, resolvable in the detached child through PYTHONPATH.
LOGGED = "benchmarks._runspec:logged_sampler"
WORKERS = 2


def engine_difficulty_weighted(log: str) -> TaskSampler:
    """The engine's own ``DifficultyWeighted``, logging its picks like ``logged_sampler``."""
    from agentdescent.sampling import DifficultyWeighted

    return PickLog(DifficultyWeighted(), Path(log))


#: label -> (ref config without the log, whether it keeps a state file)
SAMPLERS: dict[str, tuple[dict[str, Any], bool]] = {
    "round-robin, state file": ({"ref": LOGGED, "spec": "round-robin"}, True),
    "difficulty-weighted, state file": ({"ref": LOGGED, "spec": "difficulty-weighted"}, True),
    "informative-band, state file": ({"ref": LOGGED, "spec": "informative-band"}, True),
    "informative-band, no state file": ({"ref": LOGGED, "spec": "informative-band"}, False),
    "engine DifficultyWeighted": ({"ref": "benchmarks.resume:engine_difficulty_weighted"}, False),
}


def picks_of(
    root: Path, config: dict[str, Any], stateful: bool, rounds: int, concurrency: int, resume: bool
) -> list[str]:
    """The picks of one run (and its resume), in the order the sampler made them."""
    workspace = Workspace(root)
    log = root / "picks.jsonl"
    ref = {**config, "log": str(log)}
    if stateful:
        ref["state"] = str(root / "sampler.json")
    spec = workspace.spec(
        ref,
        allow=["agentdescent_sampling.refs", "benchmarks."],
        rounds=rounds,
        n_workers=WORKERS,
        patience=1000,
        max_concurrency=concurrency,
    )
    run_id = workspace.evolve(spec)["run_id"]
    if resume:
        status = workspace.resume(run_id)
        if status["state"] != "done":
            raise RuntimeError(f"resumed run ended {status['state']}: {status['error']}")
    return [entry["pick"] for entry in read_log(log) if "pick" in entry]


def agreement(first: Sequence[str], second: Sequence[str]) -> str:
    """``same/total`` picks at the same position."""
    same = sum(a == b for a, b in zip(first, second, strict=True))
    return f"{same}/{len(first)}"


def same_rounds(first: Sequence[str], second: Sequence[str]) -> str:
    """``same/total`` picks within the same round, in any order of the round's workers."""
    same = 0
    for start in range(0, len(first), WORKERS):
        mine = list(first[start : start + WORKERS])
        for pick in second[start : start + WORKERS]:
            if pick in mine:
                mine.remove(pick)
                same += 1
    return f"{same}/{len(first)}"


def resume_table(root: Path) -> list[str]:
    """The resume comparison, as markdown rows."""
    rows = [
        "| sampler | workers at once | stopped after | resumed = uninterrupted, same position "
        "| same round | uninterrupted twice, same position | same round |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, (config, stateful) in SAMPLERS.items():
        for concurrency, stop in ((1, 4), (1, 5), (WORKERS, 4)):
            where = root / f"{len(rows)}"
            whole = picks_of(where / "a", config, stateful, 2 * stop, concurrency, False)
            again = picks_of(where / "b", config, stateful, 2 * stop, concurrency, False)
            resumed = picks_of(where / "c", config, stateful, stop, concurrency, True)
            tail = stop * WORKERS
            rows.append(
                f"| {label} | {concurrency} | round {stop} of {2 * stop} | "
                f"{agreement(resumed[tail:], whole[tail:])} | "
                f"{same_rounds(resumed[tail:], whole[tail:])} | "
                f"{agreement(again, whole)} | {same_rounds(again, whole)} |"
            )
            print(rows[-1], flush=True)
    return rows


#: The cost of a durable record must stay below this at 10,000 tasks (median, 2 cores).
TARGET_MS_AT_10K = 2.0
TIMED = 200


def _median_ms(
    sampler: TaskSampler, keys: Sequence[str], beside: sqlite3.Connection | None = None
) -> tuple[float, float]:
    """Median milliseconds of ``record()`` over :data:`TIMED` picks and records (picks
    untimed), and of a bare commit into ``beside`` made before each: the disk's fsync at
    that moment, which the machine's other jobs change from second to second."""
    times, bare = [], []
    for step in range(TIMED):
        if beside is not None:
            start = time.perf_counter()
            beside.execute("BEGIN IMMEDIATE")
            beside.execute("INSERT INTO event (args) VALUES (?)", (f'["t", {step}]',))
            beside.execute("COMMIT")
            bare.append(time.perf_counter() - start)
        picked = sampler.pick([keys[step % len(keys)]], step)
        start = time.perf_counter()
        sampler.record(picked, float(step % 2))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, statistics.median(bare or [0.0]) * 1000


def _bare(path: Path) -> sqlite3.Connection:
    """A database committed to as a state file is: WAL, ``synchronous=FULL``."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE event (seq INTEGER PRIMARY KEY, args TEXT)")
    return db


def save_table(root: Path, sizes: Sequence[int]) -> list[str]:
    """Milliseconds per record with a state file and without one, as markdown rows."""
    from agentdescent_sampling import DurableSampler

    rows = [
        "| sampler | tasks with statistics | ms per record, in memory | ms per record, "
        f"state file (median of {TIMED}) | ms per bare commit, interleaved | ms per snapshot "
        "| file size |",
        "|---|---|---|---|---|---|---|",
    ]
    failures = []
    for name in ("difficulty-weighted", "informative-band", "fixable-first"):
        for tasks in sizes:
            keys = [f"task-{i}" for i in range(tasks)]
            plain, durable = create(name), create(name)
            for sampler in (plain, durable):
                for key in keys:  # statistics for every task
                    sampler.record(key, 0.0)
            in_memory, _ = _median_ms(plain, keys)
            path = root / f"{name}-{tasks}.sqlite"
            beside = _bare(root / f"bare-{name}-{tasks}.sqlite")
            started = time.perf_counter()
            with DurableSampler(durable, path) as kept:
                kept.record(keys[0], 1.0)  # a new file, made whole at open, and its first row
                snapshot = (time.perf_counter() - started) * 1000
                os.sync()  # the snapshot's pages reach the disk before the timing starts
                with_state, floor = _median_ms(kept, keys, beside)
                size = sum(p.stat().st_size for p in root.glob(f"{path.name}*"))
            beside.close()
            rows.append(
                f"| {name} | {tasks:,} | {in_memory:.3f} | {with_state:.3f} | {floor:.3f} | "
                f"{snapshot:,.0f} | {size / 1e6:,.1f} MB |"
            )
            print(rows[-1], flush=True)
            if tasks == 10_000 and with_state > TARGET_MS_AT_10K:
                failures.append(f"{name}: {with_state:.3f} ms > {TARGET_MS_AT_10K} ms")
            del plain, durable, kept
    if failures:
        print("over target at 10,000 tasks: " + "; ".join(failures), flush=True)
    return rows


def main() -> None:
    """Run the parts asked for and print markdown tables with the machine they ran on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("save", "resume", "both"), default="both")
    parser.add_argument(
        "--tasks", type=int, nargs="+", default=[100, 10_000, 1_000_000], metavar="N"
    )
    args = parser.parse_args()
    started = time.monotonic()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, "
        f"{platform.system()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}, agentdescent "
        f"{version('agentdescent')}, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as root:
        if args.part in ("save", "both"):
            save_table(Path(root), args.tasks)
        if args.part in ("resume", "both"):
            resume_table(Path(root))
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
