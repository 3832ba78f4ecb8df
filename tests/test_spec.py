import enum
import json
import re
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentdescent_sampling import (
    InvalidSamplerConfig,
    RoundRobin,
    SamplerSpec,
    UnknownSamplerError,
    create,
    spec_from_file,
)
from agentdescent_sampling.spec import parse_spec


def test_a_bare_name_is_a_spec_without_parameters() -> None:
    assert parse_spec("difficulty-weighted") == SamplerSpec("difficulty-weighted")


def test_string_parameters_are_parsed_to_ints_floats_booleans_and_strings() -> None:
    spec = parse_spec("s:a=1,b=0.25,c=1e-3,d=true,e=False,f=none,g=text,h='1',i=\"x, y\"")
    assert dict(spec.params) == {
        "a": 1,
        "b": 0.25,
        "c": 0.001,
        "d": True,
        "e": False,
        "f": None,
        "g": "text",
        "h": "1",
        "i": "x, y",
    }


def test_whitespace_around_names_keys_and_values_is_ignored() -> None:
    assert parse_spec("  s : a = 1 , b = 2 ") == SamplerSpec("s", {"a": 1, "b": 2})


def test_a_mapping_takes_name_provider_and_parameters() -> None:
    spec = parse_spec({"name": "s", "provider": "dist-a", "c": 0.1})
    assert spec == SamplerSpec("s", {"c": 0.1}, provider="dist-a")


def test_a_spec_prints_as_the_string_that_parses_back_to_it() -> None:
    spec = SamplerSpec("s", {"a": 1, "b": "x, y", "c": True, "d": None, "e": "1"})
    assert parse_spec(str(spec)) == spec


def test_a_spec_is_frozen() -> None:
    spec = parse_spec("s:a=1")
    with pytest.raises(AttributeError):
        spec.name = "t"  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.params["a"] = 2  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "told"),
    [([{"name": "s"}], "got list [{'name': 's'}]; give one table, not a list of them (in TOML, "
      "a table has single brackets, [task_sampler]; double brackets, [[task_sampler]], make a "
      "list)"),
     (True, "got bool True; in YAML, an unquoted on, off, yes or no is read as a boolean: "
      "quote the name"),
     ({"Name": "s"}, "a sampler table needs a 'name' key, got keys 'Name'; write 'Name' as "
      "'name'")],
    ids=["toml-array-of-tables", "yaml-boolean", "name-capitalised"],
)  # fmt: skip
def test_a_spec_of_a_shape_a_config_slip_makes_is_told_the_slip(value: object, told: str) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(value)  # type: ignore[arg-type]  # what a file's parser made of it
    assert str(caught.value).endswith(told)


class Unnamed:
    """A sampler class with no ``name``."""

    def pick(self, keys: list[str], round_index: int) -> str:
        return keys[0]


class Raising:
    """An object whose every attribute raises."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(name)

    def __repr__(self) -> str:
        return "Raising()"


@pytest.mark.parametrize(
    ("value", "told"),
    [(RoundRobin, "got type <class 'agentdescent_sampling.samplers.round_robin.RoundRobin'>; "
      "give its name ('round-robin'), or build the class and use it without a spec: "
      "RoundRobin()"),
     (RoundRobin(), "; give its name ('round-robin'), or use the sampler itself, which is "
      "built already"),
     (Unnamed, "; build the class and use it without a spec: Unnamed()"),
     (type("Mine", (RoundRobin,), {}), "; build the class and use it without a spec: Mine()"),
     (type("Esc\x1b[2J\nX", (Unnamed,), {}), "without a spec: Esc\\x1b[2J\\x0aX()"),
     (Raising(), "got Raising Raising()")],
    ids=["a-built-in-class", "a-built-sampler", "a-class-without-a-name",
         "a-subclass-whose-name-selects-its-base", "a-class-named-with-escapes",
         "an-object-whose-attributes-raise"],
)  # fmt: skip
def test_a_sampler_class_or_instance_given_as_a_spec_is_told_its_name_or_to_use_it(
    value: object, told: str
) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(value)  # type: ignore[arg-type]
    assert str(caught.value).endswith(told)


@pytest.mark.parametrize(
    ("text", "told"),
    [("s:c=0.1 pass_threshold=0.8", "sampler 's': the value of 'c', '0.1 pass_threshold=0.8', "
      "holds another parameter; separate parameters with commas: 's:c=0.1,pass_threshold=0.8'"),
     ("s:c=0.1;pass_threshold=0.8", "separate parameters with commas: "
      "'s:c=0.1,pass_threshold=0.8'"),
     ("s:c=0.1 & pass_threshold=0.8", "separate parameters with commas: "
      "'s:c=0.1,pass_threshold=0.8'"),
     ("s:c=0.1,pass_threshold=0.8;prior=0.3;window=5,z=1",
      "separate parameters with commas: 's:c=0.1,pass_threshold=0.8,prior=0.3,window=5,z=1'"),
     ("s:c=0.1;prior=0.3;", "separate parameters with commas: 's:c=0.1,prior=0.3'"),
     ("s:c=1,5", "; a decimal point is '.', not ',': c=1.5"),
     ("s:c=1,5,prior=0.3", "; a decimal point is '.', not ',': c=1.5")],
    ids=["a-comma-left-out", "a-semicolon", "an-ampersand", "several-among-other-parameters",
         "one-left-at-the-end",
         "a-decimal-comma",
         "a-decimal-comma-then-more"],
)  # fmt: skip
def test_a_slip_of_punctuation_in_a_spec_string_is_told_what_was_meant(
    text: str, told: str
) -> None:
    # The first read as one text value (got str), the others as a pair that could not be read.
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(text)
    assert str(caught.value).endswith(told)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("s:c=1,prior=5", {"c": 1, "prior": 5}),
        ("s:tag=a b", {"tag": "a b"}),
        ("s:url=http://h/?a=1&b=2", {"url": "http://h/?a=1&b=2"}),
        ("s:q='a;b=c'", {"q": "a;b=c"}),
        ("s:q='a b=c'", {"q": "a b=c"}),
    ],
)
def test_a_value_no_missed_comma_explains_is_read_as_written(
    text: str, kept: dict[str, object]
) -> None:
    assert dict(parse_spec(text).params) == kept


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("s:a=1,a=2", "given twice"),
        ("s:a=1,,b=2", "cannot parse parameters"),
        ("s:=1", "bad parameter name"),
        ("s:1a=1", "bad parameter name"),
        ("s:novalue", "cannot parse parameters"),
        ("pkg.module:Class", "invalid sampler name 'pkg.module'"),
        ("os.path", "invalid sampler name"),
        ("../evil", "invalid sampler name"),
        ("", "invalid sampler name"),
        ("s:" + "a=1," * 2000, "over the limit"),
    ],
)
def test_malformed_strings_raise_invalid_config_quoting_the_problem(
    text: str, fragment: str
) -> None:
    with pytest.raises(InvalidSamplerConfig, match=fragment.replace(".", r"\.")):
        parse_spec(text)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"c": 0.1}, "needs a 'name' key"),
        ({"name": 3}, "invalid sampler name 3"),
        ({"name": "pkg.mod:Attr"}, "never imports code"),
        ({"name": "s", "provider": 7}, "'provider' must be"),
        ({"name": "s", 5: 1}, "bad parameter name 5"),
        (42, "got int 42"),
        (None, "got NoneType"),
        (["s"], "got list"),
    ],
)
def test_malformed_values_raise_invalid_config(value: object, fragment: str) -> None:
    with pytest.raises(InvalidSamplerConfig, match=fragment):
        parse_spec(value)  # type: ignore[arg-type]


def test_a_toml_table_is_read_under_its_key(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "difficulty-weighted"\nc = 0.1\n')
    assert spec_from_file(path) == SamplerSpec("difficulty-weighted", {"c": 0.1})


def test_a_dotted_key_reaches_a_nested_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.agentdescent]\ntask_sampler = "round-robin"\n')
    assert spec_from_file(path, key="tool.agentdescent.task_sampler") == SamplerSpec("round-robin")


def test_a_json_file_is_read_too(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"task_sampler": {"name": "s", "provider": "d"}}))
    assert spec_from_file(path) == SamplerSpec("s", provider="d")


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("sampler.toml", 'name = "fixable-first"\nfailure_cost = 2\n'),
        ("sampler.json", '{"name": "fixable-first", "failure_cost": 2}'),
        ("sampler.json", '"fixable-first:failure_cost=2"'),
    ],
)
def test_a_file_that_holds_the_spec_alone_is_read_with_no_key(
    tmp_path: Path, file: str, text: str
) -> None:
    path = tmp_path / file
    path.write_text(text)
    spec = spec_from_file(path, key=None)
    assert spec == SamplerSpec("fixable-first", {"failure_cost": 2})
    assert spec.source == repr(str(path))


@pytest.mark.parametrize(
    ("text", "key", "told"),
    [
        ('name = "fixable-first"\n', "task_sampler", "; the file holds a spec: read it with "
         "key=None"),
        ('[tool.agentdescent]\nname = "fixable-first"\n', "tool.agentdescent.task_sampler",
         "; 'tool.agentdescent' holds a spec: read it with key='tool.agentdescent'"),
    ],
)  # fmt: skip
def test_a_table_that_is_a_spec_itself_is_told_the_key_that_reads_it(
    tmp_path: Path, text: str, key: str, told: str
) -> None:
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path, key)
    assert told in str(caught.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[task_sampler]\nname = "s"\n', "task_sampler"),
        ('[tool.agentdescent.task_sampler]\nname = "s"\n', "tool.agentdescent.task_sampler"),
    ],
)
def test_a_file_read_with_no_key_that_holds_a_sampler_table_is_told_its_key(
    tmp_path: Path, text: str, key: str
) -> None:
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path, key=None)
    assert str(caught.value).endswith(f"; read the one it has: key={key!r}")
    assert spec_from_file(path, key) == SamplerSpec("s")


def test_a_misread_number_at_the_top_level_is_named_by_its_key_alone(tmp_path: Path) -> None:
    path = tmp_path / "sampler.yaml"
    path.write_text("name: informative-band\nwindow: 010\n")
    with pytest.raises(InvalidSamplerConfig, match=r"^in '.*sampler\.yaml': 'window' is 010 "):
        spec_from_file(path, key=None)


def test_a_file_read_with_no_key_that_is_no_spec_names_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"c": 0.1}')
    with pytest.raises(InvalidSamplerConfig, match=r"^in '.*run\.json': a sampler table needs"):
        spec_from_file(path, key=None)


@pytest.mark.parametrize(
    ("file", "text", "example"),
    [
        (
            "run.toml",
            '[sampler]\nname = "s"\n',
            'a [task_sampler] table with name = "fixable-first"',
        ),
        ("run.json", '{"sampler": {"name": "s"}}', '"task_sampler": {"name": "fixable-first"}'),
        ("run.yaml", "sampler: {name: s}\n", "task_sampler: {name: fixable-first}"),
    ],
)
def test_a_missing_key_names_the_file_the_keys_found_and_an_entry_in_its_format(
    tmp_path: Path, file: str, text: str, example: str
) -> None:
    path = tmp_path / file
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig, match=r"no 'task_sampler' entry.*'sampler'") as caught:
        spec_from_file(path)
    # The table the file has looks like a sampler's: its key is told.
    assert str(caught.value).endswith(f"; add {example}, or read the one it has: key='sampler'")


@pytest.mark.parametrize(
    ("text", "key", "found", "spelt"),
    [
        ('[task-sampler]\nname = "s"\n', "task_sampler", "task-sampler", "task-sampler"),
        ('[TaskSampler]\nname = "s"\n', "task_sampler", "TaskSampler", "TaskSampler"),
        ('[task_sampler]\nname = "s"\n', "task-sampler", "task_sampler", "task_sampler"),
        ('[task_sampler]\nname = "s"\n', "task_sampler ", "task_sampler", "task_sampler"),
        (
            '[tool.agentdescent.tasksampler]\nname = "s"\n',
            "tool.agentdescent.task_sampler",
            "tasksampler",
            "tool.agentdescent.tasksampler",
        ),
        (
            '[tool.agentdescnt.task_sampler]\nname = "s"\n',
            "tool.agentdescent.task_sampler",
            "agentdescnt",
            "tool.agentdescnt.task_sampler",
        ),
    ],
)
def test_a_key_spelt_apart_from_the_files_table_is_told_the_key_that_reads_it_or_the_rename(
    tmp_path: Path, text: str, key: str, found: str, spelt: str
) -> None:
    # Either may be the misspelling: the key given (the default, or the caller's) or the file's.
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path, key)
    missing = next(part for part in key.split(".") if part not in spelt.split("."))
    # The file's table may be the slip only where the key is one the docs give.
    rename = (
        f" or rename it {missing!r}"
        if key in ("task_sampler", "tool.agentdescent.task_sampler")
        else ""
    )
    assert str(caught.value).endswith(
        f"; if {found!r} is the table meant, read it with key={spelt!r}{rename}"
    )
    assert spec_from_file(path, spelt) == SamplerSpec("s")


@pytest.mark.parametrize(
    ("name", "text"),
    [("run.toml", '["task.sampler"]\nname = "s"\n'),
     ("run.json", '{"task.sampler": {"name": "s"}}')],
)  # fmt: skip
def test_a_table_whose_name_holds_a_dot_is_told_to_be_renamed_not_read_with_a_key(
    tmp_path: Path, name: str, text: str
) -> None:
    # It was told to read it with key='task.sampler', which reads [task] then [sampler].
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path)
    assert str(caught.value).endswith(
        "; if 'task.sampler' is the table meant, rename it 'task_sampler': no key reads a table "
        "whose name holds a dot"
    )


def test_a_key_that_names_no_table_is_told_the_files_table_that_looks_like_a_samplers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[project]\nname = "mine"\n[tool.runs.task_sampler]\nname = "s"\n')
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path, "sampler")
    assert str(caught.value).endswith(", or read the one it has: key='tool.runs.task_sampler'")


@pytest.mark.parametrize(
    ("text", "key", "told"),
    [("[1, 2]", "task_sampler", "missing 'task_sampler'; the file holds a list, not a table"),
     ('"round-robin"', "task_sampler", "the file holds a text, not a table"),
     ('{"tool": 3}', "tool.task_sampler", "missing 'task_sampler'; 'tool' holds a number, not "
      "a table")],
)  # fmt: skip
def test_a_document_or_entry_that_is_no_table_is_told_what_it_holds(
    tmp_path: Path, text: str, key: str, told: str
) -> None:
    path = tmp_path / "run.json"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path, key)
    assert told in str(caught.value)
    assert "found keys" not in str(caught.value)


@pytest.mark.parametrize(
    ("file", "text"),
    [("run.toml", '[tool.agentdescent.task_sampler]\nname = "s"\n'),
     ("run.json", '{"tool": {"agentdescent": {"task_sampler": "s"}}}')],
)  # fmt: skip
def test_a_missing_key_whose_table_is_nested_deeper_names_the_dotted_key_to_give(
    tmp_path: Path, file: str, text: str
) -> None:
    path = tmp_path / file
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path)
    told = ", or read the one it has: key='tool.agentdescent.task_sampler'"
    assert str(caught.value).endswith(told)
    assert spec_from_file(path, key="tool.agentdescent.task_sampler") == SamplerSpec("s")


def test_a_table_under_a_dotted_name_is_not_told_a_dotted_key_that_cannot_reach_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"tool.agentdescent": {"task_sampler": "s"}}')  # one level, named with a dot
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path)
    assert str(caught.value).endswith(", or give the key of the table to read (key)")


def test_looking_for_the_table_elsewhere_does_not_copy_a_long_name_into_every_entry(
    tmp_path: Path,
) -> None:
    # 100 KB: a table with a long name holding 2,000 keys, and no task_sampler. Each key's
    # dotted path copied the table's name: 200 MB for this file, gigabytes for 1 MiB.
    path = tmp_path / "run.toml"
    path.write_text(f"[{'a' * 50_000}]\n" + "".join(f"k{i} = 1\n" for i in range(2_000)))
    tracemalloc.start()
    try:
        with pytest.raises(InvalidSamplerConfig, match="give the key of the table to read"):
            spec_from_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [("run.json", '{"task_sampler": {"name": "s",}}', "a JSON object with a 'task_sampler' entry"),
     ("run.yaml", "task_sampler: [\n", "a YAML mapping with a 'task_sampler' entry"),
     ("run.toml", "[task_sampler\n",
      "a TOML file (or a .json or .yaml file) with a [task_sampler] table")],
)  # fmt: skip
def test_a_file_that_cannot_be_parsed_is_told_what_its_own_format_should_hold(
    tmp_path: Path, file: str, text: str, expected: str
) -> None:
    path = tmp_path / file
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path)
    assert str(caught.value).endswith(f"; expected {expected}")


def test_unparseable_and_missing_files_raise_invalid_config(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[task_sampler\n")
    with pytest.raises(InvalidSamplerConfig, match=r"broken\.toml"):
        spec_from_file(broken)
    with pytest.raises(InvalidSamplerConfig, match=r"missing\.toml"):
        spec_from_file(tmp_path / "missing.toml")


def test_a_bad_spec_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "a/b"\n')
    with pytest.raises(
        InvalidSamplerConfig, match=r"run\.toml.*task_sampler.*invalid sampler name"
    ):
        spec_from_file(path)


@pytest.mark.parametrize("suffix", [".toml", ".json"])
@pytest.mark.parametrize(
    ("table", "error", "message"),
    [
        ({"name": "difficulty-weigted"}, UnknownSamplerError,
         "no sampler named 'difficulty-weigted'. Did you mean 'difficulty-weighted'?"),
        ({"name": "informative-band", "windw": 3}, InvalidSamplerConfig,
         "sampler 'informative-band': unknown parameter 'windw'. Did you mean 'window'?"),
        ({"name": "round-robin", "spread_in_flight": "yes"}, InvalidSamplerConfig,
         "sampler 'round-robin' rejected 'round-robin:spread_in_flight=yes': "),
    ],
    ids=["unknown-name", "unknown-parameter", "wrong-type"],
)  # fmt: skip
def test_a_wrong_name_parameter_or_value_in_a_file_names_the_file_as_a_bad_table_does(
    tmp_path: Path, suffix: str, table: dict[str, object], error: type[Exception], message: str
) -> None:
    path = tmp_path / f"run{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps({"task_sampler": table}))
    else:
        path.write_text("[task_sampler]\n" + "".join(f"{k} = {json.dumps(v)}\n"
                                                    for k, v in table.items()))  # fmt: skip
    spec = spec_from_file(path)

    with pytest.raises(error) as raised:
        create(spec)

    assert type(raised.value) is error
    assert str(raised.value).startswith(f"in {str(path)!r} under 'task_sampler': {message}")


def test_a_spec_read_from_a_file_equals_the_same_spec_written_out(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "round-robin"\n')

    spec = spec_from_file(path)

    assert spec == SamplerSpec("round-robin")
    assert repr(spec) == repr(SamplerSpec("round-robin"))


@given(
    st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True),
        st.one_of(
            st.text(max_size=20),
            st.integers(),
            st.floats(allow_nan=False, allow_infinity=False),
            st.booleans(),
            st.none(),
        ),
        max_size=5,
    )
)
def test_any_spec_round_trips_through_its_string_form(params: dict[str, object]) -> None:
    spec = SamplerSpec("some-sampler", params)
    assert parse_spec(str(spec)) == spec


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((None,), "invalid sampler name None"),
        ((3,), "invalid sampler name 3"),
        ((b"s",), "invalid sampler name b's'"),
        (("s", {}, 7), "sampler 's': 'provider' must be a distribution name"),
    ],
)
def test_a_spec_whose_name_or_provider_is_not_text_is_refused_as_it_is_built(
    args: tuple[object, ...], fragment: str
) -> None:
    with pytest.raises(InvalidSamplerConfig, match=re.escape(fragment)):
        SamplerSpec(*args)  # type: ignore[arg-type]


def test_a_spec_of_a_name_no_sampler_has_is_built_and_refused_where_it_is_used() -> None:
    spec = SamplerSpec("agentdescent.DifficultyWeighted", {"c": 0.4})  # a bench entrant

    with pytest.raises(InvalidSamplerConfig, match="never imports code"):
        parse_spec(spec)


def test_equal_specs_hash_alike_whatever_their_source_or_parameter_order() -> None:
    spec = SamplerSpec("s", {"a": 1, "b": "x"}, "dist-a")
    same = SamplerSpec("s", {"b": "x", "a": 1}, "dist-a", source="run.toml")

    assert spec == same
    assert hash(spec) == hash(same)
    assert {spec, same} == {spec}
    assert len({spec, SamplerSpec("s", {"a": 2, "b": "x"}, "dist-a")}) == 2


def test_a_spec_with_an_unhashable_parameter_says_which_when_hashed() -> None:
    spec = SamplerSpec("s", {"a": 1, "tasks": ["x", "y"]})

    with pytest.raises(TypeError, match=r"parameter 'tasks' holds a value that cannot be "
                       r"hashed, list \['x', 'y'\] \(a list or a dict"):  # fmt: skip
        hash(spec)
    assert spec == SamplerSpec("s", {"a": 1, "tasks": ["x", "y"]})
    with pytest.raises(TypeError, match=r"holds a value that cannot be hashed, tuple \(\['x'\],\)"):
        hash(SamplerSpec("s", {"tasks": (["x"],)}))  # the list inside the tuple


class _Level(enum.IntEnum):
    HIGH = 3


class _Float(float):
    def __repr__(self) -> str:
        return f"_Float({float(self)!r})"


@given(
    st.dictionaries(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
        st.one_of(
            st.text(st.characters(), max_size=30),
            st.integers(),
            st.floats(allow_nan=False, allow_infinity=False),
            st.floats(allow_nan=False, allow_infinity=False).map(_Float),
            st.sampled_from(_Level),
            st.booleans(),
            st.none(),
        ),
        max_size=6,
    )
)
def test_numbers_of_int_and_float_subclasses_round_trip_through_the_string_form(
    params: dict[str, object],
) -> None:
    spec = SamplerSpec("some-sampler", params)
    assert parse_spec(str(spec)) == spec


def test_a_value_the_string_form_cannot_express_is_still_shown() -> None:
    spec = SamplerSpec("s", {"tasks": ["x"], "c": float("inf")})
    assert str(spec) == "s:tasks=['x'],c=inf"
    assert parse_spec(str(spec)) != spec


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_a_yaml_file_is_read_with_the_yaml_extra(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"run{suffix}"
    path.write_text("task_sampler:\n  name: difficulty-weighted\n  c: 0.1\n  provider: d\n")
    assert spec_from_file(path) == SamplerSpec("difficulty-weighted", {"c": 0.1}, "d")


def test_without_pyyaml_a_yaml_file_says_which_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now raises ImportError
    path = tmp_path / "run.yaml"
    path.write_text("task_sampler:\n  name: round-robin\n")
    with pytest.raises(InvalidSamplerConfig) as raised:
        spec_from_file(path)
    # The package is not on an index yet: what works is the clone's extra, or PyYAML itself.
    assert "install it with python -m pip install '.[yaml]' in a clone" in str(raised.value)
    assert "agentdescent-sampling[yaml]" not in str(raised.value)


@pytest.mark.parametrize(
    ("entry", "told"),
    [("window: 010", "'task_sampler.window' is 010 at line 3, which YAML 1.1 (PyYAML, which "
      "reads this file) reads as octal 8, and YAML 1.2 as 10; write 10, or 8 if octal was meant"),
     ("window: -0_10", "'task_sampler.window' is -0_10 at line 3, which YAML 1.1 (PyYAML, which "
      "reads this file) reads as octal -8, and YAML 1.2 as -10; write -10, or -8 if octal was "
      "meant"),
     ("c: 1:30", "'task_sampler.c' is 1:30 at line 3, which YAML 1.1 (PyYAML, which reads this "
      "file) reads as 90, in base 60 as a time, and YAML 1.2 as the text '1:30'; write 90 for "
      'the number, or "1:30" in quotes for the text'),
     ("c: 1:30.5", "'task_sampler.c' is 1:30.5 at line 3, which YAML 1.1 (PyYAML, which reads "
      "this file) reads as 90.5, in base 60"),
     ("windows: [10, 010]", "'task_sampler.windows[1]' is 010 at line 3"),
     ("by: {round: 2:00}", "'task_sampler.by.round' is 2:00 at line 3"),
     ("window: 0o10", "'task_sampler.window' is 0o10 at line 3, which YAML 1.1 (PyYAML, which "
      "reads this file) reads as the text '0o10', and YAML 1.2 as octal 8; write 8 for the "
      'number, or "0o10" in quotes for the text'),
     ("window: 1__0", "'task_sampler.window' is 1__0 at line 3, which YAML 1.1 (PyYAML, which "
      "reads this file) reads as 10, which Python and TOML refuse (an underscore goes between "
      "digits); write 10"),
     ("c: 2e3", "'task_sampler.c' is 2e3 at line 3, which YAML 1.1 (PyYAML, which reads this "
      "file) reads as the text '2e3', and YAML 1.2 as the number 2000.0; write 2000 (or "
      '2000.0) for the number, or "2e3" in quotes for the text'),  # 2000 for a whole number
     ("c: -.5", "'task_sampler.c' is -.5 at line 3, which YAML 1.1 (PyYAML, which reads this "
      "file) reads as the text '-.5', and YAML 1.2 as the number -0.5; write -0.5 for the "
      'number, or "-.5" in quotes for the text'),
     ("c: 1e-7", "'task_sampler.c' is 1e-7 at line 3, which YAML 1.1 (PyYAML, which reads "
      "this file) reads as the text '1e-7', and YAML 1.2 as the number 1.0e-07; write 1.0e-07"),
     ("c: 2.0E3", "'task_sampler.c' is 2.0E3 at line 3, which YAML 1.1 (PyYAML, which reads "
      "this file) reads as the text '2.0E3', and YAML 1.2 as the number 2000.0; write 2000.0"),
     ("c: -1e400", "'task_sampler.c' is -1e400 at line 3, past the largest number a float "
      "holds (about 1.8e308), which would be read as infinity; write a smaller one"),
     # no octal, having an 8 or a 9: it was told to drop quotes it did not have
     ("window: 08", "'task_sampler.window' is 08 at line 3, which YAML 1.1 (PyYAML, which "
      "reads this file) reads as the text '08', and YAML 1.2 as the number 8; write 8 for the "
      'number, or "08" in quotes for the text'),
     ("window: -019", "'task_sampler.window' is -019 at line 3, which YAML 1.1 (PyYAML, which "
      "reads this file) reads as the text '-019', and YAML 1.2 as the number -19"),
     # Its number, past 4,300 digits, was Python's bare ValueError when shown; unread now,
     # since PyYAML's time grows with the square of its length.
     ("c: 1" + ":1" * 2500, "'task_sampler.c' is " + "1:" * 20 + "... (5,001 characters) at "
      "line 3, which YAML 1.1 (PyYAML, which reads this file) reads otherwise than YAML 1.2, "
      "Python and TOML do; write the number meant in decimal, or the text in quotes"),
     ("c: 1" + ":1" * 30 + ".5", "'task_sampler.c' is " + "1:" * 20 + "... (63 characters)")],
    ids=["octal", "octal-signed", "base-60", "base-60-float", "in-a-list", "in-a-table",
         "octal-0o", "underscores", "exponent", "signed-dot", "exponent-small", "exponent-dot",
         "past-float", "leading-zero-not-octal", "leading-zero-signed", "base-60-long",
         "base-60-float-long"],
)  # fmt: skip
def test_a_yaml_number_that_yaml_1_2_reads_otherwise_is_refused_naming_the_key_and_the_fix(
    tmp_path: Path, entry: str, told: str
) -> None:
    # PyYAML follows YAML 1.1, which took window: 010 as 8 and c: 1:30 as 90, without a word.
    path = tmp_path / "run.yaml"
    path.write_text(f"task_sampler:\n  name: round-robin\n  {entry}\n")

    with pytest.raises(InvalidSamplerConfig) as raised:
        spec_from_file(path)

    assert str(raised.value).startswith(f"in {str(path)!r}: {told}")


def test_yaml_misread_keys_are_named_as_written_and_a_repeated_one_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("task_sampler: {name: round-robin, 0o10: 1}\n")
    with pytest.raises(InvalidSamplerConfig, match=r"'task_sampler\.0o10' is 0o10 at line 1, "):
        spec_from_file(path)
    # A key of a table a parameter holds too: it would not be a text key (JSON-ready).
    path.write_text("task_sampler:\n  name: round-robin\n  c: {2e3: 1, 08: 2}\n")
    with pytest.raises(InvalidSamplerConfig, match=r"'task_sampler\.c\.2e3' is 2e3 at line 3"):
        spec_from_file(path)
    path.write_text("task_sampler: {name: round-robin, 0o10: 1, 0o10: 2}\n")
    with pytest.raises(InvalidSamplerConfig, match="the key 0o10 is given twice"):
        spec_from_file(path)
    path.write_text("2020-01-01\n")
    with pytest.raises(InvalidSamplerConfig, match="the file holds a date, not a table"):
        spec_from_file(path)


@pytest.mark.parametrize(
    ("text", "told"),
    [('[task_sampler]\nname = "s"\nc = 0.2\nc = 0.3\n',
      "the key 'c' is given twice (at line 4); give each key once"),
     ('[task_sampler]\nname = "s"\nc.d = 1\nc = 2\n',
      "the key 'c' is given twice (at line 4); give each key once"),
     ('[task_sampler]\nname = "s"\n\n[task_sampler]\nname = "t"\n',
      "the table '[task_sampler]' is given twice (at line 4); give each table once")],
    ids=["key", "key-over-a-table", "table"],
)  # fmt: skip
def test_a_toml_key_given_twice_is_named_as_json_and_yaml_name_it(
    tmp_path: Path, text: str, told: str
) -> None:
    # tomllib says "Cannot overwrite a value (at line 4, column 8)", naming no key.
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path)
    assert f"cannot read a sampler spec from {str(path)!r}: {told}; expected" in str(caught.value)


def test_yaml_reads_the_numbers_and_booleans_both_versions_or_python_agree_on_as_before(
    tmp_path: Path,
) -> None:
    # Only what YAML 1.2 reads otherwise is refused, and only under the key read: a file
    # mode elsewhere in the file (octal, for another tool) is no concern of the spec's.
    path = tmp_path / "run.yaml"
    path.write_text(
        "task_sampler:\n  name: round-robin\n  a: 07\n  b: 0x10\n  c: 0b10\n  d: 1_000\n"
        "  e: '010'\n  f: yes\n  g: off\n  h: 0.5\n  i: '1:30'\n  j: '0o10'\n  k: 1_0.5\n"
        "  l: 2.0e+3\n  m: '2e3'\n  n: 1e3x\n  o: '08'\n"
        "other:\n  mode: 0644\n  at: 1:30\n  c: 2e3\n"
    )

    spec = spec_from_file(path)

    assert dict(spec.params) == {
        "a": 7, "b": 16, "c": 2, "d": 1000, "e": "010", "f": True, "g": False, "h": 0.5,
        "i": "1:30", "j": "0o10", "k": 10.5, "l": 2000.0, "m": "2e3", "n": "1e3x", "o": "08",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param(
            "task_sampler: !!python/object/apply:os.system ['echo owned']",
            "could not determine a constructor",
            id="python tag",
        ),
        pytest.param(
            "a: &a [1]\ntask_sampler:\n  name: round-robin\n  x: *a\n",
            "aliases",
            id="alias",
        ),
        pytest.param("task_sampler: [\n", "while parsing", id="malformed"),
    ],
)
def test_yaml_is_read_safely_plain_data_only(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig, match=fragment):
        spec_from_file(path)


@pytest.mark.parametrize(
    ("text", "where"),
    [("task_sampler:\n  name: round-robin\napi_key: @sk-Zq9x8812-Hunter2\n",
      "found character '@' that cannot start any token at line 3, column 10"),
     ("task_sampler:\n  name: round-robin\npassword: p:a\n  ss: Zq9x8812-Hunter2\n",
      "mapping values are not allowed here at line 4, column 5"),
     ("task_sampler: {name: round-robin}\ntoken: !!binary Zq9x8812-Hunter2 !!str\n",
      "at line 2, column")],
    ids=["scanner", "parser", "constructor"],
)  # fmt: skip
def test_a_yaml_error_says_where_without_quoting_the_files_line(
    tmp_path: Path, text: str, where: str
) -> None:
    # PyYAML's message quotes the line it stopped at, and a line of a wrong file, or the
    # next one, may hold a secret: the line and column say where, and nothing of the text.
    path = tmp_path / "run.yaml"
    path.write_text(text)

    with pytest.raises(InvalidSamplerConfig) as raised:
        spec_from_file(path)

    assert where in str(raised.value)
    assert "Zq9x8812" not in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("fixable-first,failure_cost=2", "fixable-first:failure_cost=2"),
        ("fixable-first failure_cost=2", "fixable-first:failure_cost=2"),
        ("fixable-first(failure_cost=2)", "fixable-first:failure_cost=2"),
        ("difficulty-weighted;c=0.1;prior=0.4", "difficulty-weighted:c=0.1,prior=0.4"),
    ],
)
def test_a_name_and_parameters_joined_without_a_colon_are_told_the_colon_form(
    text: str, meant: str
) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(text)
    assert f"invalid sampler name {text!r}" in str(caught.value)
    assert str(caught.value).endswith(f"Parameters follow the name after a colon: {meant!r}")
    parse_spec(meant)


def test_the_colon_form_told_quotes_only_a_short_prefix_of_a_long_spec() -> None:
    text = "fixable-first,token=" + "sk-" + "x" * 3000

    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(text)

    meant = "fixable-first:token=sk-" + "x" * 3000
    assert str(caught.value).endswith(f"after a colon: {repr(meant)[:77]}...")
    assert len(str(caught.value)) < 500


@pytest.mark.parametrize(
    "text",
    ["fixable-first=2", "fixable-first x", "os.path:join", "a" + " " * 4000 + "x", "a, b=:c"],
)
def test_a_bad_name_with_no_colon_form_that_parses_gets_no_suggestion(text: str) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(text)
    assert "after a colon" not in str(caught.value)


@pytest.mark.parametrize(
    ("table", "meant"),
    [
        ({"name": "fixable-first:failure_cost=2"}, {"name": "fixable-first", "failure_cost": 2}),
        (
            {"name": "difficulty-weighted:c=0.1", "prior": 0.4},
            {"name": "difficulty-weighted", "c": 0.1, "prior": 0.4},
        ),
    ],
)
def test_a_tables_name_holding_parameters_is_told_the_table_form(
    table: dict[str, object], meant: dict[str, object]
) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(table)
    assert f"sampler name {table['name']!r} holds parameters" in str(caught.value)
    # JSON, which a run spec takes as it is and Python reads too.
    assert f"beside 'name': {json.dumps(meant)} (in TOML" in str(caught.value)
    parse_spec(meant)


def test_a_name_with_a_colon_that_is_no_spec_gets_the_names_own_error() -> None:
    with pytest.raises(InvalidSamplerConfig, match=r"invalid sampler name 'os\.path:join'"):
        parse_spec({"name": "os.path:join"})


@pytest.mark.parametrize("nested", ["params", "parameters"])
def test_parameters_nested_in_a_table_of_their_own_are_told_to_move_beside_the_name(
    tmp_path: Path, nested: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[task_sampler]\nname = "fixable-first"\n[task_sampler.{nested}]\n'
                      f"failure_cost = 2\n", encoding="utf-8")  # fmt: skip

    with pytest.raises(InvalidSamplerConfig) as caught:
        create(spec_from_file(config))

    assert f"unknown parameter {nested!r}" in str(caught.value)
    assert f"move those in {nested!r} up beside 'name'." in str(caught.value)


@pytest.mark.parametrize(
    "text", ['{"name": "difficulty-weighted", "c": 0.1}', ' {"name": "round-robin"}', "{oops"]
)
def test_a_json_object_given_as_a_spec_string_is_told_to_give_its_mapping(text: str) -> None:
    # As a run spec's "spec" and `state import --spec` take it; create() and check do not.
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(text)
    assert str(caught.value) == (
        "a sampler spec string is a name or 'name:key=value,...', and this one starts with '{' "
        "as a JSON object does: give the mapping it holds instead (an object in JSON, a dict in "
        "Python, a table in TOML), or write it as 'name:key=value,...'"
    )


@pytest.mark.parametrize(
    ("text", "key", "told"),
    [
        # The sampler's table a level deeper than the key read.
        ('[tool.agentdescent]\nrounds = 3\n[tool.agentdescent.task_sampler]\nname = "s"\n',
         "tool.agentdescent", "holds no sampler's table under 'tool.agentdescent' (found keys: "
         "'rounds', 'task_sampler'); read the one it has: key='tool.agentdescent.task_sampler'"),
        # The sampler's name written as a table over its parameters.
        ('[task_sampler.difficulty-weighted]\nc = 0.1\n', "task_sampler",
         "needs a 'name' key, got keys 'difficulty-weighted'; if 'difficulty-weighted' is the "
         "sampler's name, give it as name = 'difficulty-weighted' beside its parameters ('c'), "
         "one level up"),
        # Parameters put in a table of their own under the sampler's.
        ('[task_sampler]\nname = "fixable-first"\n[task_sampler.fixable-first]\nfailure_cost = 2\n',
         "task_sampler", "parameter 'fixable-first' holds a table; a sampler's parameters are "
         "keys beside 'name', not a table of their own: move its keys up"),
        ('[task_sampler]\nname = "fixable-first"\n[task_sampler.params]\nfailure_cost = 2\n',
         "task_sampler", "Parameters are keys beside 'name'"),
    ],
)  # fmt: skip
def test_a_table_shaped_one_level_off_is_told_the_shape_that_reads(
    tmp_path: Path, text: str, key: str, told: str
) -> None:
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig) as caught:
        create(spec_from_file(path, key))
    assert told in str(caught.value)


def test_a_whole_document_given_as_the_spec_is_told_the_table_inside_it() -> None:
    document = {"task_sampler": {"name": "fixable-first"}, "rounds": 3}
    told = "got keys 'rounds', 'task_sampler'; the table under 'task_sampler' looks like the spec"
    with pytest.raises(InvalidSamplerConfig, match=re.escape(told)):
        parse_spec(document)


@pytest.mark.parametrize("path", ["examples/fixable_first.toml", Path("run.json")])
def test_a_file_path_given_as_the_spec_is_told_spec_from_file(path: object) -> None:
    with pytest.raises(InvalidSamplerConfig, match=r"spec_from_file\(path\)"):
        parse_spec(path)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        ("difficulty-weighted:p\u0430ss_threshold=0.8", r"'p\u0430ss_threshold'"),
        ({"name": "difficulty-weighted", "\u0441": 0.1}, r"'\u0441'"),
    ],
)
def test_a_look_alike_parameter_name_is_shown_escaped_and_told_it_is_not_ascii(
    spec: object, shown: str
) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(spec)  # type: ignore[arg-type]
    assert (
        f"bad parameter name {shown}, whose characters are not all ASCII; expected a Python "
        "identifier of ASCII letters"
    ) in str(caught.value)


@pytest.mark.parametrize(
    "name", ["round\u2011robin", "fixable\u2013first", "fixable-first\n", "informative\u00a0band"]
)
def test_a_name_with_a_unicode_dash_or_space_is_told_the_built_in_it_means(name: str) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create({"name": name})
    meant = re.sub(r"[^a-z]+", "-", name).strip("-")
    assert f"Did you mean {meant!r}?" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "meant"),
    [("d\u0456fficulty-weighted", "difficulty-weighted"),  # a Cyrillic i
     ("r\u043eund-r\u043ebin", "round-robin"),  # two Cyrillic o
     ("r\u03bfund-robin", "round-robin"),  # a Greek omicron
     ("ROUND-R\u041eBIN", "round-robin"),  # a Cyrillic capital O
     ("fix\u00e4ble-first", "fixable-first"),  # a letter with a mark
     ("informative-band\u200b", "informative-band")],  # a zero-width space
    ids=["cyrillic-i", "cyrillic-o", "greek-omicron", "capital", "umlaut", "zero-width"],
)  # fmt: skip
def test_a_name_with_a_look_alike_letter_is_refused_and_told_the_built_in_it_copies(
    name: str, meant: str
) -> None:
    # Refused as not ASCII, it was told nothing of the name it reads as.
    with pytest.raises(InvalidSamplerConfig) as caught:
        create(name)
    assert "invalid sampler name" in str(caught.value)
    assert f"Did you mean {meant!r}?" in str(caught.value)


def test_a_file_path_under_home_is_read_and_an_empty_one_is_told_to_give_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "run.toml").write_text('[task_sampler]\nname = "s"\n')
    assert spec_from_file("~/run.toml") == SamplerSpec("s")
    with pytest.raises(InvalidSamplerConfig, match=r"^spec_from_file\(\) was given an empty path"):
        spec_from_file("")


def test_a_file_named_like_a_users_home_is_told_how_to_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # '~x.toml' is read as the home of a user 'x.toml'; the file in this directory was not told.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~x-agentdescent.toml").write_text('[task_sampler]\nname = "round-robin"\n')
    with pytest.raises(InvalidSamplerConfig) as refused:
        spec_from_file("~x-agentdescent.toml")
    # Its absolute path, which a run spec takes too ('./~x...' is relative, which it refuses).
    here = str(tmp_path / "~x-agentdescent.toml")
    assert str(refused.value).endswith(
        "for a user this system does not know; write the home directory out, or use '~/' for "
        f"your own; for the file '~x-agentdescent.toml' in this directory, write {here!r}"
    )
    assert spec_from_file(here).name == "round-robin"
    assert spec_from_file("./~x-agentdescent.toml").name == "round-robin"


@pytest.mark.parametrize("key", ["task_sampler..x", "task_sampler.", ".task_sampler"])
def test_a_dotted_key_with_an_empty_part_is_told_so(tmp_path: Path, key: str) -> None:
    # It was told the file's keys and the same key twice, never the empty part.
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "round-robin"\n')
    with pytest.raises(InvalidSamplerConfig, match=r"has an empty part \(two dots in a row"):
        spec_from_file(path, key)


def test_a_key_one_level_too_deep_is_told_the_table_that_holds_the_spec_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "round-robin"\n')
    with pytest.raises(InvalidSamplerConfig) as refused:
        spec_from_file(path, "task_sampler.x")
    assert str(refused.value).endswith(
        "has no 'task_sampler.x' entry (missing 'x'; found keys: 'name'); 'task_sampler' holds "
        "a spec: read it with key='task_sampler'"
    )


@pytest.mark.parametrize(
    ("table", "told"),
    [
        ({"link": "main"}, "'link' is not a parameter but a key of a run spec's task_sampler "
                           'ref: "link" goes beside "spec".'),
        ({"file": "/a.toml", "key": "x"}, "'file' and 'key' are not parameters but keys of a "
                                          "run spec's task_sampler ref: \"file\" goes in place "
                                          'of "spec", "key" goes beside "file".'),
    ],
)  # fmt: skip
def test_a_run_spec_refs_key_inside_the_spec_is_told_where_it_goes(
    table: dict[str, str], told: str
) -> None:
    with pytest.raises(InvalidSamplerConfig) as refused:
        create({"name": "fixable-first", **table})
    assert told in str(refused.value)


@pytest.mark.parametrize(
    ("line", "told"),
    [
        ("name: on", "invalid sampler name True: expected up to 64 ASCII letters"),
        ("name:", "invalid sampler name None: expected up to 64 ASCII letters"),
    ],
)
def test_a_yaml_name_read_as_a_bool_or_null_is_told_why(
    tmp_path: Path, line: str, told: str
) -> None:
    # Told only that True and None are no names: not that YAML read them so.
    path = tmp_path / "run.yaml"
    path.write_text(f"task_sampler:\n  {line}\n")
    with pytest.raises(InvalidSamplerConfig) as refused:
        spec_from_file(path)
    assert told in str(refused.value)
    assert (
        "is read as a boolean: quote the name"
        if "True" in told
        else "nothing after 'name:' in YAML"
    ) in str(refused.value)


@pytest.mark.parametrize("params", [None, "c=0.1", [("c", 0.1)]])
def test_a_spec_whose_params_are_not_a_mapping_is_refused_naming_them(params: object) -> None:
    # None raised dict()'s own "'NoneType' object is not iterable".
    with pytest.raises(InvalidSamplerConfig, match=r"^a spec's params must map parameter names"):
        SamplerSpec("difficulty-weighted", params)  # type: ignore[arg-type]


@pytest.mark.parametrize("suffix", [".toml", ".json", ".yaml"])
def test_a_key_with_a_control_character_is_shown_escaped_in_the_entry_to_add(
    tmp_path: Path, suffix: str
) -> None:
    # The entry to add wrote the key as it was: an escape sequence reached the terminal.
    path = tmp_path / f"run{suffix}"
    path.write_text("{}\n" if suffix != ".toml" else "")
    with pytest.raises(InvalidSamplerConfig) as refused:
        spec_from_file(path, "x\x1b[31mred")
    assert "\x1b" not in str(refused.value)
    assert '"x\\u001b[31mred"' in str(refused.value)


def test_a_yaml_document_that_is_one_long_base_60_number_is_quoted_cut(tmp_path: Path) -> None:
    # Told in place of a table, its whole text was quoted: a 1 MB message.
    path = tmp_path / "run.yaml"
    path.write_text("1" + "0" * 100_000 + ":30\n")

    with pytest.raises(InvalidSamplerConfig) as raised:
        spec_from_file(path)

    assert (
        "the file holds 1000000000000000000000000000000000000000... (100,004 characters), "
        "not a table"
    ) in str(raised.value)
    assert len(str(raised.value)) < 1_000


def test_a_spec_holding_a_number_of_too_many_digits_still_has_a_repr() -> None:
    # Read from a config (pass_threshold: 0xfff...), its repr raised Python's ValueError.
    spec = SamplerSpec("round-robin", {"c": 10**5000, "d": 1})

    assert repr(spec) == (
        "SamplerSpec(name='round-robin', params={'c': <int that cannot be shown>, 'd': 1}, "
        "provider=None)"
    )
