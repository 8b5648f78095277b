"""Blocks whose store failed, for the hit accounting (``Planner.tried``).

A completed stage computed them and no store got them in (admission refused it, or it did not
fit). Spark's getOrElseUpdate looks such a block up before computing it again, so the next task
that computes it reads it - a miss, or a hit if a store got it in meanwhile. The plan's
references stay those of a block to compute (through it to its inputs): counting a reference on
it as well moved the simulator's results both ways (session 27).
"""
from __future__ import annotations

from collections.abc import Container, Hashable, Iterable


class FailedStores:
    """``tried``: the blocks; per planned stage, what its tasks compute and which tried blocks
    each task looks up again. Keys are the planner's (blocks, or their ids)."""

    def __init__(self) -> None:
        self.tried: set[Hashable] = set()
        self.creates: dict[int, list[Hashable]] = {}  # planned stage -> blocks its tasks compute
        self.lookups: dict[int, dict[int, tuple]] = {}  # stage -> task -> tried blocks it needs

    def planned(self, stage_id: int, partition: int | None, creates: list[Hashable]) -> None:
        """A task of the stage computes ``creates`` (None: a task whose reads a profile gave)."""
        if not creates:
            return
        self.creates.setdefault(stage_id, []).extend(creates)
        if self.tried and partition is not None:  # (the common case: nothing failed to store)
            again = tuple(k for k in creates if k in self.tried)
            if again:
                self.lookups.setdefault(stage_id, {})[partition] = again

    def completed(self, stage_id: int, failed: bool, materialized: Container[Hashable]) -> None:
        computed = self.creates.pop(stage_id, ())
        self.lookups.pop(stage_id, None)
        if not failed:
            self.tried.update(k for k in computed if k not in materialized)

    def task_done(self, stage_id: int, partition: int) -> None:
        looks = self.lookups.get(stage_id)
        if looks:
            looks.pop(partition, None)

    def forget_stage(self, stage_id: int, creates: bool = True) -> None:
        self.lookups.pop(stage_id, None)
        if creates:
            self.creates.pop(stage_id, None)

    def cached(self, block: Hashable) -> None:
        self.tried.discard(block)

    def gone(self, blocks: Iterable[Hashable]) -> None:
        """The blocks' RDD was unpersisted."""
        self.tried.difference_update(blocks)

    def looked_up(self, stage_id: int, partition: int) -> tuple:
        return self.lookups.get(stage_id, {}).get(partition, ())
