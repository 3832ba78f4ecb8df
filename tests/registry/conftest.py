"""One venv per session with this package and a zoo of real plugin distributions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.venv import Venv, write_wheel

SAMPLER = """
class {cls}:
    name = "{name}"

    def __init__(self, offset=0):
        self.offset = offset

    def pick(self, keys, round_index):
        return keys[(round_index + self.offset) % len(keys)]

    def record(self, task_id, score):
        pass
"""

HOOKS = """
from agentdescent_sampling.plugin import hookimpl

CALLS = []


class Shuffled:
    '''Visit the shard in a shuffled order.'''

    name = "shuffled"

    def __init__(self, seed=0):
        self.seed = seed

    def pick(self, keys, round_index):
        return keys[(round_index * 7 + self.seed) % len(keys)]

    def record(self, task_id, score):
        pass


def first_key(**params):
    return Shuffled(**params)


@hookimpl
def agentdescent_register_samplers(register):
    CALLS.append(1)
    register(Shuffled, aliases=("shuf",), description="Shuffled order, seeded.")
    register(first_key, name="first-key")
"""

# Each entry: distribution name -> (modules, entry points). Module names start with
# ads_ so tests can check which plugins were imported.
ZOO: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "ads-test-classform": (
        {"ads_classform.py": SAMPLER.format(cls="Fifo", name="fifo")},
        {"fifo": "ads_classform:Fifo"},
    ),
    "ads-test-hookform": ({"ads_hookform.py": HOOKS}, {"zoo-hooks": "ads_hookform"}),
    "ads-test-broken-import": (
        {"ads_broken.py": "import numpyy_not_installed\n"},
        {"broken": "ads_broken:Sampler"},
    ),
    "ads-test-dup-a": (
        {"ads_dup_a.py": SAMPLER.format(cls="Dup", name="dup")},
        {"dup": "ads_dup_a:Dup"},
    ),
    "ads-test-dup-b": (
        {"ads_dup_b.py": SAMPLER.format(cls="Dup", name="dup")},
        {"dup": "ads_dup_b:Dup"},
    ),
    "ads-test-impostor": (
        {
            "ads_impostor.py": SAMPLER.format(cls="Impostor", name="round-robin"),
            "ads_impostor_hooks.py": """
                from agentdescent_sampling.plugin import hookimpl
                from ads_impostor import Impostor

                @hookimpl
                def agentdescent_register_samplers(register):
                    register(Impostor, name="difficulty-weighted")
            """,
        },
        {"round-robin": "ads_impostor:Impostor", "impostor-hooks": "ads_impostor_hooks"},
    ),
    "ads-test-registers-nothing": (
        {
            "ads_registers_nothing.py": """
                from agentdescent_sampling.plugin import hookimpl

                @hookimpl
                def agentdescent_register_samplers(register):
                    pass
            """
        },
        {"registers-nothing": "ads_registers_nothing"},
    ),
    "ads-test-misspelt": (
        {
            "ads_misspelt.py": """
                from agentdescent_sampling.plugin import hookimpl

                @hookimpl
                def agentdescent_register_sampler(register):
                    pass
            """
        },
        {"misspelt": "ads_misspelt"},
    ),
    "ads-test-bad-registrations": (
        {
            "ads_badreg.py": """
                from agentdescent_sampling.plugin import hookimpl

                class NoPick:
                    name = "no-pick"
                    def record(self, task_id, score):
                        pass

                class Survivor:
                    name = "survivor"
                    def pick(self, keys, round_index):
                        return keys[0]
                    def record(self, task_id, score):
                        pass

                @hookimpl
                def agentdescent_register_samplers(register):
                    register(42, name="forty-two")
                    register(NoPick)
                    register(Survivor)
                    register(Survivor, name="survivor")
                    register(Survivor, name="bad.name")
            """
        },
        {"badreg": "ads_badreg"},
    ),
    "ads-test-hook-raises": (
        {
            "ads_raises.py": """
                from agentdescent_sampling.plugin import hookimpl

                @hookimpl
                def agentdescent_register_samplers(register):
                    raise RuntimeError("hook exploded")
            """
        },
        {"raises": "ads_raises"},
    ),
    "ads-test-exits": ({"ads_exits.py": "import sys\nsys.exit(3)\n"}, {"exits": "ads_exits:X"}),
    "ads-test-unsafe": (
        {
            "ads_unsafe.py": """
                import time

                from agentdescent_sampling.plugin import check_score


                class Counter:
                    '''Counts trials without a lock, and says so.'''

                    name = "unsafe-counter"
                    thread_safe = False

                    def __init__(self):
                        self.trials = {}

                    def pick(self, keys, round_index):
                        if not keys:
                            raise ValueError("empty shard")
                        return min(keys, key=lambda key: self.trials.get(key, 0))

                    def record(self, task_id, score):
                        check_score(task_id, score)
                        seen = self.trials.get(task_id, 0)
                        time.sleep(0)
                        self.trials[task_id] = seen + 1

                    def stats(self):
                        return {key: (0, n) for key, n in self.trials.items()}
            """
        },
        {"unsafe-counter": "ads_unsafe:Counter"},
    ),
    "ads-test-nonconforming": (
        {"ads_nonconforming.py": SAMPLER.format(cls="Sloppy", name="sloppy")},
        {"sloppy": "ads_nonconforming:Sloppy"},
    ),
    "ads-test-syntax-error": ({"ads_syntax.py": "def broken(:\n"}, {"syntax": "ads_syntax:X"}),
    "ads-test-slow-import": (
        {"ads_slow.py": "import time\ntime.sleep(0.5)\n" + SAMPLER.format(cls="Slow", name="slow")},
        {"slow": "ads_slow:Slow"},
    ),
    "ads-test-not-a-factory": (
        {"ads_notfactory.py": "VALUE = 42\n"},
        {"value": "ads_notfactory:VALUE"},
    ),
}

ZOO.update(
    {
        # Look-alikes of built-in names, as entry points (one normalizes to a built-in's,
        # one is not a name at all) and as hook registrations with non-ASCII letters.
        "ads-test-lookalikes": (
            {
                "ads_lookalike.py": SAMPLER.format(cls="Lookalike", name="lookalike"),
                "ads_lookalike_hooks.py": """
                    from agentdescent_sampling.plugin import hookimpl
                    from ads_lookalike import Lookalike

                    @hookimpl
                    def agentdescent_register_samplers(register):
                        register(Lookalike, name="round-rob\\u0131n")  # dotless i
                        register(Lookalike, name="\\u212aelvin-first")  # Kelvin sign
                        register(Lookalike, name="ba\\u017fic")  # long s
                """,
            },
            {
                "Round_Robin": "ads_lookalike:Lookalike",
                "Difficulty.Weighted": "ads_lookalike:Lookalike",
                "lookalike-hooks": "ads_lookalike_hooks",
            },
        ),
        # Two unrelated distributions whose classes share the name Sampler.
        "ads-test-alpha": (
            {"ads_alpha.py": SAMPLER.format(cls="Sampler", name="alpha")},
            {"alpha": "ads_alpha:Sampler"},
        ),
        "ads-test-beta": (
            {"ads_beta.py": SAMPLER.format(cls="Sampler", name="beta")},
            {"beta": "ads_beta:Sampler"},
        ),
        # One class under two entry-point names, and a hook-form preset of it.
        "ads-test-two-names": (
            {
                "ads_lrt.py": """
                    import functools

                    from agentdescent_sampling.plugin import check_keys, check_score, hookimpl

                    class LRT:
                        name = "least-recently-tried"

                        def __init__(self, shuffle=False):
                            self.shuffle = shuffle
                            self.last = {}

                        def pick(self, keys, round_index):
                            return min(check_keys(keys), key=lambda key: self.last.get(key, -1))

                        def record(self, task_id, score):
                            check_score(task_id, score)
                            self.last[task_id] = len(self.last)

                        def __repr__(self):
                            return f"LRT(shuffle={self.shuffle})"

                    @hookimpl
                    def agentdescent_register_samplers(register):
                        register(functools.partial(LRT, shuffle=True), name="lrt-shuffled")
                """
            },
            {
                "least-recently-tried": "ads_lrt:LRT",
                "lrt": "ads_lrt:LRT",
                "lrt-presets": "ads_lrt",
            },
        ),
        # Plugin code that attacks the describing of a registration, not its running.
        "ads-test-hostile-describe": (
            {
                "ads_describe.py": """
                    import attrs

                    from agentdescent_sampling.plugin import hookimpl

                    FACTORY_CALLS = []

                    def noisy_default():
                        FACTORY_CALLS.append(1)
                        raise RuntimeError("default factory ran")

                    @attrs.define
                    class WithFactory:
                        name = "with-factory"
                        seen: list = attrs.field(factory=noisy_default)

                        def pick(self, keys, round_index):
                            return keys[0]

                        def record(self, task_id, score):
                            pass

                    class Plain:
                        name = "plain"

                        def pick(self, keys, round_index):
                            return keys[0]

                        def record(self, task_id, score):
                            pass

                    class RaisingSignature:
                        name = "raising-signature"

                        @property
                        def __signature__(self):
                            raise RuntimeError("no signature for you")

                        def __call__(self, **params):
                            return Plain()

                    class Meta(type):
                        @property
                        def name(cls):
                            raise RuntimeError("metaclass attribute")

                    class MetaRaises(metaclass=Meta):
                        def pick(self, keys, round_index):
                            return keys[0]

                        def record(self, task_id, score):
                            pass

                    class PickWithoutRound:
                        name = "pick-without-round"

                        def pick(self, keys):
                            return keys[0]

                        def record(self, task_id, score):
                            pass

                    @hookimpl
                    def agentdescent_register_samplers(register):
                        register(WithFactory)
                        register(Plain, name="bad-description", description=42)
                        register(RaisingSignature(), name="raising-signature")
                        register(MetaRaises)
                        register(Plain, name="xyz-holder", aliases="xyz")
                        register(PickWithoutRound)
                        register(Plain, name="describe-survivor")
                """
            },
            {"hostile-describe": "ads_describe"},
        ),
        # Code hidden in what a registration hands over as data, to run after its isolation
        # (each gated on it, as a plugin could): a name whose comparison exits, or whose
        # format passes for the built-in; a failed registration's name; a description whose
        # strip() is no text; a parameter name or annotation of a str subclass; a docstring
        # a metaclass computes; parameter defaults whose class compares by exiting (a
        # metaclass), claims typing's module, or is a hint or a namespace holding such.
        "ads-test-hostile-text": (
            {
                "ads_hostile_text.py": """
                    import inspect
                    import sys
                    import types
                    import typing

                    from agentdescent_sampling.loading import running_plugin
                    from agentdescent_sampling.plugin import hookimpl

                    def outside():
                        return running_plugin() is None

                    class Hashes(str):
                        def __hash__(self):
                            if outside():
                                raise SystemExit(32)
                            return str.__hash__(self)

                        def __bool__(self):
                            if outside():
                                raise SystemExit(42)
                            return True

                    class Documented(type):
                        @property
                        def __doc__(cls):
                            if outside():
                                sys.stdout.write("PRINTED-BY-REPR")
                            return "A sampler."

                    class Shown:
                        def __repr__(self):
                            if outside():
                                sys.stdout.write("PRINTED-BY-REPR")
                            return "shown"

                    class Named(type):
                        def __getattribute__(cls, name):
                            if name == "__qualname__" and outside():
                                sys.stdout.write("PRINTED-BY-REPR")
                            return type.__getattribute__(cls, name)

                    class K(metaclass=Named):
                        pass

                    class NoAliases:
                        def __iter__(self):
                            raise RuntimeError("no aliases for you")

                    class Exits(str):
                        def __lt__(self, other):
                            raise SystemExit(9)

                        __gt__ = __le__ = __ge__ = __lt__

                    class PassesForBuiltin(str):
                        def __format__(self, spec):
                            return "round-robin (agentdescent-sampling 0.1.0)"

                    class NoText(str):
                        def strip(self, *args):
                            return 10

                    class ComparesByExiting(type):
                        def __eq__(cls, other):
                            raise SystemExit(7)

                        __hash__ = type.__hash__

                    class Knob(metaclass=ComparesByExiting):
                        pass

                    class Typing:
                        def __repr__(self):
                            sys.stdout.write("PRINTED-BY-REPR")
                            return "shown"

                    Typing.__module__ = "typing"

                    class Plain:
                        def __init__(self, knob=Knob(), hint=Typing()):
                            pass

                        def pick(self, keys, round_index):
                            return keys[0]

                        def record(self, task_id, score):
                            pass

                    class Signed(Plain):
                        __signature__ = inspect.Signature(
                            [inspect.Parameter(Hashes("knob"), inspect.Parameter.KEYWORD_ONLY)]
                        )

                    class Annotated(Plain):
                        def __init__(self, knob: Hashes("int") = 0):
                            pass

                    class Docs(Plain, metaclass=Documented):
                        pass

                    class Hints(Plain):
                        def __init__(
                            self,
                            a=list[Shown()],
                            b=types.SimpleNamespace(x=Shown()),
                            c=typing.Optional[K],
                        ):
                            pass

                    @hookimpl
                    def agentdescent_register_samplers(register):
                        register(Plain, name=Exits("exits-when-sorted"))
                        register(Plain, name=PassesForBuiltin("formats-as-builtin"))
                        register(Plain, name="strips-to-no-text", description=NoText(" x "))
                        register(Plain, name=Exits("fails-named-oddly"), aliases=NoAliases())
                        register(Signed, name="hashing-parameter")
                        register(Annotated, name="truthy-annotation")
                        register(Docs, name="computed-doc")
                        register(Hints, name="hints-holding-code")
                """
            },
            {"hostile-text": "ads_hostile_text"},
        ),
        # BaseException subclasses at import and in a hook.
        "ads-test-base-exceptions": (
            {
                "ads_base_import.py": """
                    class Escape(BaseException):
                        pass

                    raise Escape("out of isolation")
                """,
                "ads_base_hook.py": """
                    from agentdescent_sampling.plugin import hookimpl

                    @hookimpl
                    def agentdescent_register_samplers(register):
                        raise GeneratorExit("closing")
                """,
            },
            {"base-import": "ads_base_import:X", "base-hook": "ads_base_hook"},
        ),
        # Text the registry reads to word a failure, raising SystemExit: an import error
        # whose __str__ does, and a class-form entry point naming an object (not callable)
        # whose __repr__ does.
        "ads-test-raising-text": (
            {
                "ads_raising_str.py": """
                    class Unprintable(Exception):
                        def __str__(self):
                            raise SystemExit("__str__ escaped")

                    raise Unprintable()
                """,
                "ads_raising_repr.py": """
                    class Unshowable:
                        def __repr__(self):
                            raise SystemExit("__repr__ escaped")

                    VALUE = Unshowable()
                """,
            },
            {"raising-str": "ads_raising_str:X", "raising-repr": "ads_raising_repr:VALUE"},
        ),
        # A factory that validates its parameters CLI-style, with sys.exit().
        "ads-test-factory-exits": (
            {
                "ads_factory_exits.py": """
                    import sys

                    class Exits:
                        name = "exits-on-bad-params"

                        def __init__(self, level=1):
                            if level > 1:
                                sys.exit(f"level must be at most 1, got {level}")

                        def pick(self, keys, round_index):
                            return keys[0]

                        def record(self, task_id, score):
                            pass
                """
            },
            {"exits-on-bad-params": "ads_factory_exits:Exits"},
        ),
        # 500 failed registrations, for the size of a typo's error message.
        "ads-test-many-failures": (
            {
                "ads_many.py": """
                    from agentdescent_sampling.plugin import hookimpl

                    @hookimpl
                    def agentdescent_register_samplers(register):
                        for n in range(500):
                            register(n, name=f"broken-{n}")
                """
            },
            {"many": "ads_many"},
        ),
        # An import that waits until the test releases it (ADS_RELEASE names a file).
        "ads-test-blocking": (
            {
                "ads_blocking.py": (
                    "import os, time\n"
                    "release = os.environ.get('ADS_RELEASE')\n"
                    "deadline = time.monotonic() + 60\n"
                    "while release and not os.path.exists(release):\n"
                    "    assert time.monotonic() < deadline, 'never released'\n"
                    "    time.sleep(0.01)\n"
                )
                + SAMPLER.format(cls="Blocking", name="blocking")
            },
            {"blocking": "ads_blocking:Blocking"},
        ),
    }
)

#: A module raising, at import, an exception of ``base`` whose ``attribute`` raises
#: SystemExit when read.
_CRAFTED = """
    class Crafted({base}):
        @property
        def {attribute}(self):
            raise SystemExit("{attribute} escaped")

    raise Crafted("crafted")
"""

#: A valid version of 67 characters, as a build from a git checkout writes one.
LONG = "1.0.0.post12+git.0123456789abcdef0123456789abcdef01234567.d20240101"

#: Distributions never installed into the zoo itself: each is pip-installed into its own
#: directory, which a test puts first on sys.path with PYTHONPATH (as a --user install or
#: PYTHONPATH would), so it changes only the processes that ask for it.
ASIDE: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    # Claims this package's own distribution name.
    "agentdescent-sampling": (
        {"ads_impostor_dist.py": SAMPLER.format(cls="Takeover", name="round-robin")},
        {"round-robin": "ads_impostor_dist:Takeover", "takeover": "ads_impostor_dist:Takeover"},
    ),
    # Raises KeyboardInterrupt on import (the user's interrupt must still propagate).
    "ads-test-interrupts": (
        {"ads_interrupts.py": "raise KeyboardInterrupt\n"},
        {"interrupts": "ads_interrupts:X"},
    ),
    # Installed, then damaged: its dist-info loses METADATA.
    "ads-test-no-metadata": (
        {"ads_nometa.py": SAMPLER.format(cls="NoMeta", name="no-meta")},
        {"no-meta": "ads_nometa:NoMeta"},
    ),
    # Exceptions whose attributes run plugin code that raises SystemExit when read: the class
    # (isinstance() reads __class__), an import error's name, an attribute error's obj, the
    # notes a traceback prints; and a hook-form module raising one. Beside them, an attrs
    # default factory whose __qualname__ raises, and a refusal whose __str__ does.
    "ads-test-crafted-errors": (
        {
            "ads_crafted_class.py": _CRAFTED.format(base="Exception", attribute="__class__"),
            "ads_crafted_name.py": _CRAFTED.format(base="ModuleNotFoundError", attribute="name"),
            "ads_crafted_obj.py": _CRAFTED.format(base="AttributeError", attribute="obj"),
            "ads_crafted_notes.py": _CRAFTED.format(base="Exception", attribute="__notes__"),
            "ads_crafted_hook.py": _CRAFTED.format(base="Exception", attribute="__class__"),
            "ads_crafted_default.py": """
                import attrs

                class Nameless:
                    def __call__(self):
                        return 0

                    def __getattr__(self, name):
                        raise SystemExit("__qualname__ escaped")

                @attrs.define
                class Sampler:
                    seen: int = attrs.field(factory=Nameless())

                    def pick(self, keys, round_index):
                        return keys[0]

                    def record(self, task_id, score):
                        pass
            """,
            "ads_crafted_refusal.py": """
                class Unsayable(ValueError):
                    def __str__(self):
                        raise SystemExit("__str__ escaped")

                class Sampler:
                    name = "crafted-refusal"

                    def __init__(self, level=1):
                        if level > 1:
                            raise Unsayable()

                    def pick(self, keys, round_index):
                        return keys[0]

                    def record(self, task_id, score):
                        pass
            """,
        },
        {
            "crafted-class": "ads_crafted_class:X",
            "crafted-name": "ads_crafted_name:X",
            "crafted-obj": "ads_crafted_obj:X",
            "crafted-notes": "ads_crafted_notes:X",
            "crafted-hooks": "ads_crafted_hook",
            "crafted-default": "ads_crafted_default:Sampler",
            "crafted-refusal": "ads_crafted_refusal:Sampler",
        },
    ),
    # Installed, then damaged: its version and an entry point name pass for a table's
    # columns, with control characters, and its version is 200,000 characters long.
    "ads-test-spoofed-text": (
        {"ads_spoofed.py": SAMPLER.format(cls="Spoofed", name="spoofed")},
        {"spoofed": "ads_spoofed:Spoofed"},
    ),
    # Installed, then given a valid PEP 440 version of 67 characters (a git hash and a date).
    "ads-test-long-version": (
        {"ads_long_version.py": SAMPLER.format(cls="LongVersion", name="long-version")},
        {"long-version": "ads_long_version:LongVersion"},
    ),
    # Installed, then damaged: its entry_points.txt no longer parses.
    "ads-test-bad-entry-points": (
        {"ads_badeps.py": SAMPLER.format(cls="BadEps", name="bad-eps")},
        {"bad-eps": "ads_badeps:BadEps"},
    ),
}

#: Well-behaved plugins only, and one name two distributions share: a venv where nothing
#: failed, for what must hold even then, and for typos of class-form names.
FEW: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "ads-test-coin": (
        {"ads_coin.py": SAMPLER.format(cls="CoinFlip", name="coin-flip")},
        {"coin-flip": "ads_coin:CoinFlip"},
    ),
    # The author's guide's shape: a class-form sampler and a hook-form preset of it.
    "ads-test-failing": (
        {
            "ads_failing.py": SAMPLER.format(cls="FailingFirst", name="failing-first"),
            "ads_failing_hooks.py": """
                import functools

                from agentdescent_sampling.plugin import hookimpl
                from ads_failing import FailingFirst

                @hookimpl
                def agentdescent_register_samplers(register):
                    explore = functools.partial(FailingFirst, offset=1)
                    register(explore, name="failing-first-explore")
            """,
        },
        {"failing-first": "ads_failing:FailingFirst", "failing-presets": "ads_failing_hooks"},
    ),
    "ads-test-dup-a": ZOO["ads-test-dup-a"],
    "ads-test-dup-b": ZOO["ads-test-dup-b"],
}

PLUGIN_MODULES = sorted(
    {
        module.removesuffix(".py")
        for modules, _ in (*ZOO.values(), *ASIDE.values(), *FEW.values())
        for module in modules
    }
)
#: The zoo's modules that hook-form entry points name (no ":attribute").
HOOK_MODULES = sorted(
    value for _, points in ZOO.values() for value in points.values() if ":" not in value
)


def _venv_with(
    root: Path, repo_wheel: Path, distributions: dict[str, tuple[dict[str, str], dict[str, str]]]
) -> Venv:
    """A venv under ``root`` with this package's wheel and ``distributions`` installed as
    wheels written by hand, each 1.2.3."""
    wheels: list[Path] = [
        write_wheel(root / "wheels", name, modules, entry_points, version="1.2.3")
        for name, (modules, entry_points) in distributions.items()
    ]
    return Venv.create(root / "venv", repo_wheel, *wheels)


@pytest.fixture(scope="session")
def zoo(tmp_path_factory: pytest.TempPathFactory, repo_wheel: Path) -> Venv:
    """A venv with this package and every distribution in :data:`ZOO` installed."""
    return _venv_with(tmp_path_factory.mktemp("zoo"), repo_wheel, ZOO)


@pytest.fixture(scope="session")
def few(tmp_path_factory: pytest.TempPathFactory, repo_wheel: Path) -> Venv:
    """A venv with this package and every distribution in :data:`FEW` installed."""
    return _venv_with(tmp_path_factory.mktemp("few"), repo_wheel, FEW)


@pytest.fixture(scope="session")
def aside(zoo: Venv, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each :data:`ASIDE` distribution pip-installed into a directory of its own, by name.

    Then ``ads-test-no-metadata`` loses its METADATA, ``ads-test-spoofed-text`` gets a
    version and an entry point spaced like ``list``'s columns, ``ads-test-long-version`` the
    version :data:`LONG`, and the entry_points.txt of
    ``ads-test-bad-entry-points`` is garbled.
    """
    root = tmp_path_factory.mktemp("aside")
    paths = {}
    for name, (modules, entry_points) in ASIDE.items():
        wheel = write_wheel(root / "wheels", name, modules, entry_points, version="9.9.9")
        target = root / "site" / name
        zoo.pip("install", "--no-deps", "--target", str(target), str(wheel))
        paths[name] = str(target)

    def dist_info(name: str) -> Path:
        (found,) = Path(paths[name]).glob("*.dist-info")
        return found

    def give_version(name: str, version: str) -> None:
        metadata = dist_info(name) / "METADATA"
        metadata.write_text(metadata.read_text().replace("Version: 9.9.9", f"Version: {version}"))

    (dist_info("ads-test-no-metadata") / "METADATA").unlink()
    spoofed = "9.9.9    ok      \x1b]0;PWNED\x07\x1b[2J" + "A" * 200_000
    give_version("ads-test-spoofed-text", spoofed)
    (dist_info("ads-test-spoofed-text") / "entry_points.txt").write_text(
        "[agentdescent.samplers]\nround-robin   agentdescent-sampling  0.1.0  ok  Cycle = "
        "ads_spoofed:Spoofed\nspoofed = ads_spoofed:Spoofed [\x1b[31mred]\n"
    )
    give_version("ads-test-long-version", LONG)
    (dist_info("ads-test-bad-entry-points") / "entry_points.txt").write_text(
        "[agentdescent.samplers]\nbad-eps\n[[[\n"
    )
    return paths
