"""What a plugin's author is told about a hook or a name the registry refuses: the function
or name as written, where it is, and what to write instead, on one line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from agentdescent_sampling import Registry
from agentdescent_sampling.cli import main
from agentdescent_sampling.errors import PluginLoadError, UnknownSamplerError
from agentdescent_sampling.records import PluginFailure
from tests.support.distinfo import install_plugins

SAMPLER = """
    from agentdescent_sampling.plugin import check_keys, check_score, hookimpl

    class First:
        name = "first"

        def pick(self, keys, round_index):
            return check_keys(keys)[0]

        def record(self, task_id, score):
            check_score(task_id, score)

"""


def _failures(registry: Registry, distribution: str) -> list[PluginFailure]:
    return [
        each
        for each in registry.available()
        if isinstance(each, PluginFailure) and each.distribution == distribution
    ]


@pytest.mark.parametrize(
    "signature", ["registry", "register, config"], ids=["renamed", "an-extra-argument"]
)
def test_a_hook_whose_signature_pluggy_refuses_is_named_as_written_with_its_line_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signature: str
) -> None:
    hook = f"""
    @hookimpl
    def agentdescent_register_samplers({signature}):
        pass
    """
    plugin = {"kit-test-hook-signature": (SAMPLER + hook, {"first-hooks": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)

    (failure,) = _failures(registry, "kit-test-hook-signature")
    (module,) = tmp_path.glob("kit_test_plugin_*.py")
    lines = module.read_text(encoding="utf-8").splitlines()
    line = lines.index("@hookimpl") + 1  # where the decorated function begins
    assert failure.message.startswith(
        f"hook failed: PluginValidationError: @hookimpl agentdescent_register_samplers"
        f"({signature}) (at {module.name}:{line}) does not take what the hook passes: write "
        f"@hookimpl agentdescent_register_samplers(register), one argument named register; "
        f"pluggy said: "
    )
    assert "\\x0a" not in failure.message  # pluggy's line breaks, escaped, read as noise


class First:
    """A sampler that always picks the shard's first task."""

    name = "first"

    def pick(self, keys: list[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        pass


def test_a_reserved_alias_is_named_as_the_builtin_spells_it_with_its_builtin() -> None:
    registry = Registry(only=[])
    with pytest.raises(Exception, match=r"claims the built-in name FixableFirst, an alias of "
                       r"fixable-first; "):  # fmt: skip
        registry.register(First, aliases=("FixableFirst",))
    with pytest.raises(Exception, match=r"claims the built-in name RoundRobin \(as "
                       r"'roundrobin'\), an alias of round-robin; "):  # fmt: skip
        registry.register(First, aliases=("roundrobin",))
    with pytest.raises(Exception, match=r"claims the built-in name round-robin \(as "
                       r"'Round_Robin'\); "):  # fmt: skip
        registry.register(First, name="Round_Robin")


def test_a_plugin_that_raises_at_import_or_in_its_hook_is_named_with_the_line_it_raised_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at_import = """
    import os

    TABLE = os.environ["MY_PLUGIN_TABLE"]
    """
    in_hook = """
    from agentdescent_sampling.plugin import hookimpl

    @hookimpl
    def agentdescent_register_samplers(register):
        raise RuntimeError("hook exploded")
    """
    plugins = {
        "kit-test-raises-at-import": (at_import, {"at-import": "Sampler"}),
        "kit-test-raises-in-hook": (SAMPLER + in_hook, {"in-hook": ""}),
    }
    monkeypatch.delenv("MY_PLUGIN_TABLE", raising=False)
    registry = install_plugins(tmp_path, monkeypatch, plugins, builtins=False)

    (imported,) = _failures(registry, "kit-test-raises-at-import")
    (hooked,) = _failures(registry, "kit-test-raises-in-hook")
    modules = sorted(
        tmp_path.glob("kit_test_plugin_*.py"), key=lambda m: int(m.stem.split("_")[-1])
    )
    first, second = (module.read_text(encoding="utf-8").splitlines() for module in modules)
    import_line = 1 + next(n for n, line in enumerate(first) if "MY_PLUGIN_TABLE" in line)
    hook_line = 1 + next(n for n, line in enumerate(second) if "hook exploded" in line)
    assert imported.message == (
        f"import failed: KeyError: 'MY_PLUGIN_TABLE' (at {modules[0].name}:{import_line})"
    )
    assert hooked.message == (
        f"hook failed: RuntimeError: hook exploded (at {modules[1].name}:{hook_line})"
    )


def test_a_registration_a_hook_refuses_is_named_with_the_line_of_its_register_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = """
    def register_all(register):
        register(42, name="forty-two")  # refused once the hook returns, after this line ran

    @hookimpl
    def agentdescent_register_samplers(register):
        register_all(register)
        register(First, name="first")
        register(First, name="first-again", aliases=("first",))
    """
    plugin = {"kit-test-refused-registrations": (SAMPLER + hook, {"refused-hooks": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)
    (module,) = tmp_path.glob("kit_test_plugin_*.py")
    lines = module.read_text(encoding="utf-8").splitlines()

    def at(text: str) -> str:
        return f" (at {module.name}:{1 + next(n for n, line in enumerate(lines) if text in line)})"

    not_callable = f"registered int 42, which is not callable{at('forty-two')}"
    failures = _failures(registry, "kit-test-refused-registrations")
    by_name = {failure.names[0]: failure.message for failure in failures}
    assert by_name["forty-two"] == not_callable
    assert by_name["first-again"].endswith(f"the first is kept{at('first-again')}")
    assert main(["check", "forty-two"]) == 1
    assert capsys.readouterr().err.endswith(f": {not_callable}\n")


def test_a_name_refused_for_one_of_its_aliases_is_told_as_the_plugins_fault_under_each_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # It was an UnknownSamplerError, so check exited 2, as for the user's typo, where a
    # registration refused for another fault exits 1. Its other names were unknown outright:
    # "no sampler named 'my-first'", with nothing of the refused registration.
    hook = """
    @hookimpl
    def agentdescent_register_samplers(register):
        register(First, name="my-ff", aliases=("my-first", "FixableFirst"))
        register(First, name="my-bad", aliases=("my-b", "not a name"))
        register(First, name="my-rr")
    """
    plugin = {"kit-test-reserved-alias": (SAMPLER + hook, {"reserved-alias": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin)

    for name in ("my-ff", "my-first"):
        with pytest.raises(PluginLoadError) as refused:
            registry.create(name)
        assert str(refused.value).startswith(
            f"sampler {name!r} was refused: kit-test-reserved-alias 0.1 (entry point "
            "'reserved-alias = kit_test_plugin_"
        )
        assert "claims the built-in name FixableFirst, an alias of fixable-first" in str(
            refused.value
        )
        assert "Did you mean" not in str(refused.value)
        assert main(["check", name]) == 1
        assert f"sampler {name!r} was refused" in capsys.readouterr().err
    with pytest.raises(PluginLoadError) as failed:
        registry.create("my-b")
    assert str(failed.value).startswith("sampler 'my-b' comes from a plugin that failed to load")
    assert "'not a name'" in str(failed.value)


def test_a_register_kept_and_called_after_its_hook_returned_raises_rather_than_drop_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = """
    KEPT = []

    @hookimpl
    def agentdescent_register_samplers(register):
        register(First, name="in-time")
        KEPT.append(register)  # as a thread started at import would, to call it later
    """
    plugin = {"kit-test-late-register": (SAMPLER + hook, {"late-register": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin)
    assert registry.create("in-time").pick(["a"], 0) == "a"
    (module,) = tmp_path.glob("kit_test_plugin_*.py")
    (register,) = sys.modules[module.stem].KEPT

    with pytest.raises(RuntimeError, match=r"^register\('too-late'\) was called after the "
                       r"kit-test-late-register plugin's @hookimpl agentdescent_register_samplers"
                       r"\(register\) returned, so nothing can take it; call register\(\) "
                       r"inside that hook"):  # fmt: skip
        register(object, name="too-late")
    assert "too-late" not in {getattr(record, "name", None) for record in registry.available()}


def test_a_plugin_failure_is_recorded_whatever_the_globals_of_the_frames_it_came_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Code run with globals of a dict subclass whose get() raises: the line looked for in
    # the traceback must be read without it, and the failure recorded, not raised.
    at_import = """
    class Globals(dict):
        def get(self, *args):
            raise RuntimeError("the plugin's own get()")

    exec(compile("raise ValueError('at import')", "<made>", "exec"), Globals())
    """
    plugins = {"kit-test-odd-globals": (at_import, {"odd-globals": "Sampler"})}
    registry = install_plugins(tmp_path, monkeypatch, plugins, builtins=False)

    (failure,) = _failures(registry, "kit-test-odd-globals")
    assert failure.message.startswith("import failed: ValueError: at import (at kit_test_plugin_")


def test_a_hook_that_returns_its_samplers_instead_of_registering_them_is_told_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Many pluggy hooks collect what their implementations return; this one does not.
    hook = """
    @hookimpl
    def agentdescent_register_samplers(register):
        return [First]
    """
    plugin = {"kit-test-returns-samplers": (SAMPLER + hook, {"returns-samplers": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)

    (failure,) = _failures(registry, "kit-test-returns-samplers")
    assert failure.message.startswith(
        "its hooks registered no sampler: @hookimpl agentdescent_register_samplers(register) "
        "returned [<class 'kit_test_plugin_"
    )
    assert failure.message.endswith(
        ".First'>], and what it returns is ignored; call register(SamplerClass) once for each "
        "sampler instead of returning them"
    )


def test_a_preset_registered_without_a_description_is_described_by_what_it_wraps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = """
    import functools

    class Explores(First):
        '''Explore a random task now and then.'''

        name = "explores"

        def __init__(self, epsilon=0.1):
            self.epsilon = epsilon

    @hookimpl
    def agentdescent_register_samplers(register):
        register(functools.partial(Explores, epsilon=0.5), name="explores-more")
    """
    plugin = {"kit-test-preset": (SAMPLER + hook, {"preset-hooks": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)

    # Not functools.partial's own: "partial(func, *args, **keywords) - new function with ...".
    assert registry.get("explores-more").description == "Explore a random task now and then."


def test_a_sampler_instance_registered_for_its_class_is_told_to_register_the_class() -> None:
    registry = Registry(only=[])
    with pytest.raises(Exception, match=r"registered First .*, which is not callable; register "
                       r"the class \(First\), not an instance of it: create\(\) builds one "
                       r"each time$"):  # fmt: skip
        registry.register(First())  # type: ignore[arg-type]
    with pytest.raises(Exception, match=r"registered int 3, which is not callable$"):
        registry.register(3, name="three")  # type: ignore[arg-type]


def test_a_factory_that_returns_a_class_is_told_so_when_built_not_at_its_first_pick() -> None:
    # It was served: pick() then raised "missing 1 required positional argument", from the
    # kit and from evolve() alike, with no word of the class.
    registry = Registry(only=[])
    registry.register(lambda: First, name="first-class")
    with pytest.raises(PluginLoadError) as refused:
        registry.create("first-class")
    assert str(refused.value) == (
        "sampler 'first-class' (registered in-process): its factory returned the class "
        "'First', not a sampler: register the class itself, or have the factory return an "
        "instance of it"
    )


class Singleton:
    """A class that serves as a sampler itself: its methods are static."""

    @staticmethod
    def pick(keys: list[str], round_index: int) -> str:
        return keys[0]

    @staticmethod
    def record(task_id: str, score: float) -> None:
        pass


def test_a_factory_that_returns_a_class_whose_methods_need_no_instance_is_served() -> None:
    registry = Registry(only=[])
    registry.register(lambda: Singleton, name="singleton")
    assert registry.create("singleton").pick(["a", "b"], 0) == "a"


def test_a_syntax_error_in_a_plugin_package_is_placed_by_its_path_in_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was placed "(at __init__.py:2)", which names no package, where an import error in
    # the same file is placed "(at broken_pkg/__init__.py:2)".
    package = tmp_path / "broken_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("class Sampler:\n    def pick(self, keys:\n")
    dist_info = tmp_path / "broken_pkg-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: kit-test-syntax\nVersion: 0.1\n"
    )
    (dist_info / "entry_points.txt").write_text(
        "[agentdescent.samplers]\nbroken = broken_pkg:Sampler\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(only=["kit-test-syntax"], disable=(), strict=False)

    (failure,) = _failures(registry, "kit-test-syntax")
    assert "SyntaxError" in failure.message
    assert "(at broken_pkg/__init__.py:2)" in failure.message


def test_a_class_entry_point_naming_an_instance_is_told_to_name_the_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `first = module:INSTANCE` was told "neither a sampler factory nor a module", which does
    # not say what to name instead; the same slip in a hook is told to register the class.
    plugin = {"kit-test-instance": (SAMPLER + "\n    INSTANCE = First()\n", {"first": "INSTANCE"})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)

    (failure,) = _failures(registry, "kit-test-instance")
    assert failure.message.endswith(
        "; name the class (First), not an instance of it: create() builds one each time"
    )


def test_a_class_entry_point_written_with_a_dot_is_told_to_write_a_colon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = {"kit-test-dotted": (SAMPLER, {"first": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)
    module = next(tmp_path.glob("kit_test_plugin_*.py")).stem
    # `first = module.First`, as an author writes a class path out of habit: a dot, no colon.
    (entry_points,) = tmp_path.glob("kit_test_plugin_*.dist-info/entry_points.txt")
    written = entry_points.read_text(encoding="utf-8")
    entry_points.write_text(written.replace(f"= {module}\n", f"= {module}.First\n"))

    (failure,) = _failures(registry, "kit-test-dotted")
    assert failure.message == (
        f"import failed: ModuleNotFoundError: No module named '{module}.First'; '{module}' is "
        f"not a package; write the entry point as first = {module}:First, with a colon before "
        f"a class ({module}.First is no module), and reinstall kit-test-dotted"
    )


def test_a_misspelt_class_in_an_entry_point_is_told_the_name_its_module_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = {"kit-test-misspelt": (SAMPLER, {"first": "Frist"})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)
    module = next(tmp_path.glob("kit_test_plugin_*.py")).stem

    (failure,) = _failures(registry, "kit-test-misspelt")
    assert failure.message == (
        f"import failed: AttributeError: module '{module}' has no attribute 'Frist'; write the "
        f"entry point as first = {module}:First, and reinstall kit-test-misspelt"
    )


@pytest.mark.parametrize(
    ("hook", "told"),
    [
        (
            "def agentdescent_register_samplers(register):\n        register(First)",
            "agentdescent_register_samplers(register) (at {at}) is not marked with "
            "agentdescent_sampling's @hookimpl, so it was never called: decorate it with "
            "@hookimpl (from agentdescent_sampling.plugin import hookimpl)",
        ),
        (
            "@hookimpl\n    def agentdescent_register_samplers():\n        pass",
            "@hookimpl agentdescent_register_samplers() (at {at}) takes no register, so it can "
            "register nothing: write @hookimpl agentdescent_register_samplers(register) and "
            "call register(SamplerClass) in it",
        ),
        (
            "@hookimpl\n    def agentdescent_register_samplers(register):\n        pass",
            "@hookimpl agentdescent_register_samplers(register) (at {at}) returned without "
            "calling register(): call register(SamplerClass) in it once for each sampler (or, "
            "for one class, write a class-form entry point: 'module:Class')",
        ),
        (
            "def agentdescent_register_sampler(register):\n        register(First)",
            "agentdescent_register_sampler(register) (at {at}) is not the hook: rename it "
            "agentdescent_register_samplers and decorate it with @hookimpl (from "
            "agentdescent_sampling.plugin import hookimpl)",
        ),
    ],
    ids=["not-marked", "no-register", "never-calls-register", "misspelt-and-not-marked"],
)
def test_a_hook_that_registers_nothing_is_told_what_its_function_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook: str, told: str
) -> None:
    plugin = {"kit-test-registers-nothing": (SAMPLER + f"\n    {hook}\n", {"nothing-hooks": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)
    (module,) = tmp_path.glob("kit_test_plugin_*.py")
    lines = module.read_text(encoding="utf-8").splitlines()
    first = 1 + next(n for n, line in enumerate(lines) if "agentdescent_register" in line)
    line = first - 1 if lines[first - 2] == "@hookimpl" else first  # where the function begins

    (failure,) = _failures(registry, "kit-test-registers-nothing")
    at = f"{module.name}:{line}"
    assert failure.message == f"its hooks registered no sampler: {told.format(at=at)}"
    # Selecting a name it may have meant quotes it whole, the fix included: it was cut at
    # 150 characters, before the advice.
    with pytest.raises(UnknownSamplerError) as unknown:
        registry.create("first")
    assert f"{failure.where}: {failure.message}." in str(unknown.value)


def test_a_registration_without_a_name_names_the_factory_it_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = """
    import functools

    class Unnamed:
        def pick(self, keys, round_index):
            return keys[0]

        def record(self, task_id, score):
            pass

    def build(**params):
        return Unnamed()

    @hookimpl
    def agentdescent_register_samplers(register):
        register(Unnamed)
        register(build)
        register(First)
    """
    plugin = {"kit-test-unnamed": (SAMPLER + hook, {"unnamed-hooks": ""})}
    registry = install_plugins(tmp_path, monkeypatch, plugin, builtins=False)

    unnamed, built = _failures(registry, "kit-test-unnamed")
    assert re.fullmatch(
        r"registered class Unnamed without a name: pass name= or give it a 'name' attribute"
        r" \(at kit_test_plugin_\d+\.py:\d+\)",  # the line of its register() call
        unnamed.message,
    ), unnamed.message
    assert built.message.startswith("registered <function build at ")
    assert registry.get("first").distribution == "kit-test-unnamed"  # the named one survives
