"""A run spec selects our samplers through the real ``agentdescent plan`` and ``evolve``.

Every test runs the engine's own CLI in a subprocess, in a throwaway directory with its
own ``HOME`` and run store (see ``benchmarks/_runspec.py``); the agent and reflector are the
engine's offline pair, so nothing calls a model.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import create
from benchmarks._runspec import REPO, Workspace
from tests.engine.runspec_cli import read_state

pytest.importorskip(
    "agentdescent",
    reason="drives the agentdescent CLI: python -m pip install agentdescent==0.7.0",
)

REF = "agentdescent_sampling.refs:from_run_spec"
SAMPLING = Path(sys.executable).with_name("agentdescent-sampling")
#: Where the shipped example keeps its sampler's state, under the test's HOME.
EXAMPLE_STATE = Path(".agentdescent", "sampler-state", "run-spec-example.sqlite")


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A throwaway directory with the example's skill and cases, and homes of its own."""
    return Workspace(tmp_path)


def _plan(workspace: Workspace, spec: Path) -> dict[str, Any]:
    done = workspace.cli("--json", "plan", spec)
    assert "Traceback" not in done.stderr, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    assert (done.returncode == 0) == payload["ok"], done.stdout
    return payload


def test_the_example_spec_runs_offline_with_agentdescent_evolve(workspace: Workspace) -> None:
    # As the README says: the shipped file, from the repository root.
    done = workspace.cli("--json", "evolve", "examples/run_spec/spec.json", cwd=REPO)

    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["state"] == "done"
    rollouts = workspace.status(summary["run_id"])["rollouts"]
    state = read_state(workspace.home / EXAMPLE_STATE)
    assert state["sampler"] == "fixable-first"  # what the README recommends
    # A skill_dir turns self-verify off, so a failure costs two calls (docs/engine.md).
    assert state["spec"] == {"name": "fixable-first", "failure_cost": 2}
    assert state["records"] == rollouts == 8  # rounds=4 x n_workers=2
    assert state["state"]["picks"] == rollouts


def test_a_second_run_of_the_example_spec_continues_its_sampler_state(
    workspace: Workspace,
) -> None:
    # agentdescent evolve builds the spec twice in one process, to check it and to run it:
    # with the state file there from the first run, the check's sampler held it open.
    for run in (1, 2):
        done = workspace.cli("--json", "evolve", "examples/run_spec/spec.json", cwd=REPO)
        assert done.returncode == 0, f"run {run}: {done.stdout}{done.stderr}"
        assert json.loads(done.stdout)["state"] == "done"
    assert done.stderr.count("continuing 8 records from") == 1
    assert read_state(workspace.home / EXAMPLE_STATE)["records"] == 16


def test_agentdescent_plan_accepts_the_example_spec(workspace: Workspace) -> None:
    done = workspace.cli("--json", "plan", "examples/run_spec/spec.json", cwd=REPO)

    assert done.returncode == 0, done.stdout + done.stderr
    payload = json.loads(done.stdout)
    assert payload["ok"] is True
    assert payload["spec"]["policies"]["task_sampler"]["ref"] == REF
    assert payload["evolve_kwargs"]["policies"] == "Policies"
    assert not (workspace.home / EXAMPLE_STATE).exists(), "plan must not write the state"


@pytest.mark.parametrize(
    "selection",
    [
        pytest.param({"spec": "difficulty-weighted:c=0.1"}, marks=pytest.mark.version_independent),
        pytest.param(
            {"spec": {"name": "DifficultyWeighted", "c": 0.1, "provider": "agentdescent-sampling"}},
            marks=pytest.mark.version_independent,
        ),
        # The TOML file is read with tomli on 3.10: every session runs it.
        {"file": "{root}/run.toml", "key": "tool.agentdescent.task_sampler"},
    ],
    ids=["string", "mapping-with-provider", "config-file"],
)
def test_parameters_a_provider_and_a_config_file_reach_the_sampler(
    workspace: Workspace, selection: dict[str, Any]
) -> None:
    (workspace.root / "run.toml").write_text(
        '[tool.agentdescent.task_sampler]\nname = "difficulty-weighted"\nc = 0.1\n',
        encoding="utf-8",
    )
    state = workspace.root / "sampler.sqlite"
    ref = {
        key: value.format(root=workspace.root) if isinstance(value, str) else value
        for key, value in selection.items()
    }
    spec = workspace.spec({"ref": REF, **ref, "state": str(state)}, rounds=1)

    workspace.evolve(spec)

    saved = read_state(state)
    assert saved["sampler"] == "difficulty-weighted"
    assert saved["state"]["params"] == {"c": 0.1, "pass_threshold": 0.999}
    assert saved["records"] == 2


@pytest.mark.version_independent
def test_a_null_key_reads_a_file_that_holds_the_spec_alone(workspace: Workspace) -> None:
    config = workspace.root / "sampler.toml"
    config.write_text('name = "difficulty-weighted"\nc = 0.1\n', encoding="utf-8")
    state = workspace.root / "sampler.sqlite"
    chosen = {"ref": REF, "file": str(config), "state": str(state)}

    # Read by the default key, the file holds no [task_sampler] table, and is told to null it.
    refused = _plan(workspace, workspace.spec(chosen, rounds=1))
    assert refused["ok"] is False
    # In the run spec's JSON, as its author writes it (it was key=None, Python's).
    assert 'the file holds a spec: read it with "key": null' in refused["error"]

    workspace.evolve(workspace.spec({**chosen, "key": None}, rounds=1))

    saved = read_state(state)
    assert saved["sampler"] == "difficulty-weighted"
    assert saved["state"]["params"] == {"c": 0.1, "pass_threshold": 0.999}


@pytest.mark.version_independent
def test_a_typo_in_the_sampler_name_is_our_error_not_a_traceback(workspace: Workspace) -> None:
    spec = workspace.spec({"ref": REF, "spec": "informative-bnad"})

    planned = _plan(workspace, spec)
    evolved = workspace.cli("evolve", spec)

    assert planned["ok"] is False
    assert planned["error"].startswith("policies.task_sampler: no sampler named 'informative-bnad'")
    assert "Did you mean 'informative-band'?" in planned["error"]
    assert evolved.returncode == 2
    assert "Traceback" not in evolved.stderr
    assert evolved.stderr.startswith(
        "spec error: policies.task_sampler: no sampler named 'informative-bnad'. "
        "Did you mean 'informative-band'?"
    )
    assert not workspace.store.exists(), "a spec error must not leave a run behind"


@pytest.mark.version_independent
def test_a_bad_sampler_parameter_is_a_spec_error_that_names_the_slot(
    workspace: Workspace,
) -> None:
    spec = workspace.spec({"ref": REF, "spec": "informative-band:windw=3"})

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert planned["error"].startswith(
        "policies.task_sampler: sampler 'informative-band': unknown parameter 'windw'. "
        "Did you mean 'window'?"
    )


@pytest.mark.version_independent
@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ({"spec": "informative-band", "stat": "~/x.sqlite"}, "policies.task_sampler: unknown "
         "key 'stat' in the agentdescent_sampling.refs:from_run_spec ref. Did you mean 'state'? "
         "Its keys: 'spec', 'file', 'key', 'state', 'link'"),
        ({"spec": "informative-band", "Spec": "x", "lnk": "main"}, "policies.task_sampler: "
         "unknown keys 'Spec', 'lnk' in the agentdescent_sampling.refs:from_run_spec ref. Did you "
         "mean 'spec'? Did you mean 'link'?"),
    ],
    ids=["one", "two"],
)  # fmt: skip
def test_an_unknown_key_in_the_ref_is_named_with_the_keys_it_takes(
    workspace: Workspace, ref: dict[str, str], message: str
) -> None:
    spec = workspace.spec({"ref": REF, **ref})

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert planned["error"].startswith(message)
    assert "call=False" not in planned["error"]


@pytest.mark.version_independent
def test_a_key_beside_a_spec_is_refused_not_ignored(workspace: Workspace) -> None:
    spec = workspace.spec({"ref": REF, "spec": "informative-band", "key": "tool.sampler"})

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert planned["error"] == (
        "policies.task_sampler: 'key' ('tool.sampler') names the table to read in 'file', but "
        "the ref gives 'spec', which is the sampler itself; remove 'key', or replace 'spec' "
        "with 'file', an absolute path to a TOML or JSON file"
    )


@pytest.mark.version_independent
def test_a_relative_file_path_names_the_slot_once(workspace: Workspace) -> None:
    spec = workspace.spec({"ref": REF, "file": "run.toml"})

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert planned["error"].startswith("policies.task_sampler: file path 'run.toml' is relative")
    assert planned["error"].count("policies.task_sampler") == 1


@pytest.mark.parametrize(
    "allow", ["agentdescent_sampling.", "agentdescent_sampling", "agentdescent_sampling.r", "agent"]
)
def test_an_allow_entry_admitting_more_of_the_package_than_its_refs_is_refused_by_plan(
    workspace: Workspace, allow: str
) -> None:
    spec = workspace.spec({"ref": REF, "spec": "round-robin"}, allow=(allow,))

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert planned["error"].startswith(
        f"policies.task_sampler: the spec's allow entry {allow!r} admits modules of "
        f"agentdescent_sampling besides agentdescent_sampling.refs, so a ref could call any "
        f'function in them (write files, import every installed plugin). Allow "'
        f'agentdescent_sampling.refs" instead'
    )


@pytest.mark.version_independent
def test_the_plain_create_ref_ends_a_typo_in_a_traceback(workspace: Workspace) -> None:
    # Why from_run_spec exists: the engine reports only ValueError as a spec error, and
    # create() raises UnknownSamplerError, a LookupError. If this starts failing, the
    # engine has learned to report it, and the README's reason can go.
    wide = ("agentdescent_sampling.",)  # create is not in agentdescent_sampling.refs
    good = workspace.spec(
        {"ref": "agentdescent_sampling:create", "spec": "informative-band"}, allow=wide
    )
    typo = workspace.spec(
        {"ref": "agentdescent_sampling:create", "spec": "informative-bnad"},
        name="typo.json",
        allow=wide,
    )

    assert _plan(workspace, good)["ok"] is True
    done = workspace.cli("evolve", typo)
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert "UnknownSamplerError: no sampler named 'informative-bnad'" in done.stderr


def test_a_plugin_sampler_that_cannot_keep_state_is_refused_before_the_run(
    workspace: Workspace,
) -> None:
    state = workspace.root / "sampler.sqlite"
    spec = workspace.spec({"ref": REF, "spec": "hardest-first", "state": str(state)})

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert "sampler 'hardest-first' (Hardest) cannot keep its state" in planned["error"]
    assert "state_dict() and load_state_dict()" in planned["error"]


@pytest.mark.version_independent
def test_a_relative_state_path_is_refused_with_the_reason(workspace: Workspace) -> None:
    spec = workspace.spec({"ref": REF, "spec": "round-robin", "state": "sampler.json"})

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert "state path 'sampler.json' is relative" in planned["error"]
    assert "'agentdescent resume' from the run's directory" in planned["error"]


@pytest.mark.version_independent
def test_a_mismatched_state_file_stops_plan_and_evolve_and_is_left_untouched(
    workspace: Workspace,
) -> None:
    state = workspace.root / "sampler.sqlite"
    with create("informative-band", state=state) as other:
        other.record(other.pick(["a", "b"], 0), 1.0)
    before = state.read_bytes()
    spec = workspace.spec({"ref": REF, "spec": "difficulty-weighted", "state": str(state)})

    planned = _plan(workspace, spec)
    evolved = workspace.cli("evolve", spec)

    assert planned["ok"] is False
    assert (
        "holds the state of sampler 'informative-band', not 'difficulty-weighted'"
        in (planned["error"])
    )
    assert evolved.returncode == 2
    assert evolved.stderr.startswith("spec error: ")
    assert state.read_bytes() == before


def test_a_json_file_that_is_no_export_as_state_is_told_to_give_a_path_of_its_own(
    workspace: Workspace,
) -> None:
    # A data file (JSON lines) was told "If it is an export, make a state file of it with
    # ...", a command that then failed on it.
    data = workspace.root / "cases_copy.jsonl"
    data.write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    sampler = {"ref": REF, "spec": "difficulty-weighted", "state": str(data)}

    planned = _plan(workspace, workspace.spec(sampler, rounds=1))

    assert planned["ok"] is False
    # Not the reader's "the file is missing, truncated or not JSON" of a file said to be JSON.
    assert planned["error"].startswith(
        f"policies.task_sampler: state {str(data)!r} begins as JSON (a '{{'), and is no export "
        f"of a sampler state; a run spec's 'state' is the SQLite state file"
    )
    assert "not JSON" not in planned["error"]
    assert planned["error"].endswith(
        f"give a path of its own, such as {str(workspace.root / 'cases_copy.sqlite')!r}, which "
        f"the run makes"
    )
    assert "state import" not in planned["error"]
    assert data.read_text(encoding="utf-8") == '{"id": "a"}\n{"id": "b"}\n'


def test_a_damaged_export_as_state_is_told_to_be_exported_again_not_that_it_is_none(
    workspace: Workspace,
) -> None:
    made, export = workspace.root / "made.sqlite", workspace.root / "export.json"
    with create("difficulty-weighted", state=made) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    exported = subprocess.run(
        [SAMPLING, "state", "export", made, "-o", export], capture_output=True, text=True
    )
    assert exported.returncode == 0, exported.stderr
    text = export.read_text(encoding="utf-8")
    export.write_text(text[: len(text) // 2], encoding="utf-8")  # cut short, as a full disk
    sampler = {"ref": REF, "spec": "difficulty-weighted", "state": str(export)}

    planned = _plan(workspace, workspace.spec(sampler, rounds=1))

    assert planned["ok"] is False
    assert (
        f"state {str(export)!r} is an export of a sampler state that cannot be read ("
        in (planned["error"])
    )
    assert "export the state file it was made from again" in planned["error"]


def test_a_json_export_as_state_is_refused_with_the_command_that_makes_a_state_of_it(
    workspace: Workspace,
) -> None:
    made, export = workspace.root / "made.sqlite", workspace.root / "export.json"
    with create("difficulty-weighted:c=0.1", state=made) as sampler:
        for step in range(3):
            sampler.record(sampler.pick(["a", "b"], step), 1.0)
    exported = subprocess.run(
        [SAMPLING, "state", "export", made, "-o", export], capture_output=True, text=True
    )
    assert exported.returncode == 0, exported.stderr
    sampler = {"ref": REF, "spec": "difficulty-weighted:c=0.1"}
    spec = workspace.spec({**sampler, "state": str(export)}, rounds=1)

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert "load_state" not in planned["error"]  # no Python for a run-spec user
    target = workspace.root / "export.sqlite"
    command = ["agentdescent-sampling", "state", "import", str(export), "-o", str(target)]
    command += ["--spec", "difficulty-weighted:c=0.1,pass_threshold=0.999"]
    assert planned["error"] == (
        f"policies.task_sampler: state {str(export)!r} is a JSON file, and a run spec's "
        f"'state' is the SQLite state file the sampler keeps up to date as it runs. If it is an "
        f"export (from 'agentdescent-sampling state export' or save_state), make a state file "
        f"of it with {shlex.join(command)} and give {str(target)!r} as 'state'"
    )
    # The advice works: a run given the state it made continues the export's records.
    imported = subprocess.run([SAMPLING, *command[1:]], capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    fixed = workspace.spec({**sampler, "state": str(target)}, name="fixed.json", rounds=1)
    done = workspace.cli("--json", "evolve", fixed)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"continuing 3 records from {target}" in done.stderr
    assert (
        read_state(target)["records"]
        == 3 + workspace.status(json.loads(done.stdout)["run_id"])["rollouts"]
    )


@pytest.mark.version_independent
def test_the_run_spec_has_no_way_to_wire_an_on_round_callback(workspace: Workspace) -> None:
    # The README says so: `evolve` knobs must be JSON, and the run store passes its own
    # on_round to compose(). If this starts failing, the engine has gained a way.
    spec = workspace.spec(
        {"ref": REF, "spec": "round-robin"}, on_round="agentdescent_sampling.refs:from_run_spec"
    )

    planned = _plan(workspace, spec)

    assert planned["ok"] is False
    assert planned["error"].startswith("evolve.on_round: evolve() takes an object here")
