"""``agentdescent-sampling new-plugin``: write a plugin distribution whose own tests pass.

The distribution holds a working sampler (the fewest-tried task first, a lock, one
documented parameter), the ``agentdescent.samplers`` entry point in either form, a
README, and tests that run the conformance kit and check that the installed name
resolves. An author renames the rule and keeps the tests green.
"""

from __future__ import annotations

import keyword
import re
import shutil
import textwrap
from pathlib import Path

from ._files import reason_of
from ._version import __version__
from .errors import ScaffoldError
from .policy import RESERVED, EntryPoint, normalize
from .protocol import check_name, short_repr

__all__ = ["write_plugin"]


def write_plugin(name: str, *, directory: Path | None = None, hooks: bool = False) -> Path:
    """Write a new plugin distribution for a sampler called ``name``; return its directory.

    Args:
        name: the sampler's name, as ``create()`` will select it (``"least-tried"``).
        directory: where to write; ``./agentdescent-sampling-NAME`` if omitted. It must
            not exist yet, so nothing is ever overwritten.
        hooks: write the hook form (a module of ``@hookimpl`` functions that registers
            the sampler with a description and an alias) instead of the class form.

    The class is the name in words (``least-tried``: ``LeastTried``), with ``Sampler`` added
    where it would shadow a name the modules import (``sequence``: ``SequenceSampler``).
    Every file passes ruff and ``mypy --strict`` whatever the name's length.

    Raises:
        ScaffoldError: ``name`` is not a valid sampler name, is a built-in's, or makes
            no Python class name (``none``, a keyword, a leading digit); ``directory``
            exists or cannot be written.
    """
    slug, cls, found = _checked(name)
    if cls in _IMPORTED:  # the class would shadow that import in the written modules
        cls += "Sampler"
    distribution = _distribution(slug)
    package = f"agentdescent_sampling_{slug}"
    target = directory if directory is not None else Path(distribution)
    values = {
        "name": name,
        "alias": _alias(name, found),
        "distribution": distribution,
        "package": package,
        "cls": cls,
        # The written tests import the class, and pytest collects a class named Test...
        "not_a_test": "\n    #: Not a test class, though pytest would collect it by its name.\n"
        "    __test__: ClassVar[bool] = False"
        if cls.startswith("Test")
        else "",
        "import_cls": _import_line(package, cls),
        "commands": _commented(
            ('python -m pip install -e ".[test]"', ""),
            ("python -m pytest", "the conformance kit and the sampler's own tests"),
            (f"agentdescent-sampling show {name}", "its description and parameters"),
            (f"agentdescent-sampling check {name}", "the conformance kit, from the command line"),
        ),
        "entry_point": f'"{_suffixed(name, "-hooks")}" = "{package}.hooks"'
        if hooks
        else f'"{name}" = "{package}:{cls}"',
        "form": "hook" if hooks else "class",
        "core": _compatible_core(),
    }
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"{package}/__init__.py": _SAMPLER,
        f"{package}/py.typed": "",
        f"tests/test_{slug}.py": _TESTS,
    }
    if hooks:
        files[f"{package}/hooks.py"] = _HOOKS
    try:
        _write(target, files, values)
    except OSError as error:
        raise ScaffoldError(
            f"cannot write the plugin to {short_repr(str(target), 200)}: "
            f"{reason_of(error)}; pass --directory with a new path in a writable "
            f"directory"
        ) from None
    return target


def _compatible_core() -> str:
    """The versions of this package a new plugin may run on: from this release's minor to
    the next (``>=0.1,<0.2``), whose plugin contract may differ, as 0.x releases' may."""
    major, minor = (int(part) for part in __version__.split(".")[:2])
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f">={major}.{minor},<{upper}"


def _checked(name: str) -> tuple[str, str, list[EntryPoint]]:
    """The module slug and class name for sampler ``name``, if it makes a usable plugin, with
    the installed entry points read to tell."""
    try:
        check_name(name)
    except ValueError as error:
        raise ScaffoldError(f"{error}; {_example(name)}") from None
    if normalize(name) in RESERVED:
        raise ScaffoldError(
            f"{name!r} is a built-in sampler's name, and built-in names are reserved: the "
            f"plugin would be refused once installed. Choose another name; {_example(name)}"
        )
    slug = _slug(name)
    found = _scan()
    taken = _taken(name, _distribution(slug), found)
    if taken is not None:
        raise ScaffoldError(
            f"{taken}. Choose another name, or uninstall it first; {_example(name, found)}"
        )
    cls = "".join(part.capitalize() for part in slug.split("_"))
    # The slug is only ever a suffix (agentdescent_sampling_class, test_class.py): a keyword
    # there is fine; the class name is the one Python must take.
    if not cls.isidentifier() or keyword.iskeyword(cls):
        raise ScaffoldError(
            f"{name!r} would make the class {cls!r}, which Python cannot define (a keyword, "
            f"or a name starting with a digit); start the name with a letter and avoid "
            f"'none', 'true' and 'false'; {_example(name, found)}"
        )
    return slug, cls, found


def _slug(name: str) -> str:
    """``least_tried`` for ``least-tried``: the name as a module suffix."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _distribution(slug: str) -> str:
    """The distribution a plugin of module suffix ``slug`` is written as."""
    return f"agentdescent-sampling-{slug.replace('_', '-')}"


def _taken(name: str, distribution: str, found: list[EntryPoint]) -> str | None:
    """Why a plugin of sampler ``name`` written as ``distribution`` would clash with one
    installed, ``found`` being the installed entry points :func:`_scan` read (no plugin is
    imported, so a hook-form plugin's sampler names are not known); ``None`` if it would
    not."""
    for entry_point in found:
        if entry_point.form == "class" and normalize(entry_point.name) == normalize(name):
            return (
                f"{name!r} is already the name of an installed sampler, from "
                f"{entry_point.distribution} {entry_point.version}: a second distribution "
                f"providing it would make create({name!r}) a conflict for both"
            )
    from .discovery import installed  # only these checks read installed metadata

    if installed(distribution):
        return (
            f"the plugin would be the distribution {distribution!r}, which is installed: "
            f"installing the new one would replace it, and every sampler it provides would "
            f"be gone"
        )
    return None


def _scan() -> list[EntryPoint]:
    """The installed sampler entry points that may load, read from metadata alone."""
    from .discovery import scan  # only these checks read installed metadata
    from .policy import GROUP, Policy

    return scan(GROUP, Policy(frozenset(), None, strict=False))[0]


def _example(refused: str, found: list[EntryPoint] | None = None) -> str:
    """``for example: new-plugin NAME``, with a name that is neither ``refused`` nor taken;
    ``found``: the installed entry points, if already scanned."""
    found = _scan() if found is None else found
    for candidate in ("least-tried", "fewest-tried", "my-sampler"):
        if normalize(candidate) != normalize(refused) and not _taken(
            candidate, _distribution(_slug(candidate)), found
        ):
            return f"for example: new-plugin {candidate}"
    return "for example: new-plugin my-own-sampler"


def _alias(name: str, found: list[EntryPoint]) -> str:
    """The alias the hook form registers: ``name-sampler``, or for a name ending in
    ``-sampler`` that name without it (``my`` for ``my-sampler``, never
    ``my-sampler-sampler``); ``name-alias`` where that is a built-in's or an installed
    sampler's name (``found``: the installed entry points, read by :func:`_scan`)."""
    base = re.sub(r"[-_]sampler$", "", name, flags=re.IGNORECASE)
    taken = RESERVED | {normalize(each.name) for each in found if each.form == "class"}
    alias = base if base != name else _suffixed(name, "-sampler")
    return alias if normalize(alias) not in taken else _suffixed(name, "-alias")


def _suffixed(name: str, suffix: str) -> str:
    """``name`` + ``suffix``, the name cut so the whole stays a valid name (64 characters)."""
    return name[: _LONGEST_NAME - len(suffix)].rstrip("-_") + suffix


def _import_line(module: str, name: str) -> str:
    """``from MODULE import NAME``, wrapped as ruff writes it when longer than a line."""
    line = f"from {module} import {name}"
    return line if len(line) <= _LINE else f"from {module} import (\n    {name},\n)"


def _commented(*commands: tuple[str, str]) -> str:
    """Lines of ``(command, comment)``, the comments aligned after the longest command."""
    width = max(len(command) for command, _ in commands) + 2
    return "\n".join(
        f"{command.ljust(width)}# {comment}" if comment else command
        for command, comment in commands
    )


def _write(target: Path, files: dict[str, str], values: dict[str, str]) -> None:
    """Write ``files`` into the new directory ``target``, or nothing: a write that fails
    (a full disk) takes the directory away again, so that the same command can be run
    again once the cause is mended."""
    try:
        target.mkdir(parents=True)
    except FileExistsError:
        if not (target.exists() or target.is_symlink()):
            raise  # a parent is a file: cannot write the plugin there
        raise ScaffoldError(
            f"{short_repr(str(target), 200)} already exists; new-plugin never overwrites: "
            f"remove it or pass --directory with a new path"
        ) from None
    try:
        for relative, template in files.items():
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            text = textwrap.dedent(template)
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            path.write_text(text, encoding="utf-8")
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)  # made by this call, so all of it is ours
        raise


#: The longest sampler name (see :func:`~agentdescent_sampling.plugin.check_name`).
_LONGEST_NAME = 64
#: The line length of the written pyproject's ruff; every line fits it, whatever the name.
_LINE = 100

_PYPROJECT = """\
    [build-system]
    requires = ["setuptools>=77"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "{distribution}"
    version = "0.1.0"
    description = "The {name} task sampler for agentdescent's evolve(), as a plugin"
    readme = "README.md"
    requires-python = ">=3.10"
    # Below the next release that may change the plugin contract, as 0.x releases may.
    dependencies = ["agentdescent-sampling{core}", "attrs>=23.1"]

    [project.optional-dependencies]
    test = ["pytest>=8"]

    # The line that makes create("{name}") find this sampler ({form} form).
    [project.entry-points."agentdescent.samplers"]
    {entry_point}

    [tool.setuptools.packages.find]
    include = ["{package}*"]

    [tool.setuptools.package-data]
    {package} = ["py.typed"]

    [tool.ruff]
    line-length = 100
"""

_SAMPLER = '''\
    """The ``{name}`` task sampler.

    It chooses which task of a worker's shard agentdescent's ``evolve()`` rolls out next.
    """

    from __future__ import annotations

    import threading
    from collections.abc import Sequence
    from typing import ClassVar

    import attrs
    from agentdescent_sampling.plugin import check_pick, check_score, solved_threshold

    __all__ = ["{cls}"]


    @attrs.define(eq=False)
    class {cls}:
        """Roll out the task with the fewest rollouts so far; ties go to the earliest key.

        Replace this rule with your own: as written it picks as round-robin does, so the
        bench (``agentdescent-sampling bench --sampler`` and its name) shows it saving
        nothing. The tests in ``tests/`` keep the contract.

        Args:
            pass_threshold: the score at which a rollout counts as a pass. Keep it
                equal to ``evolve(solved_threshold=...)``.
        """

        name: ClassVar[str] = "{name}"{not_a_test}

        pass_threshold: float = attrs.field(default=0.999, validator=solved_threshold())
        _trials: dict[str, int] = attrs.field(init=False, factory=dict, repr=False)
        _passes: dict[str, int] = attrs.field(init=False, factory=dict, repr=False)
        # evolve(max_concurrency > 1) shares one instance between worker threads.
        _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

        def pick(self, keys: Sequence[str], round_index: int) -> str:
            """Return the key of ``keys`` with the fewest recorded rollouts."""
            keys, _ = check_pick(keys, round_index)
            with self._lock:
                return min(keys, key=lambda key: self._trials.get(key, 0))

        def record(self, task_id: str, score: float) -> None:
            """Count one rollout of ``task_id``, a pass if ``score >= pass_threshold``."""
            value = check_score(task_id, score)
            with self._lock:
                self._trials[task_id] = self._trials.get(task_id, 0) + 1
                passed = value >= self.pass_threshold
                self._passes[task_id] = self._passes.get(task_id, 0) + passed

        def stats(self) -> dict[str, tuple[int, int]]:
            """``{task_id: (passes, trials)}``; the conformance kit counts records with it."""
            with self._lock:
                return {key: (self._passes[key], trials) for key, trials in self._trials.items()}
'''

_HOOKS = '''\
    """The hooks of ``{name}``.

    The hook-form entry point: it registers the sampler with a description and an alias.
    """

    from __future__ import annotations

    from agentdescent_sampling.plugin import Register, hookimpl

    from . import {cls}


    @hookimpl
    def agentdescent_register_samplers(register: Register) -> None:
        """Register this distribution's samplers."""
        register(
            {cls},
            aliases=("{alias}",),
            description="The task with the fewest rollouts so far, ties to the earliest key.",
        )
'''

_TESTS = '''\
    """The tests of ``{name}``.

    The sampler contract, the installed name, and the sampler's own rule.
    """

    from __future__ import annotations

    from collections.abc import Callable

    from agentdescent_sampling import create
    from agentdescent_sampling.testing import check_sampler

    {import_cls}

    NAME = "{name}"


    def test_conforms_to_the_sampler_contract(sampler_conformance: Callable[..., object]) -> None:
        sampler_conformance({cls})


    def test_is_selected_by_name_once_installed() -> None:
        assert create(NAME).name == NAME
        report = check_sampler(f"{NAME}:pass_threshold=0.8")
        assert report.ok, str(report)


    def test_untried_tasks_are_picked_before_any_repeat() -> None:
        sampler = {cls}()
        keys = ["a", "b", "c"]
        picked = []
        for round_index in range(3):
            task = sampler.pick(keys, round_index)
            sampler.record(task, 0.0)
            picked.append(task)
        assert sorted(picked) == keys
'''

_README = """\
    # {distribution}

    The `{name}` task sampler for [agentdescent](https://pypi.org/project/agentdescent/)'s
    `evolve()`, as a plugin for agentdescent-sampling ({form} form).

    agentdescent-sampling is not on PyPI yet: install it from a clone of its repository
    first (`python -m pip install -e ".[engine]"` in the clone also brings the engine,
    `agentdescent==0.7.0`), then this plugin:

    ```bash
    {commands}
    ```

    ```python
    from agentdescent_sampling import create

    spec = "{name}:pass_threshold=0.8"
    sampler = create(spec)
    # evolve(tasks, reward, agent=agent, task_sampler=sampler, solved_threshold=0.8)
    ```

    Edit `pick` and `record` in `{package}/__init__.py`. Document every parameter in
    the class docstring's `Args:` section: `agentdescent-sampling show` prints it. The
    author's guide (`docs/writing-a-sampler.md` in agentdescent-sampling) has the whole
    contract.
"""

#: The names the written modules import: a sampler called ``sequence`` or ``register`` gets the
#: class ``SequenceSampler`` or ``RegisterSampler``, which shadows none of them.
_IMPORTED = frozenset(
    name
    for template in (_SAMPLER, _HOOKS, _TESTS)
    for names in re.findall(r"^ *from \S+ import (.+)$", template, re.MULTILINE)
    for name in map(str.strip, names.split(","))
    if name.isidentifier()
)
