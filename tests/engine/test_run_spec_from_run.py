"""``bench --from-run`` on a real ``agentdescent evolve`` run made with the engine's offline
agent and reflector (see ``benchmarks/_runspec.py``).

The run's cases are written so that its make-up is known before it runs. The offline agent
totals the column ``references/rules.md`` names, ``id`` at first; the offline reflector's one
fix names ``amount``. So a case whose answer is the total of both columns always passes, one
whose answer is neither's never does, one whose answer is the amount's total flips once the
fix is committed, and one whose answer is the id's total passes, then fails after it.

Nine train tasks on eight workers, two rounds: every worker has a shard of one task but the
first, which holds the first and the last task and rolls out one of them each round; so
round 0 rolls out eight tasks against the skill as written (version 1), its failures commit
the fix (version 2), and round 1 rolls out eight against that.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling.bench.engine.fromrun import format_make_up, read_run
from agentdescent_sampling.cli import main
from agentdescent_sampling.durable import read_durable_state
from benchmarks._runspec import Workspace

pytest.importorskip(
    "agentdescent",
    reason="drives the agentdescent CLI: python -m pip install agentdescent==0.7.0",
)

#: Each train task, with the kind the estimate must find: the first shard's two tasks are
#: rolled out once each (the first in round 0, the second in round 1), so too few times.
TRAIN = {
    "once-always": "too-few",
    "always-a": "always",
    "always-b": "always",
    "never-a": "never",
    "never-b": "never",
    "flips-a": "flipped",
    "flips-b": "flipped",
    "breaks-a": "mixed",
    "once-flips": "too-few",
}
HELD_OUT = ["held-flips-a", "held-flips-b", "held-flips-c", "held-never"]
#: Which column's total each case's answer is, by the task id's first word.
ANSWERS = {"once-always": "both", "always": "both", "never": "neither", "flips": "amount",
           "breaks": "id", "once-flips": "amount", "held-flips": "amount",
           "held-never": "neither"}  # fmt: skip


def _case(task_id: str) -> dict[str, Any]:
    """A case of two rows whose answer is the total of the column :data:`ANSWERS` names."""
    answer = ANSWERS.get(task_id) or ANSWERS[task_id.rsplit("-", 1)[0]]
    amounts = [2, 1] if answer == "both" else [20, 51]  # the ids are 1 and 2: a total of 3
    gold = {"both": 3, "amount": sum(amounts), "id": 3, "neither": 999}[answer]
    csv = "id,amount\n" + "\n".join(f"{i + 1},{amount}" for i, amount in enumerate(amounts))
    return {"id": task_id, "prompt": "What is the total amount?", "gold": str(gold),
            "fixtures": {"data.csv": csv}}  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of one finished run of the cases above."""
    workspace = Workspace(tmp_path_factory.mktemp("from-run"))
    cases = [_case(task_id) for task_id in [*TRAIN, *HELD_OUT]]
    (workspace.root / "cases.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8"
    )
    path = workspace.spec(
        {"ref": "agentdescent_sampling.refs:from_run_spec", "spec": "round-robin"},
        rounds=2,
        n_workers=8,
        held_out_frac=len(HELD_OUT) / len(cases),
        patience=None,
    )
    spec = json.loads(path.read_text(encoding="utf-8"))
    spec["data"]["id"] = "id"
    path.write_text(json.dumps(spec), encoding="utf-8")
    summary = workspace.evolve(path)
    assert summary["state"] == "done", summary
    assert summary["outcomes"].get("committed") == 1, summary
    return Path(summary["dir"])


def test_the_estimate_finds_the_make_up_the_run_was_built_with(run_dir: Path) -> None:
    run = read_run(run_dir)

    assert {task.task_id: task.kind for task in run.make_up.tasks} == TRAIN
    assert run.make_up.flip_failures == (1, 1)
    assert run.rollout_records == run.spent == 16  # 2 rounds x 8 workers, each task new
    assert (run.workers, run.max_concurrency, run.rounds) == (8, 8, 2)
    assert run.unused == {"eval": 8}  # 4 held-out tasks, scored against each version
    workload = run.workload()
    assert (workload.lessons, workload.flaky, workload.always, workload.never) == (3, 1, 2, 2)
    assert workload.failures_needed == (1, 1)


def test_bench_from_run_prints_the_make_up_then_benches_it_to_a_verdict(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--from-run", str(run_dir), "--seeds", "2"]) == 0

    out = capsys.readouterr().out
    make_up, _, report = out.partition("Held-out reward bought in agentdescent")
    assert f"Make-up of run {run_dir.name} (done): 16 rollout records of 9 train tasks" in make_up
    for line in ("always       2", "never        2", "flipped      2  after 1 failure: 2 tasks",
                 "mixed        1  50% of their records passed", "too-few      2"):  # fmt: skip
        assert f"\n  {line}" in make_up
    assert "What the records cannot tell:" in make_up
    assert f"from-run: from the run in {run_dir.resolve()}: 2 flipped (k 1), 1 mixed" in report
    assert "16 rollouts a run: 2 rounds x 8 workers, 8 in flight" in report
    assert "\nVerdict: " in report
    assert f"bench --engine --from-run {run_dir}" in report


def test_json_gives_the_make_up_as_data_and_its_report_on_stderr(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "--from-run", str(run_dir), "--seeds", "1", "--json",
            "--sampler", "informative-band"]  # fmt: skip
    assert main(argv) == 0

    out, err = capsys.readouterr()
    document = json.loads(out)
    (workload,) = document["workloads"]
    assert workload["name"] == "from-run"
    assert workload["make_up"] == {
        "lessons": 3, "failures_needed": [1, 1], "flaky": 1, "luck": 0.5, "always": 2,
        "never": 2, "regressions": 0, "graded": False,
    }  # fmt: skip
    assert document["config"]["asynchronous"] is False
    assert "Make-up of run" in err


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of a run of 4 rounds on 2 workers, resumed once for 4 more."""
    workspace = Workspace(tmp_path_factory.mktemp("resumed"))
    path = workspace.spec(
        {"ref": "agentdescent_sampling.refs:from_run_spec", "spec": "round-robin"},
        rounds=4,
        n_workers=2,
        patience=1000,
    )
    summary = workspace.evolve(path)
    status = workspace.resume(summary["run_id"])
    assert status["state"] == "done", json.dumps(status) + workspace.log_tail(summary["run_id"])
    return Path(summary["dir"])


def test_a_resumed_run_is_counted_whole_though_its_status_counts_the_resume_alone(
    resumed_run: Path,
) -> None:
    status = json.loads((resumed_run / "status.json").read_text(encoding="utf-8"))
    assert status["rollouts"] == 4 * 2  # the engine counts from 0 again on resume

    run = read_run(resumed_run)

    assert (run.spent, run.workers, run.rounds) == (2 * 4 * 2, 2, 2 * 4)
    assert f"from the {2 * 4 * 2} rollouts it made" in " ".join(format_make_up(run).split())


def test_a_resumed_runs_rounds_log_cut_short_is_counted_whole_and_said_to_be_a_floor(
    resumed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The user test's `head -c 1500`, cut inside line 6 whatever the lines' lengths: the
    # first process's 4 rounds, one of the resume's, and half of the next.
    copy = tmp_path / resumed_run.name
    shutil.copytree(resumed_run, copy)
    data = (resumed_run / "rounds.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    assert len(lines) == 2 * 4
    (copy / "rounds.jsonl").write_bytes(data[: sum(map(len, lines[:5])) + 20])

    assert main(["bench", "--from-run", str(copy), "--seeds", "2"]) == 0

    out = " ".join(capsys.readouterr().out.split())
    assert f"from the {2 * 4 * 2} rollouts it made" in out
    assert (
        "rounds.jsonl's last line, line 6, is cut short, as a run stopped mid-write leaves it, "
        "and is skipped. So the 16 rollouts it made (8 rounds of 2 workers) are a floor, "
        "counted from its 5 readable rounds with status.json's 8 for the run's last process"
    ) in out
    assert "8 rounds x 2 workers, 2 in flight" in out


def test_an_asynchronous_run_is_counted_whole_though_its_rounds_log_stops_at_the_last_merge(
    tmp_path: Path,
) -> None:
    # On this path rounds.jsonl and status.json count the rollouts up to the last merge
    # alone: a run of 121 rollouts was benched as one of 18 (helper-108). The durable state's
    # own count of what its sampler recorded is the witness.
    workspace = Workspace(tmp_path)
    state = tmp_path / "sampler.sqlite"
    path = workspace.spec(
        {"ref": "agentdescent_sampling.refs:from_run_spec", "spec": "round-robin",
         "state": str(state)},
        rounds=60, n_workers=2, asynchronous=True, max_rollouts=120, patience=1000,
    )  # fmt: skip
    summary = workspace.evolve(path)
    run_dir = Path(summary["dir"])
    rounds = (run_dir / "rounds.jsonl").read_text(encoding="utf-8").splitlines()
    logged = json.loads(rounds[-1])["rollouts"]
    recorded = read_durable_state(state)["records"]
    assert logged < recorded, (logged, recorded)  # else the engine has stopped undercounting

    run = read_run(run_dir)

    assert run.spent == recorded
    assert run.notes == (
        f"rounds.jsonl and status.json count {logged} rollouts, up to the run's last merge, as "
        f"the asynchronous path writes them; result.json, written as the run ended, counts "
        f"{recorded}, which the bench takes",
    )
