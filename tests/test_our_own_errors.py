"""What used to end in a raw exception or a huge message is one of our short errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentdescent_sampling import (
    InvalidSamplerConfig,
    SamplerError,
    create,
    spec_from_file,
)
from agentdescent_sampling.bench.command import _spec
from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import BenchError, ScaffoldError
from agentdescent_sampling.scaffold import write_plugin

MEGABYTE = "p" * 1_000_000
COMMAND = [sys.executable, "-m", "agentdescent_sampling"]


@pytest.mark.parametrize("key", [5, b"task_sampler", ["task_sampler"], "", "k" * 10_000])
def test_a_key_that_is_not_a_table_name_is_our_error(tmp_path: Path, key: object) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "round-robin"\n')
    with pytest.raises(InvalidSamplerConfig, match="key must be the name of a table") as error:
        spec_from_file(path, key=key)  # type: ignore[arg-type]
    assert len(str(error.value)) < 400


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "round-robin", "provider": MEGABYTE},
        {"name": "some-plugin-name", "provider": MEGABYTE},
        {"name": MEGABYTE},
        {"name": "round-robin", MEGABYTE: 1},
        "round-robin:" + MEGABYTE[:4000] + "=1",
        {"name": "difficulty-weighted", "c": MEGABYTE},
    ],
    ids=["provider of a built-in", "provider", "name", "key", "key in a string", "value"],
)
def test_an_error_quotes_only_a_short_prefix_of_a_huge_value(spec: object) -> None:
    with pytest.raises(SamplerError) as error:
        create(spec)  # type: ignore[arg-type]
    assert len(str(error.value)) < 1000


@pytest.mark.parametrize(
    ("path", "key"), [("p" * 100_000 + ".toml", "task_sampler"), ("run.toml", "k" * 200)]
)
def test_a_file_error_quotes_only_a_short_prefix_of_a_huge_path_or_key(
    tmp_path: Path, path: str, key: str
) -> None:
    with pytest.raises(InvalidSamplerConfig) as error:
        spec_from_file(tmp_path / path, key=key)
    assert len(str(error.value)) < 1200


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("opening", ['{"a": ', '{"a": ['])
def test_bench_sampler_of_deeply_nested_json_is_our_error(opening: str, depth: int) -> None:
    with pytest.raises(BenchError, match="nests"):
        _spec(opening * depth)


@pytest.mark.parametrize(
    "text", ['{"name": "round-robin", "name": "x"}', '{"name": NaN}', '{"name": "a", "b": }']
)
def test_bench_sampler_of_ambiguous_or_broken_json_is_our_error(text: str) -> None:
    with pytest.raises(BenchError, match="not valid JSON"):
        _spec(text)


@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-", "1>&- 2>/dev/null; echo $?"])
def test_list_into_a_full_or_closed_stdout_is_an_error_without_a_traceback(
    redirect: str,
) -> None:
    command = " ".join(COMMAND) + f" list {redirect}"
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True)
    assert "Traceback" not in result.stderr
    assert result.returncode != 0 or result.stdout.strip() not in ("", "0")


@pytest.mark.parametrize("name", ["none", "None", "true", "false", "2fast", "9"])
def test_new_plugin_refuses_a_name_python_cannot_make_a_class_of(tmp_path: Path, name: str) -> None:
    with pytest.raises(ScaffoldError, match=r"Python cannot define|starting with a letter"):
        write_plugin(name, directory=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["class", "import", "pass", "lambda"])
@pytest.mark.parametrize("hooks", [True, False])
def test_new_plugin_takes_a_keyword_whose_class_python_can_define(
    tmp_path: Path, name: str, hooks: bool
) -> None:
    # "pass" makes the class Pass in agentdescent_sampling_pass: neither is a keyword.
    written = write_plugin(name, directory=tmp_path / "out", hooks=hooks)

    for source in written.rglob("*.py"):
        compile(source.read_text(encoding="utf-8"), str(source), "exec")
    assert f"class {name.capitalize()}:" in (
        written / f"agentdescent_sampling_{name}" / "__init__.py"
    ).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "name",
    ["round-robin", "Round_Robin", "Fixable_First", "InformativeBand", "difficulty-weighted"],
)
def test_new_plugin_refuses_a_built_in_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(ScaffoldError, match="built-in sampler's name"):
        write_plugin(name, directory=tmp_path / "out")


@pytest.mark.parametrize("length", [56, 57, 60, 64])
@pytest.mark.parametrize("hooks", [True, False])
def test_new_plugin_names_stay_valid_for_a_long_name(
    tmp_path: Path, length: int, hooks: bool
) -> None:
    from agentdescent_sampling.protocol import check_name

    name = ("ab-" * 30)[:length].rstrip("-")
    written = write_plugin(name, directory=tmp_path / "out", hooks=hooks)
    pyproject = (written / "pyproject.toml").read_text()
    names = re.findall(r'^"([^"]+)" = "', pyproject, re.MULTILINE)
    for hooks_py in written.rglob("hooks.py"):
        names += re.findall(r'aliases=\("([^"]+)",\)', hooks_py.read_text())
    assert len(names) == (2 if hooks else 1)
    for each in names:
        check_name(each)


@pytest.mark.parametrize(
    "where", ["file/plugin", "missing/../file/plugin", "locked/plugin"], ids=["file", "dots", "ro"]
)
def test_new_plugin_directory_errors_are_messages_not_tracebacks(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        status = main(["new-plugin", "fine-name", "--directory", str(tmp_path / where)])
    finally:
        locked.chmod(0o700)
    if status == 0:  # root writes anywhere
        assert where == "locked/plugin"
        return
    assert status == 2
    assert "agentdescent-sampling: error: cannot write the plugin" in capsys.readouterr().err


def test_a_failure_quoted_in_a_message_ends_as_one_sentence_and_is_never_cut() -> None:
    # It was cut at 150 characters, before the fix that ends a plugin failure's message
    # (tests/registry/test_plugin_author_messages.py quotes one whole).
    from agentdescent_sampling.loading import MAX_MESSAGE
    from agentdescent_sampling.registry import _sentence

    long = ("the plugin raised while importing (for example, a missing dependency) " * 5)[
        :MAX_MESSAGE
    ]
    assert _sentence(long) == long.rstrip() + "."
    assert _sentence("short and whole") == "short and whole."
    assert _sentence("is it whole? ") == "is it whole?"
