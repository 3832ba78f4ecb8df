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
from tests.engine.runspec_cli import read_state

pytest.importorskip(
    "agentdescent",
    reason='drives the agentdescent CLI: python -m pip install ".[engine]"',
)

LOGGED = "benchmarks._runspec:logged_sampler"
REF = "agentdescent_sampling.refs:from_run_spec"


def _evidence_policies(link: str = "main", **acceptance: object) -> dict[str, object]:
    return {
        "acceptance": {"ref": "agentdescent_sampling.refs:evidence_acceptance", "link": link,
                       **acceptance},
        "promotion": {"ref": "agentdescent_sampling.refs:evidence_promotion", "link": link},
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
        allow=("agentdescent_sampling.refs", "benchmarks."),
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


def test_with_self_verify_left_off_by_the_kind_a_committed_fix_is_told_without_a_gain(
    workspace: Workspace,
) -> None:
    # A skill_dir spec turns self_verify off, and the acceptance ref is not told: the engine
    # then files a gain of 0.0, which must not read as "its re-run still failed".
    log, state = workspace.root / "log.jsonl", workspace.root / "sampler.sqlite"
    spec = workspace.spec(
        {"ref": LOGGED, "log": str(log), "spec": "fixable-first", "link": "main",
         "state": str(state)},
        policies=_evidence_policies(),
        allow=("agentdescent_sampling.refs", "benchmarks."),
    )  # fmt: skip

    workspace.evolve(spec)

    told = [entry for entry in read_log(log) if "evidence" in entry]
    assert told, read_log(log)
    assert {entry["gain"] for entry in told} == {None}
    committed = {entry["evidence"] for entry in told if entry["committed"]}
    assert committed, told
    # Credited by its failure's chance of having made the fix, not kept in play as unfixed.
    saved = read_state(state)["state"]
    assert set(saved["credit"]) == committed, saved
    assert not committed & set(saved["no_commit"]), saved


def test_a_linked_sampler_without_evidence_is_told_to_unlink_the_spec_not_to_skip_wire(
    workspace: Workspace,
) -> None:
    spec = workspace.spec(
        {"ref": "agentdescent_sampling.refs:from_run_spec", "spec": "round-robin", "link": "main"},
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


@pytest.mark.version_independent
@pytest.mark.parametrize(
    ("slot", "typo", "message"),
    [
        ("acceptance", "self_verfy", "policies.acceptance: unknown key 'self_verfy' in the "
         "agentdescent_sampling.refs:evidence_acceptance ref. Did you mean 'self_verify'? Its "
         "keys: 'link', 'self_verify'"),
        ("promotion", "lnik", "policies.promotion: unknown key 'lnik' in the "
         "agentdescent_sampling.refs:evidence_promotion ref. Did you mean 'link'? Its keys: "
         "'link'"),
    ],
    ids=["acceptance", "promotion"],
)  # fmt: skip
def test_an_unknown_key_in_an_evidence_ref_is_named_with_the_keys_it_takes(
    workspace: Workspace, slot: str, typo: str, message: str
) -> None:
    policies = _evidence_policies()
    policies[slot] = {**policies[slot], typo: False}
    spec = workspace.spec(
        {"ref": REF, "spec": "fixable-first", "link": "main"},
        policies=policies,
    )

    planned = json.loads(workspace.cli("--json", "plan", spec).stdout)

    assert planned["ok"] is False
    assert planned["error"] == message


@pytest.mark.version_independent
def test_a_linked_sampler_that_cannot_be_told_and_has_no_evidence_refs_is_told_to_unlink_it(
    workspace: Workspace,
) -> None:
    spec = workspace.spec(
        {"ref": "agentdescent_sampling.refs:from_run_spec", "spec": "difficulty-weighted",
         "link": "main"}
    )  # fmt: skip

    planned = json.loads(workspace.cli("--json", "plan", spec).stdout)

    assert planned["ok"] is False
    assert planned["error"] == (
        "policies.task_sampler: sampler 'difficulty-weighted' has no evidence(task_id, gain, "
        "committed) method, so it cannot use the engine's evidence; select fixable-first, or "
        "remove 'link' from policies.task_sampler"
    )


UNLINK = (
    "or remove 'link' from policies.task_sampler and the policies.acceptance and "
    "policies.promotion refs to run without the evidence"
)


@pytest.mark.version_independent
@pytest.mark.parametrize(
    ("links", "message"),
    [
        (("a", "b", "b"), "policies: policies.task_sampler gives link 'a' but "
         "policies.acceptance and policies.promotion give link 'b', so the engine's evidence "
         "would reach no sampler; give policies.task_sampler, policies.acceptance and "
         "policies.promotion the same 'link' (check each for a typo), " + UNLINK),
        (("main", "mian", "main"), "policies: policies.task_sampler and policies.promotion "
         "give link 'main' but policies.acceptance gives link 'mian', so"),
        (("main", "main", "mian"), "policies: policies.task_sampler and policies.acceptance "
         "give link 'main' but policies.promotion gives link 'mian', so"),
        ((None, "main", "main"), "policies: policies.acceptance and policies.promotion give "
         "link 'main' but no policies.task_sampler ref gives link 'main', so"),
        (("main", None, None), "policies: policies.task_sampler gives link 'main' but no "
         "policies.acceptance or policies.promotion ref gives link 'main', so the engine's "
         "evidence would reach no sampler; give policies.task_sampler, policies.acceptance and "
         "policies.promotion the same 'link' (check each for a typo; the evidence refs are "
         '{"ref": "agentdescent_sampling.refs:evidence_acceptance", "link": "main"} and '
         '{"ref": "agentdescent_sampling.refs:evidence_promotion", "link": "main"}), or remove '
         "'link' from policies.task_sampler to run without the evidence"),
        # Told as a link that differs ("policies.acceptance gives link '5'") when the
        # sampler's ref was resolved first.
        (("main", 5, "main"), "policies.acceptance: 'link' must be a short name shared by the "
         "task_sampler, acceptance and promotion refs (ASCII letters, digits and '_', not "
         'starting with a digit, up to 64), such as "main"; got 5'),
    ],
    ids=["two-links", "acceptance", "promotion", "sampler-unlinked", "no-evidence-refs",
         "acceptance-not-a-name"],
)  # fmt: skip
def test_links_that_differ_are_refused_by_plan_and_before_any_rollout_naming_each(
    workspace: Workspace, links: tuple[object, object, object], message: str
) -> None:
    sampler, acceptance, promotion = links
    state = workspace.root / "sampler.sqlite"
    ref = {"ref": "agentdescent_sampling.refs:from_run_spec", "spec": "fixable-first",
           "state": str(state)}  # fmt: skip
    if sampler is not None:
        ref["link"] = sampler
    policies = {
        slot: {"ref": f"agentdescent_sampling.refs:evidence_{slot}", "link": link}
        for slot, link in (("acceptance", acceptance), ("promotion", promotion))
        if link is not None
    }
    spec = workspace.spec(ref, policies=policies, self_verify=True)

    planned = json.loads(workspace.cli("--json", "plan", spec).stdout)
    evolved = workspace.cli("--json", "evolve", spec)

    assert planned["ok"] is False
    assert planned["error"].startswith(message)
    assert evolved.returncode == 2
    assert message in evolved.stdout + evolved.stderr
    assert not workspace.store.exists(), "no run is started, no rollout paid for"
    assert read_state(state).get("records", 0) == 0, "the state file holds no record"


def _ref_of(held: str) -> object:
    """The ref building ``policies.<held>``, linked by "main"; written as a text alone for
    ``"<slot> as a text"`` (the engine resolves that text as a ref too)."""
    if held == "task_sampler":
        return {"ref": REF, "spec": "fixable-first", "link": "main"}
    if held.endswith(" as a text"):
        return f"agentdescent_sampling.refs:evidence_{held.split()[0]}"
    return {"ref": f"agentdescent_sampling.refs:evidence_{held}", "link": "main"}


@pytest.mark.version_independent
@pytest.mark.parametrize(
    ("slots", "message"),
    [
        ({"acceptance": "promotion", "promotion": "acceptance"}, "policies.acceptance: holds "
         "the agentdescent_sampling.refs:evidence_promotion ref, which builds "
         "policies.promotion; move it there, and give policies.acceptance the "
         "agentdescent_sampling.refs:evidence_acceptance ref with the same 'link'"),
        ({"acceptance": "acceptance", "promotion": "acceptance"}, "policies.promotion: holds "
         "the agentdescent_sampling.refs:evidence_acceptance ref, which builds "
         "policies.acceptance; remove it (policies.acceptance holds one already), and give "
         "policies.promotion the agentdescent_sampling.refs:evidence_promotion ref with the "
         "same 'link'"),
        ({"acceptance": "acceptance", "promotion": "promotion", "nested": "acceptance"},
         "policies.promotion: holds the agentdescent_sampling.refs:evidence_acceptance ref"),
        # In a slot no evidence ref belongs in: the engine would build our policy as the
        # fusion or selection policy, and fail at round 0, after agent calls were paid for.
        ({"acceptance": "acceptance", "promotion": "promotion", "fusion": "acceptance"},
         "policies.fusion: holds the agentdescent_sampling.refs:evidence_acceptance ref, "
         "which builds policies.acceptance; remove it (policies.acceptance holds one already)"),
        ({"selection": "acceptance", "promotion": "promotion"}, "policies.selection: holds "
         "the agentdescent_sampling.refs:evidence_acceptance ref, which builds "
         "policies.acceptance; move it there"),  # not "no policies.acceptance ref gives ..."
        ({"selection": "acceptance as a text", "promotion": "promotion"}, "policies.selection: "
         "holds the agentdescent_sampling.refs:evidence_acceptance ref, which builds "
         "policies.acceptance; move it there"),
        ({"acceptance": "acceptance", "promotion": "promotion", "selection": "task_sampler"},
         "policies.selection: holds the agentdescent_sampling.refs:from_run_spec ref, which "
         "builds policies.task_sampler; remove it (policies.task_sampler holds one already)"),
    ],
    ids=["swapped", "copied", "nested", "fusion", "moved-to-selection", "a-text-in-selection",
         "sampler-in-selection"],
)  # fmt: skip
def test_an_evidence_ref_in_another_slot_is_refused_by_plan_naming_where_it_belongs(
    workspace: Workspace, slots: dict[str, str], message: str
) -> None:
    state = workspace.root / "sampler.sqlite"
    ref = {"ref": REF, "spec": "fixable-first", "state": str(state), "link": "main"}
    policies: dict[str, object] = {
        slot: _ref_of(held) for slot, held in slots.items() if slot != "nested"
    }
    if "nested" in slots:  # inside a policy of the user's that takes a policy
        policies["promotion"] = {"ref": "yours:promotion", "inner": policies["acceptance"]}
    spec = workspace.spec(ref, policies=policies, self_verify=True)

    planned = json.loads(workspace.cli("--json", "plan", spec).stdout)
    evolved = workspace.cli("--json", "evolve", spec)

    assert planned["ok"] is False
    assert message in planned["error"]
    assert evolved.returncode == 2
    assert message in evolved.stdout + evolved.stderr
    assert not workspace.store.exists(), "no run is started, no rollout paid for"


@pytest.mark.version_independent
@pytest.mark.parametrize("slot", ["selection", "fusion", "promotion"])
def test_our_sampler_ref_in_another_slot_is_refused_by_plan_unlinked_too(
    workspace: Workspace, slot: str
) -> None:
    sampler = {"ref": REF, "spec": "fixable-first"}
    spec = workspace.spec(sampler, policies={slot: sampler})

    planned = json.loads(workspace.cli("--json", "plan", spec).stdout)

    assert planned["ok"] is False
    assert planned["error"].startswith(
        f"policies.{slot}: holds the agentdescent_sampling.refs:from_run_spec ref, which "
        f"builds policies.task_sampler; remove it (policies.task_sampler holds one already)"
    )
    assert "'link'" not in planned["error"]  # no link was given: none to give the slot


def _yours_builds_a_sampler() -> object:
    """Code of a user's, which a spec names in a place of its own, building a sampler."""
    from agentdescent_sampling.refs import from_run_spec

    return from_run_spec("round-robin")


def test_our_ref_called_by_code_of_yours_a_spec_names_elsewhere_is_not_refused() -> None:
    # The engine resolving data.problems was taken for our ref given there: refused.
    from agentdescent import evolvespec

    class Spec:  # what the engine's _resolve reads of a spec
        def allowed_prefixes(self) -> tuple[str, ...]:
            return (__name__,)

    built = evolvespec._resolve(
        {"ref": f"{__name__}:_yours_builds_a_sampler"}, Spec(), where="data.problems"
    )

    assert built.name == "round-robin"


def test_a_later_spec_built_in_the_same_process_that_misspells_a_link_is_stopped() -> None:
    # agentdescent evolve builds a spec twice in one process, and a server may build many: the
    # first build's three parts must not stand in for a part a later build misspells.
    from agentdescent_sampling.refs import evidence_acceptance, evidence_promotion, from_run_spec

    from_run_spec("fixable-first", link="shared")
    evidence_acceptance("shared")
    evidence_promotion("shared").tap.reported([])  # all three parts: the run goes on

    from_run_spec("fixable-first", link="shared")
    evidence_acceptance("shraed")
    promotion = evidence_promotion("shared")
    with pytest.raises(RuntimeError, match=r"policies\.task_sampler and policies\.promotion "
                       r"give link 'shared' but no policies\.acceptance ref gives link "
                       r"'shared'"):  # fmt: skip
        promotion.tap.reported([])  # what observe() does first, before the engine's own rule


def test_our_evidence_ref_gives_its_link_nested_in_a_policy_of_yours_too() -> None:
    from agentdescent_sampling import runspec
    from agentdescent_sampling.wiring import links_problem

    ours = "agentdescent_sampling.refs:evidence_acceptance"
    policies = {
        "task_sampler": {"ref": "agentdescent_sampling.refs:from_run_spec", "link": "main"},
        # A composite policy of the user's, with a 'link' of its own, holding ours.
        "acceptance": {
            "ref": "mine:Both",
            "link": "other",
            "inner": [{"ref": ours, "link": "main"}],
        },
        "promotion": {"ref": "agentdescent_sampling.refs:evidence_promotion", "link": "main"},
    }
    links = {
        slot: runspec._link_of(policies, slot)
        for slot in ("task_sampler", "acceptance", "promotion")
    }
    assert links == {"task_sampler": "main", "acceptance": "main", "promotion": "main"}
    assert links_problem(links) is None
    policies["task_sampler"] = {"ref": "mine:Logged", "link": "main"}  # a wrapper of ours
    assert runspec._link_of(policies, "task_sampler") == "main"


def test_a_link_that_differs_is_shown_escaped_and_cut_in_the_error() -> None:
    from agentdescent_sampling.wiring import links_problem

    look_alike, hostile = "m\u0430in", "x\n\x1b[2J" + "y" * 10_000
    said = links_problem({"task_sampler": "main", "acceptance": look_alike, "promotion": None})
    assert said is not None
    assert "'m\\u0430in'" in said  # the Cyrillic a shows
    said = links_problem({"task_sampler": hostile, "acceptance": None, "promotion": None})
    assert said is not None
    assert "\n" not in said
    assert "\x1b" not in said
    assert len(said) < 2_000


def _linked_text_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str) -> str:
    """A text-kind run spec with an ``algorithm`` and the three linked refs, its offline model
    importable; the spec file's path."""
    (tmp_path / "textmodel.py").write_text(
        "def model():\n    return lambda prompt: 'ok'\n\ndef reflect(prompt):\n    return 'RULE'\n",
        encoding="utf-8",
    )
    (tmp_path / "skill.txt").write_text("be brief\n", encoding="utf-8")
    cases = [{"prompt": f"q{i}", "gold": "ok"} for i in range(6)]
    (tmp_path / "cases.jsonl").write_text("".join(f"{json.dumps(c)}\n" for c in cases))
    spec = {
        "version": 1, "kind": "text", "target": str(tmp_path / "skill.txt"),
        "data": {"path": str(tmp_path / "cases.jsonl"), "prompt": "prompt", "gold": "gold"},
        "score": "exact", "agent": {"ref": "textmodel:model"},
        "reflect": {"ref": "textmodel:reflect", "call": False}, "algorithm": algorithm,
        "policies": {"task_sampler": {"ref": REF, "spec": "fixable-first", "link": "main"},
                     **_evidence_policies()},
        "allow": ["agentdescent_sampling.refs", "textmodel"],
    }  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return str(tmp_path / "spec.json")


def test_the_evidence_refs_wrap_the_rules_the_specs_algorithm_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rrsi builds its own acceptance rule (a historical-best floor): the ref must wrap it,
    # not put the engine's default in its place.
    from agentdescent.defaults import DefaultAcceptance, DefaultPromotion
    from agentdescent.evolvespec import compose, load_spec

    spec = _linked_text_spec(tmp_path, monkeypatch, "rrsi")
    policies = compose(load_spec(spec)).kwargs["policies"]

    assert type(policies.acceptance.inner).__name__ == "RRsiAcceptance"
    assert not isinstance(policies.acceptance.inner, DefaultAcceptance)
    assert isinstance(policies.promotion.inner, DefaultPromotion)  # rrsi builds none


@pytest.mark.version_independent
@pytest.mark.parametrize(
    ("slot", "given", "first", "message"),
    [
        ("acceptance", {}, "acceptance", "policies.acceptance: the "
         "agentdescent_sampling.refs:evidence_acceptance ref gives no 'link': give "
         "policies.task_sampler, policies.acceptance and policies.promotion one 'link', such "
         "as \"link\": \"main\""),
        ("promotion", {}, "promotion", "policies.promotion: the "
         "agentdescent_sampling.refs:evidence_promotion ref gives no 'link': give "
         "policies.task_sampler, policies.acceptance and policies.promotion one 'link', such "
         "as \"link\": \"main\""),
        # A misspelt 'link' is named, whichever ref the engine builds first.
        ("acceptance", {"lnk": "main"}, "acceptance", "policies.acceptance: unknown key "
         "'lnk' in the agentdescent_sampling.refs:evidence_acceptance ref. Did you mean "
         "'link'? Its keys: 'link', 'self_verify'"),
        ("acceptance", {"lnk": "main"}, "task_sampler", "policies.acceptance: unknown key "
         "'lnk' in the agentdescent_sampling.refs:evidence_acceptance ref. Did you mean "
         "'link'? Its keys: 'link', 'self_verify'"),
        ("promotion", {"lnk": "main"}, "promotion", "policies.promotion: unknown key "
         "'lnk' in the agentdescent_sampling.refs:evidence_promotion ref. Did you mean "
         "'link'? Its keys: 'link'"),
    ],
    ids=["acceptance", "promotion", "acceptance-typo", "acceptance-typo-built-last",
         "promotion-typo"],
)  # fmt: skip
def test_an_evidence_ref_without_its_link_is_told_to_give_one_not_to_set_call_false(
    workspace: Workspace, slot: str, given: dict[str, str], first: str, message: str
) -> None:
    # The engine's own message for a missing argument says "set call=False", which would
    # hand the engine the function itself; the ref names what it lacks instead.
    policies = _evidence_policies()
    policies[slot] = {"ref": f"agentdescent_sampling.refs:evidence_{slot}", **given}
    spec = workspace.spec({"ref": REF, "spec": "fixable-first", "link": "main"}, policies=policies)
    document = json.loads(spec.read_text(encoding="utf-8"))
    built = document["policies"]  # the engine builds the refs in the spec's order
    document["policies"] = {first: built.pop(first), **built}
    spec.write_text(json.dumps(document), encoding="utf-8")

    planned = json.loads(workspace.cli("--json", "plan", spec).stdout)

    assert planned["ok"] is False
    assert planned["error"] == message
    assert "call=False" not in planned["error"]


@pytest.mark.version_independent
@pytest.mark.parametrize("slot", ["acceptance", "promotion"])
def test_an_evidence_ref_given_call_false_is_refused_by_plan_not_at_the_first_merge(
    workspace: Workspace, slot: str
) -> None:
    # "call": false hands the engine the function evidence_<slot> itself as the policy: the
    # run failed after its first round ('function' object has no attribute 'accept').
    policies = _evidence_policies()
    policies[slot] = {**policies[slot], "call": False}
    spec = workspace.spec({"ref": REF, "spec": "fixable-first", "link": "main"}, policies=policies)

    planned = json.loads(workspace.cli("--json", "plan", spec).stdout)

    assert planned["ok"] is False
    assert planned["error"].startswith(
        f"policies.{slot}: the agentdescent_sampling.refs:evidence_{slot} ref gives "
        f'"call": false, which hands the engine the function itself, not the policy it '
        f"builds; remove 'call'"
    )


@pytest.mark.parametrize("algorithm", ["gepa", "skillopt", "dgm"])
def test_an_algorithm_that_replaces_the_merge_is_refused_with_the_evidence_refs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str
) -> None:
    # These algorithms bring their own aggregator (evolve's aggregator_factory), which uses
    # no acceptance or promotion policy: the evidence refs would be installed and never
    # called, and the sampler would learn from outcomes alone while plan said ok. wire()
    # refuses an aggregator_factory for the same reason.
    from agentdescent.evolvespec import compose, load_spec

    spec = _linked_text_spec(tmp_path, monkeypatch, algorithm)
    with pytest.raises(ValueError, match="replaces the engine's merge") as raised:
        compose(load_spec(spec))

    assert str(raised.value) == (
        f"policies: the spec's algorithm {algorithm!r} replaces the engine's merge with an "
        f"aggregator of its own, which uses no acceptance or promotion policy, so the "
        f"engine's evidence would reach no sampler; remove 'link' from policies.task_sampler "
        f"and the policies.acceptance and policies.promotion refs (the sampler then learns "
        f"from outcomes alone), or choose an algorithm that keeps the engine's merge"
    )


def test_a_linked_spec_planned_by_a_long_lived_process_leaves_its_state_file_to_the_run(
    workspace: Workspace,
) -> None:
    # agentdescent's MCP server (`agentdescent mcp`) builds a spec in its own process for its
    # plan and start tools, and stays up while the run it starts, or one started from a
    # shell, opens the spec's state file: the sampler it built must not still hold the file.
    from agentdescent.mcp import Tools

    state = workspace.root / "sampler.sqlite"
    spec = workspace.spec(
        {"ref": REF, "spec": "fixable-first", "link": "planned", "state": str(state)},
        policies=_evidence_policies("planned"),
    )
    planned = Tools(store=str(workspace.store)).plan(json.loads(spec.read_text("utf-8")))
    assert planned["ok"] is True, planned

    done = workspace.cli("--json", "evolve", spec)

    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["state"] == "done"
    assert read_state(state)["records"] > 0


def test_the_logging_wrapper_refuses_to_link_a_sampler_that_takes_no_evidence(
    tmp_path: Path,
) -> None:
    # Its own evidence() would pass wiring's check, and the first card would then fail.
    from benchmarks._runspec import logged_sampler

    with pytest.raises(TypeError, match="RoundRobin has no evidence"):
        logged_sampler(str(tmp_path / "log.jsonl"), link="main", spec="round-robin")
