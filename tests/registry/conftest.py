"""One venv per session with this package and a zoo of real plugin distributions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.venv import REPO, Venv, write_distribution

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
from agentdescent_sampling import hookimpl

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
                from agentdescent_sampling import hookimpl
                from ads_impostor import Impostor

                @hookimpl
                def agentdescent_register_samplers(register):
                    register(Impostor, name="difficulty-weighted")
            """,
        },
        {"round-robin": "ads_impostor:Impostor", "impostor-hooks": "ads_impostor_hooks"},
    ),
    "ads-test-misspelt": (
        {
            "ads_misspelt.py": """
                from agentdescent_sampling import hookimpl

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
                from agentdescent_sampling import hookimpl

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
                from agentdescent_sampling import hookimpl

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

                from agentdescent_sampling import check_score


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

PLUGIN_MODULES = sorted(
    module.removesuffix(".py") for modules, _ in ZOO.values() for module in modules
)


@pytest.fixture(scope="session")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A venv with this package and every distribution in :data:`ZOO` installed."""
    root = tmp_path_factory.mktemp("zoo")
    projects: list[Path] = [
        write_distribution(root / "src", name, modules, entry_points, version="1.2.3")
        for name, (modules, entry_points) in ZOO.items()
    ]
    return Venv.create(root / "venv", REPO, *projects)
