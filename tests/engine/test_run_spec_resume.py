"""Stop a run, ``agentdescent resume`` it, and the sampler keeps what it learned.

The real CLI in a throwaway directory (see ``benchmarks/_runspec.py``): a detached run is
cancelled (then resumed past a stale ledger lock) or killed with SIGKILL mid-run, then
resumed; and a run that stopped on its round budget and was resumed is compared pick by
pick with one that never stopped.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import create, errors
from agentdescent_sampling.policy import BUILTINS
from benchmarks._runspec import Workspace, read_log
from tests.engine.runspec_cli import read_state, wait_for_records

pytest.importorskip(
    "agentdescent",
    reason="drives the agentdescent CLI: python -m pip install agentdescent==0.7.0",
)

# The CLI's cancel, kill and resume, several runs each: the same on every Python, so only
# the full session runs them (tests/conftest.py).
pytestmark = pytest.mark.version_independent

WORKERS = 2
#: The detached runs' sampler waits PAUSE seconds after each record, so that `agentdescent
#: cancel` or a kill, a new process on a machine running other tests, lands mid-run: at least
#: ROUNDS x PAUSE = 3.2 s of run after the first records (the offline agent answers at once,
#: and 16 rounds once ended before the cancel beside three other CI lanes).
ROUNDS = 16
PACED = "benchmarks._runspec:paced_sampler"
PAUSE = 0.2
#: A run stops on its round budget here, never on patience; max_concurrency=1 makes
#: the engine run each round's workers in order, so the picks of a run are repeatable.
STEADY = {"n_workers": WORKERS, "patience": 1000, "max_concurrency": 1}


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A throwaway directory with the example's skill and cases, and homes of its own."""
    return Workspace(tmp_path)


def _trials(document: dict[str, Any]) -> dict[str, int]:
    return {task: trials for task, (_, trials) in document["state"]["stats"].items()}


def _start_detached(workspace: Workspace, state: Path) -> str:
    sampler = {"ref": PACED, "pause": PAUSE, "spec": "difficulty-weighted", "state": str(state)}
    spec = workspace.spec(
        sampler, allow=["agentdescent_sampling.refs", "benchmarks."], rounds=ROUNDS, **STEADY
    )
    run_id: str = workspace.evolve(spec, "--detach")["run_id"]
    return run_id


#: What names this package in a failed run's status or log: its modules, the test's sampler
#: wrappers, its error classes and the built-in samplers' message prefixes (the engine keeps
#: only ``Type: message`` of a sampler's error).
_OURS = (
    "agentdescent_sampling",
    "benchmarks._runspec",
    *(name for name in dir(errors) if name.endswith(("Error", "Config"))),
    *(f"{builtin.name}:" for builtin in BUILTINS),
)


def _resume_once(workspace: Workspace, run_id: str, failures: list[str]) -> bool:
    """Resume the stopped run ``run_id`` and wait for it: True if it finished; if not, its
    status and log are appended to ``failures``, and a failure that names this package
    fails the test at once. A finish after earlier failures is reported as a warning."""
    workspace.wait_for_exit(run_id)
    workspace.clear_stale_ledger_lock(run_id)
    status = workspace.resume(run_id)
    if status["state"] == "done":
        if failures:
            message = "a resume finished after the engine failed:\n" + "\n\n".join(failures)
            warnings.warn(message, stacklevel=2)
        return True
    failures.append(json.dumps(status) + workspace.log_tail(run_id))
    if any(name in failures[-1] for name in _OURS):
        raise AssertionError("the resumed run failed in this package:\n" + failures[-1])
    return False


def _resume(
    workspace: Workspace, run_id: str, state: Path | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Resume ``run_id`` until it finishes: its status, and the sampler's state file (if
    given) as the resume that finished found it (a failed resume may have recorded rounds
    before it)."""
    failures: list[str] = []
    # agentdescent 0.7.0's resume failed now and then at round 0, in the engine itself: a
    # cancel or a kill had stopped the ledger's git mid-write, and its index.lock was left
    # behind. So the run's processes are waited for, a stale lock is removed as the README
    # tells a user to, and a failed resume whose status and log do not name this package is
    # resumed again (after putting back a ledger work tree left half-written, the same
    # fault); every failure is shown if the last fails too.
    for _ in range(3):
        if failures and "would be overwritten by checkout" in failures[-1]:
            workspace.discard_unfinished_ledger_write(run_id)
        before = {} if state is None else read_state(state)
        if _resume_once(workspace, run_id, failures):
            return workspace.status(run_id), before
    raise AssertionError("the resumed run did not finish:\n" + "\n\n".join(failures))


def test_cancel_and_resume_keep_the_sampler_statistics_and_a_stale_lock_loses_nothing(
    workspace: Workspace,
) -> None:
    state = workspace.root / "sampler.sqlite"
    run_id = _start_detached(workspace, state)
    wait_for_records(state, WORKERS)

    cancelled = workspace.cli("cancel", run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert workspace.wait_for_exit(run_id)["state"] == "cancelled"
    stopped = read_state(state)
    assert stopped["rounds"] < ROUNDS, "the run must be stopped mid-run for this test"
    # What a git stopped mid-write leaves: the engine's resume then fails before round 0,
    # and the failed resume loses nothing. Removing the lock, as the README says, fixes it.
    workspace.clear_stale_ledger_lock(run_id)
    (workspace.store / run_id / "ledger" / ".git" / "index.lock").touch()
    failed = workspace.resume(run_id)
    assert failed["state"] == "failed"
    assert "index.lock" in failed["error"]
    assert read_state(state) == stopped
    assert workspace.clear_stale_ledger_lock(run_id)
    resumed, before = _resume(workspace, run_id, state)

    final = read_state(state)
    # Everything recorded before the stop is still counted, and the resumed process
    # added exactly its own rollouts: the statistics were loaded, not started afresh.
    assert resumed["rollouts"] == ROUNDS * WORKERS
    assert before["records"] >= stopped["records"]
    assert final["records"] == before["records"] + resumed["rollouts"]
    assert sum(_trials(final).values()) == final["records"]
    final_trials = _trials(final)
    assert all(final_trials[task] >= trials for task, trials in _trials(stopped).items())
    # The engine numbers the resumed rounds from 0 again; the sampler continues.
    assert final["rounds"] == before["rounds"] + ROUNDS


def test_a_run_killed_with_sigkill_mid_run_resumes_from_its_state_file(
    workspace: Workspace,
) -> None:
    state = workspace.root / "sampler.sqlite"
    run_id = _start_detached(workspace, state)
    seen = wait_for_records(state, 3)["records"]

    os.killpg(os.getpgid(workspace.status(run_id)["pid"]), signal.SIGKILL)
    workspace.wait_for_exit(run_id)

    killed = read_state(state)
    assert killed["records"] >= seen  # nothing acknowledged before the kill is lost
    assert sum(_trials(killed).values()) == killed["records"]  # a whole, consistent save
    assert create("difficulty-weighted", state=state).records == killed["records"]
    resumed, before = _resume(workspace, run_id, state)
    assert before["records"] >= killed["records"]
    assert read_state(state)["records"] == before["records"] + resumed["rollouts"]


@pytest.mark.parametrize(
    "sampler", ["round-robin", "difficulty-weighted", "informative-band", "fixable-first"]
)
def test_picks_after_a_resume_are_those_of_an_uninterrupted_run(
    tmp_path: Path, sampler: str
) -> None:
    def run(name: str, rounds: int) -> tuple[Workspace, str, Path, Path]:
        workspace = Workspace(tmp_path / name)
        log, state = workspace.root / "picks.jsonl", workspace.root / "sampler.sqlite"
        ref = {
            "ref": "benchmarks._runspec:logged_sampler",
            "log": str(log),
            "spec": sampler,
            "state": str(state),
        }
        spec = workspace.spec(
            ref, allow=["agentdescent_sampling.refs", "benchmarks."], rounds=rounds, **STEADY
        )
        return workspace, workspace.evolve(spec)["run_id"], log, state

    def stopped_and_resumed() -> tuple[list[dict[str, Any]], Path]:
        # `resume` runs the spec's rounds again, on the same ledger. A resume the engine
        # failed (not in this package) has already picked and recorded some rounds, which
        # a resume of that resume would log twice: the whole run is made again instead.
        failures: list[str] = []
        for attempt in range(3):
            workspace, run_id, log, state = run(f"resumed-{attempt}", 2)
            if _resume_once(workspace, run_id, failures):
                return read_log(log), state
        raise AssertionError("no resumed run finished:\n" + "\n\n".join(failures))

    # Stopped after 2 rounds: a multiple of the 2 shards, which the engine rotates by
    # its round number (numbered from 0 again after a resume), so each worker gets the
    # shard it would have had. After an odd round the shard order would differ. The two
    # runs share nothing, so they run at once.
    with ThreadPoolExecutor(2) as pool:
        both = pool.submit(run, "uninterrupted", 4)
        resumed, stopped = stopped_and_resumed()
        _, _, log, whole = both.result()
        uninterrupted = read_log(log)

    def picks(log: list[dict[str, Any]]) -> list[tuple[list[str], str]]:
        return [(entry["shard"], entry["pick"]) for entry in log if "pick" in entry]

    assert len(picks(uninterrupted)) == 4 * WORKERS
    assert picks(resumed) == picks(uninterrupted)
    assert [e for e in resumed if "record" in e] == [e for e in uninterrupted if "record" in e]
    assert read_state(stopped) == read_state(whole)
    # What the engine hands the sampler, for the README: round numbers restart at 0.
    assert [entry["round"] for entry in resumed if "pick" in entry] == [0, 0, 1, 1] * 2


def _run_to_its_end(workspace: Workspace, state: Path, file: Path | None = None) -> str:
    """A one-round run of the example, to its end in the foreground; its id. Its sampler is
    ``difficulty-weighted``, or the one ``file``'s ``[task_sampler]`` table names."""
    chosen = {"spec": "difficulty-weighted"} if file is None else {"file": str(file)}
    ref = {"ref": "agentdescent_sampling.refs:from_run_spec", **chosen}
    spec = workspace.spec({**ref, "state": str(state)}, rounds=1, **STEADY)
    run_id: str = workspace.evolve(spec)["run_id"]
    assert read_state(state)["records"] == WORKERS
    return run_id


def _resumed_log(workspace: Workspace, run_id: str) -> str:
    """What ``agentdescent resume`` of the stopped run ``run_id`` wrote to its log (resumed
    again if the engine failed, as :func:`_resume` does)."""
    _resume(workspace, run_id)
    return (workspace.store / run_id / "log.txt").read_text(encoding="utf-8")


def test_a_resume_says_it_continues_the_runs_sampler_not_that_a_fresh_run_needs_its_own_state(
    workspace: Workspace,
) -> None:
    state = workspace.root / "sampler.sqlite"
    run_id = _run_to_its_end(workspace, state)

    log = _resumed_log(workspace, run_id)

    assert (
        f"agentdescent-sampling: resuming run {run_id}: continuing the {WORKERS} records of "
        f"{state} (every run given that state adds its own)\n"
    ) in log
    assert "a fresh run needs its own state path" not in log
    assert "warning" not in log


def test_a_resume_whose_state_file_is_gone_warns_that_the_sampler_starts_fresh(
    workspace: Workspace,
) -> None:
    state = workspace.root / "sampler.sqlite"
    run_id = _run_to_its_end(workspace, state)
    state.unlink()

    log = _resumed_log(workspace, run_id)

    assert (
        f"agentdescent-sampling: warning: resuming run {run_id}, but found no sampler state "
        f"at {state} (moved or deleted since the run started?): the sampler starts fresh, "
        f"and what it learned before the stop is lost. To keep it, 'agentdescent cancel "
        f"{run_id}', put the file back at {state} (with its -wal file, if it has one), and "
        f"'agentdescent resume {run_id}'\n"
    ) in log
    assert read_state(state)["records"] == WORKERS  # the resumed run's own, from none


def test_a_resume_whose_state_holds_none_of_the_runs_records_warns_that_they_are_lost(
    workspace: Workspace,
) -> None:
    # As a state copied without its -wal file holds nothing a killed run committed: it was
    # taken up in silence, the run's records gone and its rounds counted from 0 again.
    state = workspace.root / "sampler.sqlite"
    run_id = _run_to_its_end(workspace, state)
    state.unlink()
    kept = workspace.root / "kept.sqlite"
    with create("difficulty-weighted", state=kept) as sampler:
        sampler.record(sampler.pick(["a"], 0), 1.0)  # committed to kept.sqlite-wal alone
        shutil.copyfile(kept, state)  # the same sampler's file, without its -wal
    assert read_state(state)["records"] == 0

    log = _resumed_log(workspace, run_id)

    assert (
        f"agentdescent-sampling: warning: resuming run {run_id}, which made {WORKERS} "
        f"rollouts, but the sampler state at {state} holds no record of them (its -wal file "
        f"deleted, or the state copied without it?): the sampler starts fresh"
    ) in log


def test_a_resume_finding_another_samplers_state_says_to_put_the_runs_own_back(
    workspace: Workspace,
) -> None:
    state = workspace.root / "sampler.sqlite"
    run_id = _run_to_its_end(workspace, state)
    state.unlink()
    with create("informative-band", state=state) as other:  # another run's file, put there
        other.record(other.pick(["a"], 0), 1.0)

    workspace.wait_for_exit(run_id)
    workspace.clear_stale_ledger_lock(run_id)
    status = workspace.resume(run_id)

    told = json.dumps(status) + workspace.log_tail(run_id)
    assert status["state"] != "done", told
    assert (
        f"Run {run_id} is being resumed with the spec in {workspace.store / run_id / 'spec.json'}, "
        f"so either the file at {state} is not the one it kept, or that spec's sampler was "
        f"edited since the run started: put the run's own state file back there, or the sampler "
        f"and parameters it started with back in that spec, and 'agentdescent resume {run_id}' "
        f"again"
    ) in " ".join(told.split()), told


def test_a_resume_whose_sampler_file_was_edited_names_that_file_not_the_runs_spec(
    workspace: Workspace,
) -> None:
    config = workspace.root / "sampler.toml"
    config.write_text('[task_sampler]\nname = "difficulty-weighted"\n', encoding="utf-8")
    state = workspace.root / "sampler.sqlite"
    run_id = _run_to_its_end(workspace, state, config)
    config.write_text('[task_sampler]\nname = "informative-band"\n', encoding="utf-8")

    workspace.wait_for_exit(run_id)
    workspace.clear_stale_ledger_lock(run_id)
    status = workspace.resume(run_id)

    told = " ".join((json.dumps(status) + workspace.log_tail(run_id)).split())
    assert status["state"] != "done", told
    assert (
        f"Run {run_id} is being resumed, and its spec reads the sampler from the "
        f"'task_sampler' table in {config}, read again on resume; so either that table was "
        f"edited since the run started, or the file at {state} is not the one the run kept: "
        f"put the sampler and parameters it started with back in {config}"
    ) in told, told
    assert "spec.json" not in told.partition("holds the state of sampler")[2], told


def test_a_resume_whose_sampler_file_changed_a_parameter_the_state_allows_says_so(
    workspace: Workspace,
) -> None:
    # failure_cost may change on resume (the state keeps no count of it), but the log said
    # only "continuing the records", as if the sampler were the one the run started with.
    config = workspace.root / "sampler.toml"
    config.write_text('[task_sampler]\nname = "fixable-first"\nfailure_cost = 2\n')
    state = workspace.root / "sampler.sqlite"
    run_id = _run_to_its_end(workspace, state, config)
    config.write_text('[task_sampler]\nname = "fixable-first"\nfailure_cost = 3\n')

    log = _resumed_log(workspace, run_id)

    assert (
        f"resuming run {run_id}: continuing the {WORKERS} records of {state} (every run given "
        f'that state adds its own); the sampler\'s spec was {{"name": "fixable-first", '
        f'"failure_cost": 2}} and is now {{"name": "fixable-first", "failure_cost": 3}}\n'
    ) in log


@pytest.mark.parametrize("rewritten", [True, False], ids=["result-rewritten", "result-unchanged"])
def test_a_run_whose_end_the_engines_launch_overwrote_is_read_from_its_result(
    workspace: Workspace, rewritten: bool
) -> None:
    from agentdescent.runstore import RunDir

    summary = workspace.evolve(workspace.spec("RoundRobin", rounds=1, **STEADY))
    run_dir = RunDir(summary["dir"])
    result = Path(run_dir.result_path)
    before = None if rewritten else (result.stat().st_mtime_ns, result.stat().st_size)
    with subprocess.Popen(["true"]) as gone:  # a pid with no process left
        gone.wait()
    # What agentdescent 0.7.0's launch writes once the run it started has already ended.
    run_dir.update_status(state="running", pid=gone.pid, finished=None, error=None)

    status = workspace.ended(summary["run_id"], before)

    if rewritten:
        assert (status["state"], status["error"]) == ("done", None)
    else:
        assert status["state"] == "failed"
        assert status["error"]
