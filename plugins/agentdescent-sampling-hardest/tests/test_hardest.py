from agentdescent_sampling_hardest import Hardest


def test_conforms_to_the_sampler_contract(sampler_conformance) -> None:  # type: ignore[no-untyped-def]
    sampler_conformance(Hardest)


def test_picks_the_task_with_the_lowest_last_score() -> None:
    sampler = Hardest()
    sampler.record("a", 0.9)
    sampler.record("b", 0.2)
    sampler.record("c", 0.5)
    assert sampler.pick(["a", "b", "c"], 0) == "b"


def test_untried_tasks_count_as_zero_and_ties_go_to_the_earliest_key() -> None:
    sampler = Hardest()
    sampler.record("a", 0.3)
    assert sampler.pick(["a", "b", "c"], 0) == "b"


def test_only_the_latest_score_counts() -> None:
    sampler = Hardest()
    sampler.record("a", 0.0)
    sampler.record("a", 1.0)
    sampler.record("b", 0.5)
    assert sampler.pick(["a", "b"], 0) == "b"
