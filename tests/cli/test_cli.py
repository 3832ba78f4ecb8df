"""The command line as a user meets it: version, ``python -m``, pipes, check and show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

import agentdescent_sampling
from agentdescent_sampling import registry as registry_module
from agentdescent_sampling import testing
from agentdescent_sampling.cli import main
from agentdescent_sampling.registry import Registry
from agentdescent_sampling.testing import check_sampler
from tests.support.distinfo import FIRST_KEY, TWO_PROVIDERS, install_plugins
from tests.support.venv import PATIENT, REPO

COMMAND = [sys.executable, "-m", "agentdescent_sampling"]
HOOK = "agentdescent_register_samplers"


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert (
        capsys.readouterr().out.strip()
        == f"agentdescent-sampling {version('agentdescent-sampling')}"
    )
    assert agentdescent_sampling.__version__ == version("agentdescent-sampling")


@pytest.mark.parametrize(
    ("argv", "listed"),
    [([], ["list", "show", "check", "new-plugin", "state", "bench"]),
     (["state"], ["show", "export", "import"])],
    ids=["no-command", "state-without-an-action"],
)  # fmt: skip
def test_a_command_without_its_command_shows_the_commands_it_takes(
    capsys: pytest.CaptureFixture[str], argv: list[str], listed: list[str]
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    commands = err.partition("positional arguments:")[2]
    assert all(f"\n    {name} " in commands or f"\n    {name}\n" in commands for name in listed)


def test_python_dash_m_runs_the_command() -> None:
    result = subprocess.run([*COMMAND, "show", "round-robin"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("round-robin (agentdescent-sampling ")


def _into_a_closed_pipe(*command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with stdout a pipe whose reader has already gone, as after ``head -1``."""
    read, write = os.pipe()
    os.close(read)  # closed before the child writes, so every write fails with EPIPE
    try:
        return subprocess.run(
            command, stdout=write, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=300
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args",
    [["show", "difficulty-weighted"], ["list", "--json"], ["list"]],
    ids=["show", "list-json", "list"],
)
def test_a_closed_pipe_ends_the_command_without_a_traceback(args: list[str]) -> None:
    result = _into_a_closed_pipe(*COMMAND, *args)
    assert "Traceback" not in result.stderr
    assert "BrokenPipeError" not in result.stderr
    assert result.returncode == 141


@pytest.mark.parametrize("example", ["select_from_toml.py", "evolve_with_config.py"])
def test_a_closed_pipe_ends_an_example_without_a_traceback(example: str) -> None:
    result = _into_a_closed_pipe(sys.executable, f"examples/{example}")
    assert result.stderr == ""


@pytest.mark.parametrize("example", ["select_from_toml.py", "evolve_with_config.py"])
def test_an_example_s_help_is_its_usage_not_a_config_named_help(example: str) -> None:
    result = subprocess.run(
        [sys.executable, f"examples/{example}", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: {example} [-h]")


def test_selecting_a_sampler_that_is_not_installed_ends_the_example_with_one_line() -> None:
    # The hardest-first plugin, disabled, is as good as not installed.
    env = {**os.environ, "AGENTDESCENT_SAMPLERS_DISABLE": "agentdescent-sampling-hardest"}
    result = subprocess.run(
        [sys.executable, "examples/select_from_toml.py", "examples/hardest_first.toml"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        "error: in 'examples/hardest_first.toml' under 'task_sampler': "
        "sampler 'hardest-first' is disabled by "
    )
    assert result.stderr.count("\n") == 1


def test_check_echoes_the_parameters_it_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "difficulty-weighted:c=0.1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        f"checking difficulty-weighted (agentdescent-sampling {version('agentdescent-sampling')}) "
        "with c=0.1, pass_threshold=0.999 (default), prior=0.5 (default), "
        "spread_in_flight=False (default)"
    )


def test_check_with_a_bad_parameter_is_a_config_error_not_violations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "difficulty-weighted:c=-1"]) == 2
    captured = capsys.readouterr()
    assert "violation" not in captured.out + captured.err
    assert "c=-1" in captured.err
    assert captured.err.count("\n") == 1  # one error, not one per check


def test_check_needs_a_name_or_all(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check"])
    assert exited.value.code == 2
    assert "one of the arguments spec --all is required" in capsys.readouterr().err


def test_check_seconds_bounds_each_check_of_that_command_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    limit = testing.CHECK_SECONDS
    # fixable-first's threads check takes seconds: 0.05 s is a hang by this limit.
    assert main(["check", "fixable-first", "--seconds", "0.05"]) == 1
    out = capsys.readouterr().out
    assert "did not finish within 0.05 s" in out  # slow or stuck, as the machine's load has it
    assert limit == testing.CHECK_SECONDS  # the next command, or test, has the kit's own


def test_check_seconds_inf_waits_without_a_limit(capsys: pytest.CaptureFixture[str]) -> None:
    # A wait longer than a thread can make would raise OverflowError in the kit.
    assert main(["check", "round-robin", "--seconds", "inf"]) == 0
    assert "round-robin: all 11 checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("given", ["0", "-5", "nan", "soon", ""])
def test_check_seconds_refuses_a_time_not_above_0_naming_it(
    capsys: pytest.CaptureFixture[str], given: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "round-robin", "--seconds", given])
    assert exited.value.code == 2
    assert (
        f"argument --seconds: expected a number of seconds above 0, got {given!r}; for example "
        "--seconds 600, or --seconds inf for no limit"
    ) in capsys.readouterr().err


def test_check_all_checks_every_installed_sampler_at_its_defaults() -> None:
    # One built-in and one plugin distribution show the loop: each sampler's own conformance
    # is pinned where it is defined (test_the_builtins_conform, the plugins' own suites), and
    # the kit's threads check takes seconds a sampler.
    env = {
        **os.environ,
        "AGENTDESCENT_SAMPLERS_DISABLE": "difficulty-weighted,informative-band,fixable-first",
        "AGENTDESCENT_SAMPLERS_ONLY": "agentdescent-sampling-hardest",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*COMMAND, *args], capture_output=True, text=True, env=env)

    result = run("check", "--all", *PATIENT)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    checked = [line.split()[1] for line in lines if line.startswith("checking")]
    listed = json.loads(run("list", "--json").stdout)
    assert checked == [record["name"] for record in listed if record["kind"] == "sampler"]
    assert checked == ["round-robin", "hardest-first"]
    assert "round-robin: all 11 checks passed" in result.stdout
    assert lines[-1] == "2 in all: 2 passed, 0 failed, 0 not checked"


def test_show_gives_each_parameters_meaning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "difficulty-weighted"]) == 0
    shown = capsys.readouterr().out
    assert "    c: float = 0.2\n        exploration constant." in shown
    # What the constructor takes: its converter turns None into the engine's default.
    assert "    pass_threshold: float | None = 0.999\n" in shown
    assert main(["show", "difficulty-weighted", "--json"]) == 0
    parameters = json.loads(capsys.readouterr().out)["parameters"]
    assert parameters[0]["help"].startswith("exploration constant.")


def test_show_takes_a_spec_with_parameters_as_check_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", "difficulty-weighted:c=0.1"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("difficulty-weighted (agentdescent-sampling ")
    assert "    c: float = 0.2\n        exploration constant." in shown
    # What the constructor takes: its converter turns None into the engine's default.
    assert "    pass_threshold: float | None = 0.999\n" in shown
    assert shown.endswith(
        "\n  given:       c=0.1 (check builds it with them, which checks the values)\n"
    )
    assert main(["show", "difficulty-weighted:c=0.1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["given"] == {"c": 0.1}
    assert main(["show", "difficulty-weighted", "--json"]) == 0
    assert "given" not in json.loads(capsys.readouterr().out)


def test_show_and_check_take_a_json_object_as_a_run_spec_gives_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Refused, with advice to give "the mapping it holds", which a command line cannot.
    given = '{"name": "difficulty-weighted", "c": 0.1}'
    assert main(["show", given, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["given"] == {"c": 0.1}
    assert main(["check", given]) == 0
    assert capsys.readouterr().out.startswith("checking difficulty-weighted (agentdescent-")
    assert main(["show", '{"name": "difficulty-weighted", "cc": 0.1}']) == 2
    assert "unknown parameter 'cc'. Did you mean 'c'?" in capsys.readouterr().err


def test_show_refuses_a_parameter_the_sampler_does_not_take_naming_the_ones_it_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", "difficulty-weighted:cc=0.1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "agentdescent-sampling: error: sampler 'difficulty-weighted': unknown parameter 'cc'. "
        "Did you mean 'c'? Valid parameters: c=0.2, pass_threshold=0.999, prior=0.5, "
        "spread_in_flight=False\n"
    )


def test_show_json_gives_each_parameters_help_whole_as_show_prints_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agentdescent_sampling.paramdoc import parameter_help
    from agentdescent_sampling.samplers.fixable_first import FixableFirst

    meaning = parameter_help(FixableFirst)["failure_cost"]
    assert len(meaning) > 300  # longer than a --json string is otherwise cut at
    assert main(["show", "fixable-first", "--json"]) == 0
    parameters = json.loads(capsys.readouterr().out)["parameters"]
    assert {p["name"]: p["help"] for p in parameters}["failure_cost"] == meaning
    assert main(["show", "fixable-first"]) == 0
    assert " ".join(meaning.split()) in " ".join(capsys.readouterr().out.split())


def test_check_of_a_built_in_asks_its_user_to_add_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "round-robin"]) == 0
    out = capsys.readouterr().out
    assert "round-robin: all 11 checks passed" in out
    assert "note:" not in out  # round-robin has no stats(), and its user cannot add one


def test_show_names_the_opt_in_wiring_of_fixable_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "fixable-first"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert (
        "wiring: opt-in: it can be told each evidence card's self-verify gain and whether it "
        "was committed (evidence), each round's commit count (end_round) and whether a card "
        "proposes again what its task's card before did (repeated); wire it with "
        "agentdescent_sampling.wire(sampler, **your_evolve_kwargs), or in a run spec with a "
        '"link" joining its task_sampler ref to the evidence_acceptance and evidence_promotion '
        'refs (docs/engine.md, "From a run spec")'
    ) in shown
    assert main(["show", "fixable-first", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wiring"] == ["evidence", "end_round", "repeated"]


def test_show_says_a_built_in_without_wiring_needs_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", "difficulty-weighted"]) == 0
    assert "  wiring:      none: it needs only pick() and record()\n" in capsys.readouterr().out
    assert main(["show", "difficulty-weighted", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wiring"] == []


@pytest.mark.parametrize("command", ["check", "show"])
def test_a_provider_flag_that_contradicts_the_specs_provider_is_refused_not_preferred(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    # The flag silently won; show also read an empty --provider as none given.
    install_plugins(tmp_path, monkeypatch, TWO_PROVIDERS, builtins=False)
    spec = '{"name": "kit-dup", "provider": "kit-test-dup-b"}'

    assert main([command, spec, "--provider", "kit-test-dup-a"]) == 2
    assert capsys.readouterr().err == (
        "agentdescent-sampling: error: the spec's provider 'kit-test-dup-b' and --provider "
        "'kit-test-dup-a' differ; give one of them\n"
    )
    assert main([command, spec, "--provider", "kit-test-dup-b"]) == 0
    capsys.readouterr()
    assert main([command, "kit-dup", "--provider", ""]) == 2
    assert "sampler 'kit-dup' is not provided by ''" in capsys.readouterr().err


def test_check_provider_checks_one_of_two_distributions_that_provide_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_plugins(tmp_path, monkeypatch, TWO_PROVIDERS, builtins=False)

    assert main(["check", "kit-dup"]) == 2
    error = capsys.readouterr().err
    assert "sampler 'kit-dup' is provided by 2 distributions" in error
    assert (
        "Here, pick one with --provider: agentdescent-sampling check kit-dup --provider DIST, "
        "DIST one of those"
    ) in error

    assert main(["check", "kit-dup", "--provider", "kit-test-dup-b"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("checking kit-dup (kit-test-dup-b 0.1) (no parameters)\n")
    assert "kit-dup: all 9 checks passed" in out


NAMED = """
    from agentdescent_sampling.plugin import check_keys, check_score

    class MySampler:
        name = "my-sampler"

        def pick(self, keys, round_index):
            return check_keys(keys)[0]

        def record(self, task_id, score):
            check_score(task_id, score)
"""


@pytest.mark.parametrize(
    ("name", "violation"),
    [
        ("", "[name] MySampler has no name attribute; add name = 'my-sampler' to the class"),
        (
            'name = "my sampler!"',
            "[name] the sampler's name attribute is wrong: invalid sampler name 'my sampler!'",
        ),
    ],
    ids=["removed", "invalid"],
)
def test_check_fails_a_class_without_a_valid_name_as_the_pytest_fixture_does(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    violation: str,
) -> None:
    source = NAMED.replace('name = "my-sampler"', name or "pass")
    plugin = {"kit-test-my-sampler": (source, {"my-sampler": "MySampler"})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)
    # What the sampler_conformance fixture of the plugin's own tests runs, on the class:
    [failed] = check_sampler(registry.get("my-sampler").factory).violations
    assert str(failed).startswith(violation)

    assert main(["check", "my-sampler"]) == 1
    out = capsys.readouterr().out
    assert f"my-sampler: 1 violation(s) of the sampler contract\n  - {failed}\n" in out


def test_show_of_a_name_two_distributions_provide_says_how_to_pick_one_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_plugins(tmp_path, monkeypatch, TWO_PROVIDERS, builtins=False)

    assert main(["show", "kit-dup"]) == 2
    assert (
        "Here, pick one with --provider: agentdescent-sampling show kit-dup --provider DIST, "
        "DIST one of those"
    ) in capsys.readouterr().err
    assert main(["show", "kit-dup", "--provider", "kit-test-dup-b"]) == 0
    assert capsys.readouterr().out.startswith("kit-dup (kit-test-dup-b 0.1)")


def test_check_all_says_how_to_check_each_of_two_distributions_that_provide_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_plugins(tmp_path, monkeypatch, TWO_PROVIDERS, builtins=False)

    assert main(["check", "--all"]) == 1
    out = capsys.readouterr().out
    for distribution in TWO_PROVIDERS:
        assert (
            f"kit-dup ({distribution}): not checked: more than one distribution provides it; "
            f"uninstall one, or check this one with 'agentdescent-sampling check kit-dup "
            f"--provider {distribution}'"
        ) in out
    assert out.splitlines()[-1] == (
        "2 in all: 0 passed, 2 failed (2 of them could not be loaded, or share a name), "
        "0 not checked"
    )
    assert main(["check", "--all", "--provider", "kit-test-dup-a"]) == 2
    assert "give the sampler's name, not --all" in capsys.readouterr().err


BAD_SIGNATURE = """
    class BadSig:
        name = "bad-sig"

        def pick(self, keys):
            return keys[0]

        def record(self, task_id, score):
            pass
"""


def test_check_of_a_plugin_that_fails_to_load_exits_1_as_check_all_counts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin = {"kit-test-bad-sig": (BAD_SIGNATURE, {"bad-sig": "BadSig"})}
    install_plugins(tmp_path, monkeypatch, plugin, builtins=False)

    assert main(["check", "bad-sig"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(
        "agentdescent-sampling: error: not checked: sampler 'bad-sig' comes from a plugin "
        "that failed to load: kit-test-bad-sig 0.1"
    )
    assert "pick(self, keys) can't be called as pick(keys, round_index)" in captured.err
    assert main(["check", "--all"]) == 1  # as it was, for the same plugin
    assert main(["show", "bad-sig"]) == 1  # as check says it
    assert main(["check", "no-such-sampler"]) == 2  # a bad name is still the caller's


HOOK_AS_A_CLASS = """
    from agentdescent_sampling.plugin import hookimpl

    @hookimpl
    def agentdescent_register_samplers(register):
        pass
"""


def test_a_class_form_entry_point_naming_the_hook_function_is_the_plugins_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # It was taken for a factory with a required parameter 'register': check said the
    # user's config missed it (exit 2), and check --all left it "not checked", green.
    plugin = {"kit-test-hook-as-class": (HOOK_AS_A_CLASS, {"hooked": HOOK})}
    install_plugins(tmp_path, monkeypatch, plugin, builtins=False)

    assert main(["check", "hooked"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "agentdescent-sampling: error: not checked: sampler 'hooked' comes from a plugin "
        "that failed to load: kit-test-hook-as-class 0.1"
    )
    assert (
        f":{HOOK} is the hook function {HOOK}, not a sampler factory: a hook-form entry point "
        f"names the module that holds its @hookimpl functions, without ':' (kit_test_plugin_"
    ) in err
    assert main(["check", "--all"]) == 1


def test_an_interrupted_command_says_so_in_one_line_and_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(agentdescent_sampling.cli, "_list", interrupted)

    try:
        status = main(["list"])
    except KeyboardInterrupt:
        pytest.fail("the interrupt escaped main() with its traceback")
    assert status == 130  # as for a command SIGINT ended
    assert capsys.readouterr().err == "agentdescent-sampling: error: interrupted\n"


INTERRUPTING = """
    class Interrupting:
        name = "kit-interrupts"

        def pick(self, keys, round_index):
            raise KeyboardInterrupt

        def record(self, task_id, score):
            pass
"""


def test_check_all_a_sampler_interrupts_names_it_after_the_rows_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sampler's own KeyboardInterrupt ended check --all with "interrupted" alone.
    install_plugins(
        tmp_path,
        monkeypatch,
        {"kit-test-interrupts": (INTERRUPTING, {"kit-interrupts": "Interrupting"})},
    )

    assert main(["check", "--all"]) == 130
    captured = capsys.readouterr()
    assert "round-robin: all" in captured.out
    assert captured.err == (
        "agentdescent-sampling: error: interrupted while checking kit-interrupts "
        "(kit-test-interrupts 0.1); if no one pressed Ctrl-C, the sampler raised "
        "KeyboardInterrupt itself\n"
    )


def test_an_output_that_cannot_encode_a_name_shows_it_escaped_not_a_traceback(
    tmp_path: Path,
) -> None:
    # PYTHONIOENCODING=ascii, or a C locale: the plugin's directory name has an 'ä'.
    done = subprocess.run(
        [sys.executable, "-m", "agentdescent_sampling", "new-plugin", "easiest-first",
         "--directory", str(tmp_path / "plugin-ä")],
        env={**os.environ, "PYTHONIOENCODING": "ascii"}, capture_output=True, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert b"plugin-\\xe4" in done.stdout
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("command", [["list", "--json"], ["show", "kit-loud", "--json"]])
def test_what_a_plugin_prints_as_it_loads_goes_to_stderr_and_the_json_stays_whole(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    source = "print('LOUD AT IMPORT')\n" + textwrap.dedent(FIRST_KEY)
    loud = {"kit-test-loud": (source, {"kit-loud": "FirstKey"})}
    install_plugins(tmp_path, monkeypatch, loud, builtins=False)

    assert main(command) == 0

    out, err = capsys.readouterr()
    json.loads(out)
    assert "LOUD AT IMPORT" in err


def test_a_provider_that_lacks_the_sampler_is_told_who_provides_it_not_to_mean_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = FIRST_KEY.replace("kit-dup", "kit-other")
    plugins = {
        "kit-test-has": (FIRST_KEY, {"kit-dup": "FirstKey"}),
        "kit-test-lacks": (other, {"kit-other": "FirstKey"}),
    }
    install_plugins(tmp_path, monkeypatch, plugins, builtins=False)

    assert main(["show", "kit-dup", "--provider", "kit-test-lacks"]) == 2

    err = capsys.readouterr().err
    assert "'kit-dup' is not provided by 'kit-test-lacks'; it is provided by kit-test-has" in err
    assert "Did you mean 'kit-dup'" not in err


@pytest.mark.parametrize(
    ("disabled", "status"), [(True, 0), (False, 1)], ids=["disabled", "enabled"]
)
def test_a_plugin_claiming_a_built_ins_name_fails_check_and_list_strict_unless_the_user_disabled_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    disabled: bool,
    status: int,
) -> None:
    plugin = {"kit-test-claimant": (FIRST_KEY, {"round-robin": "FirstKey"})}
    install_plugins(tmp_path, monkeypatch, plugin)
    if disabled:
        monkeypatch.setenv("AGENTDESCENT_SAMPLERS_DISABLE", "kit-test-claimant")
    monkeypatch.setattr(registry_module, "_default", Registry(only=["kit-test-claimant"]))
    claims = "kit-test-claimant 0.1 (entry point 'round-robin = kit_test_plugin_"

    assert main(["check", "round-robin"]) == status
    out = capsys.readouterr().out
    assert "round-robin: all 11 checks passed" in out
    if disabled:  # the user's choice: said in a note
        assert f"  note: round-robin is the built-in; {claims}" in out
        assert "claims it too: disabled by AGENTDESCENT_SAMPLERS_DISABLE; also, its entry " in out
    else:
        assert f"\nround-robin is the built-in; {claims}" in out
        assert "claims it too, refused: its entry point is named 'round-robin'" in out
    assert main(["list", "--strict"]) == status
    listed = capsys.readouterr().out
    assert ("disabled  disabled by AGENTDESCENT_SAMPLERS_DISABLE" in listed) is disabled
    assert ("conflict  its entry point is named 'round-robin'" in listed) is not disabled


@pytest.mark.parametrize(
    ("args", "told"),
    [
        (["check", "fixable-first", "--provider", "nope"], "Leave --provider out"),
        (["show", "difficulty-weighted", "--provider", "nope"], "Leave --provider out"),
        (
            ["show", "difficulty-weighted:c=0.1,provider=agentdescent-sampling"],
            "unknown parameter 'provider'. 'provider' is no parameter: give --provider DIST. Valid",
        ),
        (
            ["check", "difficulty-weighted:provider=agentdescent-sampling"],
            "'provider' is no parameter: give --provider DIST. Valid",
        ),
        (
            ["check", "difficulty-weighted:provider=x", "--provider", "agentdescent-sampling"],
            "'provider' is no parameter: drop it: --provider gives it. Valid",
        ),
    ],
)
def test_a_provider_error_on_the_command_line_names_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[str], told: str
) -> None:
    # The registry's advice, "Leave provider out" or a mapping's provider key, is for Python.
    assert main(args) == 2
    error = capsys.readouterr().err
    assert told in error
    assert "Leave provider out" not in error
    assert "a mapping or a table" not in error  # the Python and config advice
