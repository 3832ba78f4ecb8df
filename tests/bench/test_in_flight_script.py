"""benchmarks/in_flight.py: its idealized learner and its rows measure what they claim."""

from __future__ import annotations

from types import ModuleType

import pytest

from agentdescent_sampling.bench import WORKLOADS, is_informative

SCRIPT = "in_flight"


@pytest.fixture(scope="module")
def in_flight(benchmark_script: ModuleType) -> ModuleType:
    return benchmark_script


@pytest.fixture(scope="module")
def rows(in_flight: ModuleType) -> dict[str, tuple[str, ...]]:
    header, *body = in_flight.table(range(3))
    return {row[0]: dict(zip(header, row, strict=True)) for row in body}


def test_with_one_rollout_in_flight_spreading_changes_nothing(rows: dict) -> None:
    # Nothing is in flight at any pick, so each pair must pick, and score, the same.
    for spreads, doubles in [
        ("one-look learner, spreads", "one-look learner, doubles up"),
        ("informative-band", "informative-band, pending ignored"),
    ]:
        assert rows[spreads]["shared, 1 in flight"] == rows[doubles]["shared, 1 in flight"]


def test_only_the_rows_that_double_up_pick_tasks_in_flight(rows: dict) -> None:
    spreading = {"informative-band", "difficulty-weighted:spread_in_flight=true"}
    for label, row in rows.items():
        spreads = label in spreading or label.endswith(", spreads")
        assert (row["dup, shared 4"] == "0.0%") == spreads, label


def test_the_idealized_learner_recognises_a_task_after_its_looks(in_flight: ModuleType) -> None:
    scenario = WORKLOADS["stationary"].build(0)
    keys = list(scenario.keys)
    informative = next(k for k in keys[1:] if is_informative(scenario.true_p(k, 0)))
    learner = in_flight.IdealizedLearner(scenario, looks=2)
    assert learner.pick(keys, 0) == keys[0]
    learner.record(keys[0], 0.0)  # one look: not recognised yet
    for _ in range(2):
        learner.in_flight[informative] += 1
        learner.record(informative, 0.0)
    assert learner.pick(keys, 1) == informative
    # It is in flight now, so a spreading learner goes on with the task it has seen once.
    assert learner.pick(keys, 1) == keys[0]


def test_the_script_prints_a_row_per_entrant(
    in_flight: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    in_flight.main(["--seeds", "2"])
    out = capsys.readouterr().out
    for label in in_flight.ENTRANTS:
        assert label in out
