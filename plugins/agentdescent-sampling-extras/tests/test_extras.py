import threading
from types import MappingProxyType

import pytest
from agentdescent_sampling_extras import EpochShuffle, UniformRandom


@pytest.mark.parametrize("factory", [EpochShuffle, UniformRandom])
def test_conforms_to_the_sampler_contract(sampler_conformance, factory) -> None:  # type: ignore[no-untyped-def]
    sampler_conformance(factory, seed=3)


def test_every_task_is_picked_once_per_epoch() -> None:
    sampler = EpochShuffle(seed=1)
    keys = [f"t{i}" for i in range(10)]
    for epoch in range(3):
        picked = [sampler.pick(keys, epoch * 10 + r) for r in range(10)]
        assert sorted(picked) == sorted(keys)


def test_epochs_come_in_different_orders() -> None:
    sampler = EpochShuffle(seed=1)
    keys = [f"t{i}" for i in range(10)]
    first = [sampler.pick(keys, r) for r in range(10)]
    second = [sampler.pick(keys, r) for r in range(10)]
    assert first != second


def test_seed_zero_is_honoured_and_differs_from_seed_one() -> None:
    keys = [f"t{i}" for i in range(20)]

    def picks(seed: int) -> list[str]:
        sampler = UniformRandom(seed=seed)
        return [sampler.pick(keys, r) for r in range(30)]

    assert picks(0) == picks(0)
    assert picks(0) != picks(1)


def test_seed_must_be_an_int() -> None:
    with pytest.raises(TypeError, match=r"EpochShuffle\(seed='1'\): expected a whole number"):
        EpochShuffle(seed="1")  # type: ignore[arg-type]


def test_the_readme_shows_the_hook_module_as_it_is() -> None:
    """The README's hook, copied into a file, is this plugin's hooks.py and runs as it does."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    hooks = (root / "agentdescent_sampling_extras" / "hooks.py").read_text(encoding="utf-8")
    assert f"```python\n{hooks}```" in readme


@pytest.mark.parametrize("factory", [EpochShuffle, UniformRandom])
def test_a_run_saved_and_loaded_mid_epoch_picks_as_an_uninterrupted_one(factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from agentdescent_sampling import load_state, save_state

    keys = [f"t{i}" for i in range(10)]
    uninterrupted = factory(seed=5)
    expected = [uninterrupted.pick(keys, r) for r in range(25)]

    first = factory(seed=5)
    picked = [first.pick(keys, r) for r in range(13)]  # mid-epoch
    save_state(first, tmp_path / "state.json")
    resumed = factory(seed=5)
    load_state(resumed, tmp_path / "state.json")
    assert picked + [resumed.pick(keys, r) for r in range(13, 25)] == expected


def test_a_malformed_state_is_refused_and_changes_nothing() -> None:
    from agentdescent_sampling import StateError

    sampler = EpochShuffle(seed=5)
    keys = [f"t{i}" for i in range(10)]
    sampler.pick(keys, 0)
    before = sampler.state_dict()
    for bad in ({**before, "seen": "t1"}, {**before, "rng": [3, [1], None]},
                {**before, "params": {"seed": 6}}):  # fmt: skip
        with pytest.raises(StateError):
            sampler.load_state_dict(bad)
        assert sampler.state_dict() == before


@pytest.mark.parametrize(
    ("seen", "told"),
    [(10**5000, "got int"), ([None], "it holds NoneType"), ("t1", "got str")],
    ids=["huge-int", "none", "text"],
)  # fmt: skip
def test_a_hostile_seen_is_a_state_error_naming_its_type(seen: object, told: str) -> None:
    from agentdescent_sampling import StateError

    sampler = EpochShuffle(seed=5)
    with pytest.raises(StateError, match=rf"^epoch-shuffle: 'seen' must be .*{told}$"):
        sampler.load_state_dict({**sampler.state_dict(), "seen": seen})


def test_a_state_given_as_any_mapping_is_loaded_as_a_dict_is() -> None:
    sampler = EpochShuffle(seed=2)
    keys = [f"t{i}" for i in range(6)]
    sampler.pick(keys, 0)
    state = sampler.state_dict()
    restored = EpochShuffle(seed=2)
    restored.load_state_dict(MappingProxyType(state))  # read-only, as a config layer may give it
    assert restored.state_dict() == state


class _PickAfterRelease:
    """The sampler's lock; its first release lets another worker's pick in, once."""

    def __init__(self, sampler: EpochShuffle, keys: list[str]) -> None:
        self.lock, self.sampler, self.keys = sampler._lock, sampler, keys
        self.picked: list[str] = []

    def __enter__(self) -> object:
        return self.lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.lock.__exit__(*exc)
        if not self.picked:
            self.picked.append("")  # once
            worker = threading.Thread(
                target=lambda: self.picked.append(self.sampler.pick(self.keys, 0))
            )
            worker.start()
            worker.join(10)


def test_a_pick_racing_a_state_load_comes_before_or_after_the_whole_load() -> None:
    # load_state_dict() set the generator and the epoch's tasks under two holds of the lock:
    # a pick between them drew from the loaded generator, and the loaded epoch forgot it.
    keys = [f"t{i}" for i in range(8)]
    source = EpochShuffle(seed=1)
    for round_index in range(3):
        source.pick(keys, round_index)
    state = source.state_dict()
    after = EpochShuffle(seed=1)
    after.load_state_dict(state)
    after.pick(keys, 0)

    sampler = EpochShuffle(seed=1)
    sampler._lock = _PickAfterRelease(sampler, keys)  # type: ignore[assignment]
    sampler.load_state_dict(state)

    assert len(sampler._lock.picked) == 2  # type: ignore[attr-defined]
    assert sampler.state_dict() in (state, after.state_dict())


@pytest.mark.parametrize("factory", [EpochShuffle, UniformRandom])
def test_a_shard_with_a_key_that_is_not_a_string_is_refused_and_the_state_still_saves(
    factory: type[EpochShuffle | UniformRandom],
) -> None:
    sampler = factory(seed=0)
    twin = factory(seed=0)
    for round_index in range(4):
        with pytest.raises(TypeError, match="got int 3"):
            sampler.pick(["a", 3], round_index)  # type: ignore[list-item]
    assert sampler.state_dict() == twin.state_dict()
    assert sampler.pick(["a", "b"], 0) == twin.pick(["a", "b"], 0)
