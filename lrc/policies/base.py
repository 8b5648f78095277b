"""The one policy interface: a priority function over cached blocks (DESIGN.md section 1).

Eviction (in ``lrc.evict`` and in the JVM) takes the lowest priority first, ties by least recent
access, never a block of the RDD being inserted, and nothing if it cannot free enough.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial

from lrc.refcount import RefState


class Policy:
    """Subclasses set ``name`` and override ``priority`` or ``bind``; the flags say what state
    they need."""

    name = "base"
    constant = False      # priority never changes (needs no reference state at all)
    needs_peers = False   # uses effective reference counts (peer groups)
    needs_order = False   # uses next-reference positions
    uses_count = True     # priority reads the reference count (else a finished read changes a
                          # block's priority only when it moves the block's next reference)
    relative = False      # priority depends on RefState.now (distance from the running stage)
    needs_future = False  # uses the future access sequence: simulator only

    def priority(self, refs: RefState, block: Hashable) -> float:
        return float(self.bind(refs)(block))

    def bind(self, refs: RefState) -> Callable[[Hashable], float]:
        """The priority function over blocks for this reference state, for callers that ask
        for many blocks (the simulator, the live table): one closure call per block."""
        if type(self).priority is Policy.priority:
            raise NotImplementedError(f"policy {self.name!r} overrides neither priority nor bind")
        return partial(self.priority, refs)

    def bind_stored(self, refs: RefState) -> Callable[[Hashable], float]:
        """The priority of a block that is in no executor's memory, as it will be once a task
        stores it (what a store is admitted at, spark.lrc.admit). Default: ``bind``'s."""
        return self.bind(refs)

    def __repr__(self) -> str:
        return f"<policy {self.name}>"
