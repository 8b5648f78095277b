"""What a miss of each block costs, per byte it occupies: the cost-aware policy's input.

A miss of a block whose storage level keeps a disk copy (``MEMORY_AND_DISK``, the default of
``df.cache()``) is a disk re-read; any other miss rebuilds the block from its lineage, down to
shuffle outputs. Live, block sizes come from the executors' block updates and rebuild times from
the measured durations of the tasks that first computed the block's RDD (its whole narrow
lineage); the simulator uses the same quantity from the trace (``AppDAG.lineage_cost``), not the
cheaper recomputation down to cached inputs that its cost model charges, which holds only while
those inputs stay cached.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

DISK_BYTES_PER_S = 200e6
# A reference from a GPU stage weighs 1 + GPU_COST_WEIGHT x (GPUs per task) in the cost-aware
# policy: a miss there leaves a GPU idle while the block is rebuilt, and a GPU costs roughly an
# order of magnitude more per hour than a CPU core (cloud list prices of a GPU instance per GPU
# against a CPU core: about 8-10x), so its time is worth that much more.
GPU_COST_WEIGHT = 8.0
UNKNOWN = 1.0  # seconds per byte when nothing is known: every block the same (distance decides)


class MissCosts:
    """Seconds a miss costs per byte of cache, per block (``density``)."""

    def __init__(self, disk_bytes_per_s: float = DISK_BYTES_PER_S) -> None:
        self.disk_bytes_per_s = disk_bytes_per_s
        self.size: dict[Hashable, int] = {}
        self.rebuild_s: dict[int, float] = {}  # rdd -> seconds to rebuild one of its blocks
        self.disk: set[int] = set()  # RDDs whose evicted blocks go to disk

    def density(self, block: Hashable) -> float:
        size = self.size.get(block)
        rdd = block[0]
        if rdd in self.disk:
            return 1.0 / self.disk_bytes_per_s
        rebuild = self.rebuild_s.get(rdd)
        if rebuild is None or not size:
            return UNKNOWN
        return rebuild / size


class ArrayCosts(MissCosts):
    """The simulator's: per block id, from a compiled trace's arrays (``lineage_cost``)."""

    def __init__(self, cost: Sequence[float], sizes: Sequence[int], disk: Sequence[bool],
                 disk_bytes_per_s: float = DISK_BYTES_PER_S) -> None:
        super().__init__(disk_bytes_per_s)
        self._arrays = cost, sizes, disk
        self._density: list[float] | None = None  # computed on first use: most policies never ask

    def density(self, block: int) -> float:
        d = self._density
        if d is None:
            cost, sizes, disk = self._arrays
            d = self._density = [1.0 / self.disk_bytes_per_s if k else c / max(1, s)
                                 for c, s, k in zip(cost, sizes, disk)]
        return d[block] if block < len(d) else UNKNOWN
