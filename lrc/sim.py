"""Trace-driven simulator: replay a Trace under a policy and a per-executor cache size.

Model: a read hits if the block is cached on any executor (remote reads hit, as in Spark). A miss
re-reads the block from disk if its level keeps a disk copy (MEMORY_AND_DISK: evicted, or stored
there when memory had no room), otherwise recomputes it from lineage (its own cost plus,
recursively, its cached inputs' misses); either way it is cached
again on the task's executor - unless its RDD has been unpersisted: Spark then computes its
blocks without storing them (a GraphX loop recomputing a generation it has unpersisted), and
the replay never stores them again; an RDD persisted again after its unpersist is not modelled.
``creates`` (first computation of a block) are not reads. Nested
reads during recomputation change cache state and cost but are not counted in the hit ratio.
A task's reads stay pinned while it runs. A task that claimed execution memory (the trace's
``exec_bytes``) holds it after its reads and until it ends: cached blocks make room down to
``storage_fraction`` of the executor's memory, in the policy's order (``lrc.execmem``; traces
without claims replay as before). Stage time = max over executors of the summed task
costs / cores; the estimated runtime is the sum over stages.

One replay for every policy: the caches are ``lrc.evict.EvictionIndex``es, priorities come from
``policy.bind`` over the same ``Planner`` / ``RefState`` as the live plugin (online references
job by job with predicted references for the jobs to come, ``"blind"``: job by job only, or
``"profile"``: preloaded from the trace itself, a recurring application),
keyed by the compiled trace's block ids. Constant policies (lru) need no state; policies that
need the future (min) get each block's next access position from the trace.

``cluster=MixedCluster(...)`` (``lrc.mixed``) replays on CPU and GPU executors with stages bound
to a kind, remote reads charged, and optionally the placement step ahead of GPU stages; without
it nothing of that runs and the numbers are those of one kind of executor.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from lrc.compiled import CompiledTrace
from lrc.cost import DISK_BYTES_PER_S, GPU_COST_WEIGHT, ArrayCosts
from lrc.evict import EvictionIndex
from lrc.execmem import (SPARK_STORAGE_FRACTION, claim_scale, resolve_storage_fraction,
                         storage_limit)
from lrc.mixed import Mixed, MixedCluster, MixedResult, gpu_view
from lrc.planner import Planner
from lrc.policies import Policy, get_policy
from lrc.refcount import RefState
from lrc.task_order import StageQueue, check_task_order, stage_places
from lrc.trace import Trace

__all__ = ["CompiledTrace", "MixedCluster", "SimResult", "simulate"]

# where references come from: the trace itself (a recurring application's profile), job by job
# as live (predicted references for the jobs not yet submitted for mrd/crd), job by job only
REFS = ("profile", "online", "blind")


@dataclass
class SimResult:
    workload: str
    policy: str
    cache_fraction: float
    executors: int
    refs: str
    cache_bytes: int = 0
    reads: int = 0
    hits: int = 0
    tasks_with_reads: int = 0
    tasks_all_hit: int = 0
    evictions: int = 0
    exec_evictions: int = 0  # of those, made for execution memory (lrc.execmem)
    recomputed_bytes: int = 0
    disk_reads: int = 0
    est_runtime: float = 0.0
    # the most bytes one executor's cache held or was asked to hold at once: a replay whose
    # caches are at least this large never evicts (nor fails to cache), whatever the policy
    # (without a MixedCluster, whose placement reads priorities)
    peak_cache_bytes: int = 0
    evicted: list = field(default_factory=list)  # victims, only with log_evictions
    mixed: MixedResult | None = None  # GPU-executor counts, only with a MixedCluster

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.reads if self.reads else 1.0

    @property
    def effective_hit_ratio(self) -> float:
        return self.tasks_all_hit / self.tasks_with_reads if self.tasks_with_reads else 1.0

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["evicted"], d["mixed"]
        if self.mixed is not None:
            d.update(self.mixed.to_dict())
        d["hit_ratio"] = self.hit_ratio
        d["effective_hit_ratio"] = self.effective_hit_ratio
        return d


def simulate(trace: Trace | CompiledTrace, policy: str | Policy, cache_fraction: float,
             executors: int = 4, cores: int = 2, refs: str = "profile", peer_mode: str = "task",
             disk_bytes_per_s: float = DISK_BYTES_PER_S, log_evictions: bool = False,
             cluster: MixedCluster | None = None,
             gpu_cost_weight: float = GPU_COST_WEIGHT,
             storage_fraction: float | None = None, exec_claims: bool = True,
             unroll_threshold: int | None = None, admit: bool = False,
             task_order: str = "logged") -> SimResult:
    """Replay ``trace`` with cluster cache = ``cache_fraction`` x the cached working set (the
    most bytes cached at once with unlimited memory), split evenly over ``executors``.
    ``log_evictions`` records victims in ``result.evicted``. ``cluster``: executors of two
    kinds (``lrc.mixed``); ``gpu_cost_weight``: what GPU-stage references weigh in crd
    (``Planner``). ``storage_fraction``: the share of an executor's memory that execution
    memory's claims cannot take (Spark's spark.memory.storageFraction; None: the trace's, else
    Spark's default); ``exec_claims=False`` replays as if execution never needed the cache's room
    (unlimited memory). ``unroll_threshold``: Spark's spark.storage.unrollMemoryThreshold, to
    replay the unroll memory a store reserves first (``lrc.unroll``; None: the trace's, and if
    it has none - synthetic - a store needs only its block's size). ``admit``: a store never
    evicts a block the policy ranks above the block being stored, and fails instead (the
    executors' spark.lrc.admit, off by default; ``EvictionIndex``). ``task_order="spark"``:
    each task slot of a stage (its logged executor) takes the task Spark's scheduler would give
    that executor from what was cached when the stage started (``lrc.task_order``), not the
    logged one: a trace recorded with ample memory runs its tasks in an order that pressure
    changes (not with ``cluster`` or a policy that needs the future, whose positions follow the
    logged order). A CompiledTrace can be replayed any number of times: a replay never changes
    it."""
    if refs not in REFS:
        raise ValueError(f"refs must be one of {', '.join(REFS)}, not {refs!r}")
    check_task_order(task_order)
    if executors < 1:
        raise ValueError("executors must be >= 1")
    ct = trace if isinstance(trace, CompiledTrace) else CompiledTrace(trace)
    storage_fraction = resolve_storage_fraction(ct.trace, storage_fraction)
    if unroll_threshold is None:
        unroll_threshold = ct.trace.unroll_threshold
    policy = get_policy(policy)
    if task_order == "spark" and (cluster is not None or policy.needs_future):
        raise ValueError("task_order='spark' replays neither a MixedCluster nor a policy that "
                         "needs the future (min)")
    return _Replay(ct, policy, cache_fraction, executors, cores, refs, peer_mode,
                   disk_bytes_per_s, log_evictions, cluster, gpu_cost_weight,
                   storage_fraction, exec_claims, unroll_threshold, admit,
                   task_order == "spark").run()


class _Replay:
    """One replay: per-executor caches, the policy's state, the cost model, the counters."""

    def __init__(self, ct: CompiledTrace, policy: Policy, fraction: float, executors: int,
                 cores: int, refs: str, peer_mode: str, disk_bw: float, log: bool,
                 cluster: MixedCluster | None = None, gpu_weight: float = GPU_COST_WEIGHT,
                 storage_fraction: float = SPARK_STORAGE_FRACTION, claims: bool = True,
                 unroll_threshold: int | None = None, admit: bool = False,
                 spark_order: bool = False) -> None:
        self.ct, self.n, self.cores, self.disk_bw = ct, executors, cores, disk_bw
        self.spark_order = spark_order
        # the DAG as the planner sees it: stages a MixedCluster binds to GPUs carry gpus
        self.dag = gpu_view(ct.trace.dag, cluster.gpu_stages) if cluster else ct.trace.dag
        self.mixed = Mixed(cluster, self.dag, executors, ct) if cluster else None
        per_exec = self.memory = int(fraction * ct.working_set_bytes / executors)
        self.storage_fraction = storage_fraction
        # execution memory's claims, rescaled to this memory (lrc.execmem); 0: none in the trace
        self.claim_scale = claim_scale(ct.trace.executor_memory, per_exec, storage_fraction,
                                       cores) if claims and ct.exec_claims else 0.0
        steps = ct.reserve_steps(unroll_threshold) if unroll_threshold else None
        reserve = ct.reserves(unroll_threshold) if unroll_threshold else None
        self.caches = [EvictionIndex(per_exec, ct.sizes, ct.rdd_of, reserve, steps, admit)
                       for _ in range(executors)]
        self.res = SimResult(ct.name, policy.name, fraction, executors, refs,
                             cache_bytes=per_exec * executors,
                             mixed=self.mixed.res if self.mixed else None)
        self.log = self.res.evicted if log else None
        self.where = [-1] * len(ct.blocks)  # executor caching each block, -1: none
        self.on_disk = bytearray(len(ct.blocks))
        # with spark_order: the executor whose disk holds each block's copy (-1: none)
        self.disk_at = [-1] * len(ct.blocks) if spark_order else None
        self.unpersisted: set[int] = set()  # their blocks are recomputed, never stored again
        # constant priorities (Spark's LRU): a hit's place is the order of the moves, not the read
        self.fresh_stamps = policy.constant
        self.planner: Planner | None = None
        self.next_access = self.future = None
        state = RefState()
        if policy.needs_future:
            nxt, first = ct.future()
            self.future = nxt.tolist()
            state.next_access = self.next_access = first.tolist()
        elif not policy.constant:
            self.planner = Planner(policy, None, peer_mode, simulated=True,
                                   block_ids=ct.block_ids.copy(),
                                   predict=None if refs == "online" else False,
                                   costs=ArrayCosts(ct.lineage_cost, ct.sizes, ct.disk,
                                                    disk_bw), gpu_cost_weight=gpu_weight,
                                   admit=admit)
            if refs == "profile":
                self.planner.preload(self.dag, ct.tasks())
            state = self.planner.refs
        self.cache_aware = self.planner is not None and self.planner.cache_aware
        self.prio = policy.bind(state)
        self.prio_stored = policy.bind_stored(state)  # a store's rank (Policy.bind_stored)

    # ---- events ------------------------------------------------------------------------------
    def unpersist(self, rdd_id: int) -> None:
        self.unpersisted.add(rdd_id)
        gone = [b for c in self.caches for b in c.drop_rdd(rdd_id)]
        for b in gone:
            self.where[b] = -1
        for b in self.ct.rdd_blocks(rdd_id):
            self.on_disk[b] = 0
            if self.disk_at is not None:
                self.disk_at[b] = -1
        if self.planner is not None:
            for b in gone:
                self.planner.set_cached(b, False)
            self.planner.rdd_unpersisted(rdd_id)

    def control(self, kind: int, arg: int, partitions: tuple[int, ...] | None = None) -> None:
        """Job start/end, stage submitted (``partitions``: those the attempt computes, when
        not all) or completed, unpersist."""
        if kind == 5:
            self.unpersist(arg)
        p = self.planner
        if p is None:
            return
        if kind == 0:
            dag = self.dag
            job = dag.jobs.get(arg)
            if job is not None:  # the trace describes each RDD once: new ones only
                rdds = [r for r in self.ct.job_rdds[arg] if r.id not in p.dag.rdds]
                p.add_job(job, [dag.stages[s] for s in job.stage_ids], rdds)
        elif kind == 1:
            p.stage_submitted(arg, partitions)
        elif kind == 3:
            p.stage_completed(arg)
        elif kind == 4:
            p.job_ended(arg)

    # ---- replay ------------------------------------------------------------------------------
    def run(self) -> SimResult:
        ct, n, res, planner = self.ct, self.n, self.res, self.planner
        caches, where = self.caches, self.where
        sizes, cost_of, inputs, disk, on_disk = ct.sizes, ct.cost, ct.inputs, ct.disk, self.on_disk
        prio, fresh, disk_bw, log = self.prio, self.fresh_stamps, self.disk_bw, self.log
        prio_stored = self.prio_stored
        disk_at = self.disk_at
        cache_aware, nb = self.cache_aware, len(where)
        materialized = planner.materialized if planner is not None else None
        refs = planner.refs if planner is not None else None
        na, nxt, pos = self.next_access, self.future, 0
        stamp = evictions = exec_evictions = disk_reads = recomputed = 0
        memory, sf, scale = self.memory, self.storage_fraction, self.claim_scale
        unpersisted, rdd_of = self.unpersisted, ct.rdd_of

        def reorder() -> None:
            """Re-order cached blocks whose priority may have moved (``refs.changed``)."""
            changed = refs.changed
            if changed:
                for b in changed:
                    if b < nb:  # ids past the trace's blocks (planned, never run): never cached
                        e = where[b]
                        if e >= 0:
                            caches[e].set_priority(b, prio(b))
                changed.clear()

        def dropped(victims) -> None:
            """Evicted blocks leave their executor (a copy stays on disk if their level has one)."""
            for v in victims:
                if disk[v]:
                    on_disk[v] = 1
                    if disk_at is not None:
                        disk_at[v] = where[v]
                where[v] = -1
            if log is not None:
                log.extend(ct.blocks[v] for v in victims)

        def uncached(victims) -> None:
            """Evicted with nothing stored in their place: a cache-aware planner re-counts."""
            if cache_aware and victims:
                for v in victims:
                    planner.set_cached(v, False)
                if refs.changed:
                    reorder()

        def load(b: int, ex: int, pinned=(), miss: bool = False) -> float:
            """Cache ``b`` on ``ex`` (evicting what the policy says; ``where[b]`` stays -1 if
            it did not fit); a ``miss`` first re-reads it from disk or recomputes it from
            lineage (its inputs' misses recursively). Returns the seconds that took."""
            nonlocal stamp, evictions, disk_reads, recomputed
            cost = 0.0
            if miss:
                if on_disk[b]:
                    cost = sizes[b] / disk_bw
                    disk_reads += 1
                else:
                    cost = cost_of[b]
                    recomputed += sizes[b]
                    for i in inputs[b]:
                        e = where[i]
                        if e < 0:
                            cost += load(i, ex, pinned, True)
                        else:
                            stamp += 1
                            caches[e].touch(i, prio(i), stamp)
            if unpersisted and rdd_of[b] in unpersisted:
                return cost  # Spark computes an unpersisted RDD's blocks without storing them
            stamp += 1
            cache = caches[ex]
            victims = cache.insert(b, prio(b), stamp, pinned, prio_stored(b))
            if victims:
                dropped(victims)
                evictions += len(victims)
            if cache.entry[b] is None:  # did not fit (what its reservation's first steps evicted
                # stays out); a level with a disk copy writes it there
                uncached(victims)
                if disk[b] and not on_disk[b]:
                    on_disk[b] = 1
                    if disk_at is not None:
                        disk_at[b] = ex
                    if materialized is not None:
                        planner.on_disk(b)
                return cost
            where[b] = ex
            if cache_aware:
                planner.cached_instead(b, victims)
                if refs.changed:
                    reorder()
            elif materialized is not None and b not in materialized:
                planner.set_cached(b, True)  # (else it would change nothing)
            return cost

        def read(b: int, ex: int, pinned, hit_reads: list) -> float:
            """A task's read of ``b`` on ``ex``: a hit is noted (ordered at the task's end), a
            miss loads it. Returns the seconds a miss took."""
            nonlocal stamp, pos
            stamp += 1
            if na is not None:
                na[b] = nxt[pos]
                pos += 1
            e = where[b]
            if e < 0:
                return load(b, ex, pinned, True)
            hit_reads.append((b, e, stamp))
            return 0.0

        def create(b: int, ex: int, pinned) -> None:
            """A block the task computes: stored (or re-ordered if a copy is cached)."""
            nonlocal stamp, pos
            if na is not None:
                na[b] = nxt[pos]
                pos += 1
            e = where[b]
            if e < 0:
                load(b, ex, pinned, False)
            else:
                stamp += 1
                caches[e].touch(b, prio(b), stamp)

        def claim_memory(ex: int, claim: int, pinned) -> None:
            """Execution memory takes storage back until the task ends (lrc.execmem)."""
            nonlocal exec_evictions
            limit = storage_limit(memory, int(claim * scale), sf)
            if limit < memory:
                victims = caches[ex].shrink(limit, pinned)
                if victims:
                    dropped(victims)
                    exec_evictions += len(victims)
                    uncached(victims)

        stage_load: dict[int, list[float]] = {}
        cur_stage = busy = None
        nreads = nhits = twr = tah = tasks = 0
        mixed = self.mixed
        gpu_stages = mixed.gpu_stages if mixed is not None else ()
        pending = queues = None
        if self.spark_order:  # each stage's tasks in their logged order; queued at its start
            pending, queues = {}, {}
            for ev in ct.events:
                if ev[0] == 2:
                    pending.setdefault(ev[1], []).append(ev)
        for ev in ct.events:
            if pending is not None and ev[0] == 2:
                q = queues.get(ev[1])
                if q is None:
                    waiting = pending.pop(ev[1])
                    q = queues[ev[1]] = StageQueue(
                        waiting, stage_places(waiting, where, disk_at, inputs))
                ev = q.next(ev[3] if 0 <= ev[3] < n else ev[2] % n)
            if ev[0] != 2:
                self.control(*ev)
                if planner is not None:
                    reorder()
                if ev[0] == 1 and mixed is not None and mixed.placement \
                        and ev[1] in gpu_stages:
                    mixed.place(mixed.planned(ev[1], planner), caches, where, prio, load)
                continue
            _, stage, part, rec_ex, reads, creates, dur, claim, order = ev
            # placement: recorded executor if in range; else the one holding most input bytes
            if mixed is not None:  # (a kind of executor per stage: lrc.mixed)
                gpu = stage in gpu_stages
                ex = mixed.executor(gpu, part, rec_ex, reads, where, sizes)
            elif 0 <= rec_ex < n:
                ex = rec_ex
            elif len(reads) == 1:
                ex = where[reads[0]]
                if ex < 0:
                    ex = part % n
            elif reads:
                held: dict[int, int] = {}
                for b in reads:
                    e = where[b]
                    if e >= 0:
                        held[e] = held.get(e, 0) + sizes[b]
                ex = max(held, key=held.get) if held else part % n
            else:
                ex = part % n
            cost = dur
            hit_reads = []
            # the task's reads and stores in Spark's order (CompiledTrace.spark_order; None:
            # every read first). A block stays pinned (read-locked) from the task's read of it
            # to the task's end: a store may evict a block the task reads later, not one it read
            read_so_far: list[int] = []
            it_r, it_c = iter(reads), iter(creates)
            claimed = not (claim and scale)
            for is_create in (order or (False,) * len(reads) + (True,) * len(creates)):
                if is_create:
                    if not claimed:  # execution memory's claim, once the task has its inputs
                        claim_memory(ex, claim, read_so_far)
                        claimed = True
                    create(next(it_c), ex, read_so_far)
                else:
                    b = next(it_r)
                    cost += read(b, ex, read_so_far, hit_reads)
                    read_so_far.append(b)
            if not claimed:
                claim_memory(ex, claim, read_so_far)
            if mixed is not None:
                cost += mixed.task_reads(gpu, ex, reads, hit_reads, cost - dur, sizes)
            if claim and scale:
                caches[ex].capacity = memory  # the claim ends with the task
            if refs is not None:
                refs.finish_task(stage, part)  # what Planner.task_finished does
            for b, e, st in hit_reads:  # reads were pinned; their order takes effect now
                if where[b] == e:
                    if fresh:
                        stamp += 1
                        st = stamp
                    caches[e].touch(b, prio(b), st)
            if planner is not None and refs.changed:
                reorder()
            if reads:
                nreads += len(reads)
                nhits += len(hit_reads)
                twr += 1
                tah += len(hit_reads) == len(reads)
            if stage != cur_stage:
                cur_stage = stage
                busy = stage_load.get(stage)
                if busy is None:
                    busy = stage_load[stage] = [0.0] * n
            busy[ex] += cost
            tasks += 1
            if not tasks & 255:
                for c in caches:
                    c.tidy()
        res.reads, res.hits, res.tasks_with_reads, res.tasks_all_hit = nreads, nhits, twr, tah
        res.evictions, res.exec_evictions = evictions + exec_evictions, exec_evictions
        res.disk_reads, res.recomputed_bytes = disk_reads, recomputed
        res.est_runtime = sum(max(v) for v in stage_load.values()) / self.cores
        res.peak_cache_bytes = max(c.peak for c in caches)
        return res
