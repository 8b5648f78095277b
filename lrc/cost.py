"""What a miss of each block costs, per byte it occupies: the cost-aware policy's input.

A miss of a block whose storage level keeps a disk copy (``MEMORY_AND_DISK``, the default of
``df.cache()``) is a disk re-read; any other miss rebuilds the block from its lineage, down to
shuffle outputs. A trace prices that rebuild (``lrc.derive``; the simulator reads it per block,
``AppDAG.lineage_cost``) as its narrow lineage's compute: each RDD's share of the durations of
the tasks that computed it first (a task's duration split evenly among the cached RDDs it
created and its stage's final RDD), priced at what the later half of each executor's warm tasks
took (``warm_cost``) - not the cheaper recomputation down to cached inputs that the simulator's
cost model charges, which holds only while those inputs stay cached. Live, block sizes come
from the executors' block updates and task times from task ends (``Planner.task_finished``).
The brain prices as the trace does (``Planner(price_shares=True)``, ``spark.lrc.priceShares``,
the default), so that a run's replay ranks blocks as its brain did, an unpersisted RDD's price
kept while the lineage of a cached RDD holds it (``MissCosts.forget``), as the trace keeps it.
Before session 51 it priced an RDD at the running mean of the whole durations of the warm
tasks that built it (``RunningMean``; ``spark.lrc.priceShares=false``): on zip at F = 0.7
those priced the shuffle-read dataset `x` 4-6 times over the trace's estimate and the runs
missed 45-56 reads where their replays missed 28-30; priced as the trace does, 28-31, as their
replays (results/fidelity/costs-session50/). Priced as the trace does but with an unpersisted
RDD's price forgotten, SVD++ priced a newest generation at its own share where its rebuild goes
through the generations GraphX has unpersisted, and 2 of 5 runs took 4-5x longer
(results/fidelity/costs-session51/ measures the rule now). The trace counts each RDD of the
lineage once per block, where Spark computes an RDD it does not keep once per narrow path
(2^k times for a GraphX generation k deep): charging that was tried in session 33 and made
crd slower (results/library/svdpp-lineage-session33/).

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
from bisect import bisect_left, insort
from collections import deque
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


def warm_cost(shares: Sequence[tuple[float, bool, str | None]]) -> float:
    """What computing one block of an RDD costs once its executor's code is warm, from the
    ``(seconds, cold, executor)`` shares of the tasks that computed it: the median share of the
    later half of each executor's tasks, cold ones left out (in the order they ended). A rebuild
    comes after the first build, when the JVM has compiled the stage's code: in tpch's CACHE
    TABLE stage one executor ran its warm tasks in 0.24-0.47 s at first and 0.06-0.12 s at the
    end, and a rebuild of that table live cost 0.07 s a task (results/whatif/online/session37/).
    An RDD computed only by cold tasks: their median."""
    by_executor: dict[str | None, list[float]] = {}
    for t, cold, executor in shares:
        if not cold:
            by_executor.setdefault(executor, []).append(t)
    late = [t for ts in by_executor.values() for t in ts[len(ts) // 2:]]
    return statistics.median(late or [t for t, _, _ in shares])


class RunningMean:
    """An RDD's price with ``Planner(price_shares=False)`` (and ``MissCosts``' default): the
    mean of its warm task times, of its cold ones while none is warm, in O(1) per task."""
    __slots__ = ("warm", "n_warm", "cold", "n_cold")

    def __init__(self) -> None:
        self.warm = self.cold = 0.0
        self.n_warm = self.n_cold = 0

    def add(self, seconds: float, cold: bool, executor: str | None) -> None:
        if cold:
            self.cold += seconds
            self.n_cold += 1
        else:
            self.warm += seconds
            self.n_warm += 1

    def value(self) -> float:
        return self.warm / self.n_warm if self.n_warm else self.cold / self.n_cold


class WarmCost:
    """An RDD's price as a trace prices it (``Planner(price_shares=True)``, the default):
    ``warm_cost`` of its tasks' shares, kept as they come - each executor's later half of warm
    shares is a window that slides as its tasks end, every window's values in one sorted list -
    so that a task end costs O(log n) comparisons, not a sort of every share (20,000 tasks of
    one RDD cost 2.4 s of brain CPU that way)."""
    __slots__ = ("windows", "counts", "late", "cold")

    def __init__(self) -> None:
        self.windows: dict[str | None, deque[float]] = {}  # executor -> its later half
        self.counts: dict[str | None, int] = {}  # executor -> its warm shares so far
        self.late: list[float] = []  # every window's values, sorted
        self.cold: list[float] = []

    def add(self, seconds: float, cold: bool, executor: str | None) -> None:
        if cold:
            self.cold.append(seconds)
            return
        window = self.windows.setdefault(executor, deque())
        n = self.counts[executor] = self.counts.get(executor, 0) + 1
        window.append(seconds)
        insort(self.late, seconds)
        while len(window) > n - n // 2:  # warm_cost's ts[len(ts) // 2:]
            del self.late[bisect_left(self.late, window.popleft())]

    def value(self) -> float:
        return _median(self.late) if self.late else statistics.median(self.cold)


def _median(ordered: list[float]) -> float:
    """``statistics.median`` of an already sorted list (the same arithmetic, so equal bits)."""
    n = len(ordered)
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


class MissCosts:
    """Seconds a miss costs per byte of cache, per block (``density``). Write through
    ``sized``, ``task_time`` and ``forget``. ``price``: how an RDD's task times make its price
    (``RunningMean`` or ``WarmCost``); ``lineage``: the RDDs whose work a rebuild of a block of
    an RDD repeats, itself included (with ``WarmCost``, its narrow lineage down to shuffle
    outputs, each RDD once: the planner's DAG walk); by default the RDD alone."""

    def __init__(self, disk_bytes_per_s: float = DISK_BYTES_PER_S,
                 price: Callable[[], RunningMean | WarmCost] = RunningMean,
                 lineage: Callable[[int], Iterable[int]] | None = None) -> None:
        self.disk_bytes_per_s = disk_bytes_per_s
        self.price = price
        self.lineage = lineage or (lambda rdd: (rdd,))
        self.size: dict[Hashable, int] = {}
        self.disk: set[int] = set()  # RDDs whose evicted blocks go to disk
        self.tasks: dict[int, RunningMean | WarmCost] = {}  # rdd -> its task times
        self._compute: dict[int, float] = {}  # rdd -> its price (current ones)
        self._rebuild: dict[int, float] = {}  # rdd -> its lineage's prices (current ones)
        self._lineages: dict[int, tuple[int, ...]] = {}  # rdd -> its lineage (measured RDDs)
        self._held: dict[int, int] = {}  # rdd -> how many of those lineages hold it
        self._retired: dict[int, float] = {}  # unpersisted rdd -> its price, while one holds it
        self._neutral: float | None = None  # None: to compute again

    def sized(self, block: Hashable, nbytes: int) -> None:
        self.size[block] = nbytes
        self._neutral = None

    def task_time(self, rdd: int, seconds: float, cold: bool = False,
                  executor: str | None = None) -> None:
        """A task that computed ``rdd`` first spent ``seconds`` on it (the task's duration, or
        its share of it); ``cold``: it paid its executor's start-up (``ColdStarts``)."""
        t = self.tasks.get(rdd)
        if t is None:
            t = self.tasks[rdd] = self.price()
            # its lineage now, while the job that built it holds every RDD of it in the DAG
            lineage = self._lineages[rdd] = tuple(self.lineage(rdd))
            for q in lineage:
                self._held[q] = self._held.get(q, 0) + 1
        t.add(seconds, cold, executor)
        self._compute.pop(rdd, None)
        self._rebuild.clear()
        self._neutral = None

    def forget(self, rdd: int, blocks: Iterable[Hashable]) -> None:
        """The RDD (``blocks``, its blocks with a size) is no longer cached. Its price stays
        while the lineage of a cached RDD holds it: a rebuild of theirs computes it again (a
        GraphX generation's rebuild goes through the generations unpersisted before it)."""
        for b in blocks:
            del self.size[b]
        for q in self._lineages.pop(rdd, ()):
            n = self._held.pop(q) - 1
            if n:
                self._held[q] = n
            elif self._retired.pop(q, None) is not None:
                self._compute.pop(q, None)
        t = self.tasks.pop(rdd, None)
        if t is not None and rdd in self._held:
            self._retired[rdd] = t.value()
        self._compute.pop(rdd, None)
        self._rebuild.clear()
        self.disk.discard(rdd)
        self._neutral = None

    def rebuild_s(self, rdd: int) -> float | None:
        """Seconds to rebuild one block of ``rdd`` (None until a task that built it ended): the
        price of each RDD of its lineage, as `lrc.dag.AppDAG.lineage_cost` sums a trace's."""
        if rdd not in self.tasks:
            return None
        total = self._rebuild.get(rdd)
        if total is None:
            total = 0.0
            for q in self._lineages[rdd]:
                c = self._compute.get(q)
                if c is None:
                    t = self.tasks.get(q)
                    c = self._compute[q] = t.value() if t is not None else \
                        self._retired.get(q, 0.0)
                total += c
            self._rebuild[rdd] = total
        return total

    def density(self, block: Hashable) -> float:
        rdd = block[0]
        if rdd in self.disk:
            return 1.0 / self.disk_bytes_per_s
        rebuild, size = self.rebuild_s(rdd), self.size.get(block)
        if rebuild is None or not size:
            return self.neutral()
        return rebuild / size

    def neutral(self) -> float:
        """The density of a block not measured yet: the median over the measured RDDs of each
        one's rebuild time over its mean block size (``UNKNOWN`` while none is measured)."""
        if self._neutral is None:
            total: dict[int, list[int]] = {}
            for block, nbytes in self.size.items():
                if nbytes > 0 and block[0] in self.tasks:
                    t = total.setdefault(block[0], [0, 0])
                    t[0] += nbytes
                    t[1] += 1
            dens = [self.rebuild_s(r) * n / b for r, (b, n) in total.items()]
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
