"""fixable-first's exact pick over a shard in O(groups) per pick instead of O(keys).

A task's value depends only on its *group*: the fields the value reads, the last of them
``seen`` (the artifact changes counted at its last outcome). Tasks of one group are worth the
same; tasks that differ only in ``seen`` form a *family*, in which the value never rises with
``seen`` (it is constant unless the task has only passed, when it is the more likely broken the
more the artifact changed since: ``(1 - rate) ** (changes - seen)`` enters it, whose successive
powers differ by far more than the rounding of ``**``, through operations that IEEE rounding
keeps monotone). The winner is the least recently picked (``last``), then the earliest key,
among the keys worth at least a *floor* (the best value, or a share of it: the *band*) and
the keys last picked before a given pick, which may differ by family (*overdue*, whatever they
are worth). So per shard and family :class:`TaskGroups` keeps

- how many of its keys are filed under each ``seen``, and those ``seen`` sorted, so the best
  value is the one at the smallest ``seen`` and a binary search finds the largest ``seen``
  still worth the floor (float rounding makes long-unchanged tasks tie);
- a min-heap of ``(last, position)``, whose top entry with ``seen`` up to that bound is the
  family's candidate. Each entry is one int, ``(last + 1) << 32 | position``, which orders
  as the pair does and takes half the memory of a tuple.

A pick evaluates a few values per family and looks into the heaps of the families that reach
the floor. Entries a move leaves behind stay in the heaps until they surface or the heaps
are rebuilt. Shards are cached, found again and dropped as in ``_index.py``
(:class:`ShardCache`), which keeps every shard in use.
"""

from __future__ import annotations

import bisect
import heapq
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from typing import Generic, TypeVar

from ._index import Positions, ShardCache, first_entry

__all__ = ["Filing", "TaskGroups"]

T = TypeVar("T")

#: Where a task is filed: its group without ``seen`` (``None`` for an untried task), its
#: ``seen`` and its ``last``.
Filing = tuple[Hashable, int, int]

_POSITION = 0xFFFFFFFF  # the low 32 bits of a heap entry


def _entry(last: int, position: int) -> int:
    """The heap entry of a key at ``position`` last picked at ``last`` (-1: never)."""
    return (last + 1) << 32 | position


class _Family:
    """One family in one shard: members per ``seen``, the ``seen`` sorted, and the heap."""

    __slots__ = ("counts", "heap", "order")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.order: list[int] = []
        self.heap: list[int] = []

    def add(self, seen: int) -> None:
        count = self.counts.get(seen, 0)
        if not count:
            bisect.insort(self.order, seen)
        self.counts[seen] = count + 1

    def remove(self, seen: int) -> None:
        count = self.counts[seen] - 1
        if count:
            self.counts[seen] = count
        else:
            del self.counts[seen]
            del self.order[bisect.bisect_left(self.order, seen)]


class _Shard:
    """One shard: its keys, each key id's first position in it, and its families."""

    def __init__(self, keys: list[str], ids: dict[str, int], filed: dict[str, Filing]) -> None:
        self.keys = keys
        self.ids = ids  # shared by the cached shards
        table = array("i", [-1]) * len(ids)
        numbers: list[int] = []
        for index, key in enumerate(keys):
            number = ids[key]
            if table[number] < 0:  # later copies of a key can never win a tie
                table[number] = index
                numbers.append(number)
        self.size = len(numbers)
        self.positions = Positions(table, numbers)
        self.families: dict[Hashable, _Family] = {}
        self.entries = 0
        self.rebuild(filed)

    def at(self, key: str) -> int:
        """The first position of ``key`` in this shard, or -1."""
        number = self.ids.get(key)
        return -1 if number is None else self.positions.at(number)

    def firsts(self) -> Iterable[tuple[int, str]]:
        """Each key of the shard once, at its first position."""
        if self.size == len(self.keys):
            return enumerate(self.keys)
        return ((index, key) for index, key in enumerate(self.keys) if self.at(key) == index)

    def renumber(self, ids: dict[str, int]) -> None:
        """Take the key ids of ``ids``, which numbers every key of this shard."""
        self.ids, self.positions = ids, Positions.numbered(self.firsts(), ids, len(ids))

    def rebuild(self, filed: dict[str, Filing]) -> None:
        """File every key afresh, dropping the heaps' stale entries."""
        members: dict[Hashable, tuple[list[int], list[int]]] = {}  # family -> seens, entries
        for position, key in self.firsts():
            family, seen, last = filed[key]
            lists = members.get(family)
            if lists is None:
                lists = members[family] = ([], [])
            lists[0].append(seen)
            lists[1].append(_entry(last, position))
        self.families = {}
        for family, (seens, heap) in members.items():
            group = self.families[family] = _Family()
            group.counts = dict(Counter(seens))
            group.order = sorted(group.counts)
            heapq.heapify(heap)
            group.heap = heap
        self.entries = self.size

    def move(self, key: str, old: Filing, new: Filing, filed: dict[str, Filing]) -> None:
        position = self.at(key)
        if position < 0:
            return
        left = self.families[old[0]]
        left.remove(old[1])
        if not left.counts:
            self.entries -= len(left.heap)
            del self.families[old[0]]
        joined = self.families.get(new[0])
        if joined is None:
            joined = self.families[new[0]] = _Family()
        joined.add(new[1])
        heapq.heappush(joined.heap, _entry(new[2], position))
        self.entries += 1
        if self.entries > 2 * self.size + 64:
            self.rebuild(filed)

    def first_of(
        self, family: Hashable, limit: int, skip: Collection[int], filed: dict[str, Filing]
    ) -> int | None:
        """The least entry, ``(last, position)``, of ``family`` with ``seen <= limit`` and
        not in ``skip``."""
        heap = self.families[family].heap
        keys, entries = self.keys, len(heap)

        def stale(entry: int) -> bool:  # the key moved since
            position = entry & _POSITION
            filing = filed[keys[position]]
            return filing[0] != family or _entry(filing[2], position) != entry

        def passed_over(entry: int) -> bool:
            position = entry & _POSITION
            return filed[keys[position]][1] > limit or position in skip

        found = first_entry(heap, stale, passed_over)
        self.entries -= entries - len(heap)
        return found


class TaskGroups(Generic[T]):
    """Exact pick of the least recently picked key worth the floor, ties to the earliest key,
    over a shard (see the module).

    Args:
        filing: where a task id is filed now (see :data:`Filing`).
        specimen: a private copy of the task behind a tried task id, standing for its
            family when values are asked for (its ``seen`` is set as needed).

    Call :meth:`touch` with every task id whose state may change, before or after the
    change; the next :meth:`shard` refiles it, and so does :meth:`population`. Not
    thread-safe: the owning sampler holds its lock around every call.
    """

    def __init__(self, filing: Callable[[str], Filing], specimen: Callable[[str], T]) -> None:
        self._filing = filing
        self._specimen = specimen
        self._filed: dict[str, Filing] = {}  # every tried task and every key of a cached shard
        self._ids: dict[str, int] = {}  # each key of a cached shard -> its number
        self._specimens: dict[Hashable, T] = {}
        self._population: dict[Hashable, int] = {}  # tried tasks per family
        self._dirty: set[str] = set()
        self._shards: ShardCache[_Shard] = ShardCache()

    def touch(self, *task_ids: str) -> None:
        """Note that the state of ``task_ids`` may change, now or before the next pick."""
        self._dirty.update(task_ids)

    def population(self) -> list[tuple[T, int]]:
        """Every family of tried tasks, each as its specimen and how many tasks it holds.

        The touched tasks are refiled but stay touched until the next :meth:`shard`: the
        caller may go on changing them after asking.
        """
        self._refile(keep=True)
        return [(self._specimens[family], count) for family, count in self._population.items()]

    def shard(self, keys: Sequence[str]) -> _Shard:
        """The index of shard ``keys``, built on first sight; keep it for :meth:`pick`.

        Raises:
            TypeError: a key is not a string; nothing has changed then.
        """
        self._refile()
        probe, found = self._shards.find(keys)
        if found is not None:
            return found
        filed, ids = self._filed, self._ids
        for key in probe:
            if key not in filed:
                filed[key] = self._file(key)
            if key not in ids:
                ids[key] = len(ids)
        shard = _Shard(list(probe), ids, filed)
        if self._shards.add(shard, len(ids)):
            self._forget_unused_keys()
        return shard

    def pick(
        self,
        shard: _Shard,
        worth: Callable[[T | None, int], float],
        exclude: Collection[str] = (),
        band: float = 1.0,
        overdue: int | Callable[[T | None], int] = -1,
    ) -> str:
        """The least recently picked key of ``shard`` (``last``, then the earliest) among
        those worth at least ``band`` times the best or last picked before pick ``overdue``
        (never, -1, counts as before any pick), skipping ``exclude`` unless it holds every
        key. ``band=1`` is the exact argmax of ``(worth, -last)``. ``overdue`` may be a
        function of a family's specimen (``None``: untried), so each family has its own; it
        must read only fields of the family's key (not ``seen``, nor ``last``).

        ``worth(specimen, seen)`` is the value of a task like ``specimen`` (``None``: untried)
        with that ``seen``; it must never rise with ``seen``.
        """
        filed, specimens = self._filed, self._specimens
        skip: dict[int, Filing] = {}
        for key in exclude:
            position = shard.at(key)
            if position >= 0:
                skip[position] = filed[key]
        if len(skip) == shard.size:
            skip = {}
        removed: dict[tuple[Hashable, int], int] = {}
        for family, seen, _ in skip.values():
            removed[family, seen] = removed.get((family, seen), 0) + 1
        # Per family with a free key: its specimen, its free seens' range, and its best value.
        families: list[tuple[Hashable, T | None, list[int], int, int, float]] = []
        for family, group in shard.families.items():
            specimen = specimens.get(family)
            order, counts = group.order, group.counts
            low, high = 0, len(order) - 1
            if removed:
                while low <= high and counts[order[low]] <= removed.get((family, order[low]), 0):
                    low += 1
                while high >= low and counts[order[high]] <= removed.get((family, order[high]), 0):
                    high -= 1
                if low > high:
                    continue  # every key of the family is in flight
            families.append((family, specimen, order, low, high, worth(specimen, order[low])))
        top = max(best for *_, best in families)
        floor = band * top
        winner: int | None = None
        due = overdue if callable(overdue) else lambda specimen: overdue
        for family, specimen, order, low, high, best in families:
            # An entry below this was last picked before the family's overdue pick.
            overdue_below = _entry(due(specimen), 0)
            heap = shard.families[family].heap
            if heap[0] < overdue_below:  # the heap's least entry; it may be stale or in flight
                found = shard.first_of(family, order[high], skip, filed)
                if found is not None and found < overdue_below:
                    if winner is None or found < winner:
                        winner = found
                    continue  # older than any of the family worth the floor
            if best < floor:
                continue
            if low < high and worth(specimen, order[high]) < floor:
                # order[low] is worth the floor and order[high] not: find the last that is.
                while high - low > 1:
                    middle = (low + high) // 2
                    if worth(specimen, order[middle]) >= floor:
                        low = middle
                    else:
                        high = middle
            else:
                low = high
            found = shard.first_of(family, order[low], skip, filed)
            if found is not None and (winner is None or found < winner):
                winner = found
        assert winner is not None  # the counts say every candidate family has a free key
        return shard.keys[winner & _POSITION]

    def _file(self, key: str) -> Filing:
        filing = self._filing(key)
        if filing[0] is not None and filing[0] not in self._specimens:
            self._specimens[filing[0]] = self._specimen(key)
        return filing

    def _refile(self, keep: bool = False) -> None:
        """File every touched task where it belongs now, in the population and in every
        cached shard that holds it; forget that it was touched unless ``keep``."""
        for key in self._dirty:
            new = self._file(key)
            old = self._filed.get(key)
            if old == new or (old is None and new[0] is None):
                continue  # unchanged, or untried and in no cached shard
            self._filed[key] = new
            self._count(new[0], 1)
            if old is not None:  # else in no cached shard; a shard built later files it
                self._count(old[0], -1)
                for shard in self._shards:
                    shard.move(key, old, new, self._filed)
        if not keep:
            self._dirty.clear()

    def _count(self, family: Hashable, change: int) -> None:
        if family is not None:
            count = self._population.get(family, 0) + change
            if count:
                self._population[family] = count
            else:
                del self._population[family]

    def _forget_unused_keys(self) -> None:
        """Once most known keys belong to no cached shard, keep only the cached shards' keys
        and the tried tasks, so memory follows them, not every shard ever seen."""
        used = sum(self._population.values()) + sum(shard.size for shard in self._shards)
        if len(self._filed) + len(self._ids) <= 2 * used + 1024:
            return
        ids: dict[str, int] = {}
        for shard in self._shards:
            for key in shard.keys:
                if key not in ids:
                    ids[key] = len(ids)
        for shard in self._shards:
            shard.renumber(ids)
        self._ids = ids
        self._filed = {
            key: filing
            for key, filing in self._filed.items()
            if filing[0] is not None or key in ids
        }
        self._specimens = {
            family: self._specimens[family]
            for family in {filing[0] for filing in self._filed.values()} - {None}
        }
