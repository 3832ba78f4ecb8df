"""The evidence tap tells a sampler's repeated() of cards made again where their task's was."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from agentdescent_sampling import FixableFirst
from agentdescent_sampling.wiring import EvidenceTap


@attrs.define(eq=False)
class Told(FixableFirst):
    """fixable-first that keeps what the tap told it, in order."""

    calls: list[tuple[Any, ...]] = attrs.field(factory=list)

    def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
        self.calls.append(("evidence", task_id))
        super().evidence(task_id, gain, committed)

    def repeated(self, task_id: str, same: bool) -> None:
        self.calls.append(("repeated", task_id, same))
        super().repeated(task_id, same)


def card(task_id: str, base: Any, ops: Any) -> SimpleNamespace:
    """A card of a failure of ``task_id`` proposing ``ops`` on artifact version ``base``."""
    diff = SimpleNamespace(diff_id=f"{task_id}:diff", target="artifact", ops=ops)
    return SimpleNamespace(
        diff=diff,
        base_version=base,
        trajectory_refs=[SimpleNamespace(id=task_id)],
        before_after_delta=0.0,
    )


def tell(tap: EvidenceTap, *cards: SimpleNamespace) -> None:
    """Show the tap each card as its own candidate, then report it refused."""
    for each in cards:
        tap.shown(each.diff, [each])
        tap.reported([SimpleNamespace(candidate_diff=each.diff, committed_version=None)])


@pytest.fixture
def told() -> Told:
    sampler = Told()
    for task_id in ("a", "b"):
        sampler.pick([task_id], 0)
        sampler.record(task_id, 0.0)
    return sampler


def test_a_card_on_its_tasks_last_artifact_version_is_told_whether_it_proposes_the_same(
    told: Told,
) -> None:
    tap = EvidenceTap(told, self_verify=True)
    tell(tap, *(card("a", {"artifact": 1}, {"r1": "rule"}) for _ in range(2)))
    tell(tap, card("a", {"artifact": 1}, {"r1": "another rule"}))
    assert [call for call in told.calls if call[0] == "repeated"] == [
        ("repeated", "a", True),
        ("repeated", "a", False),
    ]


def test_a_card_on_another_artifact_version_or_of_another_task_is_no_repeat(told: Told) -> None:
    tap = EvidenceTap(told, self_verify=True)
    tell(
        tap,
        card("a", {"artifact": 1}, {"r1": "rule"}),
        card("b", {"artifact": 1}, {"r1": "rule"}),  # another task
        card("a", {"artifact": 2}, {"r1": "rule"}),  # the artifact changed
    )
    assert [call[0] for call in told.calls] == ["evidence"] * 3


def test_a_card_behind_two_candidates_of_one_merge_is_not_its_own_repeat(told: Told) -> None:
    tap = EvidenceTap(told, self_verify=True)
    once = card("a", {"artifact": 1}, {"r1": "rule"})
    fused = SimpleNamespace(diff_id="fused(a:diff+b:diff)", target="artifact", ops={})
    tap.shown(once.diff, [once])
    tap.shown(fused, [once])
    tap.reported(
        [
            SimpleNamespace(candidate_diff=once.diff, committed_version=None),
            SimpleNamespace(candidate_diff=fused, committed_version=None),
        ]
    )
    assert told.calls == [("evidence", "a")] * 2


def test_a_card_whose_edits_are_not_json_is_never_a_repeat(told: Told) -> None:
    tap = EvidenceTap(told, self_verify=True)
    tell(tap, *(card("a", {"artifact": 1}, {"r1": object()}) for _ in range(2)))
    assert [call[0] for call in told.calls] == ["evidence"] * 2


def test_a_new_run_does_not_compare_its_cards_with_the_last_runs(told: Told) -> None:
    tap = EvidenceTap(told, self_verify=True)
    tell(tap, card("a", {"artifact": 1}, {"r1": "rule"}))
    tap.started()  # the engine installs the policies for the next run
    tell(tap, card("a", {"artifact": 1}, {"r1": "rule"}))
    assert [call[0] for call in told.calls] == ["evidence"] * 2


@pytest.mark.parametrize(
    "unreadable",
    [
        card("a", {"artifact": float("nan")}, {"r1": "rule"}),  # a version that is no JSON
        card("a", {"artifact": 1, 2: "x"}, {"r1": "rule"}),  # keys that do not sort
    ],
    ids=["nan-base", "unsortable-base"],
)
def test_a_card_that_cannot_be_read_is_still_evidence_and_never_a_repeat(
    told: Told, unreadable: SimpleNamespace
) -> None:
    tap = EvidenceTap(told, self_verify=True)
    first, again = (card("a", {"artifact": 1}, {"r1": "rule"}) for _ in range(2))
    diff = first.diff
    for each in (first, unreadable, again):
        tap.shown(diff, [each])
        tap.reported([SimpleNamespace(candidate_diff=diff, committed_version=None)])
    assert told.calls == [("evidence", "a")] * 3 + [("repeated", "a", True)]


def test_a_sampler_without_repeated_is_told_the_evidence_alone() -> None:
    told: list[str] = []

    class Plain:
        def pick(self, keys: Any, round_index: int) -> str:
            return str(keys[0])

        def record(self, task_id: str, score: float) -> None:
            pass

        def evidence(self, task_id: str, gain: float | None, committed: bool) -> None:
            told.append(task_id)

    tap = EvidenceTap(Plain(), self_verify=True)
    tell(tap, *(card("a", {"artifact": 1}, {"r1": "rule"}) for _ in range(2)))
    assert told == ["a", "a"]


def test_a_repeated_that_cannot_take_what_the_tap_passes_is_a_type_error_at_once() -> None:
    class Short(FixableFirst):
        def repeated(self, task_id: str) -> None:  # type: ignore[override]
            pass

    with pytest.raises(TypeError, match=r"cannot be called as repeated\(task_id, same\)"):
        EvidenceTap(Short(), self_verify=True)
