"""Our samplers inside the real ``agentdescent.evolve()``, selected through ``create()``.

Every run uses the deterministic workload from ``conftest.py``: the engine, the
aggregator and the git-backed ledger are real; only the agent and the reward are
plain Python.
"""

from __future__ import annotations

import inspect
import threading
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from agentdescent_sampling import (
    SOLVED,
    SamplerInfo,
    TaskSampler,
    available,
    create,
)

agentdescent = pytest.importorskip(
    "agentdescent",
    reason="needs the agentdescent engine: python -m pip install agentdescent==0.7.0",
)

if TYPE_CHECKING:
    from tests.engine.conftest import ToyWorkload

#: Each built-in sampler in the three forms a config can select it with: its name, a
#: string with parameters, and a mapping as read from a TOML table.
BUILT_IN_SPECS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "round-robin": ("round-robin", "round-robin", {"name": "round-robin"}),
    "difficulty-weighted": (
        "difficulty-weighted",
        "difficulty-weighted:c=0.1,prior=0.6",
        {"name": "difficulty-weighted", "c": 0.4, "pass_threshold": SOLVED},
    ),
    "informative-band": (
        "informative-band",
        "informative-band:noise=0.05,window=4",
        {"name": "informative-band", "graded": False, "pass_threshold": SOLVED},
    ),
    "fixable-first": (
        "fixable-first",
        "fixable-first:pass_threshold=0.9",
        {"name": "fixable-first", "pass_threshold": SOLVED},
    ),
}
#: Third-party samplers from plugins/, installed by the test command like any plugin.
PLUGIN_SPECS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "hardest-first": (
        "hardest-first",
        "Hardest_First",
        {"name": "hardest-first", "provider": "agentdescent-sampling-hardest"},
    ),
    "epoch-shuffle": (
        "epoch-shuffle",
        "epoch:seed=3",
        {"name": "epoch-shuffle", "seed": 0},
    ),
}
#: Every form of every sampler; a built-in's string and mapping forms reach the same code on
#: every Python once parsed, so only the full session runs those (tests/conftest.py).
ONCE = [pytest.mark.version_independent]
SPECS = [
    pytest.param(
        spec,
        id=f"{name}-{form}",
        marks=ONCE if name in BUILT_IN_SPECS and form != "name" else [],
    )
    for name, forms in {**BUILT_IN_SPECS, **PLUGIN_SPECS}.items()
    for form, spec in zip(("name", "string", "mapping"), forms, strict=True)
]
PATHS = [pytest.param(False, id="sync"), pytest.param(True, id="async")]


class PickLog:
    """Passes every call to ``sampler`` and logs the shard and round index of each pick."""

    name = "pick-log"

    def __init__(self, sampler: TaskSampler) -> None:
        self.sampler = sampler
        self.picks: list[tuple[tuple[str, ...], int]] = []
        self._lock = threading.Lock()

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """Log the call, then let the wrapped sampler choose."""
        with self._lock:
            self.picks.append((tuple(keys), round_index))
        return self.sampler.pick(keys, round_index)

    def record(self, task_id: str, score: float) -> None:
        """Pass the outcome on."""
        self.sampler.record(task_id, score)


def _stats(sampler: TaskSampler) -> dict[str, tuple[int, int]]:
    """The sampler's ``{task_id: (passes, trials)}``, read through its ``stats()``."""
    stats: dict[str, tuple[int, int]] = sampler.stats()  # type: ignore[attr-defined]
    return stats


def test_every_built_in_sampler_has_specs_to_run_in_the_engine() -> None:
    built_ins = {
        record.name
        for record in available()
        if isinstance(record, SamplerInfo) and record.distribution == "agentdescent-sampling"
    }
    assert built_ins == set(BUILT_IN_SPECS)


def test_solved_is_the_engines_own_constant() -> None:
    assert agentdescent.SOLVED == SOLVED
    assert inspect.signature(agentdescent.evolve).parameters["solved_threshold"].default == SOLVED


@pytest.mark.parametrize("spec", SPECS)
def test_created_sampler_improves_the_reward_on_the_sync_path(toy: ToyWorkload, spec: Any) -> None:
    result = toy.run(create(spec))

    assert result.error is None
    assert result.stop_reason == "rounds"
    assert result.final_reward > toy.baseline


@pytest.mark.parametrize("spec", SPECS)
def test_created_sampler_improves_the_reward_on_the_async_path(toy: ToyWorkload, spec: Any) -> None:
    result = toy.run(create(spec), asynchronous=True)

    assert result.error is None
    assert result.stop_reason == "max_iters"
    assert result.final_reward > toy.baseline


@pytest.mark.parametrize("asynchronous", PATHS)
def test_stats_count_one_trial_per_rollout_the_engine_ran(
    toy: ToyWorkload, asynchronous: bool
) -> None:
    sampler = create("difficulty-weighted")

    result = toy.run(sampler, asynchronous=asynchronous)

    stats = _stats(sampler)
    assert result.rollouts > 0
    assert sum(trials for _, trials in stats.values()) == result.rollouts
    assert set(stats) <= toy.train_ids


def test_sync_round_index_is_the_round_shared_by_all_workers(toy: ToyWorkload) -> None:
    log = PickLog(create("round-robin"))

    toy.run(log)

    rounds = sorted(round_index for _, round_index in log.picks)
    assert rounds == [r for r in range(toy.rounds) for _ in range(toy.n_workers)]


def test_async_round_index_counts_each_workers_own_picks(toy: ToyWorkload) -> None:
    log = PickLog(create("round-robin"))

    toy.run(log, asynchronous=True)

    by_shard: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for shard, round_index in log.picks:
        by_shard[shard].append(round_index)
    assert len(by_shard) == toy.n_workers
    for indices in by_shard.values():
        assert indices == list(range(len(indices)))


def test_graded_passes_count_when_pass_threshold_matches_solved_threshold(
    graded_toy: ToyWorkload,
) -> None:
    sampler = create({"name": "difficulty-weighted", "pass_threshold": 0.8})

    result = graded_toy.run(sampler, solved_threshold=0.8)

    passes, trials = _stats(sampler)[graded_toy.always_pass_id]
    assert result.final_reward > graded_toy.baseline
    assert passes == trials > 0


def test_default_pass_threshold_never_counts_a_graded_pass(graded_toy: ToyWorkload) -> None:
    # The engine stops asking for proposals at 0.8 and still learns, but the sampler
    # waits for 0.999: every task, the always-pass one included, looks never-solved.
    sampler = create("difficulty-weighted")

    result = graded_toy.run(sampler, solved_threshold=0.8)

    stats = _stats(sampler)
    assert result.final_reward > graded_toy.baseline
    assert stats[graded_toy.always_pass_id][1] > 0
    assert all(passes == 0 for passes, _ in stats.values())


def test_a_class_in_place_of_a_sampler_ends_the_run_with_the_error_not_an_exception(
    toy: ToyWorkload,
) -> None:
    # What docs/engine.md tells users to check: evolve() warns and returns.
    from agentdescent_sampling import FixableFirst

    with pytest.warns(RuntimeWarning, match="evolve\\(\\) stopped early"):
        result = toy.run(FixableFirst)

    assert result.stop_reason == "error"
    assert "round_index" in result.error


class _RaisesInPick:
    """A sampler whose every pick raises."""

    name = "raises-in-pick"

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        raise RuntimeError("boom")

    def record(self, task_id: str, score: float) -> None:
        pass


def test_a_sampler_that_raises_ends_a_run_shorter_than_max_worker_errors_with_no_error(
    toy: ToyWorkload, recwarn: pytest.WarningsRecorder
) -> None:
    # What docs/engine.md says agentdescent 0.7.0 does: 2 dead rounds of its 3 allowed.
    from agentdescent import evolve

    from tests.engine.conftest import HintAgent

    result = evolve(
        toy.tasks, toy.reward, agent=HintAgent(), task_sampler=_RaisesInPick(), rounds=2,
        n_workers=toy.n_workers, held_out_frac=toy.held_out_frac,
    )  # fmt: skip

    assert (result.stop_reason, result.error) == ("rounds", None)
    assert [info.rollouts for info in result.history] == [0, 0]
    assert not [each for each in recwarn if "stopped early" in str(each.message)]


def test_a_sampler_that_raises_on_the_asynchronous_path_ends_each_worker_and_idles_the_run(
    toy: ToyWorkload, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What docs/engine.md says agentdescent 0.7.0 does: the exception ends the worker
    # thread, and the run waits out max_seconds with no error.
    from agentdescent import evolve

    from tests.engine.conftest import HintAgent

    ended: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: ended.append(hook.exc_value))

    result = evolve(
        toy.tasks, toy.reward, agent=HintAgent(), task_sampler=_RaisesInPick(),
        asynchronous=True, n_workers=toy.n_workers, held_out_frac=toy.held_out_frac,
        max_rollouts=100, max_seconds=2.0,
    )  # fmt: skip

    assert (result.stop_reason, result.error) == ("max_seconds", None)
    assert len(ended) == toy.n_workers
    assert all(isinstance(error, RuntimeError) and str(error) == "boom" for error in ended)
