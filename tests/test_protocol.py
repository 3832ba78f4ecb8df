import math
import numbers
from decimal import Decimal
from fractions import Fraction

import pytest

from agentdescent_sampling import SOLVED, DifficultyWeighted, RoundRobin, StateError, TaskSampler
from agentdescent_sampling.protocol import (
    check_keys,
    check_name,
    check_score,
    check_state,
    check_task_ids,
)


def test_solved_is_the_engines_threshold() -> None:
    assert SOLVED == 0.999


@pytest.mark.parametrize("sampler", [RoundRobin(), DifficultyWeighted()])
def test_builtins_satisfy_the_protocol_and_carry_a_name(sampler: TaskSampler) -> None:
    assert isinstance(sampler, TaskSampler)
    check_name(type(sampler).name)  # type: ignore[attr-defined]


def test_an_object_without_record_is_not_a_sampler() -> None:
    class PickOnly:
        def pick(self, keys: list[str], round_index: int) -> str:
            return keys[0]

    assert not isinstance(PickOnly(), TaskSampler)


@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf, -0.01, 1.0001])
def test_out_of_range_scores_raise_value_error_naming_the_task(score: float) -> None:
    with pytest.raises(ValueError, match="'task-7'"):
        check_score("task-7", score)


@pytest.mark.parametrize("score", [math.nan, Decimal("NaN"), Decimal("sNaN"), Decimal("1.5")])
def test_a_real_number_that_is_nan_or_out_of_range_raises_value_error(score: object) -> None:
    with pytest.raises(ValueError, match="must be a finite number in \\[0, 1\\]"):
        check_score("task-7", score)


@pytest.mark.parametrize("score", [None, "0.5", True, [0.5], b"1", 0.5j, complex(1, 0)])
def test_non_number_scores_raise_type_error(score: object) -> None:
    with pytest.raises(TypeError, match="'task-7'"):
        check_score("task-7", score)


class _Float32:
    """A real number of another library, registered with ``numbers.Real`` as NumPy's are."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __float__(self) -> float:
        return self.value


numbers.Real.register(_Float32)


@pytest.mark.parametrize(
    "score", [0, 1, 0.0, 0.5, 1.0, Fraction(1, 2), Decimal("0.25"), _Float32(0.75)]
)
def test_valid_scores_come_back_as_floats(score: float) -> None:
    assert check_score("t", score) == float(score)


class _IntFloat:
    """A registered real number whose ``float()`` is wrong: it returns an int."""

    def __float__(self) -> int:
        return 1


numbers.Real.register(_IntFloat)


def test_a_real_number_whose_float_fails_is_refused_as_not_a_number() -> None:
    with pytest.raises(
        TypeError, match="expects the score as a number in \\[0, 1\\], got _IntFloat"
    ):
        check_score("task-7", _IntFloat())


def test_task_id_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="task_id"):
        check_score(7, 0.5)


def test_check_task_ids_returns_the_ids_as_its_siblings_return_their_input() -> None:
    keys = ["a", "b"]
    assert check_task_ids(keys) is keys
    assert check_task_ids(()) == ()


@pytest.mark.parametrize("keys", [["a", 7], [b"a"], ("a", None)])
def test_check_task_ids_refuses_the_first_id_that_is_no_string(keys: list[object]) -> None:
    with pytest.raises(TypeError, match=r"task ids as strings, got \w+ (7|b'a'|None)"):
        check_task_ids(keys)


@pytest.mark.parametrize("keys", ["abc", b"ab", {"a", "b"}, None, iter(["a"])])
def test_shards_that_are_not_sequences_raise_type_error(keys: object) -> None:
    with pytest.raises(TypeError, match="sequence of task ids"):
        check_keys(keys)


@pytest.mark.parametrize("name", ["round-robin", "hardest_first", "A1", "x"])
def test_valid_names(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize(
    "name", ["", "pkg.mod:Class", "a/b", "../x", "-x", "x-", "a--b", "1abc", "x" * 65, None]
)
def test_invalid_names_are_refused(name: object) -> None:
    with pytest.raises(ValueError, match="invalid sampler name"):
        check_name(name)


@pytest.mark.parametrize(
    ("state", "told"),
    [
        ({"version": 1, "trials": {}}, "this state names no sampler (no 'sampler' key; it has"),
        ({"sampler": "x", "version": True}, "state version True is not supported"),
        ([1, 2], "sampler state must be a mapping (the 'x' sampler's state_dict()), got [1, 2]"),
    ],
    ids=["no-sampler", "version-a-bool", "not-a-mapping"],
)
def test_a_state_that_is_no_state_dict_of_the_sampler_says_what_it_lacks(
    state: object, told: str
) -> None:
    with pytest.raises(StateError) as refused:
        check_state(state, "x", 1)
    assert told in str(refused.value)
    assert "None" not in str(refused.value)


@pytest.mark.parametrize("name", ["round-robin", "difficulty-weighted", "informative-band",
                                  "fixable-first"])  # fmt: skip
@pytest.mark.parametrize("round_index", ["1", 1.0, None, True, False])
def test_a_round_index_that_is_no_whole_number_is_refused_naming_pick_and_the_value(
    name: str, round_index: object
) -> None:
    from agentdescent_sampling import create

    with pytest.raises(TypeError, match=r"pick\(keys, round_index\) expects round_index as a "
                       r"whole number.*; got "):  # fmt: skip
        create(name).pick(["a", "b"], round_index)  # type: ignore[arg-type]


def test_restore_rng_reads_back_every_state_rng_state_writes() -> None:
    import json
    import random

    from agentdescent_sampling.protocol import restore_rng, rng_state

    for seed in range(20):
        rng = random.Random(seed)
        if seed % 2:
            rng.gauss(0, 1)  # a gauss_next kept in the state
        restored = restore_rng("s", json.loads(json.dumps(rng_state(rng))))
        assert [restored.random() for _ in range(3)] == [rng.random() for _ in range(3)]


@pytest.mark.parametrize(
    "value",
    [[3, list(range(1_000_000)), None], [3, [0] * 624 + [10**5000], None], 10**5000,
     [3, [[[]]] * 10, None], [3, [0] * 624 + [624], None], [3, [1 << 40] * 624 + [624], None]],
    ids=["long", "huge-int-inside", "huge-int", "nested", "all-zero-words", "wider-than-32-bits"],
)  # fmt: skip
def test_restore_rng_refuses_a_hostile_state_with_a_state_error(value: object) -> None:
    from agentdescent_sampling.errors import StateError
    from agentdescent_sampling.protocol import restore_rng

    with pytest.raises(StateError, match=r"^s: bad generator state "):
        restore_rng("s", value)
