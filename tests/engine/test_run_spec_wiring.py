"""A run spec wires the engine's evidence to fixable-first through the real ``agentdescent``
CLI: ``policies.task_sampler``, ``policies.acceptance`` and ``policies.promotion``, linked.

Every test runs the engine's own CLI in a subprocess, in a throwaway directory (see
``benchmarks/_runspec.py``), with the engine's offline agent and reflector.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks._runspec import REPO, Workspace, read_log

pytest.importorskip(
    "agentdescent",
    reason="drives the agentdescent CLI: pip install 'agentdescent-sampling[engine]'",
)

LOGGED = "benchmarks._runspec:logged_sampler"


def _evidence_policies(link: str = "main", **acceptance: object) -> dict[str, object]:
    return {
        "acceptance": {"ref": "agentdescent_sampling:evidence_acceptance", "link": link,
                       **acceptance},
        "promotion": {"ref": "agentdescent_sampling:evidence_promotion", "link": link},
    }  # fmt: skip


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A throwaway directory with the example's skill and cases, and homes of its own."""
    return Workspace(tmp_path)


def test_the_shipped_wired_spec_runs_offline_with_agentdescent_evolve(
    workspace: Workspace,
) -> None:
    done = workspace.cli("--json", "evolve", "examples/run_spec/wired.json", cwd=REPO)

    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["state"] == "done"


@pytest.mark.version_independent
@pytest.mark.parametrize("self_verify", [True, False], ids=["self-verify", "no-self-verify"])
def test_each_card_reaches_the_linked_sampler_through_the_cli(
    workspace: Workspace, self_verify: bool
) -> None:
    log = workspace.root / "log.jsonl"
    spec = workspace.spec(
        {"ref": LOGGED, "log": str(log), "spec": "fixable-first", "link": "main"},
        policies=_evidence_policies(self_verify=self_verify),
        allow=("agentdescent_sampling.", "benchmarks."),
        self_verify=self_verify,
    )

    workspace.evolve(spec)

    told = [entry for entry in read_log(log) if "evidence" in entry]
    failed = {entry["record"] for entry in read_log(log) if entry.get("score") == 0.0}
    assert told, read_log(log)
    assert {entry["evidence"] for entry in told} <= failed
    # The offline reflector names the right column, so its re-run passes and it commits.
    expected_gain = 1.0 if self_verify else None
    assert {entry["gain"] for entry in told} == {expected_gain}
    assert any(entry["committed"] for entry in told)


def test_a_link_that_names_no_sampler_stops_the_run_with_the_fix(workspace: Workspace) -> None:
    spec = workspace.spec(
        {"ref": "agentdescent_sampling:from_run_spec", "spec": "fixable-first", "link": "a"},
        policies=_evidence_policies(link="b"),
    )

    done = workspace.cli("--json", "evolve", spec)

    assert "give policies.task_sampler the same 'link'" in done.stdout + done.stderr
