"""An exact argmax over a shard that costs O(groups) per pick instead of O(keys).

Samplers here score a task from a small discrete *signature* of its statistics
(``(passes, trials)`` for difficulty-weighted). Tasks with equal signatures score
equally, so the best task is the earliest key of the best-scoring signature group.
:class:`ShardIndex` keeps, per shard, a min-heap of key positions for each group and
moves a key between heaps when its signature changes; picks then touch each group
once. A shard is recognised by comparing it with a cached copy, which runs in C.

It returns exactly what the straightforward loop returns, ties included::

    best = max(keys, key=lambda k: score(signature(k)))   # max keeps the first of equals
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import Generic, TypeVar

__all__ = ["ShardIndex"]

S = TypeVar("S", bound=Hashable)

_CACHED_SHARDS = 8  # workers rotate through a few shards; keep an index for each


class _Shard(Generic[S]):
    """The groups of one shard: signature -> heap of positions, lazily cleaned."""

    def __init__(self, keys: list[str], signature: Callable[[str], S]) -> None:
        self.keys = keys
        self.position: dict[str, int] = {}
        for index, key in enumerate(keys):
            self.position.setdefault(key, index)
        self.signature_at: dict[int, S] = {}
        self.heaps: dict[S, list[int]] = {}
        self.entries = 0
        for key, index in self.position.items():
            self._place(index, signature(key))

    def _place(self, index: int, signature: S) -> None:
        self.signature_at[index] = signature
        heapq.heappush(self.heaps.setdefault(signature, []), index)
        self.entries += 1

    def moved(self, key: str, signature: S) -> None:
        index = self.position.get(key)
        if index is not None and self.signature_at[index] != signature:
            self._place(index, signature)
            if self.entries > 2 * len(self.position) + 64:
                self._compact()

    def _compact(self) -> None:
        """Drop the stale heap entries that moves leave behind, so memory stays O(keys)."""
        self.heaps = {}
        for index, signature in self.signature_at.items():
            self.heaps.setdefault(signature, []).append(index)
        for heap in self.heaps.values():
            heapq.heapify(heap)
        self.entries = len(self.signature_at)

    def first(self, signature: S, skip: Collection[int]) -> int | None:
        """The smallest current position in the group, not in ``skip``."""
        heap = self.heaps[signature]
        held = []
        found = None
        while heap:
            index = heap[0]
            if self.signature_at[index] != signature:
                heapq.heappop(heap)  # stale: the key moved to another group
            elif index in skip:
                held.append(heapq.heappop(heap))
            else:
                found = index
                break
        for index in held:
            heapq.heappush(heap, index)
        if not heap:
            del self.heaps[signature]
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
        self._shards: list[_Shard[S]] = []  # most recently used first

    def pick(
        self,
        keys: Sequence[str],
        score: Callable[[S], float],
        exclude: Collection[str] = (),
    ) -> str:
        """Return the earliest key of the best-scoring group, skipping ``exclude``.

        If every key is excluded, the exclusion is ignored.
        """
        shard = self._shard(keys)
        skip = {shard.position[key] for key in exclude if key in shard.position}
        best: tuple[float, int] | None = None
        for signature in list(shard.heaps):
            index = shard.first(signature, skip)
            if index is None:
                continue
            candidate = (score(signature), -index)
            if best is None or candidate > best:
                best = candidate
        if best is None:
            return self.pick(keys, score)
        return shard.keys[-best[1]]

    def moved(self, key: str) -> None:
        """Re-file ``key`` in every cached shard after its signature changed."""
        signature = self._signature(key)
        for shard in self._shards:
            shard.moved(key, signature)

    def _shard(self, keys: Sequence[str]) -> _Shard[S]:
        # Comparing lists runs in C and stops at the first difference; when the engine
        # passes the same ids again it is mostly pointer comparisons. No hashing of the
        # whole shard, which would cost as much as a comparison on every pick.
        probe = keys if type(keys) is list else list(keys)
        for position, shard in enumerate(self._shards):
            if len(shard.keys) == len(probe) and shard.keys == probe:
                if position:
                    self._shards.insert(0, self._shards.pop(position))
                return shard
        shard = _Shard(list(probe), self._signature)
        self._shards.insert(0, shard)
        del self._shards[_CACHED_SHARDS:]
        return shard
