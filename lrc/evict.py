"""The eviction mechanism shared by every policy (one cache = one executor's MemoryStore).

Candidates are taken lowest priority first, ties by least recent access (stamp); blocks of the
RDD being inserted and pinned blocks (read by the running task) are skipped (Spark's rule);
if not enough can be freed nothing is evicted and the new block is not cached.

``LruIndex`` is the fast path for constant priorities (an access-ordered dict, like Spark's
LinkedHashMap); ``PriorityIndex`` keeps a lazy heap of ``[priority, stamp, block, live]`` entries:
a change pushes a new entry and marks the old one dead, dead entries are dropped when popped.
Blocks are small ints indexing ``sizes`` and ``rdd_of``.
"""
from __future__ import annotations

from collections import OrderedDict
from heapq import heapify, heappop, heappush


class LruIndex:
    """Spark's LRU: priorities are ignored."""

    def __init__(self, capacity: int, sizes, rdd_of) -> None:
        self.capacity, self.used = capacity, 0
        self.sizes, self.rdd_of = sizes, rdd_of
        self.order: OrderedDict[int, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self.order)

    def touch(self, b: int, prio: float, stamp: int) -> None:
        self.order.move_to_end(b)

    def set_priority(self, b: int, prio: float) -> None:
        pass

    def remove(self, b: int) -> None:
        del self.order[b]
        self.used -= self.sizes[b]

    def _select(self, need: int, rdd: int, pinned) -> list[int] | None:
        sizes, rdd_of = self.sizes, self.rdd_of
        taken, freed = [], 0
        for v in self.order:
            if rdd_of[v] != rdd and v not in pinned:
                taken.append(v)
                freed += sizes[v]
                if freed >= need:
                    return taken
        return None

    def _add(self, b: int, prio: float, stamp: int) -> None:
        self.order[b] = None

    def insert(self, b: int, prio: float, stamp: int, pinned=()) -> list[int] | None:
        """Cache ``b``; returns the evicted blocks, or None if ``b`` could not be cached."""
        size = self.sizes[b]
        need = self.used + size - self.capacity
        victims: list[int] = []
        if need > 0:
            victims = self._select(need, self.rdd_of[b], pinned)
            if victims is None:
                return None
            for v in victims:
                self.remove(v)
        self._add(b, prio, stamp)
        self.used += size
        return victims


class PriorityIndex(LruIndex):
    """Lowest (priority, stamp) first, through a lazily cleaned heap."""

    def __init__(self, capacity: int, sizes, rdd_of) -> None:
        super().__init__(capacity, sizes, rdd_of)
        self.entry: dict[int, list] = {}
        self.heap: list[list] = []

    def __len__(self) -> int:
        return len(self.entry)

    def _push(self, e: list) -> None:
        heap = self.heap
        heappush(heap, e)
        if len(heap) > 4 * len(self.entry) + 1024:  # too many dead entries: compact
            heap[:] = [x for x in heap if x[3]]
            heapify(heap)

    def touch(self, b: int, prio: float, stamp: int) -> None:
        self.entry[b][3] = False
        e = self.entry[b] = [prio, stamp, b, True]
        self._push(e)

    def set_priority(self, b: int, prio: float) -> None:
        old = self.entry.get(b)
        if old is not None and old[0] != prio:
            old[3] = False
            e = self.entry[b] = [prio, old[1], b, True]
            self._push(e)

    def remove(self, b: int) -> None:
        self.entry.pop(b)[3] = False
        self.used -= self.sizes[b]

    def _add(self, b: int, prio: float, stamp: int) -> None:
        e = self.entry[b] = [prio, stamp, b, True]
        self._push(e)

    def _select(self, need: int, rdd: int, pinned) -> list[int] | None:
        heap, sizes, rdd_of = self.heap, self.sizes, self.rdd_of
        taken, kept, freed = [], [], 0
        while freed < need and heap:
            e = heappop(heap)
            if not e[3]:
                continue
            v = e[2]
            if rdd_of[v] == rdd or v in pinned:
                kept.append(e)
            else:
                taken.append(e)
                freed += sizes[v]
        if freed < need:
            kept += taken
            taken = None
        for e in kept:
            heappush(heap, e)
        return None if taken is None else [e[2] for e in taken]
