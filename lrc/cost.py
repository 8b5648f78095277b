"""What a miss of each block costs, per byte it occupies: the cost-aware policy's input.

A miss of a block whose storage level keeps a disk copy (``MEMORY_AND_DISK``, the default of
``df.cache()``) is a disk re-read; any other miss rebuilds the block from its lineage, down to
shuffle outputs. Live, block sizes come from the executors' block updates and rebuild times from
the measured durations of the tasks that first computed the block's RDD (its whole narrow
lineage); the simulator uses the same quantity from the trace (``AppDAG.lineage_cost``), not the
cheaper recomputation down to cached inputs that its cost model charges, which holds only while
those inputs stay cached.

A rebuild recomputes the unpersisted RDDs of the lineage too, once per narrow path to each: an
iterative library (GraphX's Pregel, SVD++) zips every generation with a map of the one before
and unpersists the old generations, so a late generation's block rebuilds 2^k earlier ones
(measured on SVD++: one such miss took 70 s of a 93 s run, where its first computation, with
its parents cached, took 0.05 s). So each cached RDD keeps its nearest cached ancestors with
the number of narrow paths to each (``lineage``, from the DAG when it is planned), an
unpersisted RDD's full rebuild time is kept (``lost``), and a block's rebuild is its own
measured time plus, per ancestor that will not be in memory when the block is next read,
paths x that ancestor's rebuild. Unpersisted ancestors alone are not enough: the newest
generation's parent is still persisted but not read after the newest generation's next read,
so it will have been evicted first, and charging nothing for it ranked the newest generation
below older ones when it was stored (SVD++ F = 0.7, 5 repeats: 1.0-4.3x slower than its own
time alone, admission refusing its blocks). So a persisted ancestor with no reference from
the block's next read on counts as lost too.

Live, a block is ranked before its cost is known: a job's new RDD is planned at the job's start,
and its rebuild time arrives with the first task end of the stage that builds it. Until then it
is charged the median density of the RDDs already measured (``MissCosts.neutral``): a fixed
large value would keep every unmeasured block over every measured one (measured on SVD++ under
crd: 20 of a run's 77 ranked evictions took such blocks, each generation's edge RDD kept over
blocks read sooner), a small one would give them up first.
"""
from __future__ import annotations

import heapq
import statistics
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence

DISK_BYTES_PER_S = 200e6
# A reference from a GPU stage weighs 1 + GPU_COST_WEIGHT x (GPUs per task) in the cost-aware
# policy: a miss there leaves a GPU idle while the block is rebuilt, and a GPU costs roughly an
# order of magnitude more per hour than a CPU core (cloud list prices of a GPU instance per GPU
# against a CPU core: about 8-10x), so its time is worth that much more.
GPU_COST_WEIGHT = 8.0
UNKNOWN = 1.0  # seconds per byte when nothing is measured: every block the same (distance decides)
LOST = 4096  # unpersisted RDDs whose rebuild time is kept for their descendants
MAX_PATHS = 1e12  # narrow paths counted to one ancestor (a float stays finite)
MAX_DEPTH = 32  # persisted ancestors without a future reference followed from one block


def cached_ancestors(dag, rdd_id: int) -> dict[int, float]:
    """The nearest cached ancestors of ``rdd_id`` through narrow dependencies and RDDs that are
    not cached, with the number of paths to each: how often a rebuild computes each of them
    once it is no longer cached. A parent's id is below its child's (Spark numbers RDDs as
    they are created), so visiting in descending id order counts every path into an RDD
    before walking on from it."""
    paths: dict[int, float] = {rdd_id: 1.0}
    out: dict[int, float] = {}
    todo = [-rdd_id]  # a max-heap of ids
    while todo:
        rid = -heapq.heappop(todo)
        rdd, n = dag.rdds.get(rid), paths.pop(rid)
        for d in rdd.deps if rdd is not None else ():
            parent = dag.rdds.get(d.parent)
            if d.kind == "shuffle" or parent is None or d.parent >= rid:
                continue
            if parent.cached:
                out[d.parent] = min(MAX_PATHS, out.get(d.parent, 0.0) + n)
            else:
                if d.parent not in paths:
                    paths[d.parent] = 0.0
                    heapq.heappush(todo, -d.parent)
                paths[d.parent] = min(MAX_PATHS, paths[d.parent] + n)
    return out


class MissCosts:
    """Seconds a miss costs per byte of cache, per block (``density``). Write through
    ``sized``, ``task_time`` and ``forget``: they keep ``neutral`` current."""

    def __init__(self, disk_bytes_per_s: float = DISK_BYTES_PER_S, lineage: bool = True) -> None:
        self.disk_bytes_per_s = disk_bytes_per_s
        self.count_lineage = lineage  # False: a block's own rebuild time only (spark.lrc.costLineage)
        self.size: dict[Hashable, int] = {}
        self.rebuild_s: dict[int, float] = {}  # rdd -> seconds to rebuild one of its blocks
        self.disk: set[int] = set()  # RDDs whose evicted blocks go to disk
        self._samples: dict[int, int] = {}  # rdd -> task durations in its rebuild_s
        self._neutral: float | None = None  # None: to compute again
        self.ancestors: dict[int, dict[int, float]] = {}  # cached rdd -> cached_ancestors
        self.lost: OrderedDict[int, float] = OrderedDict()  # unpersisted rdd -> rebuild seconds
        self.refs = None  # the planner's RefState: which ancestors are read again, and when

    def sized(self, block: Hashable, nbytes: int) -> None:
        self.size[block] = nbytes
        self._neutral = None

    def task_time(self, rdd: int, seconds: float) -> None:
        """A task that computed ``rdd`` first took ``seconds``: a running mean per RDD."""
        n = self._samples[rdd] = self._samples.get(rdd, 0) + 1
        old = self.rebuild_s.get(rdd, 0.0)
        self.rebuild_s[rdd] = old + (seconds - old) / n
        self._neutral = None

    def lineage(self, rdd: int, ancestors: dict[int, float]) -> None:
        """The cached RDD's ``cached_ancestors`` (the first description holds its lineage)."""
        if self.count_lineage:
            self.ancestors.setdefault(rdd, ancestors)

    def rebuild(self, block: Hashable) -> float:
        """Seconds a miss of ``block`` (an (rdd, partition) pair) at its next reference costs:
        a disk read, or its own time plus, per ancestor that will not be in memory then, paths x
        that ancestor's rebuild. An ancestor will not be when it is unpersisted (``lost``) or
        its block has no reference from then on (``refs``, the planner's RefState: it will
        have been evicted first; None: every persisted ancestor stays)."""
        refs = self.refs
        when = None if refs is None else refs.next_ref.get(block)
        return self._seconds(block[0], block[1], self.size.get(block, 0), 0, when)

    def _seconds(self, rdd: int, part: int, size: float, depth: int, when: float | None) -> float:
        if rdd in self.disk:
            return size / self.disk_bytes_per_s
        own = self.rebuild_s.get(rdd)
        seconds = self.neutral() * size if own is None else own
        lost, refs = self.lost, self.refs
        for a, n in self.ancestors.get(rdd, {}).items():
            if a in lost:
                seconds += n * lost[a]
            elif refs is not None and depth < MAX_DEPTH:
                seqs = refs.next_seqs.get((a, part))
                if not seqs or (when is not None and max(seqs) < when):
                    seconds += n * self._seconds(a, part, self.size.get((a, part), 0),
                                                 depth + 1, when)
        return min(seconds, 1e300)

    def forget(self, rdd: int, blocks: Iterable[Hashable]) -> None:
        """The RDD (``blocks``, its blocks with a size) is no longer cached: what rebuilding
        one of its blocks takes (one of its mean size) stays known to the RDDs computed from it."""
        blocks = list(blocks)
        mean = sum(self.size[b] for b in blocks) / len(blocks) if blocks else 0
        seconds = self._seconds(rdd, 0, mean, 0, None) if rdd not in self.disk else 0.0
        if seconds > 0:
            self.lost[rdd] = seconds
            while len(self.lost) > LOST:
                self.lost.popitem(last=False)
        self.ancestors.pop(rdd, None)
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
        size = self.size.get(block)
        if not size or (rdd not in self.rebuild_s and rdd not in self.ancestors):
            return self.neutral()
        return self.rebuild(block) / size

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
        super().__init__(disk_bytes_per_s, lineage=False)  # the static cost has its lineage
        self._arrays = cost, sizes, disk
        self._density: list[float] | None = None  # computed on first use: most policies never ask

    def density(self, block: int) -> float:
        d = self._density
        if d is None:
            cost, sizes, disk = self._arrays
            d = self._density = [1.0 / self.disk_bytes_per_s if k else c / max(1, s)
                                 for c, s, k in zip(cost, sizes, disk)]
        return d[block] if block < len(d) else UNKNOWN
