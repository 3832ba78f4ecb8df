"""The docs name only what exists: files, examples, links and every built-in.

Each test reads every doc a user meets (the README, docs/, SECURITY.md, BENCHMARKS.md, the
examples and the plugins' READMEs) and fails naming the doc and what it names wrongly.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentdescent_sampling.cli import _parser as parser
from agentdescent_sampling.params import signature_of
from agentdescent_sampling.policy import BUILTINS

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted(
    [
        REPO / "README.md",
        REPO / "SECURITY.md",
        REPO / "BENCHMARKS.md",
        *(REPO / "docs").glob("*.md"),
        *(REPO / "plugins").glob("*/README.md"),
    ]
)
EXAMPLES = sorted(
    path for path in (REPO / "examples").rglob("*") if path.suffix in (".py", ".toml", ".json")
)
#: Every test function of the suite and of the plugins' suites, by name.
TESTS = sorted(
    {
        name
        for file in [*REPO.glob("tests/**/*.py"), *REPO.glob("plugins/*/tests/**/*.py")]
        for name in re.findall(r"^\s*def (test_\w+)", file.read_text(), re.MULTILINE)
    }
)
FENCE = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
#: A path inside this repository, as docs write it: from the top, starting with one of its
#: directories. Paths elsewhere (``~/.agentdescent/...``, ``ledger/.git/...``) do not match.
REPO_PATH = re.compile(
    r"(?<![\w/.~$=-])(?:\./)?(?P<path>(?:examples|docs|tests|benchmarks|plugins|agentdescent_sampling"
    r"|\.ci)/[\w./*-]*[\w*/])"
)
#: ``python examples/NAME.py ARG ...``: an example run with its arguments.
EXAMPLE_RUN = re.compile(r"python (?P<script>examples/\S+\.py)(?P<args>(?: +[^\s#|&;>]+)*)")
CONFIG_SUFFIXES = (".toml", ".json", ".jsonl", ".yaml", ".yml")
#: Where a doc writes counts or times that drift with every change: "990 tests", "about 10 s of
#: CPU". A figure belongs in BENCHMARKS.md beside the command that produced it.
DRIFTING = re.compile(r"\b\d[\d,]* tests\b|\babout \d+ s of CPU\b")


def rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    return {slug(match[1]) for match in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def paragraphs(doc: Path) -> list[str]:
    """The doc's paragraphs, table rows and code blocks, each as one string.

    BENCHMARKS.md's code blocks are left out: they are a command's output, as measured.
    """
    text = doc.read_text(encoding="utf-8")
    blocks = FENCE.findall(text)
    found = [] if doc.name == "BENCHMARKS.md" else list(blocks)
    for chunk in re.split(r"\n\s*\n", FENCE.sub("\n\n", text)):
        rows = [line for line in chunk.splitlines() if line.startswith("|")]
        found += rows or [chunk]
    return found


@pytest.mark.parametrize("doc", [*DOCS, *EXAMPLES], ids=rel)
def test_every_repository_path_a_doc_names_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = sorted(
        {
            match["path"]
            for match in REPO_PATH.finditer(text)
            if not any(REPO.glob(match["path"].rstrip("/")))
        }
    )
    assert not missing, f"{rel(doc)} names files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_relative_link_and_its_anchor_resolve(doc: Path) -> None:
    broken = []
    for match in LINK.finditer(FENCE.sub("", doc.read_text(encoding="utf-8"))):
        target = match["target"]
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists() or (path.suffix == ".md" and anchor not in {"", *anchors(path)}):
            broken.append(target)
    assert not broken, f"{rel(doc)} links to what does not exist: {broken}"


@pytest.mark.parametrize("readme", sorted(REPO.glob("plugins/*/README.md")), ids=rel)
def test_a_plugins_readme_names_nothing_outside_its_folder_by_a_relative_path(
    readme: Path,
) -> None:
    # Its README is the plugin's page on an index, where '../../BENCHMARKS.md' leads nowhere:
    # what lives in the core's tree is named as there, in words.
    text = readme.read_text(encoding="utf-8")
    outside = [
        match["target"]
        for match in LINK.finditer(FENCE.sub("", text))
        if not re.match(r"[a-z]+:", match["target"])
        and not (readme.parent / match["target"].partition("#")[0])
        .resolve()
        .is_relative_to(readme.parent)
    ]
    assert not outside, f"{rel(readme)} links outside its folder: {outside}"
    assert "../" not in text, f"{rel(readme)} names a path outside its folder ('../')"


#: Names a plugin README's usage block leaves to the reader, as the README's first run does.
_READERS_OWN = ("tasks", "reward", "agent")


@pytest.mark.parametrize("readme", sorted(REPO.glob("plugins/*/README.md")), ids=rel)
def test_every_python_block_of_a_plugins_readme_imports_what_it_uses(readme: Path) -> None:
    blocks = re.findall(
        r"^( *)```python\n(.*?)^\1```$",
        readme.read_text(encoding="utf-8"),
        re.MULTILINE | re.DOTALL,
    )
    ruff = Path(sys.executable).with_name("ruff")
    for number, (_, block) in enumerate(blocks, 1):
        code = textwrap.dedent(block)
        found = subprocess.run(
            [str(ruff), "check", "--no-cache", "--isolated", "--select", "F821",
             "--config", f"builtins = {json.dumps(_READERS_OWN)}", "--output-format", "concise",
             "--stdin-filename", f"block{number}.py", "-"],
            input=code, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert found.returncode == 0, (
            f"{rel(readme)}'s python block {number} uses a name it does not import:\n"
            f"{found.stdout}{found.stderr}"
        )


@pytest.mark.parametrize("doc", [*DOCS, *EXAMPLES], ids=rel)
def test_every_example_run_a_doc_shows_names_files_that_exist(doc: Path) -> None:
    wrong = []
    for match in EXAMPLE_RUN.finditer(doc.read_text(encoding="utf-8")):
        files = [arg for arg in match["args"].split() if arg.endswith(CONFIG_SUFFIXES)]
        wrong += [
            f"{match[0].strip()}: {name}"
            for name in (match["script"], *files)
            if not (REPO / name).exists()
        ]
    assert not wrong, f"{rel(doc)} runs examples on files that do not exist: {wrong}"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_command_line_a_doc_shows_is_one_the_command_accepts(doc: Path) -> None:
    refused = []
    for block in FENCE.findall(doc.read_text(encoding="utf-8")):
        variables: dict[str, str] = {}  # S="--workload ..." on one line, then $S on the next
        for line in block.replace("\\\n", " ").splitlines():
            if assigned := re.fullmatch(r"(\w+)=(.*)", line):
                variables[assigned[1]] = " ".join(shlex.split(assigned[2]))
            for found in re.finditer(r"(?:^|&& |\$ )agentdescent-sampling (?P<args>.*)", line):
                args = re.split(r" (?:#|>|\||&&) ?", found["args"])[0]
                args = string.Template(args).safe_substitute(variables)
                try:
                    parser().parse_args(shlex.split(args))
                except SystemExit as exited:  # --version and --help exit 0 after printing
                    if exited.code != 0:
                        refused.append(args)
    assert not refused, f"{rel(doc)} shows command lines the command refuses: {refused}"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_test_a_doc_cites_exists(doc: Path) -> None:
    # Prose only: a code block may define a test of its own, as the author's guide does.
    cited = set(re.findall(r"(?<![\w/.])(test_[\w*]+)(?![\w.])", FENCE.sub("", doc.read_text())))
    missing = sorted(name for name in cited if not fnmatch.filter(TESTS, name))
    assert not missing, f"{rel(doc)} cites tests that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_a_doc_that_lists_built_ins_lists_every_one(doc: Path) -> None:
    # A list of built-ins: a paragraph that speaks of built-ins and names three or more.
    incomplete = []
    for names in ([b.name for b in BUILTINS], [alias for b in BUILTINS for alias in b.aliases]):
        for paragraph in paragraphs(doc):
            if not re.search(r"built-?ins?\b", paragraph, re.IGNORECASE):
                continue
            named = [name for name in names if re.search(rf"(?<![\w-]){name}(?![\w-])", paragraph)]
            if len(named) >= 3 and len(named) < len(names):
                left_out = [name for name in names if name not in named]
                incomplete.append(f"without {left_out}: {paragraph[:200]!r}")
    assert not incomplete, f"{rel(doc)} lists built-ins incompletely: {incomplete}"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_no_doc_writes_a_count_or_time_that_drifts(doc: Path) -> None:
    found = DRIFTING.findall(doc.read_text(encoding="utf-8"))
    assert not found, f"{rel(doc)} writes figures that drift by hand: {found}"


def test_the_built_in_table_is_the_one_in_policy() -> None:
    text = (REPO / "docs" / "builtins.md").read_text(encoding="utf-8")
    table = text.split("## The built-ins", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| `")]
    documented = [(row[0].strip("|` "), row[1]) for row in rows]
    expected = [(builtin.name, parameters(builtin.load())) for builtin in BUILTINS]
    assert documented == expected


def parameters(factory: object) -> str:
    """A built-in's parameters as the table writes them: `name=default`, in config syntax."""
    cells = []
    for parameter in signature_of(factory).parameters:  # type: ignore[arg-type]
        default = parameter.default
        shown = "none" if default is None else str(default).lower()
        cells.append(f"`{parameter.name}={shown}`")
    return ", ".join(cells)
