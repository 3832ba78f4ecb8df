"""Inputs within the documented limits are parsed in bounded time and memory, unambiguously."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentdescent_sampling import (
    InvalidSamplerConfig,
    SamplerError,
    SamplerSpec,
    StateError,
    create,
    load_state,
    save_state,
    spec_from_file,
)
from agentdescent_sampling._files import MAX_VALUES, _after_string, open_regular
from agentdescent_sampling.bench.workloads import read_log
from agentdescent_sampling.errors import BenchError
from agentdescent_sampling.paramdoc import parameter_help
from agentdescent_sampling.spec import parse_spec
from agentdescent_sampling.state import read_state_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, published for 3.10
    import tomli as tomllib

#: Generous: the linear parsers take milliseconds; the superlinear ones took seconds to hours.
SECONDS = 2.0
#: Likewise for memory: the inputs are at most a mebibyte.
MEBIBYTES = 64

SPEC_BOMBS = {
    "spaces before the value": "round-robin:" + " " * 4080 + "x",
    "spaces after an equals sign": "round-robin:a=" + " " * 4080 + "x",
    "spaces around equals signs": "round-robin:" + " = " * 1360,
    "an unclosed double quote": 'round-robin:a="' + " " * 4080,
    "an unclosed single quote": "round-robin:a='" + " " * 4080 + ",",
    "a quote then spaces": 'round-robin:a="x"' + " " * 4070 + "y",
    "escapes": 'round-robin:a="' + "\\" * 4080,
    "many commas": "round-robin:" + "," * 4080,
}


def within_bounds(call: Callable[[], object]) -> None:
    """Run ``call`` (whatever it raises, as long as it is our error) within the bounds.

    The second call is measured, in this process's CPU seconds: the first pays for imports
    (the YAML parser's, say), and the wall clock for whatever else the machine runs; neither
    is the parser's cost. Nothing on these paths is cached.
    """

    def attempt() -> None:
        with contextlib.suppress(SamplerError, ValueError):
            call()

    attempt()
    tracemalloc.start()
    started = time.process_time()
    try:
        attempt()
    finally:
        elapsed = time.process_time() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert elapsed < SECONDS, f"took {elapsed:.1f} s"
    assert peak < MEBIBYTES << 20, f"peaked at {peak >> 20} MiB"


@pytest.mark.parametrize("text", SPEC_BOMBS.values(), ids=SPEC_BOMBS)
def test_a_spec_string_under_the_length_limit_parses_in_linear_time(text: str) -> None:
    assert len(text) <= 4096
    within_bounds(lambda: parse_spec(text))


@pytest.mark.parametrize(
    "line",
    [
        "x" + " " * 40_000,
        "x" + " " * 40_000 + "(",
        "x (" + " " * 40_000,
        "x" + " " * 20_000 + "(int)" + " " * 20_000,
        "*" * 2 + "x" * 40_000 + " " * 40_000,
    ],
    ids=["spaces", "spaces then a paren", "an unclosed paren", "spaces around a type", "long"],
)
def test_a_docstring_args_line_is_read_in_linear_time(line: str) -> None:
    class Plugin:
        pass

    Plugin.__doc__ = f"A sampler.\n\nArgs:\n    {line}\n    c: the weight.\n"
    within_bounds(lambda: parameter_help(Plugin))
    assert parameter_help(Plugin)["c"] == "the weight."


def test_the_linear_patterns_read_specs_as_before() -> None:
    spec = parse_spec("s: a = 1 , b=' x ',c=\"y, z\"  , d = text with spaces ")
    assert dict(spec.params) == {"a": 1, "b": " x ", "c": "y, z", "d": "text with spaces"}


TOML_BOMBS = {
    "a dotted key": "a." * 30_000 + "a = 1",
    "a dotted key with spaces": "a . " * 20_000 + "a = 1",
    "a quoted dotted key": '"a".' * 15_000 + "a = 1",
    "a table header": "[" + "a." * 30_000 + "a]",
    "an array of tables header": "[[" + "a." * 30_000 + "a]]",
    "a key in an inline table": "x = {" + "a." * 30_000 + "a = 1}",
    "nested inline tables": "x = " + "{a=" * 20_000 + "1" + "}" * 20_000,
    "nested arrays": "x = " + "[" * 30_000 + "]" * 30_000,
    "after a string with dots": 'x = "."\n' + "a." * 30_000 + "a = 1",
    "after a comment with quotes": "# it's \"\n" + "a." * 30_000 + "a = 1",
    # Read in one pass: each escape is passed over, an escaped quote ends nothing.
    "after escaped quotes": 'x = "' + '\\"' * 10_000 + '"\n' + "a." * 20_000 + "a = 1",
    "after escaped backslashes": 'x = "' + "\\\\" * 10_000 + '"\n' + "a." * 20_000 + "a = 1",
    # A multi-line string may end with one or two quotes before its delimiter: the spare
    # quote was read as opening a string that ran to the end of the file (26 s to parse).
    "after a multi-line string ending in a quote": 'q = """say "hi""""\n' + "a." * 30_000 + "a=1",
    "after a literal one ending in two": "q = '''it'''''\n" + "a." * 30_000 + "a = 1",
}


@pytest.mark.parametrize("text", TOML_BOMBS.values(), ids=TOML_BOMBS)
def test_deep_toml_nesting_is_refused_before_the_parser_sees_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.toml"
    path.write_text(text)
    within_bounds(lambda: spec_from_file(path))
    with pytest.raises(InvalidSamplerConfig, match="more than 32 levels deep"):
        spec_from_file(path)


YAML_BOMBS = {
    "flow sequences and mappings": "[{" * 2000,
    "flow sequences": "x: " + "[" * 20_000,
    "flow mappings": "x: " + "{a: " * 5000,
    "after a quoted bracket": "x: '['\ny: " + "[" * 20_000,
}


@pytest.mark.parametrize("text", YAML_BOMBS.values(), ids=YAML_BOMBS)
def test_deep_yaml_flow_nesting_is_refused_as_the_scanner_meets_it(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    within_bounds(lambda: spec_from_file(path))
    with pytest.raises(InvalidSamplerConfig, match="more than 32 levels deep"):
        spec_from_file(path)


@pytest.mark.parametrize(
    "text",
    [
        '[task_sampler]\nname = "round-robin"\nnote = "' + "a." * 100 + '"',
        "[task_sampler]\nname = 'round-robin'\nnote = '''" + "a." * 100 + "\n'''",
        '[task_sampler]\nname = "round-robin"\nnote = """a\\"""' + "a." * 100 + '"""',
        '[task_sampler]\nname = "round-robin" # ' + "a." * 100,
        '[task_sampler]\nname = "round-robin"\nx = [' + "1.5, " * 100 + "]",
        '[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p]\nx = 1\n[task_sampler]\nname = "round-robin"',
        # Refused as nesting 40 deep: the closing quote was taken to open a string.
        '[task_sampler]\nname = "round-robin"\nq = ["""a"""", "' + "." * 40 + '"]',
        "[task_sampler]\nname = 'round-robin'\nq = ['''a''''', '" + "." * 40 + "']",
    ],
    ids=[
        "basic string",
        "multi-line literal",
        "escaped quote",
        "comment",
        "floats",
        "16 parts",
        "multi-line ending in a quote",
        "literal ending in two quotes",
    ],
)
def test_dots_in_strings_comments_and_numbers_are_not_nesting(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.toml"
    path.write_text(text)
    assert spec_from_file(path).name == "round-robin"


DUPLICATES = {
    "json name": ('{"task_sampler": {"name": "round-robin", "name": "fixable-first"}}', ".json"),
    "json parameter": ('{"task_sampler": {"name": "round-robin", "a": 1, "a": 2}}', ".json"),
    "json outer key": ('{"task_sampler": "a", "task_sampler": "round-robin"}', ".json"),
    "yaml name": ("task_sampler:\n  name: round-robin\n  name: fixable-first\n", ".yaml"),
    "yaml flow": ("task_sampler: {name: round-robin, name: fixable-first}\n", ".yaml"),
    "yaml outer key": ("task_sampler: a\ntask_sampler: round-robin\n", ".yaml"),
    "toml name": ('[task_sampler]\nname = "round-robin"\nname = "fixable-first"\n', ".toml"),
}


@pytest.mark.parametrize(("text", "suffix"), DUPLICATES.values(), ids=DUPLICATES)
def test_a_key_given_twice_is_refused_in_every_config_format(
    tmp_path: Path, text: str, suffix: str
) -> None:
    path = tmp_path / f"run{suffix}"
    path.write_text(text)
    with pytest.raises(InvalidSamplerConfig, match=r"twice|defined|overwrite"):
        spec_from_file(path)


def test_a_state_file_giving_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(
        '{"format": "agentdescent-sampling/state", "state": '
        '{"sampler": "round-robin", "version": 1, "version": 2}}'
    )
    with pytest.raises(StateError, match="'version' is given twice"):
        load_state(create("round-robin"), path)  # type: ignore[arg-type]


@pytest.mark.parametrize("digit", ["\u0667", "\u00b2", "\uff17", "\u0967", "1\u0660"])
def test_spec_string_numbers_are_ascii_digits_only(digit: str) -> None:
    spec = parse_spec(f"informative-band:window={digit}")
    assert spec.params["window"] == digit  # text, which the sampler then refuses
    with pytest.raises(InvalidSamplerConfig, match="window"):
        create(f"informative-band:window={digit}")


@pytest.mark.parametrize("value", ['"x"y"', '"\\u12"', '"a\\"'])
def test_a_malformed_quoted_value_is_our_error(value: str) -> None:
    with pytest.raises(InvalidSamplerConfig, match="quoted value"):
        parse_spec(f"round-robin:a={value}")


@pytest.mark.parametrize("text", ["[" + "[]," * 10, "[" + "{}," * 10, '["' + '",' * 10])
def test_a_state_file_of_too_many_values_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    import agentdescent_sampling._files as files

    monkeypatch.setattr(files, "MAX_VALUES", 8)
    path = tmp_path / "state.json"
    path.write_text('{"format": "agentdescent-sampling/state", "state": ' + text + "0]}")
    with pytest.raises(StateError, match="values, over the limit of 8"):
        load_state(create("round-robin"), path)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["0", "[]", "{}"])
def test_a_state_file_just_over_the_value_limit_is_refused_in_memory_of_its_size(
    tmp_path: Path, value: str
) -> None:
    path = tmp_path / "state.json"
    path.write_text("[" + f"{value}," * MAX_VALUES + value + "]")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with pytest.raises(StateError, match="values, over the limit"):
            load_state(create("round-robin"), path)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * size  # the bytes and the text, never the parsed objects (50 times)


def _a_state_file_of(state: str) -> str:
    return '{"format": "agentdescent-sampling/state", "state": ' + state + "}"


def test_a_key_counts_as_four_values_a_list_two_a_number_one_and_a_line_break_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The head counts 12 values: "{" twice, six quotes, two colons and a comma, one more.
    import agentdescent_sampling._files as files

    monkeypatch.setattr(files, "MAX_VALUES", 55)
    path = tmp_path / "state.json"
    path.write_text(_a_state_file_of("[" + ",\n".join(["0"] * 42) + "]\n"))  # 12 + 2 + 41 = 55
    assert read_state_file(path)["state"] == [0] * 42  # a line break is white space
    keys = ",".join(f'"{key}":0' for key in "abcdefghij")  # "{" counts 2, each key 4 with ","
    path.write_text(_a_state_file_of("{" + keys + "}"))  # 12 + 2 + 10 * 4 - 1 = 53
    assert len(read_state_file(path)["state"]) == 10
    path.write_text(_a_state_file_of("{" + keys + ',"k":0}'))  # 57
    with pytest.raises(
        StateError, match=r"up to 57 values, over the limit of 55 that .*; was it edited\?"
    ):
        read_state_file(path)


@pytest.mark.parametrize("to", ["a new file", "an existing file", os.devnull])
def test_a_state_too_large_for_its_readers_is_not_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, to: str
) -> None:
    import agentdescent_sampling._files as files

    monkeypatch.setattr(files, "MAX_VALUES", 200)
    sampler = create("difficulty-weighted")
    for number in range(40):
        sampler.record(f"task-{number}", 1.0)
    path = tmp_path / "state.json" if to != os.devnull else Path(to)
    if to == "an existing file":
        path.write_text("what was saved before")
    with pytest.raises(
        StateError, match=r"values \(a string counts three, a key four\), over the 200 that"
    ):
        save_state(sampler, path)
    if to == "an existing file":
        assert path.read_text() == "what was saved before"
    elif to == "a new file":
        assert list(tmp_path.iterdir()) == []


class _Holds:
    """A plugin's sampler whose ``state_dict()`` holds ``held``."""

    name = "holds"

    def __init__(self, held: object) -> None:
        self.held = held

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": "holds", "version": 1, "held": self.held}

    def load_state_dict(self, state: object) -> None:
        raise AssertionError


def _nested(levels: int, kind: type = list) -> Any:
    nested: Any = kind()
    for _ in range(levels - 1):
        nested = kind([nested])
    return nested


class _Alike(str):
    """A text that is not equal to the same text as a plain str, until written as JSON."""

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other


class _Unhashable:
    armed = False

    def __hash__(self) -> int:
        if _Unhashable.armed:
            raise RuntimeError("no hash now")
        return 1


def _keyed_by_unhashable() -> dict[object, int]:
    keyed = {_Unhashable(): 1}
    _Unhashable.armed = True
    return keyed


class _Modest(int):
    def __abs__(self) -> int:  # hides its size from abs()
        return 0


def _shared(levels: int) -> list[Any]:
    shared: list[Any] = []
    for _ in range(levels):
        shared = [shared, shared]  # 2**levels paths to the innermost
    return shared


UNREADABLE = {
    "keys 1 and '1'": ({1: "a", "1": "b"}, r"keys 1 and '1', which JSON writes alike, as '1'"),
    "keys True and 'true'": ({True: 0, "true": 1}, r"keys True and 'true', which JSON writes"),
    "keys None and 'null'": ({"null": 0, None: 1}, r"keys 'null' and None, which JSON writes"),
    "too deep": (_nested(31), r"nests lists or mappings more than 32 levels deep"),
    "far too deep to dump": (_nested(100_000), r"nests lists or mappings more than 32 levels"),
    "tuples too deep": (_nested(31, tuple), r"nests lists or mappings more than 32 levels deep"),
    "a key of 5,000 digits": ({10**5000: 1}, r"Exceeds the limit .* plain JSON data"),
    "a str subclass and the str": ({_Alike("a"): 1, "a": 2}, r"keys 'a' and 'a', which JSON"),
    "a key whose hash raises": (_keyed_by_unhashable(), r"hash or comparison raised Runtime"),
    "an int that hides its size": ({"n": _Modest(2**60)}, r"is the whole number 11529215"),
    "one list shared 40 deep": (_shared(40), r"nests lists or mappings more than 32 levels"),
}


@pytest.mark.parametrize(("held", "told"), UNREADABLE.values(), ids=UNREADABLE)
def test_a_state_its_readers_would_refuse_is_not_saved(
    tmp_path: Path, held: object, told: str
) -> None:
    path = tmp_path / "state.json"
    with pytest.raises(StateError, match=told):
        save_state(_Holds(held), path)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_state_of_the_deepest_nesting_its_readers_take_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    save_state(_Holds(_nested(30)), path)  # type: ignore[arg-type]  # in two mappings: 32
    assert read_state_file(path)["state"]["held"] == _nested(30)


def test_a_state_over_the_file_size_its_readers_take_is_not_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentdescent_sampling.state as state

    sampler = create("difficulty-weighted")
    sampler.record("字" * 40, 1.0)  # written as 40 escapes of six bytes
    monkeypatch.setattr(state, "_MAX_FILE_BYTES", 300)
    path = tmp_path / "state.json"
    with pytest.raises(StateError, match=r"bytes as JSON, over the 299 that load_state\(\) reads"):
        save_state(sampler, path)
    monkeypatch.setattr(state, "_MAX_FILE_BYTES", 500)
    save_state(sampler, path)
    load_state(create("difficulty-weighted"), path)  # type: ignore[arg-type]
    monkeypatch.setattr(state, "_MAX_FILE_BYTES", 300)  # as if it had been edited
    with pytest.raises(StateError, match=r"larger than the limit of 300 bytes; save_state\(\)"):
        load_state(create("difficulty-weighted"), path)  # type: ignore[arg-type]


def test_every_state_that_is_saved_can_be_loaded_about_the_value_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentdescent_sampling._files as files

    monkeypatch.setattr(files, "MAX_VALUES", 300)
    path = tmp_path / "state.json"
    saved = []
    for tasks in range(5, 40):
        sampler = create("fixable-first")
        for number in range(tasks):
            sampler.record(f"task-{number}", 0.0)
        try:
            save_state(sampler, path)
        except StateError:
            continue
        load_state(create("fixable-first"), path)  # type: ignore[arg-type]
        saved.append(tasks)
    assert saved  # the smallest states are saved and loaded,
    assert saved == list(range(5, saved[-1] + 1))  # each up to the limit,
    assert saved[-1] < 39  # and the largest refused


def test_a_rollout_log_that_is_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(BenchError, match="character device, not a regular file"):
        read_log("/dev/zero")


def test_a_rollout_log_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "rollouts.jsonl"
    os.mkfifo(fifo)
    done = threading.Event()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            read_log(fifo)
        except BaseException as error:  # noqa: BLE001  # checked below
            errors.append(error)
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(5), "read_log waited for a writer"
    assert isinstance(errors[0], BenchError)
    assert "FIFO" in str(errors[0])


# At 1 GiB one state string that an escape widens to four bytes a character took 6.4 GB and
# 17 s to read; at 256 MiB, 1.6 GB (benchmarks/state_limit.py --size-limit).
@pytest.mark.parametrize(
    ("read", "error", "limit", "size"),
    [(read_state_file, StateError, 1 << 28, (1 << 28) + 1),
     (read_state_file, StateError, 1 << 28, 1 << 30),
     (read_log, BenchError, 1 << 30, (1 << 30) + 1),
     (read_log, BenchError, 1 << 30, 3 << 30)],
    ids=["state-over-256-mib", "state-at-1-gib", "log-over-1-gib", "log-at-3-gib"],
)  # fmt: skip
def test_a_file_over_its_size_limit_is_refused_unread(
    tmp_path: Path, read: Callable[[Path], object], error: type, limit: int, size: int
) -> None:
    path = tmp_path / "file"
    with path.open("wb") as handle:
        handle.truncate(size)  # sparse: no disk used
    within_bounds(lambda: read(path))
    with pytest.raises(error, match=f"larger than the limit of {limit:,} bytes"):
        read(path)


def test_a_rollout_log_line_over_64_kib_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    line = json.dumps({"task_id": "t", "score": 0.0, "round": 0})
    path.write_text(line + "\n" + line.replace('"t"', '"' + "t" * 70_000 + '"') + "\n")
    with pytest.raises(BenchError, match="line 2 is longer than 65,536 bytes"):
        read_log(path)


def test_a_rollout_log_line_giving_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_text('{"task_id": "t", "score": 0.0, "score": 1.0, "round": 0}\n')
    with pytest.raises(BenchError, match="'score' is given twice"):
        read_log(path)


_ASCII = st.characters(min_codepoint=0, max_codepoint=127)
_PIECES = st.sampled_from([" ", "=", ",", ".", '"', "'", "\\", "[", "{", "}", "]", "a", "1", "\n"])
#: Adversarial text: a short random prefix, then one of its characters repeated thousands of
#: times (what makes a backtracking pattern superlinear), then a random tail.
ADVERSARIAL = st.builds(
    lambda head, piece, times, tail: head + piece * times + tail,
    st.text(_ASCII, max_size=12),
    st.lists(_PIECES, min_size=1, max_size=3).map("".join),
    st.integers(1000, 4000),
    st.text(_ASCII, max_size=12),
)


def _state_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "state.json"
    path.write_text('{"format": "agentdescent-sampling/state", "state": ' + text + "}")
    return path


def _config_file(tmp_path: Path, suffix: str, text: str) -> Path:
    path = tmp_path / f"run{suffix}"
    path.write_text(text)
    return path


def _readers(tmp_path: Path, text: str) -> dict[str, Callable[[], object]]:
    """Every parser and loader that reads untrusted text, given ``text``."""

    class Plugin:
        __doc__ = f"A sampler.\n\nArgs:\n    {text}\n"

    log = tmp_path / "rollouts.jsonl"
    log.write_text(text)
    return {
        "spec string": lambda: parse_spec("round-robin:" + text[:4000]),
        "spec mapping": lambda: parse_spec({"name": "round-robin", "a": text}),
        "create": lambda: create("informative-band:" + text[:4000]),
        "docstring": lambda: parameter_help(Plugin),
        "toml": lambda: spec_from_file(_config_file(tmp_path, ".toml", text)),
        "json": lambda: spec_from_file(_config_file(tmp_path, ".json", text)),
        "yaml": lambda: spec_from_file(_config_file(tmp_path, ".yaml", text)),
        "state": lambda: load_state(create("fixable-first"), _state_file(tmp_path, text)),  # type: ignore[arg-type]
        "rollout log": lambda: read_log(log),
        "spec": lambda: str(SamplerSpec("round-robin", {"a": text})),
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=ADVERSARIAL)
def test_every_parser_and_loader_finishes_in_bounded_time_and_memory(
    tmp_path: Path, text: str
) -> None:
    for reader in _readers(tmp_path, text).values():
        within_bounds(reader)


def _lowest_free_descriptor() -> int:
    descriptor = os.open(os.devnull, os.O_RDONLY)
    os.close(descriptor)
    return descriptor


@pytest.mark.parametrize("kind", ["a directory", "too large"])
def test_a_file_refused_at_opening_is_named_by_what_it_is_and_leaves_no_descriptor_open(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path if kind == "a directory" else tmp_path / "big.json"
    if kind == "too large":
        path.write_bytes(b"x" * 100)
    message = {
        "a directory": "it is a directory, not a regular file",
        "too large": "it is larger than the limit of 10 bytes",
    }[kind]
    free = _lowest_free_descriptor()
    for _ in range(3):
        with pytest.raises(OSError, match=f"^{message}$"):
            open_regular(path, 10)
    assert _lowest_free_descriptor() == free


_TOML_STRING_PIECES = st.sampled_from(
    [*"a .#[]{}=,'\"\\\n\r\t", "\r\n", '""', "''", "\\\n", '\\"', "\\\\", "\\u0041"]
)


@st.composite
def _toml_strings(draw: st.DrawFn) -> str:
    """A TOML string of any of the four kinds, as written, valid or not."""
    quotes = draw(st.sampled_from(['"', "'", '"""', "'''"]))
    text = "".join(draw(st.lists(_TOML_STRING_PIECES, max_size=12)))
    return quotes + text + quotes


@settings(max_examples=300, deadline=None)
@given(string=_toml_strings(), after=st.sampled_from(["\n", " # c\n", '\n"', "\n" + "a." * 40]))
def test_the_nesting_check_ends_a_toml_string_where_the_parser_does(
    string: str, after: str
) -> None:
    # A multi-line string ending with a quote before its delimiter was read as opening
    # another, hiding the rest of the file from the check.
    try:  # one string, whole: what follows it in the array is read too
        read = tomllib.loads(f"x = [{string}, 1]\n")
    except tomllib.TOMLDecodeError:
        read = {}
    assume(len(read.get("x", ())) == 2)
    assert _after_string(string + after, 0) == len(string)
