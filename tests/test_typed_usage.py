"""The documented calls type-check under ``mypy --strict`` as a user writes them (``mypy``
checks this file too: see ``[tool.mypy]`` in pyproject.toml), and run."""

from __future__ import annotations

from pathlib import Path

from agentdescent_sampling import (
    DurableSampler,
    create,
    load_state,
    save_state,
    spec_from_file,
    synchronized,
)


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
