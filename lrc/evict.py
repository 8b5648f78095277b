"""The eviction mechanism shared by every policy (one index = one executor's MemoryStore).

Candidates are taken lowest priority first, ties by least recent access (stamp); blocks of the
RDD being inserted and pinned blocks (read by the running task) are skipped (Spark's rule);
if not enough can be freed the new block is not cached, and nothing is evicted but what the
earlier steps of its reservation needed (``lrc.unroll``: Spark reserves the unroll threshold, then
more as the block grows, evicting for each step, before it finds out the block does not fit).

Blocks are small ints indexing ``sizes`` and ``rdd_of``. An entry is a tuple
``(priority, stamp, block)``, live while it is the block's current entry (identity); a change
pushes a new entry and leaves the old one to be dropped when it surfaces. One lazy heap per RDD,
plus a heap ``top`` holding each RDD's least live entry (or a dead entry no greater than it):
eviction merges the RDD heaps through ``top`` and skips the inserted RDD as a whole, so a victim
costs O(log n) however many blocks of that RDD sit at the low end.
"""
from __future__ import annotations

from collections.abc import Sequence
from heapq import heapify, heappop, heappush

class EvictionIndex:
    """Cached blocks of one executor in eviction order, with their total size (``used``)."""

    def __init__(self, capacity: int, sizes, rdd_of, reserve=None, steps=None,
                 admit: bool = False) -> None:
        self.capacity, self.used, self.live = capacity, 0, 0
        # admission: a store never evicts a block ranked above the block being stored (it fails
        # instead, and Spark computes the block without caching it); off: Spark's rule alone
        self.admit = admit
        # bytes that must be free to store each block, at least its size (``lrc.unroll``; None:
        # its size), and the steps of that reservation, the last being ``reserve`` (None: one
        # step), which a store that fails still evicted for
        self.reserve = sizes if reserve is None else reserve
        self.steps = steps
        # the most bytes held or asked for at once: a cache at least this large never evicts
        self.peak = 0
        self.sizes, self.rdd_of = sizes, rdd_of
        self.entry: list[tuple | None] = [None] * len(sizes)
        self.heaps: dict[int, list[tuple]] = {}
        self.top: list[tuple] = []
        self.rdd_used: dict[int, int] = {}  # bytes cached per RDD (a block that cannot fit)

    def __len__(self) -> int:
        return self.live

    def __contains__(self, b: int) -> bool:
        return self.entry[b] is not None

    def insert(self, b: int, prio: float, stamp: int, pinned=(),
               admit_at: float | None = None) -> Sequence[int]:
        """Cache ``b`` at ``(prio, stamp)``; returns the evicted blocks (``b in self`` tells
        whether it was cached: if not, only the reservation's first step evicted). A cached ``b``
        is only re-ordered (``touch``). Under admission the store is judged at ``admit_at``
        (default ``prio``: a store's rank can differ from a held block's, Policy.bind_stored)."""
        entry = self.entry
        rdd = self.rdd_of[b]
        taken: Sequence[int] = ()
        if entry[b] is None:
            rdd_used = self.rdd_used
            size, ask = self.sizes[b], self.reserve[b]
            asked = self.used + ask
            if asked > self.peak:
                self.peak = asked
            need = self.used + ask - self.capacity
            if need > 0:
                limit = (prio if admit_at is None else admit_at) if self.admit else None
                # the RDD's own blocks are never evicted for it: past them it cannot fit
                taken = self._evict(need, rdd, pinned, False, limit) \
                    if ask <= self.capacity - rdd_used.get(rdd, 0) else None
                if taken is None:  # earlier steps of a reservation may have evicted
                    return self._earlier_steps(b, rdd, pinned, limit) if self.steps else []
            self.live += 1
            self.used += size
            rdd_used[rdd] = rdd_used.get(rdd, 0) + size
        e = entry[b] = (prio, stamp, b)
        h = self.heaps.get(rdd)
        if h is None:
            self.heaps[rdd] = [e]
            heappush(self.top, e)
            return taken
        heappush(h, e)
        t = h[0]
        while entry[t[2]] is not t:
            heappop(h)
            t = h[0]
        if t is e:
            heappush(self.top, e)
        return taken

    def _earlier_steps(self, b: int, rdd: int, pinned, limit=None) -> list[int]:
        """A store of ``b`` that failed: what the steps of its reservation before the first one
        that could not be met evicted (the same victims as evicting for the last step that could,
        at once); nothing when it has one step: that eviction has just failed."""
        for step in reversed(self.steps[b][:-1]):
            need = self.used + step - self.capacity
            if need <= 0:
                return []
            if step <= self.capacity - self.rdd_used.get(rdd, 0):
                taken = self._evict(need, rdd, pinned, False, limit)
                if taken is not None:
                    return taken
        return []

    def shrink(self, capacity: int, pinned=()) -> list[int]:
        """Set the capacity to ``capacity`` and evict, lowest first, blocks of any RDD but the
        ``pinned`` ones until the cache fits in it, or as close as it can get (execution memory's
        claim, ``lrc.execmem``: Spark frees storage a little at a time and keeps what it freed).
        Returns the evicted blocks. Raising ``capacity`` back needs no call: assign it."""
        self.capacity = capacity
        need = self.used - capacity
        return self._evict(need, -1, pinned, True) if need > 0 else []

    def _evict(self, need: int, rdd: int, pinned, partial: bool,
               limit: float | None = None) -> list[int] | None:
        """Evict the least blocks not of ``rdd`` nor ``pinned`` until ``need`` bytes are freed,
        none ranked above ``limit`` (None: any). Short of that: ``partial`` keeps what was
        evicted, else nothing is and None returns."""
        entry, sizes, rdd_used = self.entry, self.sizes, self.rdd_used
        heaps, top, rdd_of = self.heaps, self.top, self.rdd_of
        taken: list[int] = []
        kept, skipped, freed = [], None, 0
        while freed < need and top:
            if limit is not None and top[0][0] > limit:
                break  # every candidate left ranks above the block being stored
            e = heappop(top)
            v = e[2]
            q = rdd_of[v]
            if q == rdd:  # never evicted; the least of its entries in ``top`` goes back
                if skipped is None:
                    skipped = e
                continue
            h = heaps.get(q)
            if h is None:
                continue
            if entry[v] is e:
                if not h or h[0] is not e:
                    while h and entry[h[0][2]] is not h[0]:
                        heappop(h)
                    if not h or h[0] is not e:  # a duplicate of an entry taken or kept
                        continue
                heappop(h)
                if v in pinned:
                    kept.append(e)
                else:
                    taken.append(v)
                    size_v = sizes[v]
                    freed += size_v
                    rdd_used[q] -= size_v  # given back if nothing is evicted after all
            while h:  # e was dead or is gone: the RDD's least live entry represents it
                t = h[0]
                if entry[t[2]] is t:
                    heappush(top, t)
                    break
                heappop(h)
        failed = freed < need and not partial
        if failed:
            kept += [entry[v] for v in taken]
            for v in taken:
                rdd_used[rdd_of[v]] += sizes[v]
        for e in kept:
            heappush(heaps[rdd_of[e[2]]], e)
            heappush(top, e)
        if skipped is not None:
            heappush(top, skipped)
        if failed:
            return None
        for v in taken:
            entry[v] = None
        self.live -= len(taken)
        self.used -= freed
        return taken

    touch = insert  # touch(b, prio, stamp): (re)order cached block ``b`` at ``(prio, stamp)``

    def set_priority(self, b: int, prio: float) -> None:
        old = self.entry[b]
        if old[0] != prio:
            self.insert(b, prio, old[1])

    def remove(self, b: int) -> None:
        self.entry[b] = None
        self.live -= 1
        size = self.sizes[b]
        self.used -= size
        self.rdd_used[self.rdd_of[b]] -= size

    def room_below(self, prio: float, rdd: int) -> int:
        """Bytes an insert of a block of ``rdd`` at ``prio`` can take without evicting a block of
        priority ``prio`` or more: free space plus the other RDDs' blocks below it (eviction
        takes those first). A scan, for the occasional placement, not for the replay's path."""
        rdd_of, sizes = self.rdd_of, self.sizes
        return self.capacity - self.used + sum(sizes[e[2]] for e in self.entry if e is not None
                                               and e[0] < prio and rdd_of[e[2]] != rdd)

    def drop_rdd(self, rdd: int) -> list[int]:
        """Remove every block of ``rdd`` (unpersist); returns them."""
        entry = self.entry
        gone = [e[2] for e in self.heaps.pop(rdd, ()) if entry[e[2]] is e]
        for b in gone:
            self.remove(b)
        self.rdd_used.pop(rdd, None)
        return gone

    def tidy(self) -> None:
        """Drop dead entries once they outnumber half the live ones (plus 64). Call it now and
        then: every change leaves one behind, and every heap operation pays for them in
        comparisons (mrd's replay, callgrind: 8% fewer instructions than with a 4-to-1 rule
        checked every 4,096 tasks; the replay checks every 256). A compaction costs O(entries)
        and removes at least a third of them."""
        if len(self.top) + sum(map(len, self.heaps.values())) <= self.live * 3 // 2 + 64:
            return
        entry, top = self.entry, []
        for q, h in list(self.heaps.items()):
            h = [x for x in h if entry[x[2]] is x]
            if h:
                heapify(h)
                self.heaps[q] = h
                top.append(h[0])
            else:
                del self.heaps[q]
        heapify(top)
        self.top = top
