"""Workloads: the doc's shapes, seeded, with informativeness a property of the true p."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdescent_sampling import SOLVED
from agentdescent_sampling.bench import WORKLOADS, Drift, Stationary, is_informative, read_log
from agentdescent_sampling.bench import workloads as bench_workloads
from agentdescent_sampling.errors import BenchError


def _pass_rates(seed: int, name: str = "stationary") -> list[float]:
    scenario = WORKLOADS[name].build(seed)
    return [scenario.true_p(key, 0.0) for key in scenario.keys]


def test_stationary_has_6_mixed_17_always_passing_and_17_never_passing_tasks() -> None:
    rates = _pass_rates(seed=3)
    assert len(rates) == 40
    counts = Counter("never" if p == 0.0 else "always" if p == 1.0 else "mixed" for p in rates)
    assert counts == {"mixed": 6, "always": 17, "never": 17}
    assert all(0.2 <= p <= 0.8 for p in rates if 0.0 < p < 1.0)
    assert sum(map(is_informative, rates)) == 6


def test_the_same_seed_builds_the_same_workload_and_another_seed_a_different_one() -> None:
    assert _pass_rates(seed=5) == _pass_rates(seed=5)
    assert _pass_rates(seed=5) != _pass_rates(seed=6)


def test_where_informative_tasks_sit_in_the_shard_changes_with_the_seed() -> None:
    positions = {
        tuple(index for index, p in enumerate(_pass_rates(seed)) if is_informative(p))
        for seed in range(10)
    }
    assert len(positions) == 10


def test_noise_flips_observed_rewards_but_leaves_the_true_p_alone() -> None:
    scenario = WORKLOADS["noisy"].build(0)
    always = next(key for key in scenario.keys if scenario.true_p(key, 0.0) == 1.0)
    rng = random.Random(0)
    scores = [scenario.rollout(always, 0.0, rng) for _ in range(4000)]
    assert set(scores) == {0.0, 1.0}
    assert scores.count(0.0) / len(scores) == pytest.approx(0.15, abs=0.02)
    assert scenario.true_p(always, 0.5) == 1.0


def test_drift_moves_tasks_from_failing_through_the_band_to_passing() -> None:
    scenario = Drift(n_tasks=40).build(1)
    for key in scenario.keys:
        trajectory = [scenario.true_p(key, step / 100) for step in range(100)]
        assert trajectory == sorted(trajectory)
    start = [scenario.true_p(key, 0.0) for key in scenario.keys]
    end = [scenario.true_p(key, 0.99) for key in scenario.keys]
    assert sum(p < 0.1 for p in start) > 30
    assert sum(p > 0.9 for p in end) > 30


def test_drift_informative_share_changes_over_the_run() -> None:
    scenario = Drift().build(2)
    band = [
        sum(is_informative(scenario.true_p(key, progress)) for key in scenario.keys)
        for progress in (0.0, 0.5, 0.99)
    ]
    assert len(set(band)) > 1


def test_large_has_ten_thousand_tasks_of_which_two_percent_are_informative() -> None:
    rates = _pass_rates(seed=0, name="large")
    assert len(rates) == 10_000
    assert sum(map(is_informative, rates)) == 200


def test_with_tasks_keeps_the_informative_fraction() -> None:
    resized = Stationary().with_tasks(400)
    assert (resized.n_tasks, resized.n_informative) == (400, 60)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_tasks": 0}, "n_tasks=0"),
        ({"n_informative": 41}, "n_informative=41"),
        ({"noise": 1.5}, "noise=1.5"),
    ],
)
def test_bad_workload_parameters_are_rejected_naming_the_value(
    kwargs: dict[str, float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Stationary(**kwargs)  # type: ignore[arg-type]


def _write_log(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "rollouts.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    return path


def test_a_log_becomes_per_task_pass_rates_at_its_own_threshold(tmp_path: Path) -> None:
    log = _write_log(
        tmp_path,
        {"task_id": "a", "score": 0.9, "round": 0, "pass_threshold": 0.8},
        {"task_id": "b", "score": 0.1, "round": 0, "pass_threshold": 0.8},
        "",
        {"task_id": "a", "score": 0.85, "round": 1, "pass_threshold": 0.8, "extra": "ignored"},
        {"task_id": "b", "score": 0.3, "round": 1, "pass_threshold": 0.8},
    )
    workload = read_log(log)
    assert workload.pass_threshold == 0.8
    scenario = workload.build(0)
    assert sorted(scenario.keys) == ["a", "b"]
    assert (scenario.true_p("a", 0.0), scenario.true_p("b", 0.0)) == (1.0, 0.0)
    assert scenario.rollout("a", 0.0, random.Random(0)) in (0.9, 0.85)


def test_a_log_without_rounds_reads_as_one_with_them(tmp_path: Path) -> None:
    # Rounds are pooled, so a log that never wrote them (most do not) needs none.
    lines = [{"task_id": task, "score": score} for task, score in [("a", 1.0), ("b", 0.0)] * 3]
    rounds = [{**line, "round": index} for index, line in enumerate(lines)]
    without, given = read_log(_write_log(tmp_path, *lines)), read_log(_write_log(tmp_path, *rounds))
    assert without == given


def test_a_log_without_a_threshold_uses_the_engines_solved(tmp_path: Path) -> None:
    log = _write_log(tmp_path, {"task_id": "a", "score": 1.0, "round": 0})
    assert read_log(log).pass_threshold == SOLVED


def test_resampling_a_log_varies_a_mixed_tasks_pass_rate_between_seeds(tmp_path: Path) -> None:
    lines = [{"task_id": "m", "score": float(index % 2), "round": index} for index in range(6)]
    workload = read_log(_write_log(tmp_path, *lines))
    assert len({workload.build(seed).true_p("m", 0.0) for seed in range(20)}) > 1


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 1 is not JSON"),
        ("[1, 2]", "line 1 is \\[1, 2\\], not a JSON object"),
        ({"score": 1.0, "round": 0}, "line 1 has no 'task_id' key; each line needs both"),
        ({"task_id": "", "score": 1.0, "round": 0}, "'task_id' must be a non-empty string"),
        ({"task_id": "a"}, "line 1 has no 'score' key"),
        ({"task_id": "a", "score": 1.5, "round": 0}, "'score' must be a number in \\[0, 1\\]"),
        (
            {"task_id": "a", "score": True, "round": 0},
            "'score' must be a number in \\[0, 1\\], got "
            "True; write a pass as 1.0 and a failure as 0.0",
        ),
        (
            {"task_id": 7, "score": 1.0, "round": 0},
            "'task_id' must be a non-empty string, got 7 \\(quote it: \"7\"\\)",
        ),
        ({"task_id": "a", "score": 1.0, "round": -1}, "'round' must be a whole number"),
        ({"task_id": "a", "score": None, "round": 0}, "'score' must be a number"),
        (
            {"task_id": "a", "score": 1.0, "round": 0, "pass_threshold": 0},
            "'pass_threshold' must be a number in \\(0, 1\\]",
        ),
    ],
)
def test_a_malformed_log_line_is_reported_with_file_and_line(
    tmp_path: Path, line: object, message: str
) -> None:
    with pytest.raises(
        BenchError, match=f"rollouts.jsonl {message}|rollouts.jsonl line 1: {message}"
    ):
        read_log(_write_log(tmp_path, line))


def test_log_lines_that_disagree_on_the_threshold_are_refused(tmp_path: Path) -> None:
    log = _write_log(
        tmp_path,
        {"task_id": "a", "score": 1.0, "round": 0, "pass_threshold": 0.8},
        {"task_id": "a", "score": 1.0, "round": 1, "pass_threshold": 0.9},
    )
    expected = re.escape("disagree on pass_threshold: 0.8 (line 1), 0.9 (line 2)")
    with pytest.raises(BenchError, match=expected):
        read_log(log)


def test_an_empty_or_missing_log_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BenchError, match="has no rollouts"):
        read_log(_write_log(tmp_path, ""))
    with pytest.raises(BenchError, match="cannot read the rollout log"):
        read_log(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda path: path.mkdir(), "it is a directory; give the path of the log file in it;"),
        (lambda path: _write_log(path.mkdir() or path, {"task_id": "a", "score": 1, "round": 0}),
         "it is a directory; give the path of the log file in it, such as '{path}/rollouts.jsonl'"),
        (lambda path: None, "there is no such file; check the path;"),
    ],
    ids=["an-empty-directory", "a-directory-holding-a-log", "missing"],
)  # fmt: skip
def test_a_log_that_cannot_be_opened_is_named_by_the_path_given_with_what_to_try(
    tmp_path: Path, make: Callable[[Path], object], reason: str
) -> None:
    path = tmp_path / "logs"
    make(path)
    given = f"{path}/."  # named as given, not as Path() tidies it

    with pytest.raises(BenchError) as caught:
        read_log(given)

    message = str(caught.value)
    assert message.startswith(f"cannot read the rollout log '{given}': ")
    assert reason.format(path=path) in message
    assert "Errno" not in message


def test_a_log_of_more_tasks_than_the_bench_can_pick_among_is_refused_at_the_first_too_many(
    tmp_path: Path,
) -> None:
    # A 42 MB log of a million tasks, well under the 1 GiB a log may take, ran for hours:
    # every pick of the oracle looks at every task.
    log = tmp_path / "rollouts.jsonl"
    log.write_text("".join(f'{{"task_id":"t{i}","score":1,"round":0}}\n' for i in range(100_002)))

    with pytest.raises(BenchError) as caught:
        read_log(log)

    assert str(caught.value).startswith(
        "rollouts.jsonl line 100001: the log names more than 100,000 tasks"
    )
    assert "give it the lines of a sample of at most 100,000 tasks" in str(caught.value)


def test_a_log_of_more_rollouts_than_the_bench_resamples_is_refused_with_how_to_cut_it(
    tmp_path: Path,
) -> None:
    # 1 GiB of rollouts took minutes to read and each seed nearly half a minute to resample.
    log = tmp_path / "rollouts.jsonl"
    log.write_bytes(b'{"task_id":"a","score":1,"round":0}\n' * 1_000_001)

    with pytest.raises(BenchError) as caught:
        read_log(log)

    assert str(caught.value).startswith(
        "rollouts.jsonl line 1000001: the log holds more than 1,000,000 rollouts"
    )
    assert f"tail -n 1000000 {log} > sample.jsonl" in str(caught.value)


def test_a_log_of_more_lines_than_rollouts_allow_is_refused_though_they_are_blank(
    tmp_path: Path,
) -> None:
    # Blank lines counted no rollout: 256 MiB of them took a minute to read.
    log = tmp_path / "rollouts.jsonl"
    log.write_bytes(b"\n" * 2_000_001 + b'{"task_id":"a","score":1,"round":0}\n')

    with pytest.raises(BenchError) as caught:
        read_log(log)

    assert str(caught.value).startswith(
        "rollouts.jsonl has more than 2,000,000 lines, and a rollout log holds one rollout a "
        "line, 1,000,000 at most"
    )


def test_a_log_line_that_is_not_utf8_is_named_by_its_number_with_how_to_convert_it(
    tmp_path: Path,
) -> None:
    log = tmp_path / "rollouts.jsonl"
    rollout = b'{"task_id": "%s", "score": 1, "round": 0}\n'
    log.write_bytes(rollout % b"a" + rollout % b"b" + rollout % "café".encode("latin-1"))

    with pytest.raises(BenchError) as caught:
        read_log(log)

    assert str(caught.value).startswith(
        "rollouts.jsonl line 3 is not UTF-8 text: byte 17 of the line is b'\\xe9'; "
        "a rollout log is UTF-8"
    )
    assert "iconv -f LATIN1 -t UTF-8" in str(caught.value)


def test_only_a_last_log_line_cut_short_is_skipped_and_the_label_says_so(tmp_path: Path) -> None:
    rollouts = [
        json.dumps({"task_id": t, "score": s, "round": 0}) for t, s in [("a", 1.0), ("b", 0.0)]
    ]
    log = tmp_path / "rollouts.jsonl"
    # A run stopped mid-write: the last line is half a rollout, with no newline; one cut
    # inside a character (b'\xc3' begins 'é') is skipped alike.
    for torn in (b'{"task_id": "c", "sco', b'{"task_id": "\xc3'):
        log.write_bytes("".join(f"{line}\n" for line in rollouts).encode() + torn)

        workload = read_log(log)

        assert sorted(workload.scores) == ["a", "b"]
        assert workload.label == "from-log rollouts.jsonl (line 3, the last, cut short and skipped)"
    # Anything else that is not JSON is refused: in the middle, or a last line not begun as
    # a rollout.
    log.write_text(f'{rollouts[0]}\n{{"task_id": "c", "sco\n{rollouts[1]}\n')
    with pytest.raises(BenchError, match=r"rollouts\.jsonl line 2 is not JSON"):
        read_log(log)
    log.write_text(f"{rollouts[0]}\nnot a rollout")
    with pytest.raises(BenchError, match=r"rollouts\.jsonl line 2 is not JSON"):
        read_log(log)
    log.write_text('{"task_id": "c", "sco')
    with pytest.raises(
        BenchError, match=r"has no rollouts \(line 1, the last, cut short, as a run"
    ):
        read_log(log)


def test_the_example_log_is_a_graded_run_with_some_informative_tasks(example_log: Path) -> None:
    workload = read_log(example_log)
    assert workload.pass_threshold == 0.8
    scenario = workload.build(0)
    informative = sum(is_informative(scenario.true_p(key, 0.0)) for key in scenario.keys)
    assert len(scenario.keys) == 40
    assert 0 < informative < 20


def test_a_log_it_may_not_read_is_a_bench_error_even_where_looking_at_it_is_refused_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # As under a directory it may not enter: opening the log and asking what it is both fail.
    monkeypatch.setattr(bench_workloads, "open_regular", refused)
    monkeypatch.setattr(Path, "is_dir", refused)
    with pytest.raises(BenchError, match="permission denied; check that you may read it"):
        read_log(tmp_path / "locked" / "rollouts.jsonl")
