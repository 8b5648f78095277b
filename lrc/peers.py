"""Peer groups and effective reference counts (LERC).

A task's *peer group* is the set of cached blocks it reads. Its references are *effective* only
while every block of the group is cached (anywhere in the cluster): a task that misses one input
gains little from the others being in memory, so evicting one block makes its peers' references
from that task ineffective.

Two forms, chosen by the group key the caller uses:
- task-level ("conservative"): one group per task ``(stage_id, partition)``, one reference per
  member;
- stage-level ("aggressive"): one group per stage holding the reads of all its pending tasks; a
  member's references count (one per pending task reading it) only while *every* block the stage
  still reads is cached.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable


class _Group:
    __slots__ = ("refs", "missing")

    def __init__(self) -> None:
        self.refs: dict[Hashable, int] = {}  # member block -> references from this group
        self.missing = 0  # members not cached


class Counts(dict):
    """Block -> count; a block never counted reads 0, so ``counts.__getitem__`` is a priority
    function that stays in C for every counted block (the simulator calls it per access)."""

    def __missing__(self, block: Hashable) -> int:
        return 0


class PeerGroups:
    """Effective reference counts, updated incrementally as references and caching change."""

    def __init__(self, changed: set) -> None:
        self.groups: dict[Hashable, _Group] = {}
        self.member_of: dict[Hashable, set] = {}
        self.effective: Counts = Counts()
        self.cached: set = set()
        self.changed = changed  # blocks whose effective count moved (shared with RefState)

    def _shift(self, g: _Group, sign: int) -> None:
        eff = self.effective
        for b, n in g.refs.items():
            eff[b] = eff.get(b, 0) + sign * n
        self.changed.update(g.refs)

    def add(self, gid: Hashable, block: Hashable, n: int = 1) -> None:
        g = self.groups.get(gid)
        if g is None:
            g = self.groups[gid] = _Group()
        complete = g.missing == 0
        if block in g.refs:
            g.refs[block] += n
            if complete:
                self.effective[block] = self.effective.get(block, 0) + n
                self.changed.add(block)
            return
        if block not in self.cached:
            if complete:
                self._shift(g, -1)
            g.missing += 1
            g.refs[block] = n
        else:
            g.refs[block] = n
            if complete:
                self.effective[block] = self.effective.get(block, 0) + n
                self.changed.add(block)
        gids = self.member_of.get(block)
        if gids is None:
            gids = self.member_of[block] = set()
        gids.add(gid)

    def remove(self, gid: Hashable, block: Hashable, n: int = 1) -> None:
        g = self.groups.get(gid)
        if g is None or block not in g.refs:
            return
        if g.missing == 0:
            self.effective[block] -= n
            self.changed.add(block)
        left = g.refs[block] - n
        if left > 0:
            g.refs[block] = left
            return
        del g.refs[block]
        self.member_of[block].discard(gid)
        if block not in self.cached:
            g.missing -= 1
            if g.missing == 0:
                self._shift(g, +1)
        if not g.refs:
            del self.groups[gid]

    def set_cached(self, block: Hashable, cached: bool) -> None:
        """``block`` became cached somewhere in the cluster (True) or nowhere (False)."""
        if cached:
            self.recache((), (block,))
        else:
            self.recache((block,), ())

    def recache(self, gone: Iterable[Hashable], new: Iterable[Hashable]) -> None:
        """``set_cached(b, False)`` for each block of ``gone``, then ``set_cached(b, True)`` for
        each of ``new``, in one call (the simulator's insert and the victims it evicted)."""
        where, member_of, groups = self.cached, self.member_of, self.groups
        eff, changed = self.effective, self.changed
        for block in gone:
            if block in where:
                where.discard(block)
                gids = member_of.get(block)
                if gids:
                    for gid in gids:
                        g = groups[gid]
                        missing = g.missing
                        if not missing:  # the group was complete: its references stop counting
                            for b, n in g.refs.items():
                                eff[b] = eff.get(b, 0) - n
                            changed.update(g.refs)
                        g.missing = missing + 1
        for block in new:
            if block not in where:
                where.add(block)
                gids = member_of.get(block)
                if gids:
                    for gid in gids:
                        g = groups[gid]
                        missing = g.missing - 1
                        g.missing = missing
                        if not missing:  # complete again: its references count
                            for b, n in g.refs.items():
                                eff[b] = eff.get(b, 0) + n
                            changed.update(g.refs)
