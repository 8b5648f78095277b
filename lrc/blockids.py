"""Dense int ids for blocks: the simulator keeps its per-block state in lists indexed by them,
and a Planner given a ``BlockIds`` keys its reference state by them too (no tuple hashing on the
hot path)."""
from __future__ import annotations

from collections.abc import Iterable

from lrc.dag import Block


class BlockIds:
    """Block <-> id, ids in order of first use; ``id`` adds unknown blocks."""

    def __init__(self, blocks: Iterable[Block] = ()) -> None:
        self.blocks: list[Block] = list(blocks)
        self.ids: dict[Block, int] = {b: i for i, b in enumerate(self.blocks)}
        self.rdd_of: list[int] = [b[0] for b in self.blocks]

    def __len__(self) -> int:
        return len(self.blocks)

    def id(self, block: Block) -> int:
        i = self.ids.get(block)
        if i is None:
            i = self.ids[block] = len(self.blocks)
            self.blocks.append(block)
            self.rdd_of.append(block[0])
        return i

    def copy(self) -> BlockIds:
        new = BlockIds()
        new.blocks, new.ids, new.rdd_of = list(self.blocks), dict(self.ids), list(self.rdd_of)
        return new


class IdView:
    """``block in view``: is the block's id in ``members`` (a DAG walk's view of a set of ids)."""

    __slots__ = ("ids", "members")

    def __init__(self, ids: BlockIds, members: set[int]) -> None:
        self.ids, self.members = ids.ids, members

    def __contains__(self, block: Block) -> bool:
        i = self.ids.get(block)
        return i is not None and i in self.members


class Either:
    """Membership in either of two containers (without copying them)."""

    def __init__(self, a, b) -> None:
        self.a, self.b = a, b

    def __contains__(self, x) -> bool:
        return x in self.a or x in self.b
