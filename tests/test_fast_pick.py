"""The grouped pick returns exactly what the straightforward loop returns, ties included."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from agentdescent_sampling import DifficultyWeighted


class ReferenceDifficultyWeighted:
    """The doc's rule as a plain loop over every key, with optional in-flight exclusion."""

    def __init__(self, c: float, pass_threshold: float, spread: bool) -> None:
        self.c, self.pass_threshold, self.spread = c, pass_threshold, spread
        self.stats: dict[str, tuple[int, int]] = {}
        self.in_flight: dict[str, int] = {}
        self.picks = 0

    def pick(self, keys: list[str]) -> str:
        self.picks += 1
        log_t = math.log(self.picks + 1)
        free = [k for k in keys if k not in self.in_flight] if self.spread else keys
        best, best_score = None, -math.inf
        for key in free or keys:
            passes, trials = self.stats.get(key, (0, 0))
            if trials == 0:
                score = math.inf
            else:
                p = passes / trials
                score = min(1.0, 4 * p * (1 - p)) + self.c * math.sqrt(log_t / trials)
            if score > best_score:
                best, best_score = key, score
        assert best is not None
        if self.spread:
            self.in_flight[best] = self.in_flight.get(best, 0) + 1
        return best

    def record(self, key: str, score: float) -> None:
        passes, trials = self.stats.get(key, (0, 0))
        self.stats[key] = (passes + (score >= self.pass_threshold), trials + 1)
        if self.in_flight.get(key, 0) > 1:
            self.in_flight[key] -= 1
        else:
            self.in_flight.pop(key, None)


TASKS = [f"t{i}" for i in range(12)]
shards = st.lists(st.sampled_from(TASKS), min_size=1, max_size=12)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("pick"), shards),
        st.tuples(st.just("record"), st.sampled_from(TASKS), st.sampled_from([0.0, 0.5, 1.0])),
        st.tuples(st.just("record-last"), st.sampled_from([0.0, 1.0])),
    ),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@given(
    ops=operations,
    c=st.sampled_from([0.0, 0.1, 0.2, 1.4]),
    spread=st.booleans(),
    threshold=st.sampled_from([0.5, 0.999]),
)
def test_grouped_picks_equal_the_reference_loop(
    ops: list[tuple[object, ...]], c: float, spread: bool, threshold: float
) -> None:
    fast = DifficultyWeighted(c=c, pass_threshold=threshold, spread_in_flight=spread)
    reference = ReferenceDifficultyWeighted(c, threshold, spread)
    last = None
    for op in ops:
        if op[0] == "pick":
            keys = list(op[1])  # type: ignore[call-overload]
            last = reference.pick(keys)
            assert fast.pick(keys, 0) == last
        elif op[0] == "record":
            reference.record(op[1], op[2])  # type: ignore[arg-type]
            fast.record(op[1], op[2])  # type: ignore[arg-type]
        elif last is not None:
            reference.record(last, op[1])  # type: ignore[arg-type]
            fast.record(last, op[1])  # type: ignore[arg-type]
    assert fast.stats() == reference.stats


def test_large_shards_with_many_records_stay_exact() -> None:
    import random

    rng = random.Random(5)
    keys = [f"k{i}" for i in range(2000)]
    fast = DifficultyWeighted()
    reference = ReferenceDifficultyWeighted(0.2, 0.999, False)
    truth = {key: rng.random() for key in keys}
    for _ in range(2500):  # enough records to trigger the index compaction
        picked = reference.pick(keys)
        assert fast.pick(keys, 0) == picked
        score = float(rng.random() < truth[picked])
        reference.record(picked, score)
        fast.record(picked, score)
