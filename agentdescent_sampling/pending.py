"""The in-flight tracker: picks handed out but not yet recorded, for samplers and plugins
(which import it from :mod:`agentdescent_sampling.plugin`).

``evolve(max_concurrency > 1)`` asks a sampler for several tasks before any of them is
recorded. A sampler that spreads those picks over different tasks keeps a
:class:`Pending`: ``add`` at each pick, ``remove`` at each record, and leaves out
``tasks(now)`` (or each task that ``holds``) when it picks. Every built-in that spreads
picks does, and so do the curricula pack's rules. It holds no lock: call it under the
sampler's own.
"""

from __future__ import annotations

__all__ = ["TTL_PICKS", "Pending"]

#: A pick not recorded within this many later picks is taken as lost (its rollout
#: failed, and the engine records nothing for a failed rollout) and stops counting.
TTL_PICKS = 256


class Pending:
    """Tasks with a rollout in flight: task id -> (count, pick number of the latest)."""

    # A plain class: an attrs class would cost every create() by name its definition.
    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, tuple[int, int]] = {}

    def __repr__(self) -> str:
        # The tasks held and how many rollouts of each, cut (reprlib) to a few of them.
        if not self._entries:
            return "Pending()"
        import itertools
        import reprlib

        # reprlib shows four of a dict's entries and '...' for a fifth: copy five, not all.
        held = {task: count for task, (count, _) in itertools.islice(self._entries.items(), 5)}
        return f"Pending(in_flight={reprlib.repr(held)})"

    def add(self, task_id: str, pick: int) -> None:
        """Count one more rollout of ``task_id`` in flight, handed out at pick ``pick``,
        and forget the picks that expired by then."""
        for expired in [key for key, (_, then) in self._entries.items() if pick - then > TTL_PICKS]:
            del self._entries[expired]
        count, _ = self._entries.get(task_id, (0, pick))
        self._entries[task_id] = (count + 1, pick)

    def remove(self, task_id: str) -> None:
        """A rollout of ``task_id`` came back (records of unknown tasks are fine)."""
        count, pick = self._entries.get(task_id, (0, 0))
        if count > 1:
            self._entries[task_id] = (count - 1, pick)
        else:
            self._entries.pop(task_id, None)

    def holds(self, task_id: str, now: int) -> bool:
        """Whether ``task_id`` has a rollout in flight at pick ``now`` (lost ones expired)."""
        entry = self._entries.get(task_id)
        return entry is not None and now - entry[1] <= TTL_PICKS

    def tasks(self, now: int) -> set[str]:
        """The tasks in flight at pick ``now``; the expired ones are left out, not removed,
        so that asking changes nothing."""
        return {key for key, (_, then) in self._entries.items() if now - then <= TTL_PICKS}
