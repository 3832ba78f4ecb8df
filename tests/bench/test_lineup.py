"""Named lineups: ``bench --lineup curricula`` and the spec list the engine bench reuses."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import pytest

from agentdescent_sampling import Registry
from agentdescent_sampling.bench import lineup_specs
from agentdescent_sampling.bench.command import bench_command
from agentdescent_sampling.errors import BenchError

PACK = ["plr", "sfl", "mopps", "tscl", "learning-progress", "speed", "dapo-filter",
        "learnability", "failure-aware"]  # fmt: skip


def test_the_curricula_lineup_is_the_built_ins_then_the_nine_rules() -> None:
    assert lineup_specs("curricula") == [
        "round-robin",
        "difficulty-weighted",
        "informative-band",
        "fixable-first",
        *PACK,
    ]


def test_bench_lineup_runs_every_rule_beside_the_built_ins_and_any_extra_sampler(
    bench_args: Callable[..., argparse.Namespace], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["share", "--lineup", "curricula", "--sampler", "plr:temperature=1.0", "--json"]
    assert bench_command(bench_args(*argv, "--seeds", "2", "--budget", "40")) == 0
    workload = json.loads(capsys.readouterr().out)["workloads"][0]
    labels = [sampler["label"] for sampler in workload["samplers"]]
    assert labels == [*lineup_specs("curricula"), "plr:temperature=1.0", "oracle"]


def test_a_missing_pack_names_the_distribution_to_install() -> None:
    without = Registry(disable=("agentdescent-sampling-curricula",))
    with pytest.raises(BenchError, match=r"needs 'plr', 'sfl'.*pip install "
                       r"\./plugins/agentdescent-sampling-curricula"):  # fmt: skip
        lineup_specs("curricula", without)


def test_an_unknown_lineup_lists_the_known_ones() -> None:
    with pytest.raises(BenchError, match="no lineup named 'curricla'; expected one of curricula"):
        lineup_specs("curricla")


def test_two_specs_that_build_alike_are_run_once_in_the_words_given_first() -> None:
    # difficulty-weighted:c=0.2 and DifficultyWeighted (its default c) were two rows of the
    # same sampler, as were a spec given alone and again by a lineup in other words.
    from agentdescent_sampling.bench.engine.lineup import engine_lineup
    from agentdescent_sampling.bench.lineup import lineup

    registry = Registry(only=[])
    given = ["difficulty-weighted:c=0.2", "DifficultyWeighted", "difficulty-weighted:c=0.4"]
    share = [entrant.label for entrant in lineup(given, registry)]
    assert share == [
        "difficulty-weighted:c=0.2",
        "difficulty-weighted:c=0.4",
        "round-robin",
        "oracle",
    ]
    given = ["fixable-first", "fixable-first:failure_cost=3", "FixableFirst:failure_cost=2"]
    engine = [entrant.label for entrant in engine_lineup(given, registry, ceilings=False)]
    assert engine == [
        "round-robin",
        "fixable-first",
        "fixable-first + wired",
        "fixable-first:failure_cost=2",
        "fixable-first:failure_cost=2 + wired",
    ]
