"""``from_run_spec``: what a run spec's ref gets, and the errors the engine can report."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from agentdescent_sampling import (
    DurableSampler,
    InvalidSamplerConfig,
    SamplerError,
    StateError,
    UnknownSamplerError,
    create,
    save_state,
    spec_from_file,
)
from agentdescent_sampling.cli import main
from agentdescent_sampling.durable import read_durable_state
from agentdescent_sampling.refs import from_run_spec
from agentdescent_sampling.runspec import _admits_more


def test_a_name_gives_the_sampler_create_gives() -> None:
    sampler = from_run_spec({"name": "difficulty-weighted", "c": 0.1})

    assert repr(sampler) == repr(create("difficulty-weighted:c=0.1"))


def test_a_config_file_under_a_dotted_key_is_read(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.runs.task_sampler]\nname = "round-robin"\n', encoding="utf-8")

    sampler = from_run_spec(file=str(config), key="tool.runs.task_sampler")

    assert repr(sampler) == repr(create("round-robin"))


def test_a_none_key_reads_a_file_that_holds_the_spec_alone(tmp_path: Path) -> None:
    config = tmp_path / "sampler.json"
    config.write_text('{"name": "difficulty-weighted", "c": 0.1}', encoding="utf-8")

    sampler = from_run_spec(file=str(config), key=None)

    assert repr(sampler) == repr(create("difficulty-weighted:c=0.1"))
    # Beside 'spec', any key given is refused, the default's own text too.
    for key in (None, "task_sampler"):
        with pytest.raises(InvalidSamplerConfig, match=rf"'key' \({key!r}\) names the table"):
            from_run_spec("round-robin", key=key)


def test_a_path_starting_with_a_tilde_is_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    sampler = from_run_spec("round-robin", state="~/states/sampler.json")
    sampler.record(sampler.pick(["a"], 0), 1.0)

    assert isinstance(sampler, DurableSampler)
    assert (tmp_path / "states" / "sampler.json").exists()


@pytest.mark.parametrize(
    ("spec", "file"), [(None, None), ("round-robin", "/abs/run.toml")], ids=["neither", "both"]
)
def test_exactly_one_of_spec_and_file_is_required(spec: str | None, file: str | None) -> None:
    with pytest.raises(InvalidSamplerConfig, match="give exactly one of 'spec'"):
        from_run_spec(spec, file=file)


@pytest.mark.parametrize(
    "arguments",
    [{"file": "run.toml"}, {"spec": "round-robin", "state": "states/sampler.json"}],
    ids=["file", "state"],
)
def test_a_relative_path_is_refused_before_anything_is_read(arguments: dict[str, str]) -> None:
    with pytest.raises(InvalidSamplerConfig, match="is relative, but 'agentdescent evolve'"):
        from_run_spec(**arguments)


@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        ({"spec": "round-robin", "state": "$HOME/runs/a.sqlite"}, "state path "
         "'$HOME/runs/a.sqlite' holds '$HOME', which no shell expands in a run spec: it would "
         "name a file or directory called that; write '~/runs/a.sqlite'"),
        ({"file": "${HOME}/run.toml"}, "write '~/run.toml'"),
        ({"spec": "round-robin", "state": "$XDG_STATE_HOME/a.sqlite"}, "holds "
         "'$XDG_STATE_HOME', which no shell expands in a run spec: it would name a file or "
         "directory called that; write the path it stands for (or one starting with '~') in "
         "place of '$XDG_STATE_HOME'"),
        ({"spec": "round-robin", "state": "/runs/$USER/a.sqlite"}, "holds '$USER'"),
        ({"spec": "round-robin", "state": "runs/$HOME/a.sqlite"}, "in place of '$HOME'"),
        ({"spec": "round-robin", "state": "${HOME:-/tmp}/a.sqlite"}, "in place of "
         "'${HOME:-/tmp}'"),
        ({"file": "$(pwd)/run.toml"}, "holds '$(pwd)'"),
    ],
    ids=["home", "home-braced", "other", "mid-path", "relative", "default", "command"],
)  # fmt: skip
def test_a_path_holding_a_shell_variable_is_told_that_nothing_expands_it(
    arguments: dict[str, str], told: str
) -> None:
    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(**arguments)
    assert told in str(raised.value)


def test_a_state_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(InvalidSamplerConfig, match="'state' must be a path string, got int 3"):
        from_run_spec("round-robin", state=3)  # type: ignore[arg-type]  # JSON can hold it


def test_an_unknown_name_becomes_a_value_error_with_the_same_message() -> None:
    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec("informative-bnad")

    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value.__cause__, UnknownSamplerError)
    assert str(raised.value) == f"policies.task_sampler: {raised.value.__cause__}"


def test_an_unknown_name_read_from_a_file_is_quoted_by_a_short_prefix_not_whole(
    tmp_path: Path,
) -> None:
    secret = "sk-proj-" + "Q7w" * 15
    config = tmp_path / "run.toml"
    config.write_text(f'[secrets]\nopenai = "{secret}"\n', encoding="utf-8")

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config), key="secrets.openai")

    said = str(raised.value)
    assert said.startswith(
        f"policies.task_sampler: in {str(config)!r} under 'secrets.openai': no sampler named "
        f"'sk-proj-Q7wQ7wQ7wQ7w...'. Available: "
    )
    assert secret[:21] not in said
    assert secret[:21] not in str(raised.value.__cause__)


@pytest.mark.parametrize(
    ("secret", "told"),
    [("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "invalid sampler name <40 characters, not shown>: "),
     ("hunter2!SuperSecret#2024", "invalid sampler name <24 characters, not shown>: "),
     ("postgres://user:hunter2@db.example.com/prod", "cannot parse parameters <34 characters, not "
      "shown> in sampler spec <43 characters, not shown>: ")],
    ids=["key", "password", "url"],
)  # fmt: skip
def test_a_value_read_from_a_file_that_is_no_name_in_form_is_not_shown_at_all(
    tmp_path: Path, secret: str, told: str
) -> None:
    config = tmp_path / "run.toml"
    config.write_text(f'[secrets]\nleaked = "{secret}"\n', encoding="utf-8")

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config), key="secrets.leaked")

    assert told in str(raised.value)
    assert not any(secret[i : i + 8] in str(raised.value) for i in range(len(secret) - 7))


def test_a_parameter_value_read_from_a_file_is_cut_wherever_the_message_quotes_it(
    tmp_path: Path,
) -> None:
    secret = "sk-proj-" + "Q7w" * 15
    config = tmp_path / "run.toml"
    config.write_text(f'[task_sampler]\nname = "difficulty-weighted"\nc = "{secret}"\n')

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config))

    said = str(raised.value)
    assert "rejected 'difficulty-weighted:c=sk-proj-Q7wQ7wQ7wQ7w...'" in said
    assert "DifficultyWeighted(c='sk-proj-Q7wQ7wQ7wQ7w...')" in said
    assert secret[:21] not in said


def test_an_unknown_name_of_sampler_length_read_from_a_file_is_quoted_whole(
    tmp_path: Path,
) -> None:
    config = tmp_path / "run.toml"
    config.write_text('[task_sampler]\nname = "difficulty-weigthed"\n', encoding="utf-8")

    with pytest.raises(InvalidSamplerConfig, match=r"no sampler named 'difficulty-weigthed'\. Did"):
        from_run_spec(file=str(config))


def test_a_state_error_stays_a_state_error(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    other = create("informative-band", state=state)
    other.record(other.pick(["a"], 0), 1.0)
    other.close()

    with pytest.raises(StateError, match=r"^policies\.task_sampler: .*holds the state of sampler "
                       r"'informative-band'") as told:  # fmt: skip
        from_run_spec("difficulty-weighted", state=str(state))
    # In a run spec's own terms too: a new run (no resume) may change its spec or its path.
    assert str(told.value).endswith(
        f". In this run spec: give 'spec' the sampler and parameters the file was kept with "
        f"('agentdescent-sampling state show {state}' names them), or give 'state' a new path "
        f"for a fresh start"
    )


def test_a_state_error_with_the_sampler_read_from_a_file_says_to_fix_that_files_table(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sampler.sqlite"
    with create("informative-band", state=state) as other:
        other.record(other.pick(["a"], 0), 1.0)
    config = tmp_path / "run.toml"
    config.write_text('[tool.sampler]\nname = "difficulty-weighted"\n', encoding="utf-8")

    with pytest.raises(StateError) as told:
        from_run_spec(file=str(config), key="tool.sampler", state=str(state))
    assert str(told.value).endswith(
        f". In this run spec: give the 'tool.sampler' table in {config} the sampler and "
        f"parameters the file was kept with ('agentdescent-sampling state show {state}' names "
        f"them), or give 'state' a new path for a fresh start"
    )


@pytest.mark.parametrize(
    "spec",
    ["informative-band:windw=3", {"name": "informative-band", "windw": 3}],
    ids=["string", "mapping"],
)
def test_a_bad_parameter_names_the_slot_and_stays_a_value_error(spec: object) -> None:
    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(spec)  # type: ignore[arg-type]

    assert str(raised.value).startswith(
        "policies.task_sampler: sampler 'informative-band': unknown parameter 'windw'. "
        "Did you mean 'window'?"
    )
    assert isinstance(raised.value.__cause__, InvalidSamplerConfig)


def test_a_bad_parameter_in_the_spec_file_names_the_slot_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "run.json"
    config.write_text('{"task_sampler": {"name": "informative-band", "window": "5"}}')

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config))

    assert str(raised.value).startswith(
        f"policies.task_sampler: in {str(config)!r} under 'task_sampler': sampler "
        f"'informative-band'"
    )


def test_a_linked_sampler_without_evidence_is_told_the_run_spec_fix_not_wire() -> None:
    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec("round-robin", link="main")

    assert str(raised.value) == (
        "policies.task_sampler: sampler 'round-robin' has no evidence(task_id, gain, committed) "
        "method, so it cannot use the engine's evidence; select fixable-first, or remove 'link' "
        "from policies.task_sampler and remove the policies.acceptance and policies.promotion "
        "refs (agentdescent_sampling.refs:evidence_acceptance and :evidence_promotion) that give "
        "link 'main'"
    )


def test_a_state_file_with_records_is_announced_with_its_count_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "sampler.sqlite"
    first = from_run_spec("round-robin", state=str(state))
    assert capsys.readouterr().err == ""  # a new file: nothing to continue
    for _ in range(3):
        first.record(first.pick(["a", "b"], 0), 1.0)
    first.close()  # the run that made it has stopped

    from_run_spec("round-robin", state=str(state)).close()

    assert capsys.readouterr().err == (
        f"agentdescent-sampling: continuing 3 records from {state} "
        f"(a fresh run needs its own state path, or that file deleted)\n"
    )


def test_a_second_build_on_the_same_state_closes_the_first_if_it_has_not_been_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What agentdescent evolve does: build the spec to check it, build it again to run it.
    state = tmp_path / "sampler.sqlite"
    with create("round-robin", state=state) as earlier:
        earlier.record("a", 1.0)
    checked = from_run_spec("round-robin", state=str(state))
    run = from_run_spec("round-robin", state=str(state))
    assert capsys.readouterr().err.count("continuing 1 records") == 1
    run.record(run.pick(["a", "b"], 0), 0.0)
    with pytest.raises(StateError, match="closed"):
        checked.record("a", 1.0)
    run.close()
    with create("round-robin", state=state) as reopened:
        assert reopened.records == 2


def test_a_sampler_in_use_keeps_its_state_from_a_second_build(tmp_path: Path) -> None:
    state = tmp_path / "sampler.sqlite"
    with create("round-robin", state=state) as earlier:
        earlier.record("a", 1.0)
    running = from_run_spec("round-robin", state=str(state))
    running.pick(["a", "b"], 0)  # picked, not yet recorded: it is in use
    with pytest.raises(StateError, match="already open in this process"):
        from_run_spec("round-robin", state=str(state))
    running.record("a", 1.0)
    running.close()


def test_an_export_of_another_sampler_given_as_state_is_told_which_sampler_it_holds(
    tmp_path: Path,
) -> None:
    export = tmp_path / "export.json"
    save_state(create("fixable-first"), export)  # type: ignore[arg-type]

    with pytest.raises(StateError) as caught:
        from_run_spec("informative-band", state=str(export))

    told = str(caught.value)
    target = str(tmp_path / "export.sqlite")
    assert f"--spec fixable-first:pass_threshold=0.999 and give {target!r} as 'state'" in told
    assert told.endswith(
        "and select 'fixable-first' in 'spec': it is the state of that sampler, not of "
        "'informative-band'"
    )


def test_the_import_an_export_given_as_state_is_told_works_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Exported beside the state file it came from, with a parameter off its default: the
    # advice named that file as the output (import refuses one that exists) and dropped the
    # parameter (import refuses other parameters than the export's).
    made, export = tmp_path / "dw.sqlite", tmp_path / "dw.json"
    with create("difficulty-weighted:c=0.1", state=made) as sampler:
        sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    save_state(create("difficulty-weighted:c=0.1"), export)  # type: ignore[arg-type]
    (tmp_path / "dw-state-1.sqlite").touch()  # taken too

    with pytest.raises(StateError) as caught:
        from_run_spec("fixable-first", state=str(export))

    told = str(caught.value)
    command = told.partition("make a state file of it with ")[2].partition(" and give ")[0]
    target = tmp_path / "dw-state-2.sqlite"
    assert shlex.split(command) == [
        *("agentdescent-sampling", "state", "import", str(export), "-o", str(target)),
        *("--spec", "difficulty-weighted:c=0.1,pass_threshold=0.999"),
    ]
    assert main(shlex.split(command)[1:]) == 0, capsys.readouterr().err
    assert read_durable_state(target)["sampler"] == "difficulty-weighted"


@pytest.mark.parametrize(
    ("entry", "wide"),
    [
        ("agentdescent_sampling.refs", False),
        ("agentdescent_sampling.refs.", False),
        ("agentdescent_sampling.", True),
        ("agentdescent_sampling", True),
        ("agentdescent_sampling.re", True),  # registry, records
        ("agentdescent_sampling.bench.", True),
        ("agentdescent_sampling.bench.engine", True),
        ("agentdescent.", False),
        ("benchmarks.", False),
        (7, False),
    ],
)
def test_an_allow_entry_is_wide_when_it_admits_a_module_besides_the_refs(
    entry: object, wide: bool
) -> None:
    assert _admits_more(entry) is wide


def test_the_refs_module_holds_the_three_refs_and_no_other_callable() -> None:
    import agentdescent_sampling.refs as refs

    callables = {name for name in vars(refs) if callable(getattr(refs, name))}
    assert callables == {"from_run_spec", "evidence_acceptance", "evidence_promotion"}


@pytest.mark.parametrize("link", ["2024run", "main-run", "mäin", "", 5])
def test_a_link_that_is_not_a_name_is_refused_with_the_rule_it_breaks(link: object) -> None:
    rule = "ASCII letters, digits and '_', not starting with a digit, up to 64"
    with pytest.raises(InvalidSamplerConfig, match=re.escape(rule)):
        from_run_spec("fixable-first", link=link)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["state", "file"])
def test_an_empty_path_is_refused_as_empty_not_as_a_relative_path_to_the_directory(
    field: str,
) -> None:
    # "state": "" used to be called relative, with the current directory as the example of
    # an absolute path to give: a directory, which a state path can never be.
    arguments = {"spec": "round-robin", "state": ""} if field == "state" else {"file": ""}

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(**arguments)

    assert str(raised.value).startswith(f"policies.task_sampler: '{field}' is the empty string")
    assert "relative" not in str(raised.value)


def test_a_value_read_from_a_file_hides_only_itself_not_a_text_that_begins_as_it_does(
    tmp_path: Path,
) -> None:
    # ' ' began "' rejected", and was cut there with what followed.
    config = tmp_path / "run.toml"
    config.write_text('[task_sampler]\nname = "difficulty-weighted"\nc = " "\n')

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config))

    said = str(raised.value)
    assert "sampler 'difficulty-weighted' rejected" in said
    assert "DifficultyWeighted(c=<1 character, not shown>)" in said


@pytest.mark.parametrize("value", ["1,5", "0o10", "_1", "1e-3"])
def test_a_text_read_from_a_file_that_reads_as_a_number_meant_is_shown_in_the_error(
    tmp_path: Path, value: str
) -> None:
    # A number written as text is no secret, and what to fix is that very text.
    config = tmp_path / "run.toml"
    config.write_text(f'[task_sampler]\nname = "difficulty-weighted"\nc = "{value}"\n')

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config))

    assert f"DifficultyWeighted(c={value!r})" in str(raised.value)
    assert "not shown" not in str(raised.value)


@pytest.mark.parametrize(
    "secret",
    ["correct horse battery staple", "sk_live__4eC39HqLyjWDarjtT1zdp7dc",
     "ghp_x9Kq__B4aZ7mPq2LrT8vW_", "48213907,55120934,99017723", "10.20.30.40", "1e5bbe0b0e"],
)  # fmt: skip
def test_a_secret_read_by_the_wrong_key_is_not_shown_in_any_form(
    tmp_path: Path, secret: str
) -> None:
    # Not whole, not with its separators mended, not as a number meant.
    for text, key in (
        (f'[tool]\napi_key = "{secret}"\n', "tool.api_key"),
        (f'[task_sampler]\nname = "difficulty-weighted"\nc = "{secret}"\n', "task_sampler"),
    ):
        config = tmp_path / "run.toml"
        config.write_text(text)
        with pytest.raises(InvalidSamplerConfig) as raised:
            from_run_spec(file=str(config), key=key)
        said = str(raised.value)
        assert secret not in said
        assert secret.replace(" ", "-").replace("__", "_").strip("_") not in said


SECRET_URL = "https://svc:s3cr3t-T0ken@llm.internal.example.com/v1"


@pytest.mark.parametrize(
    ("table", "told"),
    [(f'name = "gpt-4o"\nprovider = "{SECRET_URL}"', "provided by <52 characters, not shown>"),
     (f'name = "fixable-first"\nprovider = "{SECRET_URL}"', "not by <52 characters, not shown>"),
     (f'name = "difficulty-weighted"\n"{SECRET_URL}" = 1', "name <52 characters, not shown>"),
     (f'name = "difficulty-weighted"\nc = {{"{SECRET_URL}" = 1}}',
      "(c={<52 characters, not shown>: 1})")],
    ids=["provider-unknown-name", "provider-of-a-built-in", "a-key", "a-key-in-a-table"],
)  # fmt: skip
def test_a_provider_or_a_key_read_from_a_file_is_not_shown_either(
    tmp_path: Path, table: str, told: str
) -> None:
    # The provider and the keys were left out of what is hidden: each was shown whole.
    config = tmp_path / "run.toml"
    config.write_text(f"[task_sampler]\n{table}\n", encoding="utf-8")

    with pytest.raises(SamplerError) as raised:
        create(spec_from_file(config))

    assert told in str(raised.value)
    assert "s3cr3t" not in str(raised.value)


def test_hiding_a_value_read_from_a_file_spares_texts_that_begin_as_it_does() -> None:
    from agentdescent_sampling.spec import cut_read

    message = "got 'a b' then 'a bc', c=a b, d=a bc; " * 2_000  # every one, in one pass
    assert cut_read(message, {"c": "a b"}) == (
        "got <3 characters, not shown> then 'a bc', c=<3 characters, not shown>, d=a bc; " * 2_000
    )


def test_a_number_written_as_text_in_a_file_is_shown_with_the_advice_to_unquote_it(
    tmp_path: Path,
) -> None:
    config = tmp_path / "run.toml"
    config.write_text('[task_sampler]\nname = "difficulty-weighted"\nc = "0.5"\n')

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config))

    assert "DifficultyWeighted(c='0.5'): expected a finite number" in str(raised.value)
    assert "write the number without quotes" in str(raised.value)
    assert "prior=0.5" in str(raised.value)


def test_a_text_in_a_list_read_from_a_file_is_not_shown_either(tmp_path: Path) -> None:
    secret = "hunter2!SuperSecret#2024"
    config = tmp_path / "run.toml"
    config.write_text(f'[task_sampler]\nname = "difficulty-weighted"\nc = ["{secret}"]\n')

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config))

    assert "DifficultyWeighted(c=[<24 characters, not shown>])" in str(raised.value)
    assert "SuperSecret" not in str(raised.value)


@pytest.mark.parametrize(
    ("secret", "table"),
    [("hunter2-P\u00e4ssw\u00f6rd-xyz", False),  # non-ASCII: a name error shows it by ascii()
     ("\u00c4\u00d6\u00dc-key-2024-xx-yy-zz", False),
     ("abc'def\"ghi jkl mno", True),  # quotes: repr inside repr escapes them again
     ("pa ss\\word 12345 67890", True),  # a backslash, doubled at each repr
     ("tab\tHunter2-Zq9x-8812", True),  # a control character, escaped at each repr
     ("p\u00e4ss, w\u00f6rd 12345", True)],  # non-ASCII and a comma: written as JSON, then repr
    ids=["non-ascii-name", "non-ascii-start", "quotes", "backslash", "tab", "json-escaped"],
)  # fmt: skip
def test_a_value_read_from_a_file_is_not_shown_in_any_escaped_form(
    tmp_path: Path, secret: str, table: bool
) -> None:
    # The cut looked for the text as written and as repr quotes it once, but a message also
    # quotes it by ascii() (an invalid name), as JSON (the spec's string form) and through a
    # repr of a message that already quoted it (a sampler's refusal, inside ours).
    config = tmp_path / "run.json"
    escape = json.dumps(secret)
    config.write_text(
        f'{{"task_sampler": {{"name": "difficulty-weighted", "c": {escape}}}}}'
        if table
        else f'{{"task_sampler": {escape}}}',
        encoding="utf-8",
    )

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config))

    said = str(raised.value)
    assert "not shown>" in said
    words = [word for word in re.split(r"[^A-Za-z0-9]+", secret) if len(word) >= 3]
    assert words  # what is left of the secret whatever its escapes
    assert not any(word in said for word in words), said


@pytest.mark.parametrize(
    ("secret", "told"),
    [("difficulty-weighted:c=hunter2!Super,Secret=2024", "unknown parameter <6 characters"),
     ("difficulty-weighted:c=hunter2!Super,Sxq!Rvt=2024", "bad parameter name <7 characters"),
     ("difficulty-weighted:c=hunter2!Super,Secret2024", "cannot parse parameters <10 char"),
     ("difficulty-weighted:c=hunter2!Super,c=2024", "parameter <1 character, not shown> is"),
     ("postgres://admin:hunter2@db.example.com/prod?sslmode=require,x=1",
      "bad parameter name <43 characters"),
     ("Zq9x8812,pass=Hunter2!x", "after a colon: <23 characters, not shown>"),
     ("hunter2!Pass:Zqx9=1", "invalid sampler name <12 characters, not shown>")],
    ids=["key-after-a-comma", "bad-key-after-a-comma", "rest-after-a-comma", "key-twice",
         "url-with-a-query", "colon-form-suggested", "name-before-a-colon"],
)  # fmt: skip
@pytest.mark.parametrize("suffix", [".toml", ".json", ".yaml"])
def test_a_secret_read_from_a_file_shows_no_piece_the_spec_parser_cuts_from_it(
    tmp_path: Path, secret: str, told: str, suffix: str
) -> None:
    # The spec string form splits at ':', ',' and '=' before anything is hidden, and a message
    # quoted a piece (a parameter name, what could not be parsed) that was part of the secret.
    config = tmp_path / f"run{suffix}"
    text = json.dumps(secret)  # a TOML, JSON and YAML string alike
    config.write_text(
        f'{{"secrets": {{"leaked": {text}}}}}' if suffix == ".json" else
        f"[secrets]\nleaked = {text}\n" if suffix == ".toml" else f"secrets:\n  leaked: {text}\n",
        encoding="utf-8",
    )  # fmt: skip

    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config), key="secrets.leaked")

    said = str(raised.value)
    assert told in said
    # No piece of the secret but the sampler name (a name, shown) that it begins with.
    pieces = set(re.split(r"[^A-Za-z0-9]+", secret)) - {"difficulty", "weighted", "postgres"}
    assert not any(piece in said for piece in pieces if len(piece) >= 4), said


def test_a_secret_with_a_letter_past_ascii_read_by_the_wrong_key_is_not_shown_escaped(
    tmp_path: Path,
) -> None:
    # Read as a spec string, the URL's path is a parameter name that is not ASCII, which a
    # message shows escaped; escaped, it is still the password.
    url = (
        "postgresql://admin:h\u00fcnter2secretpassword@db-primary.eu-west-1.internal.example.com"
        "/prod?sslmode=require"
    )
    config = tmp_path / "app.toml"
    config.write_text(f'[database]\nurl = "{url}"\n', encoding="utf-8")
    with pytest.raises(InvalidSamplerConfig) as raised:
        from_run_spec(file=str(config), key="database.url")
    said = str(raised.value)
    assert "whose characters are not all ASCII" in said
    assert "nter2secret" not in said


@pytest.mark.parametrize(
    "spec",
    [{"nam": "fixable-first"}, "difficulty-weighted:provider=agentdescent-sampling"],
)
def test_an_example_in_a_run_spec_error_is_json_the_spec_takes(spec: object) -> None:
    # They were Python mappings, {'name': ...}, which a JSON run spec does not read.
    with pytest.raises(InvalidSamplerConfig) as refused:
        from_run_spec(spec=spec)
    example = re.search(r"(?:for example|such as) (\{.*?\})", str(refused.value))
    assert example is not None, str(refused.value)
    assert "name" in json.loads(example.group(1).replace("...", "null"))


@pytest.mark.parametrize(
    ("key", "told"),
    [
        (5, "got the number 5"),
        (["a"], 'got an array ["a"]'),
        (True, "got the boolean true"),
        ("", "got the empty string"),
    ],
)
def test_a_key_that_is_not_a_table_name_is_refused_in_json_words(
    tmp_path: Path, key: object, told: str
) -> None:
    # A number was read as the text '5' and the file was told to add a [5] table.
    config = tmp_path / "run.toml"
    config.write_text('[task_sampler]\nname = "round-robin"\n')
    with pytest.raises(InvalidSamplerConfig) as refused:
        from_run_spec(file=str(config), key=key)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "policies.task_sampler: 'key' must be the (dotted) name of the table to read in 'file', "
        f'a string such as "task_sampler", or null for a file that holds the spec alone; {told}'
    )


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ('{"name": "round-robin"}', 'the file holds a spec: read it with "key": null'),
        ('{"Task_Sampler": {"name": "round-robin"}}', 'read it with "key": "Task_Sampler"'),
    ],
)
def test_a_files_advice_on_its_key_is_written_as_the_run_spec_writes_it(
    tmp_path: Path, text: str, told: str
) -> None:
    # It was key=None and key='Task_Sampler', as a Python call writes them.
    config = tmp_path / "run.json"
    config.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as refused:
        from_run_spec(file=str(config))
    assert told in str(refused.value)
    assert "key=" not in str(refused.value)


def test_a_long_nested_key_is_told_whole_in_json_with_no_cut_or_crash(tmp_path: Path) -> None:
    # Advice was Python's key='...', cut at 80 characters and then regex-rewritten: the rewrite
    # ran past the cut into the next quote, and a control character there raised SyntaxError.
    holder = "tool.agentdescent.experiments.december_ablation_fixable_first_versus_round_robin"
    config = tmp_path / "run.toml"
    config.write_text(f'[{holder}]\nname = "round-robin"\nnote = "\\u0001"\n')
    with pytest.raises(InvalidSamplerConfig) as refused:
        from_run_spec(file=str(config), key=f"{holder}.task_sampler")
    assert str(refused.value).endswith(f'holds a spec: read it with "key": "{holder}"')
