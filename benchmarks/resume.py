"""What ``agentdescent resume`` keeps of a sampler, and what a state file costs.

Usage::

    python benchmarks/resume.py            # both parts, about 10 minutes on a busy 2-core box
    python benchmarks/resume.py --part save
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
(a JSON dump, an fsync and a rename each time), by the number of tasks with statistics.
"""

from __future__ import annotations

import argparse
import os
import platform
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
from tests.engine.runspec_cli import Workspace, read_log  # noqa: E402

#: The ref the resume runs use, resolvable in the detached child through PYTHONPATH.
LOGGED = "tests.engine.runspec_cli:logged_sampler"
WORKERS = 2


def engine_difficulty_weighted(log: str) -> TaskSampler:
    """The engine's own ``DifficultyWeighted``, logging its picks like ``logged_sampler``."""
    from agentdescent.sampling import DifficultyWeighted

    from tests.engine.runspec_cli import _PickLog

    return _PickLog(DifficultyWeighted(), Path(log))


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
        allow=["agentdescent_sampling.", "tests.engine.", "benchmarks."],
        rounds=rounds,
        n_workers=WORKERS,
        patience=1000,
        max_concurrency=concurrency,
    )
    run_id = workspace.evolve(spec)["run_id"]
    if resume:
        done = workspace.cli("resume", run_id)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        status = workspace.wait_for_exit(run_id)
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


def save_table(root: Path) -> list[str]:
    """Milliseconds per record with a state file, as markdown rows."""
    rows = ["| sampler | tasks with statistics | ms per record (median of 30) | file size |"]
    rows.append("|---|---|---|---|")
    for name in ("round-robin", "difficulty-weighted", "informative-band"):
        for tasks in (100, 1_000, 10_000):
            path = root / f"{name}-{tasks}.json"
            sampler = create(name, state=path)
            keys = [f"task-{i}" for i in range(tasks)]
            for key in keys:  # statistics for every task, without a save each
                sampler.wrapped.record(key, 0.0)  # type: ignore[attr-defined]
            times = []
            for key in keys[:30]:
                start = time.perf_counter()
                sampler.record(key, 1.0)
                times.append(time.perf_counter() - start)
            rows.append(
                f"| {name} | {tasks:,} | {statistics.median(times) * 1000:.1f} | "
                f"{os.path.getsize(path) / 1000:,.0f} kB |"
            )
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    """Run the parts asked for and print markdown tables with the machine they ran on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("save", "resume", "both"), default="both")
    args = parser.parse_args()
    started = time.monotonic()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, "
        f"{platform.system()}, Python {platform.python_version()}, agentdescent "
        f"{version('agentdescent')}, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as root:
        if args.part in ("save", "both"):
            save_table(Path(root))
        if args.part in ("resume", "both"):
            resume_table(Path(root))
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
