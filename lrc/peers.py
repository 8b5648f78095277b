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

from collections.abc import Hashable


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
        self.member_of.setdefault(block, set()).add(gid)

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
        if cached == (block in self.cached):
            return
        groups = self.groups
        if cached:
            self.cached.add(block)
            for gid in self.member_of.get(block, ()):
                g = groups[gid]
                g.missing -= 1
                if g.missing == 0:
                    self._shift(g, +1)
        else:
            self.cached.discard(block)
            for gid in self.member_of.get(block, ()):
                g = groups[gid]
                if g.missing == 0:
                    self._shift(g, -1)
                g.missing += 1
