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


def test_a_linked_sampler_without_evidence_is_told_to_unlink_the_spec_not_to_skip_wire(
    workspace: Workspace,
) -> None:
    spec = workspace.spec(
        {"ref": "agentdescent_sampling:from_run_spec", "spec": "round-robin", "link": "main"},
        policies=_evidence_policies(),
    )

    done = workspace.cli("--json", "plan", spec)

    planned = json.loads(done.stdout)
    assert planned["ok"] is False
    assert planned["error"].startswith(
        "policies.task_sampler: sampler 'round-robin' has no evidence(task_id, gain, committed) "
        "method, so it cannot use the engine's evidence; select fixable-first, or remove 'link' "
        "from policies.task_sampler and remove the policies.acceptance and policies.promotion refs"
    )
    assert "wire()" not in planned["error"]


@pytest.mark.parametrize(
    ("links", "message"),
    [
        (("a", "b", "b"), "policies.acceptance and policies.promotion give link 'b', but no "
         "policies.task_sampler ref does"),
        (("main", "mian", "main"), "policies.acceptance give link 'mian', but no "
         "policies.task_sampler or policies.promotion ref does"),
        (("main", "main", "mian"), "policies.task_sampler and policies.acceptance give link "
         "'main', but no policies.promotion ref does"),
    ],
    ids=["sampler", "acceptance", "promotion"],
)  # fmt: skip
def test_a_link_one_ref_misspells_stops_the_run_with_the_fix(
    workspace: Workspace, links: tuple[str, str, str], message: str
) -> None:
    sampler, acceptance, promotion = links
    policies = _evidence_policies(link=acceptance)
    policies["promotion"] = _evidence_policies(link=promotion)["promotion"]
    spec = workspace.spec(
        {"ref": "agentdescent_sampling:from_run_spec", "spec": "fixable-first", "link": sampler},
        policies=policies,
    )

    done = workspace.cli("--json", "evolve", spec)

    assert done.returncode != 0
    assert message in done.stdout + done.stderr
    assert "the same 'link' (check each for a typo)" in done.stdout + done.stderr


def test_a_later_spec_built_in_the_same_process_that_misspells_a_link_is_stopped() -> None:
    # agentdescent evolve builds a spec twice in one process, and a server may build many: the
    # first build's three parts must not stand in for a part a later build misspells.
    from agentdescent_sampling import evidence_acceptance, evidence_promotion, from_run_spec

    from_run_spec("fixable-first", link="shared")
    evidence_acceptance("shared")
    evidence_promotion("shared").tap.reported([])  # all three parts: the run goes on

    from_run_spec("fixable-first", link="shared")
    evidence_acceptance("shraed")
    promotion = evidence_promotion("shared")
    with pytest.raises(RuntimeError, match=r"policies\.task_sampler and policies\.promotion "
                       r"give link 'shared', but no policies\.acceptance ref does"):  # fmt: skip
        promotion.tap.reported([])  # what observe() does first, before the engine's own rule
