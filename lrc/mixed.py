"""Mixed executors in the simulator: CPU executors and GPU executors, stages bound to a kind.

With stage-level scheduling (Spark's ``ResourceProfile``) a GPU stage's tasks run only on the
executors that have GPUs, every other task only on the others. Here the last ``gpu_executors``
of the simulator's executors have GPUs; a stage is a GPU stage when ``Stage.gpus > 0`` or its id
is in ``gpu_stages`` (for traces recorded without resource profiles). A GPU-stage task runs on
GPU executor ``partition % gpu_executors`` (placement uses the same choice); a CPU task on its
recorded executor if that is a CPU executor, else on the CPU executor holding most of its input
bytes, else ``partition % cpu_executors``.

Costs: a read that hits in another executor's memory is a remote read, ``size /
net_bytes_per_s`` seconds, counted in ``remote_bytes`` (``gpu_remote_bytes`` inside GPU stages).
Only a task's own reads are charged (not the inputs a rebuild of a missed block reads). The GPU
idle time estimate is what a GPU-stage task's reads cost beyond local hits: the rebuilds and disk
re-reads of its misses plus its remote reads (the GPU waits for them).

Placement (``placement=True``): when a GPU stage is submitted, the planned cached inputs of each
of its tasks that sit on a CPU executor move into the memory of the GPU executor that will run
the task, in partition order. The CPU copy is dropped (the first to evict, made explicit: a
block lives on one executor in this simulator). A move is made only if it fits in the GPU
executor's free storage plus the blocks it may evict whose priority is lower than the moved
block's (never one with a higher priority), less the room the stage's inputs that are cached
nowhere will take there (``reserve``: the tasks rebuild them on that executor, and Spark never
evicts a block of the RDD being stored, so a move that takes their room turns a remote hit
into a miss every time the stage repeats), and within ``stage_budget_bytes`` per stage; what
does not fit stays where it is (counted in ``placement_skipped``). Planned inputs are the
planner's references of the stage's tasks; policies without a planner (lru, min) use the
trace's recorded reads (what a profile of the application would plan).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from lrc.dag import AppDAG


@dataclass(frozen=True)
class MixedCluster:
    """The executor kinds of a replay (``simulate(..., cluster=MixedCluster(2))``)."""

    gpu_executors: int
    placement: bool = False
    net_bytes_per_s: float = 100e6  # a remote read (1 Gbit/s class network, shuffle-like)
    gpu_stages: frozenset | None = None  # stage ids run on GPUs besides those with gpus > 0
    stage_budget_bytes: int | None = None  # placement: bytes moved per stage at most
    reserve: bool = True  # placement keeps room for the stage's inputs cached nowhere


@dataclass
class MixedResult:
    """What happened on the GPU executors (``SimResult.mixed``)."""

    gpu_executors: int
    placement: bool
    gpu_tasks: int = 0
    gpu_reads: int = 0
    gpu_misses: int = 0
    gpu_local_reads: int = 0  # hits in the memory of the GPU executor running the task
    gpu_miss_s: float = 0.0  # rebuilds and disk re-reads inside GPU stages
    gpu_remote_s: float = 0.0  # remote reads inside GPU stages
    remote_reads: int = 0
    remote_bytes: int = 0
    gpu_remote_bytes: int = 0
    placed_bytes: int = 0
    placed_copies: int = 0
    placement_skipped: int = 0  # planned moves that did not fit (room below, budget)
    tasks_per_executor: list = field(default_factory=list)
    gpu_tasks_per_executor: list = field(default_factory=list)

    @property
    def gpu_idle_s(self) -> float:
        """Estimated GPU idle time: GPU-stage tasks waiting for rebuilds and remote reads."""
        return self.gpu_miss_s + self.gpu_remote_s

    def to_dict(self) -> dict:
        d = asdict(self)
        d["gpu_idle_s"] = self.gpu_idle_s
        return d


def gpu_view(dag: AppDAG, stage_ids) -> AppDAG:
    """The DAG with the given stages marked as GPU stages (one GPU per task) where they have no
    GPU amount of their own; shares everything else with ``dag`` (which is not changed)."""
    if not stage_ids:
        return dag
    ids = set(stage_ids)
    stages = {sid: replace(s, gpus=1.0) if sid in ids and not s.gpus else s
              for sid, s in dag.stages.items()}
    return AppDAG(dag.rdds, stages, dag.jobs)


class Mixed:
    """The mixed-cluster part of one replay: executor choice, read accounting, placement."""

    def __init__(self, cluster: MixedCluster, dag: AppDAG, executors: int, ct) -> None:
        g = cluster.gpu_executors
        if not 0 < g < executors:
            raise ValueError(f"gpu_executors must be in [1, {executors - 1}] with {executors} "
                             f"executors (the others are the CPU executors); got {g}")
        if not cluster.net_bytes_per_s > 0:
            raise ValueError("net_bytes_per_s must be > 0")
        self.cluster, self.ct, self.g, self.first_gpu = cluster, ct, g, executors - g
        self.placement = cluster.placement
        self.net = float(cluster.net_bytes_per_s)
        self.gpu_stages = {sid for sid, s in dag.stages.items() if s.gpus > 0}
        self.gpu_stages.update(cluster.gpu_stages or ())
        self.res = MixedResult(g, cluster.placement, tasks_per_executor=[0] * executors,
                               gpu_tasks_per_executor=[0] * executors)
        self._recorded: dict[int, dict[int, tuple]] | None = None

    def executor(self, gpu: bool, part: int, rec_ex: int, reads, where, sizes) -> int:
        """Where a task runs (see the module docstring)."""
        if gpu:
            return self.first_gpu + part % self.g
        c = self.first_gpu
        if 0 <= rec_ex < c:
            return rec_ex
        held: dict[int, int] = {}
        for b in reads:
            e = where[b]
            if 0 <= e < c:
                held[e] = held.get(e, 0) + sizes[b]
        return max(held, key=held.get) if held else part % c

    def task_reads(self, gpu: bool, ex: int, reads, hit_reads, miss_s: float, sizes) -> float:
        """Count a task's reads (``hit_reads``: ``(block, executor, stamp)``); returns the
        seconds its remote reads take."""
        r = self.res
        r.tasks_per_executor[ex] += 1
        remote = local = 0
        for b, e, _ in hit_reads:
            if e == ex:
                local += 1
            else:
                remote += sizes[b]
                r.remote_reads += 1
        secs = remote / self.net
        r.remote_bytes += remote
        if gpu:
            r.gpu_tasks += 1
            r.gpu_tasks_per_executor[ex] += 1
            r.gpu_reads += len(reads)
            r.gpu_misses += len(reads) - len(hit_reads)
            r.gpu_local_reads += local
            r.gpu_remote_bytes += remote
            r.gpu_miss_s += miss_s
            r.gpu_remote_s += secs
        return secs

    def planned(self, stage: int, planner) -> dict[int, tuple]:
        """The stage's tasks' planned reads: the planner's, else the trace's recorded ones."""
        if planner is not None:
            return planner.refs.pending.get(stage, {})
        if self._recorded is None:
            self._recorded = {}
            for ev in self.ct.events:
                if ev[0] == 2:
                    self._recorded.setdefault(ev[1], {})[ev[2]] = ev[4]
        return self._recorded.get(stage, {})

    def place(self, planned: dict[int, tuple], caches, where, prio, store) -> None:
        """The placement step for a GPU stage being submitted (module docstring); ``store(b,
        ex)`` caches ``b`` on ``ex`` as a load does (evictions counted; ``where[b]`` is ``ex``
        if it fit)."""
        r, sizes, rdd_of = self.res, self.ct.sizes, self.ct.rdd_of
        budget = self.cluster.stage_budget_bytes
        moved = 0
        reserved = [0] * len(caches)
        if self.cluster.reserve:
            # (ids past the trace's blocks were planned but never run: no room needed)
            rebuilt = {(self.first_gpu + part % self.g, b) for part, reads in planned.items()
                       for b in reads if b < len(where) and where[b] < 0}
            for dst, b in rebuilt:
                reserved[dst] += sizes[b]
        for part in sorted(planned):
            dst = self.first_gpu + part % self.g
            for b in planned[part]:
                src = where[b] if b < len(where) else -1
                if not 0 <= src < self.first_gpu:
                    continue  # not cached, or already on a GPU executor
                size = sizes[b]
                if (budget is not None and moved + size > budget) \
                        or caches[dst].room_below(prio(b), rdd_of[b]) - reserved[dst] < size:
                    r.placement_skipped += 1
                    continue
                caches[src].remove(b)
                where[b] = -1
                store(b, dst)
                if where[b] == dst:
                    moved += size
                    r.placed_copies += 1
                else:  # cannot happen after room_below; keep the block where it was
                    store(b, src)
                    r.placement_skipped += 1
        r.placed_bytes += moved
