"""The real ``agentdescent`` CLI on a throwaway copy of ``examples/run_spec``.

Shared by ``benchmarks/resume.py`` and the run-spec tests (``tests/engine/``), which import
it from here: a script in ``benchmarks/`` imports nothing from ``tests/``.

Each run gets a directory with the example's skill and cases, a ``HOME`` and an
``AGENTDESCENT_HOME`` of its own, and writes specs that differ from the example only in
the sampler ref and the ``evolve`` block. Runs use the engine's offline agent and
reflector (``agentdescent.demo``), so nothing calls a model.

:func:`logged_sampler` is a ref target (``benchmarks._runspec:logged_sampler``, resolvable
in the run's process through ``PYTHONPATH``; a spec lists ``"benchmarks."`` in its
``allow``): our :func:`~agentdescent_sampling.refs.from_run_spec` sampler, with every pick and
record appended to a log file, so two runs' picks can be compared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentdescent_sampling import TaskSampler
from agentdescent_sampling.refs import from_run_spec
from agentdescent_sampling.runspec import _tap

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "run_spec"
CLI = Path(sys.executable).with_name("agentdescent")
#: Long enough for a loaded two-core machine; a run here takes a few seconds.
TIMEOUT = 120.0


class Workspace:
    """A throwaway directory to run the CLI in, with the example's skill and cases."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = root / "runs"
        self.home = root / "home"
        self.home.mkdir(parents=True)
        shutil.copytree(EXAMPLE / "csv-total", root / "csv-total")
        shutil.copy(EXAMPLE / "cases.jsonl", root / "cases.jsonl")

    def env(self) -> dict[str, str]:
        """The CLI's environment: this workspace's homes; the repo importable for refs."""
        return {
            **os.environ,
            "HOME": str(self.home),
            "AGENTDESCENT_HOME": str(self.home),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }

    def spec(
        self,
        task_sampler: Any,
        *,
        name: str = "spec.json",
        policies: dict[str, Any] | None = None,
        allow: Sequence[str] = ("agentdescent_sampling.refs",),
        **evolve: Any,
    ) -> Path:
        """Write the example spec with another ``policies.task_sampler`` and ``evolve`` block."""
        spec = json.loads((EXAMPLE / "spec.json").read_text(encoding="utf-8"))
        spec["target"] = str(self.root / "csv-total")
        spec["data"]["path"] = str(self.root / "cases.jsonl")
        spec["policies"] = {"task_sampler": task_sampler, **(policies or {})}
        spec["allow"] = list(allow)
        spec["evolve"] = {**spec["evolve"], **evolve}
        path = self.root / name
        path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
        return path

    def cli(self, *args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``agentdescent --store STORE ARGS`` and capture its output."""
        return subprocess.run(
            [str(CLI), "--store", str(self.store), *map(str, args)],
            cwd=cwd or self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    def evolve(self, spec: Path, *flags: str) -> dict[str, Any]:
        """``agentdescent --json evolve SPEC``; the run's JSON summary."""
        done = self.cli("--json", "evolve", spec, *flags)
        assert done.returncode == 0, done.stdout + done.stderr
        summary: dict[str, Any] = json.loads(done.stdout)
        return summary

    def status(self, run_id: str) -> dict[str, Any]:
        """The run's ``status.json``, as ``agentdescent status`` reads it."""
        status: dict[str, Any] = json.loads(
            (self.store / run_id / "status.json").read_text(encoding="utf-8")
        )
        return status

    def log_tail(self, run_id: str, lines: int = 40) -> str:
        """The last lines of a detached run's ``log.txt``, for a failure message."""
        log = self.store / run_id / "log.txt"
        if not log.exists():
            return "\n(no log.txt)"
        return "\n" + "\n".join(log.read_text(encoding="utf-8").splitlines()[-lines:])

    def resume(self, run_id: str) -> dict[str, Any]:
        """``agentdescent resume RUN_ID``, waited for: how the resumed run ended (:meth:`ended`)."""
        before = _stamp(self.store / run_id / "result.json")
        done = self.cli("resume", run_id)
        if done.returncode != 0:
            raise RuntimeError(f"agentdescent resume {run_id} failed:\n{done.stdout}{done.stderr}")
        return self.ended(run_id, before)

    def ended(self, run_id: str, result_before: tuple[int, int] | None) -> dict[str, Any]:
        """:meth:`wait_for_exit`, then the run's status, mended where the engine overwrote it.

        agentdescent 0.7.0 writes a launched run's pid and ``"state": "running"`` after the
        run's process has started, so a run that ends first (a resume of 4 rounds, seen
        beside three CI lanes) has its ``done`` or ``failed`` overwritten and reads
        ``running`` with no process left. Then the run's result file says how it ended: if
        it changed since ``result_before`` (:func:`_stamp` of it before the launch), the run
        finished (``done``, or ``failed`` with the error it saved); if not, it failed, and
        the engine's own ``status`` puts the error from its log in.
        """
        status = self.wait_for_exit(run_id)
        if status["state"] != "running":
            return status
        result = self.store / run_id / "result.json"
        if _stamp(result) == result_before:
            self.cli("status", run_id)  # the engine marks a run with no process failed
            return self.status(run_id)
        error = json.loads(result.read_text(encoding="utf-8"))["error"]
        return {**status, "state": "failed" if error else "done", "error": error}

    def wait_for_exit(self, run_id: str) -> dict[str, Any]:
        """Poll a detached run until every process it started has exited; its last status.

        The run leads a process group of its own, and ``agentdescent cancel`` returns once
        the run's own process is gone; a ``git`` it started can outlive it for a moment.
        """
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            status = self.status(run_id)
            if not _group_alive(status.get("pid")):
                return status
            time.sleep(0.1)
        raise AssertionError(f"run {run_id} did not exit in {TIMEOUT}s: {self.status(run_id)}")

    def clear_stale_ledger_lock(self, run_id: str) -> bool:
        """Remove the ledger's ``index.lock`` that a stopped run left behind; whether one was.

        Call it only once :meth:`wait_for_exit` has returned: then nothing can hold the lock.
        A cancel or a SIGKILL can stop the engine's ``git`` mid-write, and ``agentdescent
        resume`` then fails with ``index.lock': File exists`` (agentdescent 0.7.0); removing
        the file is git's own advice, and what the README tells a user to do.
        """
        lock = self.store / run_id / "ledger" / ".git" / "index.lock"
        if not lock.exists():
            return False
        lock.unlink()
        return True

    def discard_unfinished_ledger_write(self, run_id: str) -> None:
        """Put the ledger's work tree back to its last commit, after a stopped run.

        The same agentdescent 0.7.0 fault as the lock: a cancel, a kill or a resume that
        failed can leave the ledger's files half-written but uncommitted, and the next
        resume fails at ``git checkout -q dev`` with "Your local changes ... would be
        overwritten". What was not committed was not the run's; the sampler's own state is
        in its state file, which this leaves alone.
        """
        subprocess.run(
            ["git", "-C", str(self.store / run_id / "ledger"), "reset", "-q", "--hard"],
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )


def _stamp(path: Path) -> tuple[int, int] | None:
    """A file's modification time and size, or None if there is no file."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _group_alive(pgid: int | None) -> bool:
    """Whether a live process is left in process group ``pgid`` (Linux).

    Zombies do not count, as in the engine's own liveness check: where nothing reaps the
    run's orphans, ``killpg(pgid, 0)`` would answer for them forever.
    """
    if pgid is None:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # the process ended while we looked
        if int(group) == pgid and state not in ("Z", "X"):
            return True
    return False


class PickLog:
    """A sampler that appends ``[round_index, picked]`` and ``[task, score]`` lines to a log."""

    def __init__(self, sampler: TaskSampler, log: Path) -> None:
        self.sampler = sampler
        self.log = log

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        picked = self.sampler.pick(keys, round_index)
        self._append({"round": round_index, "shard": list(keys), "pick": picked})
        return picked

    def record(self, task_id: str, score: float) -> None:
        self.sampler.record(task_id, score)
        self._append({"record": task_id, "score": score})

    def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
        # logged_sampler() links only a sampler that takes evidence.
        self.sampler.evidence(task_id, gain, committed)  # type: ignore[attr-defined]
        self._append({"evidence": task_id, "gain": gain, "committed": committed})

    def _append(self, entry: dict[str, Any]) -> None:
        with self.log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def logged_sampler(log: str, link: str | None = None, **config: Any) -> TaskSampler:
    """``from_run_spec(**config)``, logging every pick, record and (with ``link``) every
    evidence card it is told of to ``log``."""
    sampler = from_run_spec(**config)
    if link is not None and not callable(getattr(sampler, "evidence", None)):
        raise TypeError(
            f"logged_sampler: link={link!r} wires the engine's evidence to a sampler that does "
            f"not take it ({type(sampler).__name__} has no evidence()); drop the link"
        )
    logged = PickLog(sampler, Path(log))
    if link is not None:
        _tap(link).attach(logged)
    return logged


class Paced:
    """A sampler that waits ``pause`` seconds after each record, as a slow rollout would."""

    def __init__(self, sampler: TaskSampler, pause: float) -> None:
        self.sampler = sampler
        self.pause = pause

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return self.sampler.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        self.sampler.record(task_id, score)
        time.sleep(self.pause)


def paced_sampler(pause: float, **config: Any) -> TaskSampler:
    """``from_run_spec(**config)``, waiting ``pause`` seconds after each record: the offline
    agent answers at once, and a run must still be going when ``agentdescent cancel`` (a new
    process, on a machine running other tests) or a kill reaches it."""
    return Paced(from_run_spec(**config), pause)


def read_log(log: Path) -> list[dict[str, Any]]:
    """The entries :func:`logged_sampler` wrote, in order."""
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
