"""What a miss of each block costs, per byte it occupies: the cost-aware policy's input.

A miss of a block whose storage level keeps a disk copy (``MEMORY_AND_DISK``, the default of
``df.cache()``) is a disk re-read; any other miss rebuilds the block from its lineage, down to
shuffle outputs. Live, block sizes come from the executors' block updates and rebuild times from
the measured durations of the tasks that first computed the block's RDD (its whole narrow
lineage); the simulator uses the same quantity from the trace (``AppDAG.lineage_cost``), not the
cheaper recomputation down to cached inputs that its cost model charges, which holds only while
those inputs stay cached.

Live, a block is ranked before its cost is known: a job's new RDD is planned at the job's start,
and its rebuild time arrives with the first task end of the stage that builds it. Until then it
is charged the median density of the RDDs already measured (``MissCosts.neutral``): a fixed
large value would keep every unmeasured block over every measured one (measured on SVD++ under
crd: 20 of a run's 77 ranked evictions took such blocks, each generation's edge RDD kept over
blocks read sooner), a small one would give them up first.

An executor's first tasks run cold (``ColdStarts``): they pay its start-up, which a rebuild
later does not, so their times count only while an RDD has no warm one.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Iterable, Sequence

DISK_BYTES_PER_S = 200e6
# A reference from a GPU stage weighs 1 + GPU_COST_WEIGHT x (GPUs per task) in the cost-aware
# policy: a miss there leaves a GPU idle while the block is rebuilt, and a GPU costs roughly an
# order of magnitude more per hour than a CPU core (cloud list prices of a GPU instance per GPU
# against a CPU core: about 8-10x), so its time is worth that much more.
GPU_COST_WEIGHT = 8.0
UNKNOWN = 1.0  # seconds per byte when nothing is measured: every block the same (distance decides)


class ColdStarts:
    """Which finished tasks ran cold: the first one per task slot (``cores``) to end on each
    executor. Those pay the executor's start-up - JVM class loading and JIT, the Python
    worker's fork and imports: 2.2-4.1 s against 0.19-0.39 s for the same stage's other tasks
    in the event logs of every benchmark workload (results/whatif/online/session36) - which
    rebuilding a block later does not. ``cores``: an executor's core count (None: not known,
    one slot)."""

    def __init__(self, cores: Callable[[str], int | None] = lambda executor: None) -> None:
        self.cores = cores
        self._ended: dict[str, int] = {}

    def task_ended(self, executor: str | None) -> bool:
        """Count a finished task of ``executor``: True if it ran cold (unknown executor: no)."""
        if executor is None:
            return False
        n = self._ended.get(executor, 0)
        if n >= (self.cores(executor) or 1):
            return False
        self._ended[executor] = n + 1
        return True


class MissCosts:
    """Seconds a miss costs per byte of cache, per block (``density``). Write through
    ``sized``, ``task_time`` and ``forget``: they keep ``neutral`` current."""

    def __init__(self, disk_bytes_per_s: float = DISK_BYTES_PER_S) -> None:
        self.disk_bytes_per_s = disk_bytes_per_s
        self.size: dict[Hashable, int] = {}
        self.rebuild_s: dict[int, float] = {}  # rdd -> seconds to rebuild one of its blocks
        self.disk: set[int] = set()  # RDDs whose evicted blocks go to disk
        # rdd -> (task durations in its rebuild_s, whether all of them ran cold)
        self._samples: dict[int, tuple[int, bool]] = {}
        self._neutral: float | None = None  # None: to compute again

    def sized(self, block: Hashable, nbytes: int) -> None:
        self.size[block] = nbytes
        self._neutral = None

    def task_time(self, rdd: int, seconds: float, cold: bool = False) -> None:
        """A task that computed ``rdd`` first took ``seconds``: a running mean per RDD, of its
        warm tasks once it has one (a ``cold`` task's time stands in until then)."""
        n, all_cold = self._samples.get(rdd, (0, True))
        if cold and not all_cold:
            return
        if all_cold and not cold:
            n = 0  # the first warm time replaces the cold ones
        n += 1
        self._samples[rdd] = (n, cold)
        old = self.rebuild_s.get(rdd, 0.0) if n > 1 else 0.0
        self.rebuild_s[rdd] = old + (seconds - old) / n
        self._neutral = None

    def forget(self, rdd: int, blocks: Iterable[Hashable]) -> None:
        """The RDD (``blocks``, its blocks with a size) is no longer cached."""
        for b in blocks:
            del self.size[b]
        self.rebuild_s.pop(rdd, None)
        self._samples.pop(rdd, None)
        self.disk.discard(rdd)
        self._neutral = None

    def density(self, block: Hashable) -> float:
        rdd = block[0]
        if rdd in self.disk:
            return 1.0 / self.disk_bytes_per_s
        rebuild, size = self.rebuild_s.get(rdd), self.size.get(block)
        if rebuild is None or not size:
            return self.neutral()
        return rebuild / size

    def neutral(self) -> float:
        """The density of a block not measured yet: the median over the measured RDDs of each
        one's rebuild time over its mean block size (``UNKNOWN`` while none is measured)."""
        if self._neutral is None:
            total: dict[int, list[int]] = {}
            rebuild = self.rebuild_s
            for block, nbytes in self.size.items():
                if nbytes > 0 and block[0] in rebuild:
                    t = total.setdefault(block[0], [0, 0])
                    t[0] += nbytes
                    t[1] += 1
            dens = [rebuild[r] * n / b for r, (b, n) in total.items()]
            self._neutral = statistics.median(dens) if dens else UNKNOWN
        return self._neutral


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
