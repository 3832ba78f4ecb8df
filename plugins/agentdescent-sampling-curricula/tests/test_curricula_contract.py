"""What every rule of the pack promises: the kit's contract, registration, seeds, resuming."""

from __future__ import annotations

import json
import random
import re
import warnings
from pathlib import Path
from typing import Any

import attrs
import pytest
from agentdescent_sampling_curricula import (
    AbsoluteLearningProgress,
    DynamicFiltering,
    FailureAware,
    Learnability,
    ModelPredictivePromptSelection,
    PrioritizedLevelReplay,
    SamplingForLearnability,
    Speed,
    TeacherStudentCurriculum,
)

from agentdescent_sampling import (
    SOLVED,
    SamplerInfo,
    StateError,
    available,
    create,
    load_state,
    save_state,
)
from agentdescent_sampling.testing import ConformanceNote

# Small settings where a default would leave a short run looking uniform, so the
# round trip crosses refreshes, refits, screenings and skips.
RULES: dict[str, dict[str, Any]] = {
    "plr": {},
    "sfl": {"refresh": 7, "buffer_size": 3},
    "mopps": {},
    "tscl": {},
    "learning-progress": {"fit_rate": 9},
    "speed": {"screen": 2, "continuation": 3},
    "dapo-filter": {"group": 2},
    "learnability": {},
    "failure-aware": {},
}
FACTORIES = {
    "plr": PrioritizedLevelReplay,
    "sfl": SamplingForLearnability,
    "mopps": ModelPredictivePromptSelection,
    "tscl": TeacherStudentCurriculum,
    "learning-progress": AbsoluteLearningProgress,
    "speed": Speed,
    "dapo-filter": DynamicFiltering,
    "learnability": Learnability,
    "failure-aware": FailureAware,
}
TASKS = [f"t{i:02d}" for i in range(24)]
SHARDS = [TASKS[0::2], TASKS[1::2], TASKS[:9]]


def run(sampler: Any, steps: range, outcomes: random.Random) -> list[str]:
    """Pick and record on rotating shards; tasks t00-t05 pass half the time."""
    picks = []
    for step in steps:
        picked = sampler.pick(SHARDS[step % len(SHARDS)], step)
        picks.append(picked)
        chance = 0.5 if picked < "t06" else (1.0 if picked < "t15" else 0.0)
        sampler.record(picked, float(outcomes.random() < chance))
    return picks


@pytest.mark.parametrize("name", RULES)
def test_conforms_to_the_sampler_contract_with_no_note(sampler_conformance, name: str) -> None:  # type: ignore[no-untyped-def]
    # A note is what the kit could not observe (lost records, without stats()): none.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConformanceNote)
        sampler_conformance(FACTORIES[name], seed=3)


@pytest.mark.parametrize("name", RULES)
def test_stats_count_every_record_and_its_pass_and_survive_save_and_load(
    name: str, tmp_path: Path
) -> None:
    sampler = create({"name": name, "pass_threshold": 0.8, **RULES[name]})
    expected: dict[str, tuple[int, int]] = {}
    for step in range(60):
        picked = sampler.pick(SHARDS[step % len(SHARDS)], step)
        score = (step % 5) / 4  # 0, 0.25, 0.5, 0.75, 1: a pass at 1 only
        sampler.record(picked, score)
        passes, trials = expected.get(picked, (0, 0))
        expected[picked] = (passes + (score >= 0.8), trials + 1)

    assert sampler.stats() == expected
    save_state(sampler, tmp_path / "state.json")
    resumed = create({"name": name, "pass_threshold": 0.8, **RULES[name]})
    load_state(resumed, tmp_path / "state.json")
    assert resumed.stats() == expected


def test_pip_install_registers_all_nine_with_their_citations() -> None:
    pack = {
        info.name: info
        for info in available()
        if isinstance(info, SamplerInfo) and info.distribution == "agentdescent-sampling-curricula"
    }
    assert sorted(pack) == sorted(RULES)
    for info in pack.values():
        # A paper's arXiv number, or the pull request that shipped the optimizer's rule.
        assert "arXiv:" in info.description or " PR #" in info.description, info.name
        assert info.status == "ok"


@pytest.mark.parametrize("name", RULES)
def test_a_resumed_run_picks_exactly_as_an_uninterrupted_one(name: str, tmp_path: Path) -> None:
    whole = create({"name": name, "seed": 5, **RULES[name]})
    expected = run(whole, range(300), random.Random(1))

    outcomes = random.Random(1)
    first = create({"name": name, "seed": 5, **RULES[name]})
    before = run(first, range(170), outcomes)
    save_state(first, tmp_path / "state.json")
    resumed = create({"name": name, "seed": 5, **RULES[name]})
    load_state(resumed, tmp_path / "state.json")
    after = run(resumed, range(170, 300), outcomes)

    assert before + after == expected


@pytest.mark.parametrize("name", RULES)
def test_a_run_restored_at_any_point_picks_as_an_uninterrupted_one(name: str) -> None:
    # Restored at random points, on overlapping shards, with nothing in flight at a restore
    # (a pick in flight is not saved): what a shard is rebuilt from must decide the picks,
    # not the order in which its tasks' statistics changed.
    for seed in range(30):
        draws = random.Random(seed)
        tasks = [f"t{i:02d}" for i in range(draws.randint(2, 14))]
        shards = [tasks, tasks[::2], tasks[1::2] or tasks, tasks[: len(tasks) // 2 + 1]]
        rates = {task: draws.choice([0.0, 0.3, 0.7, 1.0]) for task in tasks}
        whole = create({"name": name, "seed": seed, **RULES[name]})
        resumed = create({"name": name, "seed": seed, **RULES[name]})
        for step in range(60):
            if draws.random() < 0.1:
                state = json.loads(json.dumps(resumed.state_dict()))
                resumed = create({"name": name, "seed": seed, **RULES[name]})
                resumed.load_state_dict(state)
            keys = draws.choice(shards)
            picked = whole.pick(keys, step)
            assert resumed.pick(keys, step) == picked, (seed, step)
            score = float(draws.random() < rates[picked]) if step % 3 else draws.random()
            whole.record(picked, score)
            resumed.record(picked, score)


@pytest.mark.parametrize("name", RULES)
def test_a_task_id_with_a_lone_surrogate_is_picked_and_survives_save_and_load(
    name: str, tmp_path: Path
) -> None:
    undecodable = "task-\udcff"  # a valid str, as os.fsdecode(b"task-\xff") gives on POSIX
    keys = [undecodable, "b", "c"]
    sampler = create({"name": name, **RULES[name]})
    picks = []
    for step in range(12):
        picks.append(sampler.pick(keys, step))
        sampler.record(picks[-1], float(step % 2))
    assert undecodable in picks
    save_state(sampler, tmp_path / "state.json")
    resumed = create({"name": name, **RULES[name]})
    load_state(resumed, tmp_path / "state.json")
    assert resumed.state_dict() == sampler.state_dict()
    assert [resumed.pick(keys, 12 + i) for i in range(6)] == [
        sampler.pick(keys, 12 + i) for i in range(6)
    ]


@pytest.mark.parametrize("name", RULES)
@pytest.mark.parametrize(
    ("keys", "shown"),
    [
        ([1, 2, 3], "int 1"),
        ([["x"]], r"list \['x'\]"),
        (["t00", b"t01"], "bytes b't01'"),
        (["t00", None], "NoneType None"),
    ],
)
def test_a_shard_with_a_task_id_that_is_no_string_is_refused_and_changes_nothing(
    name: str, keys: list[Any], shown: str
) -> None:
    sampler = create({"name": name, **RULES[name]})
    twin = create({"name": name, **RULES[name]})
    run(sampler, range(30), random.Random(4))
    run(twin, range(30), random.Random(4))
    before = sampler.state_dict()
    with pytest.raises(TypeError, match=f"task ids as strings, got {shown}"):
        sampler.pick(keys, 30)
    assert sampler.state_dict() == before
    later = range(30, 60)
    assert run(sampler, later, random.Random(5)) == run(twin, later, random.Random(5))


@pytest.mark.parametrize("name", RULES)
def test_a_bad_state_is_refused_and_changes_nothing(name: str) -> None:
    sampler = create({"name": name, **RULES[name]})
    run(sampler, range(40), random.Random(2))
    good = sampler.state_dict()
    json.dumps(good)  # JSON-ready
    for field in set(good) - {"sampler", "version", "params"}:
        broken = {**good, field: "garbage"}
        with pytest.raises(StateError):
            sampler.load_state_dict(broken)
    with pytest.raises(StateError, match="belongs to sampler 'round-robin'"):
        sampler.load_state_dict(create("round-robin").state_dict())
    assert sampler.state_dict() == good


@pytest.mark.parametrize(
    "name", ["dapo-filter", "speed", "mopps", "tscl", "learning-progress", "sfl"]
)
def test_a_state_with_more_passes_than_trials_is_refused_naming_the_task(name: str) -> None:
    sampler = create({"name": name, **RULES[name]})
    run(sampler, range(40), random.Random(2))
    good = sampler.state_dict()
    task = next(iter(good["stats"]))
    broken = {**good, "stats": {**good["stats"], task: [3, 1]}}
    told = f"bad statistics for task {task!r}: [3, 1]; expected [passes, trials] with 0 <= passes"
    with pytest.raises(StateError, match=re.escape(told)):
        sampler.load_state_dict(broken)
    assert sampler.state_dict() == good


def test_a_speed_state_with_an_impossible_screening_is_refused() -> None:
    sampler = create({"name": "speed", **RULES["speed"]})
    run(sampler, range(5), random.Random(2))
    good = sampler.state_dict()
    task, assigned, outcomes, _, last = good["screening"][0]
    for broken in (
        {**good, "screening": [[task, assigned, outcomes, outcomes + 1, last]]},  # passes over
        {**good, "screening": [[task, assigned, 2, 0, last]]},  # a screening of 2 ends at 2
        {**good, "continuing": [[task, 0, 0, 0, last]]},  # screening and continuing at once
    ):
        with pytest.raises(StateError, match=r"speed: (screening row|tasks \[)"):
            sampler.load_state_dict(broken)
        assert sampler.state_dict() == good


@pytest.mark.parametrize("name", RULES)
def test_other_seeds_pick_differently(name: str) -> None:
    runs = [run(create({"name": name, "seed": s, **RULES[name]}), range(60), random.Random(0))
            for s in (0, 1)]  # fmt: skip
    assert runs[0] != runs[1]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("plr:temperature=0", r"temperature=0\): expected a finite number > 0"),
        ("sfl:buffer_size=0", r"buffer_size=0\): expected a whole number from 1 to 1,000,000"),
        ("speed:screen=1", r"screen=1\): expected a whole number from 2 to 1,000,000"),
        ("tscl:seed='1'", r"seed='1'\): expected a whole number from 0"),
    ],
)
def test_bad_parameters_say_what_was_expected(spec: str, message: str) -> None:
    with pytest.raises(Exception, match=message):  # InvalidSamplerConfig or TypeError
        create(spec)


OUT_OF_RANGE = [
    (name, field.name)
    for name, rule in FACTORIES.items()
    for field in attrs.fields(rule)
    if field.init and field.name != "seed"
]


@pytest.mark.parametrize(("name", "parameter"), OUT_OF_RANGE)
def test_every_out_of_range_parameter_is_told_a_value_to_try(name: str, parameter: str) -> None:
    hint = rf"{parameter}=-5\): expected .*; (try|the paper|the engine)"
    with pytest.raises(Exception, match=hint):  # InvalidSamplerConfig
        create({"name": name, parameter: -5})


THRESHOLDED = [
    name for name, rule in FACTORIES.items() if "pass_threshold" in attrs.fields_dict(rule)
]


@pytest.mark.parametrize("name", THRESHOLDED)
def test_pass_threshold_none_is_the_engines_default_as_for_the_built_ins(name: str) -> None:
    assert create({"name": name, "pass_threshold": None}).pass_threshold == SOLVED
