"""``agentdescent-sampling new-plugin`` writes distributions whose own tests pass once installed."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import ScaffoldError
from agentdescent_sampling.scaffold import write_plugin
from tests.support.venv import REPO, Venv


@pytest.fixture(scope="module")
def scaffolded(
    tmp_path_factory: pytest.TempPathFactory, repo_wheel: Path
) -> tuple[Venv, Path, Path]:
    """Both forms, written by the command, pip-installed with this package into a fresh venv
    as the command's ``next:`` line says (so that line must bring pytest too)."""
    root = tmp_path_factory.mktemp("scaffold")
    told = [
        _next_install(["least-tried", "--directory", str(root / "classy")]),
        _next_install(["least-hooked", "--hooks", "--directory", str(root / "hooky")]),
    ]
    env = Venv.create(root / "venv", repo_wheel, *told)
    return env, root / "classy", root / "hooky"


def _next_install(args: list[str]) -> str:
    """Run ``agentdescent-sampling new-plugin ARGS``; return what its ``next:`` line installs."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["new-plugin", *args]) == 0
    (line,) = [line for line in printed.getvalue().splitlines() if line.startswith("next: ")]
    words = shlex.split(line.removeprefix("next: "))
    assert words[:4] == ["python", "-m", "pip", "install"], line
    return words[words.index("-e") + 1]


@pytest.mark.parametrize("form", ["classy", "hooky"])
def test_a_new_plugins_own_tests_pass_out_of_the_box(
    scaffolded: tuple[Venv, Path, Path], form: str
) -> None:
    env, classy, hooky = scaffolded
    project = classy if form == "classy" else hooky
    result = env.run(str(env.bin / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                     str(project / "tests"), cwd=project)  # fmt: skip
    assert result.stdout.splitlines()[-1].startswith("3 passed"), result.stdout


def test_a_new_plugin_is_listed_ok_and_shows_its_parameters_meaning(
    scaffolded: tuple[Venv, Path, Path],
) -> None:
    env, _, _ = scaffolded
    assert env.run("agentdescent-sampling", "list", "--strict").returncode == 0
    shown = env.run("agentdescent-sampling", "show", "least-hooked").stdout
    assert "least-hooked (agentdescent-sampling-least-hooked 0.1.0)" in shown
    assert "entry point: least-hooked-hooks = agentdescent_sampling_least_hooked.hooks" in shown
    assert "the score at which a rollout counts as a pass" in shown


def test_new_plugin_never_overwrites_and_refuses_a_bad_name(tmp_path: Path) -> None:
    write_plugin("least-tried", directory=tmp_path / "one")
    with pytest.raises(ScaffoldError, match="already exists; new-plugin never overwrites"):
        write_plugin("least-tried", directory=tmp_path / "one")
    with pytest.raises(ScaffoldError, match="for example: new-plugin least-tried"):
        write_plugin("bad name!", directory=tmp_path / "two")
    assert not (tmp_path / "two").exists()


def test_a_plugin_that_cannot_be_written_whole_leaves_nothing_so_the_command_can_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk left README.md and pyproject.toml, and the retry was told "already exists".
    write_text = Path.write_text
    written: list[Path] = []

    def fills_up(self: Path, *args: object, **kwargs: object) -> int:
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(self)
        return write_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", fills_up)
    with pytest.raises(ScaffoldError, match="No space left on device"):
        write_plugin("least-tried", directory=tmp_path / "full")
    assert len(written) == 2
    assert not (tmp_path / "full").exists()

    monkeypatch.setattr(Path, "write_text", write_text)
    assert write_plugin("least-tried", directory=tmp_path / "full") == tmp_path / "full"


def test_an_empty_directory_argument_is_told_to_give_a_path_not_a_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["new-plugin", "least-tried", "--directory", ""])
    assert "argument --directory: an empty path; give the file or directory meant" in (
        capsys.readouterr().err
    )


def test_a_new_plugin_named_test_has_a_class_pytest_does_not_collect(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its tests import the class; TestFirstSampler, as it was once named, pytest collected.
    written = write_plugin("test-first", directory=pytester.path / "plugin")
    monkeypatch.setenv("PYTHONPATH", str(written))  # as if installed

    collected = pytester.runpytest_subprocess(
        str(written / "tests"), "--collect-only", "-q", "-W", "error::pytest.PytestWarning"
    )

    collected.assert_outcomes()  # collecting runs nothing; a warning made an error would fail
    assert collected.ret == 0, collected.stdout.str()
    assert "test_test_first.py::test_conforms_to_the_sampler_contract" in collected.stdout.str()
    assert "TestFirst" not in collected.stdout.str()


@pytest.mark.parametrize(
    ("name", "alias"),
    [("least-tried", "least-tried-sampler"), ("my-sampler", "my"), ("fast_sampler", "fast")],
)
def test_a_new_hook_form_plugins_alias_never_doubles_sampler(
    tmp_path: Path, name: str, alias: str
) -> None:
    # my-sampler was given the alias my-sampler-sampler.
    written = write_plugin(name, directory=tmp_path / "plugin", hooks=True)
    (hooks,) = written.glob("agentdescent_sampling_*/hooks.py")
    assert f'aliases=("{alias}",)' in hooks.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "alias"),
    [("round-robin-sampler", "round-robin-sampler-alias"),
     ("hardest-first-sampler", "hardest-first-sampler-alias")],
    ids=["a-built-in", "an-installed-plugin"],
)  # fmt: skip
def test_a_new_hook_form_plugins_alias_is_no_name_a_sampler_has(
    tmp_path: Path, name: str, alias: str
) -> None:
    # hardest-first-sampler was given the alias hardest-first, which made both plugins'
    # names conflicts once installed. (plugins/agentdescent-sampling-hardest, class form, is
    # installed by the README's test command.)
    written = write_plugin(name, directory=tmp_path / "plugin", hooks=True)
    (hooks,) = written.glob("agentdescent_sampling_*/hooks.py")
    assert f'aliases=("{alias}",)' in hooks.read_text(encoding="utf-8")


def test_new_plugin_refuses_the_name_of_an_installed_plugin_sampler(tmp_path: Path) -> None:
    # hardest-first is plugins/agentdescent-sampling-hardest's, installed by the README's test
    # command: a second provider would make selecting it a conflict for both.
    with pytest.raises(ScaffoldError, match=r"'Hardest_First' is already the name of an installed "
                       r"sampler, from agentdescent-sampling-hardest "):  # fmt: skip
        write_plugin("Hardest_First", directory=tmp_path / "again")
    assert not (tmp_path / "again").exists()


def test_new_plugin_refuses_a_distribution_installed_and_suggests_a_name_not_taken(
    scaffolded: tuple[Venv, Path, Path], tmp_path: Path
) -> None:
    env, _, _ = scaffolded  # least-tried (class form) and least-hooked (hook form) installed
    # Its sampler names are not known without importing it, but pip would replace it.
    hooked = env.run("agentdescent-sampling", "new-plugin", "least-hooked", "--directory",
                     str(tmp_path / "hooked"), check=False)  # fmt: skip
    assert hooked.returncode == 2
    assert (
        "the plugin would be the distribution 'agentdescent-sampling-least-hooked', which is "
        "installed: installing the new one would replace it"
    ) in hooked.stderr
    tried = env.run("agentdescent-sampling", "new-plugin", "least-tried", "--directory",
                    str(tmp_path / "tried"), check=False)  # fmt: skip
    assert tried.returncode == 2
    assert "'least-tried' is already the name of an installed sampler" in tried.stderr
    assert tried.stderr.rstrip().endswith("for example: new-plugin fewest-tried")
    assert not (tmp_path / "hooked").exists()
    assert not (tmp_path / "tried").exists()


def test_new_plugin_refuses_a_distribution_installed_with_no_sampler_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its name alone says it: no entry point, so no scan of sampler plugins sees it.
    dist_info = tmp_path / "site" / "agentdescent_sampling_utils-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agentdescent-sampling-utils\nVersion: 1.0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ScaffoldError, match="'agentdescent-sampling-utils', which is installed"):
        write_plugin("utils", directory=tmp_path / "utils")
    assert not (tmp_path / "utils").exists()


#: The longest valid sampler name, 64 characters.
LONGEST = "least-tried-" + "x" * 52


@pytest.mark.parametrize(
    ("name", "hooks"),
    [
        ("least-tried", False),
        ("least-tried", True),
        (LONGEST, False),
        (LONGEST, True),
        # Each makes a class named as something the written modules import.
        ("sequence", True),
        ("class-var", True),
        ("callable", True),
        ("register", True),
    ],
)
def test_a_new_plugin_passes_ruff_and_mypy_strict_as_written_whatever_its_name(
    tmp_path: Path, name: str, hooks: bool
) -> None:
    project = write_plugin(name, directory=tmp_path / "plugin", hooks=hooks)
    for command in (["check", "--select", "E,F,W,I,B,UP,RUF"], ["format", "--check"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "."],
            capture_output=True,
            text=True,
            cwd=project,
        )
        assert result.returncode == 0, result.stdout + result.stderr
    result = _mypy_strict(project)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_new_plugins_readme_installs_agentdescent_sampling_from_a_clone_first(
    tmp_path: Path,
) -> None:
    readme = (write_plugin("least-tried", directory=tmp_path / "plugin") / "README.md").read_text()
    first_command = readme.index('python -m pip install -e ".[test]"')
    assert readme.index("not on PyPI yet: install it from a clone") < first_command
    assert "agentdescent==0.7.0" in readme
    assert "pypi.org/project/agentdescent-sampling" not in readme


def test_a_new_plugin_requires_this_release_of_the_core_up_to_the_next_minor(
    tmp_path: Path,
) -> None:
    from agentdescent_sampling import __version__

    pyproject = write_plugin("least-tried", directory=tmp_path / "plugin") / "pyproject.toml"
    major, minor = __version__.split(".")[:2]
    assert (
        f'"agentdescent-sampling>={major}.{minor},<{major}.{int(minor) + 1}"'
        in pyproject.read_text()
    )


def _mypy_strict(project: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on a written plugin's own source and tests, against this checkout
    (whose own errors, such as the engine's missing stubs, are its configuration's to judge,
    not the plugin's: silent)."""
    cache = str(project / ".mypy_cache")
    silent = "--follow-imports=silent"
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", silent, "--cache-dir", cache, "."],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "MYPYPATH": str(REPO)},
    )


def test_a_new_hook_form_plugin_types_its_register_callback(tmp_path: Path) -> None:
    project = write_plugin("least-hooked", directory=tmp_path / "plugin", hooks=True)
    hooks = project / "agentdescent_sampling_least_hooked" / "hooks.py"
    hooks.write_text(hooks.read_text().replace("aliases=", "alias="))
    result = _mypy_strict(project)
    assert 'Unexpected keyword argument "alias"' in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("name", ["ab", "least-tried", LONGEST])
def test_a_new_plugins_readme_aligns_its_commands_comments(tmp_path: Path, name: str) -> None:
    readme = (write_plugin(name, directory=tmp_path / "plugin") / "README.md").read_text()
    commands = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    columns = {line.index("  # ") for line in commands if "  # " in line}
    assert len(columns) == 1, "\n".join(commands)
