"""Hostile configs get a clear SamplerError, and never import anything."""

from __future__ import annotations

import codecs
import json
import math
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import (
    InvalidSamplerConfig,
    SamplerError,
    SamplerSpec,
    StateError,
    UnknownSamplerError,
    available,
    create,
    load_state,
    save_state,
    spec_from_file,
)
from agentdescent_sampling.bench.workloads import read_log
from agentdescent_sampling.errors import BenchError
from agentdescent_sampling.registry import default_registry
from agentdescent_sampling.spec import parse_spec

HUGE = "x" * 1_000_000

HOSTILE: list[tuple[str, Any, type[SamplerError]]] = [
    ("unknown key", {"name": "difficulty-weighted", "cc": 1}, InvalidSamplerConfig),
    ("unknown key in a string", "round-robin:seed=1", InvalidSamplerConfig),
    ("key that is not an identifier", {"name": "round-robin", "a-b": 1}, InvalidSamplerConfig),
    ("name of the wrong type", {"name": 5}, InvalidSamplerConfig),
    ("name missing", {"c": 0.1}, InvalidSamplerConfig),
    (
        "parameter of the wrong type",
        {"name": "difficulty-weighted", "c": "x"},
        InvalidSamplerConfig,
    ),
    ("parameter that is a list", {"name": "difficulty-weighted", "c": [1]}, InvalidSamplerConfig),
    (
        "parameter that is a table",
        {"name": "difficulty-weighted", "c": {"a": 1}},
        InvalidSamplerConfig,
    ),
    ("boolean for a number", "difficulty-weighted:c=true", InvalidSamplerConfig),
    ("spec of the wrong type", 42, InvalidSamplerConfig),
    ("spec that is None", None, InvalidSamplerConfig),
    ("spec that is bytes", b"round-robin", InvalidSamplerConfig),
    ("huge string", HUGE, InvalidSamplerConfig),
    ("huge parameter string", "round-robin:a=" + HUGE, InvalidSamplerConfig),
    ("huge name in a table", {"name": HUGE}, InvalidSamplerConfig),
    ("huge parameter value", {"name": "difficulty-weighted", "c": HUGE}, InvalidSamplerConfig),
    ("huge parameter name", {"name": "round-robin", HUGE: 1}, InvalidSamplerConfig),
    ("module:attribute name", "os:system", InvalidSamplerConfig),
    ("module:attribute in a table", {"name": "subprocess:run"}, InvalidSamplerConfig),
    ("dotted module path", {"name": "agentdescent_sampling.registry"}, InvalidSamplerConfig),
    (
        "this package's own class path",
        "agentdescent_sampling.samplers:RoundRobin",
        InvalidSamplerConfig,
    ),
    ("relative path", "../../etc/passwd", InvalidSamplerConfig),
    ("path separator", {"name": "plugins/evil"}, InvalidSamplerConfig),
    ("windows path", {"name": "C:\\evil"}, InvalidSamplerConfig),
    (
        "provider that is not a string",
        {"name": "round-robin", "provider": ["a"]},
        InvalidSamplerConfig,
    ),
    ("unknown provider", {"name": "round-robin", "provider": "evil-dist"}, UnknownSamplerError),
    ("well-formed but unknown name", "json-decoder", UnknownSamplerError),
    ("a module's name", "subprocess", UnknownSamplerError),
]


@pytest.mark.parametrize(
    ("spec", "error"), [pytest.param(spec, error, id=label) for label, spec, error in HOSTILE]
)
def test_a_hostile_config_gets_a_clear_error_and_imports_nothing(
    spec: Any, error: type[SamplerError]
) -> None:
    available()  # every installed plugin is loaded; a config must import nothing more
    before = set(sys.modules)
    with pytest.raises(error) as caught:
        create(spec)
    assert set(sys.modules) == before
    message = str(caught.value)
    assert len(message) < 2_000, "a huge input must not flood the message"
    assert any(
        word in message
        for word in (
            "expected",
            "Available",
            "Valid",
            "never imports",
            "needs",
            "provided by",
            "must be",
            "limit",
        )
    )


def test_parse_spec_of_a_huge_string_is_refused_before_any_work() -> None:
    with pytest.raises(InvalidSamplerConfig, match="over the limit of 4096"):
        parse_spec("a:" + "b=1," * 100_000)


# -- every numeric and boolean parameter of every built-in ---------------------------

BUILT_IN_PARAMETERS = [
    (name, parameter.name, parameter.annotation)
    for name in ("round-robin", "difficulty-weighted", "informative-band", "fixable-first")
    for parameter in default_registry().get(name).signature.parameters
]
NUMERIC = [(name, key) for name, key, kind in BUILT_IN_PARAMETERS if "bool" not in kind]
BOOLEAN = [(name, key) for name, key, kind in BUILT_IN_PARAMETERS if kind == "bool"]
#: Numbers that pass a plain range check and break later: overflow at the first pick or
#: record, or a state that can no longer be saved.
BREAKING_NUMBERS = [
    pytest.param(math.inf, id="inf"),
    pytest.param(-math.inf, id="-inf"),
    pytest.param(math.nan, id="nan"),
    pytest.param(10**400, id="400-digit int"),
    pytest.param(-(10**400), id="negative 400-digit int"),
    pytest.param(10**5000, id="int too long to print"),
    pytest.param(2**63, id="2**63"),
]


def test_the_parameter_lists_cover_every_parameter_of_every_built_in() -> None:
    assert {(name, key) for name, key, _ in BUILT_IN_PARAMETERS} == set(NUMERIC) | set(BOOLEAN)
    assert len(NUMERIC) == 8  # fixable-first has pass_threshold and failure_cost
    assert len(BOOLEAN) == 3


@pytest.mark.parametrize("value", BREAKING_NUMBERS)
@pytest.mark.parametrize(("name", "key"), NUMERIC)
def test_a_non_finite_or_huge_number_is_refused_when_the_sampler_is_built(
    name: str, key: str, value: object
) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create({"name": name, key: value})
    message = str(caught.value)
    assert f"({key}=" in message
    assert "expected a" in message
    assert "; try" in message or "default" in message or "assumes" in message
    assert len(message) < 2_000


@pytest.mark.parametrize("text", ["1e309", "-1e309", "9223372036854775808", "9" * 400])
@pytest.mark.parametrize(("name", "key"), NUMERIC)
def test_a_huge_number_in_a_spec_string_is_refused_too(name: str, key: str, text: str) -> None:
    with pytest.raises(InvalidSamplerConfig, match=rf"\({key}="):
        create(f"{name}:{key}={text}")


@pytest.mark.parametrize("value", [1, 0, "true", "yes", None, 1.0])
@pytest.mark.parametrize(("name", "key"), BOOLEAN)
def test_a_flag_that_is_not_a_bool_reads_like_our_other_errors(
    name: str, key: str, value: object
) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create({"name": name, key: value})
    message = str(caught.value)
    unquote = ": write true without quotes (True in Python)" if value == "true" else ""
    got = f"got {type(value).__name__}{unquote}; "
    if value is None:  # null in a JSON or YAML config
        got = f"got None (null in JSON and YAML): leave {key} out for its default; "
    assert f"({key}={value!r}): expected true or false, {got}" in message
    assert "Attribute(" not in message  # attrs' raw repr of the field
    assert "Valid parameters" in message


@pytest.mark.parametrize(("name", "key"), NUMERIC)
def test_a_number_of_the_wrong_type_reads_like_our_other_errors(name: str, key: str) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create({"name": name, key: [1]})
    message = str(caught.value)
    assert f"({key}=[1]): expected a " in message
    assert "got list" in message
    assert "Attribute(" not in message


# -- files: special files, size, nesting, encodings -----------------------------------

CONFIG_SUFFIXES = [".toml", ".json", ".yaml"]
NESTED = {
    ".toml": lambda depth: "[task_sampler]\nname = 'round-robin'\nx = " + "[" * depth + "]" * depth,
    ".json": lambda depth: (
        '{"task_sampler": {"name": "round-robin", "x": ' + "[" * depth + "]" * depth + "}}"
    ),
    ".yaml": lambda depth: "task_sampler:\n  name: round-robin\n  x: " + "[" * depth + "]" * depth,
}


@pytest.mark.parametrize("depth", [40, 100_000])
@pytest.mark.parametrize("suffix", CONFIG_SUFFIXES)
def test_a_deeply_nested_config_file_is_refused_with_our_error(
    tmp_path: Path, suffix: str, depth: int
) -> None:
    path = tmp_path / f"run{suffix}"
    path.write_text(NESTED[suffix](depth))
    # Refused for its depth, or first for its size: 100,000 brackets are 100,000 values.
    refusal = "more than 32 levels deep" if depth < 1000 else "over the limit of 32,768"
    with pytest.raises(InvalidSamplerConfig, match=refusal):
        spec_from_file(path)


@pytest.mark.parametrize("depth", [40, 100_000])
def test_a_deeply_nested_state_file_is_refused_with_our_error(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "state.json"
    path.write_text(
        '{"format": "agentdescent-sampling/state", "state": ' + "[" * depth + "]" * depth + "}"
    )
    with pytest.raises(StateError, match="more than 32 levels deep"):
        load_state(create("round-robin"), path)  # type: ignore[arg-type]


def test_a_deeply_nested_rollout_log_line_is_refused_with_our_error(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_text("[" * 30_000 + "]" * 30_000 + "\n")  # under the 64 KiB line limit
    with pytest.raises(BenchError, match="line 1 is not JSON"):
        read_log(path)


READERS: dict[str, tuple[Callable[[Path], object], type[SamplerError]]] = {
    "spec_from_file": (spec_from_file, InvalidSamplerConfig),
    "load_state": (lambda path: load_state(create("round-robin"), path), StateError),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_is_refused_without_reading_it(reader: str) -> None:
    read, error = READERS[reader]
    with pytest.raises(error, match="character device, not a regular file"):
        read(Path("/dev/zero"))


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path, reader: str) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    read, error = READERS[reader]
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            read(fifo)
        except BaseException as raised:  # noqa: BLE001  # handed to the main thread
            outcome.append(raised)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout=20)
    if thread.is_alive():  # unblock it, then fail
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO waited for a writer")
    assert isinstance(outcome[0], error)
    assert "FIFO (named pipe), not a regular file" in str(outcome[0])


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_directory_is_refused(tmp_path: Path, reader: str) -> None:
    read, error = READERS[reader]
    with pytest.raises(error):
        read(tmp_path)


def test_a_config_file_over_one_mebibyte_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "round-robin"\n' + "# padding\n" * 120_000)
    with pytest.raises(InvalidSamplerConfig, match="larger than the limit of 1,048,576 bytes"):
        spec_from_file(path)


def test_a_table_of_300k_unknown_keys_is_refused_before_any_per_key_work(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    keys = "".join(f"k{i} = 1\n" for i in range(300_000))
    path.write_text('[task_sampler]\nname = "difficulty-weighted"\n' + keys)
    if path.stat().st_size > 1 << 20:  # refused by size already; test the count limit too
        with pytest.raises(InvalidSamplerConfig, match="larger than the limit"):
            spec_from_file(path)
    table = {"name": "difficulty-weighted", **{f"k{i}": 1 for i in range(300_000)}}
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec(table)  # the count is checked before any per-key work
    message = str(caught.value)
    assert "300,000 parameters, over the limit of 64" in message
    assert len(message) < 2_000


def test_a_table_without_a_name_lists_a_bounded_number_of_its_keys() -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        parse_spec({f"k{i}": 1 for i in range(100_000)})
    message = str(caught.value)
    assert "and 99,980 more" not in message  # counts are exact, not formatted this way
    assert "and 99980 more" in message
    assert len(message) < 2_000


def test_a_missing_key_lists_a_bounded_number_of_the_keys_found(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({f"k{i}": 1 for i in range(30_000)}))  # within the value limit
    with pytest.raises(InvalidSamplerConfig) as caught:
        spec_from_file(path)
    assert "and 29980 more" in str(caught.value)
    assert len(str(caught.value)) < 2_000


@pytest.mark.parametrize(
    ("suffix", "text"),
    [
        (".yaml", "task_sampler: {name: round-robin}\nx: [" + "[]," * 20_000 + "]\n"),
        (".yaml", "task_sampler: {name: round-robin}\nx:\n" + "- 0\n" * 40_000),
        (".toml", '[task_sampler]\nname = "round-robin"\n' + "[h.p0.p1.p2.p3.p4]\n" * 6_000),
    ],
    ids=["yaml-flow", "yaml-block", "toml-dotted-headers"],
)
def test_a_config_of_more_values_than_a_sampler_table_needs_is_refused_before_parsing(
    tmp_path: Path, suffix: str, text: str
) -> None:
    path = tmp_path / f"run{suffix}"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig, match=r"values, over the limit of 32,768"):
        spec_from_file(path)


@pytest.mark.parametrize("suffix", CONFIG_SUFFIXES)
def test_a_config_with_a_utf8_byte_order_mark_is_read(tmp_path: Path, suffix: str) -> None:
    body = {
        ".toml": '[task_sampler]\nname = "difficulty-weighted"\nc = 0.1\n',
        ".json": '{"task_sampler": {"name": "difficulty-weighted", "c": 0.1}}',
        ".yaml": "task_sampler:\n  name: difficulty-weighted\n  c: 0.1\n",
    }[suffix]
    path = tmp_path / f"run{suffix}"
    path.write_bytes(codecs.BOM_UTF8 + body.encode())
    assert spec_from_file(path) == SamplerSpec("difficulty-weighted", {"c": 0.1})


@pytest.mark.parametrize(
    "encoding", [pytest.param("utf-16", id="utf-16"), pytest.param("latin-1", id="latin-1")]
)
def test_a_config_that_is_not_utf8_is_refused_naming_the_file(
    tmp_path: Path, encoding: str
) -> None:
    path = tmp_path / "run.toml"
    path.write_bytes('[task_sampler]\nname = "round-robin"\n# café\n'.encode(encoding))
    with pytest.raises(InvalidSamplerConfig, match=r"run\.toml.*utf-8"):
        spec_from_file(path)


# -- state files: numbers that would overflow later ------------------------------------


def _state_of(name: str) -> dict[str, Any]:
    sampler = create(name)
    for round_index in range(6):
        sampler.record(sampler.pick(["a", "b", "c"], round_index), float(round_index % 2))
    return sampler.state_dict()


def _damaged_states() -> list[Any]:
    huge = 10**400
    cases: list[tuple[str, str, Callable[[dict[str, Any]], None]]] = [
        ("difficulty-weighted", "trials", lambda s: s["stats"].update(a=[1, huge])),
        ("difficulty-weighted", "passes and trials", lambda s: s["stats"].update(a=[huge, huge])),
        ("difficulty-weighted", "picks", lambda s: s.update(picks=huge)),
        ("difficulty-weighted", "trials 2**63", lambda s: s["stats"].update(a=[0, 2**63])),
        ("informative-band", "picks", lambda s: s.update(picks=huge)),
        ("informative-band", "log score", lambda s: s["log_scores"].__setitem__(0, huge)),
        ("informative-band", "log score inf", lambda s: s["log_scores"].__setitem__(0, math.inf)),
    ]
    for field in ("passes", "trials", "segment", "last"):
        cases.append(
            ("informative-band", field, lambda s, f=field: s["tasks"]["a"].update({f: huge}))
        )
    cases.append(
        ("informative-band", "score_sum", lambda s: s["tasks"]["a"].update(score_sum=huge))
    )
    return [pytest.param(name, damage, id=f"{name} {label}") for name, label, damage in cases]


@pytest.mark.parametrize(("name", "damage"), _damaged_states())
def test_a_state_with_a_huge_number_is_refused_and_changes_nothing(
    name: str, damage: Callable[[dict[str, Any]], None]
) -> None:
    state = _state_of(name)
    damage(state)
    sampler = create(name)
    sampler.record("kept", 1.0)
    before = sampler.state_dict()
    with pytest.raises(StateError) as caught:
        sampler.load_state_dict(state)
    assert sampler.state_dict() == before
    assert len(str(caught.value)) < 2_000


def test_a_state_file_with_infinity_or_nan_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    save_state(create("informative-band"), path)  # type: ignore[arg-type]
    text = path.read_text()
    for constant in ("Infinity", "-Infinity", "NaN"):
        path.write_text(text.replace('"log_scores": [0.0', f'"log_scores": [{constant}', 1))
        with pytest.raises(StateError, match=f"{constant} is not a JSON number"):
            load_state(create("informative-band"), path)  # type: ignore[arg-type]


def test_a_number_past_the_largest_float_is_refused_as_written_not_read_as_infinity(
    tmp_path: Path,
) -> None:
    # float() reads 1e400 as inf: an error would then quote a value nobody wrote.
    told = "is past the largest number a float holds (about 1.8e308); write a smaller one"
    with pytest.raises(
        InvalidSamplerConfig,
        match=rf"^sampler 'difficulty-weighted': \(c=1e400\): 1e400 {re.escape(told)}$",
    ):
        parse_spec("difficulty-weighted:c=1e400")
    # Each config format names the key, as written.
    past = "past the largest number a float holds (about 1.8e308), which would be read as infinity"
    for file, text, written in (
        ("run.json", '{"task_sampler": {"name": "difficulty-weighted", "c": -1e999}}', "-1e999"),
        ("run.toml", '[task_sampler]\nname = "difficulty-weighted"\nc = 1e400\n', "1e400"),
        ("run.yaml", "task_sampler: {name: difficulty-weighted, c: 1.0e+400}\n", "1.0e+400"),
    ):
        config = tmp_path / file
        config.write_text(text)
        with pytest.raises(InvalidSamplerConfig, match=re.escape(f"'task_sampler.c' is {written}")):
            spec_from_file(config)
        with pytest.raises(InvalidSamplerConfig, match=re.escape(past)):
            spec_from_file(config)
    # TOML's own inf means infinity: the sampler refuses it as a value, as it always did.
    config = tmp_path / "inf.toml"
    config.write_text('[task_sampler]\nname = "difficulty-weighted"\nc = inf\n')
    with pytest.raises(InvalidSamplerConfig, match=r"DifficultyWeighted\(c=inf\): expected a"):
        create(spec_from_file(config))
    state = tmp_path / "state.json"
    save_state(create("informative-band"), state)  # type: ignore[arg-type]
    state.write_text(state.read_text().replace('"log_scores": [0.0', '"log_scores": [1e999', 1))
    with pytest.raises(StateError, match=rf"1e999 {re.escape(told)}"):
        load_state(create("informative-band"), state)  # type: ignore[arg-type]
    # A text that reads as such a number is written quoted, so it is read back as text.
    assert parse_spec(str(parse_spec({"name": "round-robin", "x": "1e400"}))).params == {
        "x": "1e400"
    }


def test_a_score_too_large_for_a_float_is_refused_as_out_of_range() -> None:
    for name in ("round-robin", "difficulty-weighted", "informative-band", "fixable-first"):
        with pytest.raises(ValueError, match=r"must be a finite number in \[0, 1\]"):
            create(name).record("a", 10**400)


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_whole_number_of_thousands_of_digits_is_refused_without_pythons_advice(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"run{suffix}"
    huge = "9" * 5_000
    path.write_text(
        f'[task_sampler]\nname = "round-robin"\nc = {huge}\n'
        if suffix == ".toml"
        else f'{{"task_sampler": {{"name": "round-robin", "c": {huge}}}}}'
    )
    with pytest.raises(InvalidSamplerConfig) as refused:
        spec_from_file(path)
    assert "it holds a whole number of over 4,300 digits, more than any value here" in str(
        refused.value
    )
    assert "set_int_max_str_digits" not in str(refused.value)
