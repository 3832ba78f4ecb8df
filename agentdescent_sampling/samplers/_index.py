"""An exact argmax over a shard that costs O(groups) per pick instead of O(keys).

Samplers here score a task from a small discrete *signature* of its statistics
(``(passes, trials)`` for difficulty-weighted). Tasks with equal signatures score
equally, so the best task is the earliest key of the best-scoring signature group.
:class:`ShardIndex` keeps, per shard, a min-heap of key positions for each group and
moves a key between heaps when its signature changes; picks then touch each group
once. A shard is found again by its length and end keys, then compared with a cached
copy, which runs in C.

It returns exactly what the straightforward loop returns, ties included::

    best = max(keys, key=lambda k: score(signature(k)))   # max keeps the first of equals

:class:`ShardCache` keeps the index of every shard in use, so that workers on more shards
than a few (``evolve()`` with many workers on split shards, or a caller cycling shards)
each find theirs indexed instead of rebuilding it, at O(keys), on every pick: a shard that
comes back after it was dropped makes room for one more, up to 256. Eight shards are kept
whatever they hold, as before; beyond eight, only while the cached shards hold at most
eight keys per key the index knows, so never more than eight shards of every task would.

Memory is what bounds the shard sizes this serves, so what all cached shards have in
common is stored once: each key's id and the signature it is filed under, and the int
objects that stand for positions. A shard then costs about 22 bytes a key (its copy of
the keys, a 4-byte position per key id it spans, and its heaps), where a dict per shard
would cost over a hundred. A shard holds a position per key id it spans, not per key id
known, so that many small shards cost what their keys do (see :class:`Positions`).
"""

from __future__ import annotations

import bisect
import heapq
from array import array
from collections.abc import (
    Callable,
    Collection,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Generic, Protocol, TypeVar

from ..protocol import check_task_ids

__all__ = ["Positions", "ShardCache", "ShardIndex", "first_entry"]

S = TypeVar("S", bound=Hashable)


class _Keyed(Protocol):
    keys: list[str]


K = TypeVar("K", bound=_Keyed)

#: Shards kept whatever they hold, as many as workers usually rotate through.
_CACHED_SHARDS = 8
#: Beyond ``_CACHED_SHARDS``, the cached shards hold at most this many keys per key known.
_KEYS_PER_KNOWN_KEY = 8
#: The most shards kept, and dropped shards remembered (by a hash of their length and end
#: keys, so that one coming back is known to be in use). A record refiles its task in every
#: cached shard, so this bounds what a record costs.
_MOST_SHARDS = 256

#: What finds a shard again: its length and its first and last keys.
_Ends = tuple[int, str, str]


def _ends(keys: list[str]) -> _Ends:
    return (len(keys), keys[0], keys[-1])


class Positions:
    """Each key id's first position in one shard, in memory that follows the shard's size.

    Where the shard's ids are dense (they span at most twice as many ids as it holds keys,
    as when its keys were numbered on its first sight), a table over that span, 4 bytes an
    id; else its ids sorted beside their positions, 8 bytes a key, found by bisection.
    """

    __slots__ = ("_ids", "_low", "_table")

    def __init__(self, table: array[int], numbers: list[int]) -> None:
        """From ``table``, indexed by key id, and ``numbers``, the ids of the shard's keys,
        each once (at least one); ``table`` holds each one's position."""
        low, high = min(numbers), max(numbers) + 1
        self._ids: array[int] | None
        if high - low <= 2 * len(numbers):
            self._ids, self._low, self._table = None, low, table[low:high]
        else:
            self._ids = array("i", sorted(numbers))
            self._low, self._table = 0, array("i", map(table.__getitem__, self._ids))

    @classmethod
    def numbered(
        cls, firsts: Iterable[tuple[int, str]], ids: Mapping[str, int], known: int
    ) -> Positions:
        """The positions of a shard's keys, each given once at its first position by
        ``firsts``, under the key ids of ``ids``, which number ``known`` keys."""
        table = array("i", [-1]) * known
        numbers = []
        for index, key in firsts:
            number = ids[key]
            table[number] = index
            numbers.append(number)
        return cls(table, numbers)

    def at(self, number: int) -> int:
        """The first position of key id ``number`` in the shard, or -1."""
        ids = self._ids
        if ids is None:
            index = number - self._low
            return self._table[index] if 0 <= index < len(self._table) else -1
        index = bisect.bisect_left(ids, number)
        return self._table[index] if index < len(ids) and ids[index] == number else -1


class _Keys(Generic[S]):
    """What the cached shards share: key -> id, id -> filed signature, and small ints."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.filed: list[S] = []
        # Positions and ids above 256 are separate int objects of 28 bytes each; taking
        # them all from this one list stores each number once, however many heaps hold it.
        self.ints: list[int] = []

    def grow_ints(self, size: int) -> None:
        if len(self.ints) < size:
            self.ints.extend(range(len(self.ints), size))


class _Shard(Generic[S]):
    """One shard: its keys, each key id's first position in it, and its groups' heaps."""

    def __init__(self, keys: list[str], shared: _Keys[S], signature: Callable[[str], S]) -> None:
        self.keys = keys
        self.shared = shared
        ids, filed, ints = shared.ids, shared.filed, shared.ints
        shared.grow_ints(len(keys))
        table = array("i", [-1]) * (len(filed) + len(keys))
        numbers: list[int] = []
        self.heaps: dict[S, list[int]] = {}
        for index, key in enumerate(keys):
            number = ids.get(key)
            if number is None:
                number = len(filed)
                if number == len(ints):
                    ints.append(number)
                number = ids[key] = ints[number]
                filed.append(signature(key))
            if table[number] < 0:  # later copies of a key can never win a tie
                table[number] = index
                numbers.append(number)
                self.heaps.setdefault(filed[number], []).append(ints[index])
        self.size = len(numbers)
        self.positions = Positions(table, numbers)
        # Positions were appended in increasing order, so every list is already a heap.
        self.entries = self.size

    def at(self, number: int) -> int:
        """The first position of key id ``number`` in this shard, or -1."""
        return self.positions.at(number)

    def firsts(self) -> Iterable[tuple[int, str]]:
        """Each key of the shard once, at its first position."""
        if self.size == len(self.keys):
            return enumerate(self.keys)
        ids = self.shared.ids
        return ((index, key) for index, key in enumerate(self.keys) if self.at(ids[key]) == index)

    def renumber(self, shared: _Keys[S]) -> None:
        """Take the key ids of ``shared``, which numbers every key of this shard."""
        self.positions = Positions.numbered(self.firsts(), shared.ids, len(shared.filed))
        self.shared = shared

    def moved(self, number: int, signature: S) -> None:
        index = self.positions.at(number)
        if index >= 0:
            heapq.heappush(self.heaps.setdefault(signature, []), self.shared.ints[index])
            self.entries += 1
            if self.entries > self.size + self.size // 4 + 64:
                self._compact()

    def _compact(self) -> None:
        """Drop the stale heap entries that moves leave behind, so memory stays O(keys)."""
        ids, filed, ints = self.shared.ids, self.shared.filed, self.shared.ints
        self.heaps = {}
        for index, key in self.firsts():
            self.heaps.setdefault(filed[ids[key]], []).append(ints[index])
        self.entries = self.size

    def first(self, signature: S, skip: Collection[int]) -> int | None:
        """The smallest current position in the group, not in ``skip``."""
        ids, filed = self.shared.ids, self.shared.filed
        heap = self.heaps[signature]
        found = first_entry(
            heap,
            lambda index: filed[ids[self.keys[index]]] != signature,  # moved to another group
            skip.__contains__,
        )
        if not heap:
            del self.heaps[signature]
        return found


class ShardCache(Generic[K]):
    """The shards in use, each with its index, least recently used first (see the module).

    Iterating gives the cached shards.
    """

    def __init__(self) -> None:
        self._recent: dict[K, None] = {}  # least recently used first
        self._by_ends: dict[_Ends, list[K]] = {}
        self._room = _CACHED_SHARDS  # how many shards it keeps
        self._dropped: dict[int, None] = {}  # hashes of dropped shards' ends, oldest first
        self._held = 0  # keys in the cached shards, repeats included

    def __iter__(self) -> Iterator[K]:
        return iter(self._recent)

    def __len__(self) -> int:
        return len(self._recent)

    def find(self, keys: Sequence[str]) -> tuple[list[str], K | None]:
        """``keys`` as a list, and the cached shard with exactly those keys, now the most
        recently used, or ``None``.

        Raises:
            TypeError: no shard has those keys, and one is not a string; nothing has
                changed then.
        """
        # Comparing lists runs in C and stops at the first difference; when the engine
        # passes the same ids again it is mostly pointer comparisons. No hashing of the
        # whole shard, which would cost as much as a comparison on every pick.
        probe = keys if type(keys) is list else list(keys)
        try:
            candidates = self._by_ends.get(_ends(probe), ())
        except TypeError:  # an end is unhashable, so no task id: refused below
            candidates = ()
        for shard in candidates:
            if shard.keys == probe:
                del self._recent[shard]
                self._recent[shard] = None
                return probe, shard
        # Checked before anything is stored: a shard with a non-string id leaves no trace.
        check_task_ids(probe)
        return probe, None

    def add(self, shard: K, known: int) -> bool:
        """Cache ``shard``, just built by an index that knows ``known`` keys, and drop the
        least recently used shards beyond the bounds; whether any was dropped."""
        ends = _ends(shard.keys)
        if hash(ends) in self._dropped:  # a shard in use was dropped: keep one more
            del self._dropped[hash(ends)]
            if len(self._recent) >= self._room:
                self._room = min(self._room + 1, _MOST_SHARDS)
        self._recent[shard] = None
        self._by_ends.setdefault(ends, []).append(shard)
        self._held += len(shard.keys)
        dropped = False
        while len(self._recent) > self._room or (
            len(self._recent) > _CACHED_SHARDS and self._held > _KEYS_PER_KNOWN_KEY * known
        ):
            self._drop(next(iter(self._recent)))
            dropped = True
        return dropped

    def _drop(self, shard: K) -> None:
        del self._recent[shard]
        ends = _ends(shard.keys)
        alike = self._by_ends[ends]
        alike.remove(shard)
        if not alike:
            del self._by_ends[ends]
        self._held -= len(shard.keys)
        self._dropped.pop(hash(ends), None)  # to the end: the most recently dropped
        self._dropped[hash(ends)] = None
        if len(self._dropped) > _MOST_SHARDS:
            del self._dropped[next(iter(self._dropped))]


def first_entry(
    heap: list[int], stale: Callable[[int], bool], passed_over: Callable[[int], bool]
) -> int | None:
    """The least entry of ``heap`` that is neither stale nor passed over, or ``None``.

    Stale entries above it are dropped from the heap; those passed over stay.
    """
    held = []
    found = None
    while heap:
        entry = heap[0]
        if stale(entry):
            heapq.heappop(heap)
        elif passed_over(entry):
            held.append(heapq.heappop(heap))
        else:
            found = entry
            break
    for entry in held:
        heapq.heappush(heap, entry)
    return found


class ShardIndex(Generic[S]):
    """Exact ``argmax`` of a group score over a shard, ties to the earliest key.

    Args:
        signature: maps a task id to the hashable summary its score depends on.

    Call :meth:`moved` after a task's signature changes (after each record).
    Not thread-safe: the owning sampler holds its lock around every call.
    """

    def __init__(self, signature: Callable[[str], S]) -> None:
        self._signature = signature
        self._shared: _Keys[S] = _Keys()
        self._shards: ShardCache[_Shard[S]] = ShardCache()

    def shard(self, keys: Sequence[str]) -> _Shard[S]:
        """The index of shard ``keys``, built on first sight; keep it for :meth:`pick`.

        Raises:
            TypeError: a key is not a string; nothing has changed then.
        """
        probe, found = self._shards.find(keys)
        if found is not None:
            return found
        shard = _Shard(list(probe), self._shared, self._signature)
        if self._shards.add(shard, len(self._shared.ids)):
            self._forget_unused_keys()
        return shard

    def pick(
        self,
        shard: _Shard[S],
        score: Callable[[S], float],
        exclude: Collection[str] = (),
    ) -> str:
        """Return the earliest key of ``shard``'s best-scoring group, skipping ``exclude``.

        If every key is excluded, the exclusion is ignored.
        """
        ids = self._shared.ids
        skip = {shard.at(ids[key]) for key in exclude if key in ids} - {-1}
        best: tuple[float, int] | None = None
        for signature in list(shard.heaps):
            index = shard.first(signature, skip)
            if index is None:
                continue
            candidate = (score(signature), -index)
            if best is None or candidate > best:
                best = candidate
        if best is None:
            return self.pick(shard, score)
        return shard.keys[-best[1]]

    def moved(self, key: str) -> None:
        """Re-file ``key`` in every cached shard after its signature changed."""
        number = self._shared.ids.get(key)
        if number is None:
            return  # in no cached shard; a shard built later files it afresh
        signature = self._signature(key)
        if self._shared.filed[number] != signature:
            self._shared.filed[number] = signature
            for shard in self._shards:
                shard.moved(number, signature)

    def _forget_unused_keys(self) -> None:
        """Once most known keys belong to no cached shard, rebuild the shared tables from
        the cached shards, so memory follows the cached shards, not every shard ever seen."""
        used = sum(shard.size for shard in self._shards)
        if len(self._shared.ids) <= 2 * used + 1024:
            return
        old, shared = self._shared, _Keys[S]()
        shared.grow_ints(max(used, *(len(shard.keys) for shard in self._shards)))
        for shard in self._shards:
            for key in shard.keys:
                if key not in shared.ids:
                    shared.ids[key] = shared.ints[len(shared.filed)]
                    shared.filed.append(old.filed[old.ids[key]])
        for shard in self._shards:
            shard.renumber(shared)
        self._shared = shared
