"""The documented calls type-check under ``mypy --strict`` as a user writes them (``mypy``
checks this file too: see ``[tool.mypy]`` in pyproject.toml), and run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from agentdescent_sampling import DurableSampler, create, load_state, save_state, spec_from_file
from agentdescent_sampling.plugin import synchronized

REPO = Path(__file__).resolve().parents[1]


def test_the_documented_calls_type_check_and_run(tmp_path: Path) -> None:
    sampler = create("difficulty-weighted")
    sampler.record(sampler.pick(["a", "b"], 0), 1.0)
    save_state(sampler, tmp_path / "sampler.json")
    restored = create("difficulty-weighted")
    load_state(restored, tmp_path / "sampler.json")
    assert restored.state_dict() == sampler.state_dict()

    with DurableSampler(create("round-robin"), tmp_path / "state.sqlite") as durable:
        durable.record(durable.pick(["a"], 0), 0.0)
    assert synchronized(create("round-robin")).pick(["a"], 0) == "a"

    config = tmp_path / "run.toml"
    config.write_text('[task_sampler]\nname = "fixable-first"\n', encoding="utf-8")
    assert create(spec_from_file(config)).name == "fixable-first"


def _mypy(tmp_path: Path, source: str) -> str:
    """What ``mypy --strict`` says of ``source``, a user's module importing this package as
    the repository holds it."""
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent(source), encoding="utf-8")
    cache = str(tmp_path / ".mypy_cache")
    # MYPYPATH: this checkout, whatever kind of install (an editable one) the environment has.
    environ = {**os.environ, "MYPYPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache, str(user)],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
    )
    return result.stdout + result.stderr


def test_a_misspelt_name_imported_from_the_package_is_a_type_error(tmp_path: Path) -> None:
    said = _mypy(
        tmp_path,
        """
        import agentdescent_sampling
        from agentdescent_sampling import crate

        agentdescent_sampling.availabel()
        """,
    )
    assert 'Module "agentdescent_sampling" has no attribute "crate"' in said, said
    assert 'Module has no attribute "availabel"' in said, said


def test_the_version_is_typed_as_a_string(tmp_path: Path) -> None:
    said = _mypy(
        tmp_path,
        """
        from agentdescent_sampling import __version__

        reveal_type(__version__)
        """,
    )
    assert re.search(r'Revealed type is "(builtins\.)?str"', said), said


def test_a_validator_is_typed_as_an_attrs_validator(tmp_path: Path) -> None:
    said = _mypy(
        tmp_path,
        """
        from agentdescent_sampling.validators import (
            boolean,
            number_in,
            seed_number,
            solved_threshold,
            whole_number_in,
        )

        for validator in (
            number_in(0.0, 1.0),
            solved_threshold(),
            whole_number_in(0, 9),
            seed_number(),
            boolean(),
        ):
            reveal_type(validator)
        number_in(0.0, 1.0)(1.5)
        """,
    )
    assert 'Revealed type is "Any"' not in said, said
    assert "Too few arguments" in said, said


def test_a_durable_samplers_wrapped_sampler_has_its_state_methods_and_wire_takes_a_sampler(
    tmp_path: Path,
) -> None:
    # configuration.md tells a user to copy durable.wrapped, typed TaskSampler, which has no
    # state_dict(); wire() took Any, so wire(42) passed until it ran (helper-110).
    said = _mypy(
        tmp_path,
        """
        import copy

        from agentdescent_sampling import DurableSampler, create, wire

        durable = DurableSampler(create("fixable-first"), "state.sqlite")
        copy.deepcopy(durable.wrapped).state_dict()
        wire(durable)
        wire(42)
        """,
    )
    # The package's own modules, read through MYPYPATH as a user's, say what they import
    # untyped (the engine, PyYAML); an installed package's are not reported to its user.
    mine = [line for line in said.splitlines() if line.startswith("user.py:")]
    assert mine == [
        'user.py:9: error: Argument 1 to "wire" has incompatible type "int"; expected '
        '"TaskSampler"  [arg-type]'
    ], said
