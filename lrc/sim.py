"""Trace-driven simulator: replay a Trace under a policy and a per-executor cache size.

Model: a read hits if the block is cached on any executor (remote reads hit, as in Spark). A miss
re-reads the block from disk if it was evicted to disk (MEMORY_AND_DISK), otherwise recomputes it
from lineage (its own cost plus, recursively, its cached inputs' misses); either way it is cached
again on the task's executor. ``creates`` (first computation of a block) are not reads. Nested
reads during recomputation change cache state and cost but are not counted in the hit ratio.
A task's reads stay pinned while it runs. Stage time = max over executors of the summed task
costs / cores; the estimated runtime is the sum over stages.

Policies are driven through the same ``Planner`` as the live plugin (online references job by job,
or ``refs="profile"``: preloaded from the trace itself, a recurring application).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from lrc.dag import Block
from lrc.evict import LruIndex, PriorityIndex
from lrc.planner import Planner
from lrc.policies import Policy, get_policy
from lrc.refcount import RefState
from lrc.trace import Trace

DISK_BYTES_PER_S = 200e6
_KIND = {"job_start": 0, "stage_submitted": 1, "task": 2, "stage_completed": 3, "job_end": 4,
         "unpersist": 5}


class CompiledTrace:
    """A trace as integer block ids and flat arrays (shared by every policy / cache size)."""

    def __init__(self, trace: Trace) -> None:
        dag = trace.dag
        self.trace, self.name = trace, trace.name
        self.ids: dict[Block, int] = {}
        self.blocks: list[Block] = []
        bid = self._bid
        self.events: list[tuple] = []
        access: list[int] = []
        for e in trace.events:
            k = _KIND[e.kind]
            if k == 2:
                reads = tuple(bid(b) for b in e.reads)
                creates = tuple(bid(b) for b in e.creates)
                access.extend(reads)
                access.extend(creates)
                ex = int(e.executor) if e.executor is not None and e.executor.isdigit() else -1
                self.events.append((2, e.stage_id, e.partition, ex, reads, creates, e.duration_s))
            else:
                self.events.append((k, {0: e.job_id, 4: e.job_id, 5: e.rdd_id}.get(k, e.stage_id)))
        self.total_bytes = sum(self._size(b) for b in self.blocks)
        self.inputs: list[tuple[int, ...]] = []
        i = 0
        while i < len(self.blocks):  # closure: inputs of inputs get ids too
            self.inputs.append(tuple(bid(x) for x in dag.block_inputs(self.blocks[i])))
            i += 1
        self.sizes = [self._size(b) for b in self.blocks]
        self.rdd_of = [b[0] for b in self.blocks]
        self.working_set_bytes = self._peak_live_bytes()
        self.disk = [dag.rdds[b[0]].uses_disk if b[0] in dag.rdds else False for b in self.blocks]
        self.cost = [dag.recompute_cost(b) for b in self.blocks]
        self.events = [ev if ev[0] != 2 or ev[6] is not None else
                       ev[:6] + (sum(self.cost[c] for c in ev[5]) + dag.task_cost(ev[1], ev[2], _ALL),)
                       for ev in self.events]
        self.job_rdds = {j.id: dag.lineage_rdds(dag.stages[s].rdd_id for s in j.stage_ids)
                         for j in dag.jobs.values()}
        self.access = np.asarray(access, dtype=np.int64)
        self._future = None

    def _bid(self, b: Block) -> int:
        i = self.ids.get(b)
        if i is None:
            i = self.ids[b] = len(self.blocks)
            self.blocks.append(b)
        return i

    def _peak_live_bytes(self) -> int:
        """The cached working set: the most bytes cached at once with unlimited memory (a block
        lives from its first access until its RDD is unpersisted). Equal to `total_bytes` for an
        application that never unpersists; far less for one that does (GraphX-style loops)."""
        live: dict[int, set[int]] = {}  # rdd -> its cached blocks
        now = peak = 0
        for ev in self.events:
            if ev[0] == 2:
                for b in ev[4] + ev[5]:
                    blocks = live.setdefault(self.rdd_of[b], set())
                    if b not in blocks:
                        blocks.add(b)
                        now += self.sizes[b]
                peak = max(peak, now)
            elif ev[0] == 5:
                now -= sum(self.sizes[b] for b in live.pop(ev[1], ()))
        return peak

    def _size(self, b: Block) -> int:
        r = self.trace.dag.rdds.get(b[0])
        return r.size(b[1]) if r is not None else 1

    def future(self) -> tuple[np.ndarray, np.ndarray]:
        """(next access position of the block accessed at each position, first position per
        block), inf where none; O(n log n) by a stable sort on block id."""
        if self._future is None:
            acc, n = self.access, len(self.access)
            order = np.argsort(acc, kind="stable")
            nxt = np.full(n, np.inf)
            same = acc[order[1:]] == acc[order[:-1]]
            nxt[order[:-1][same]] = order[1:][same]
            first = np.full(len(self.blocks), np.inf)
            starts = np.ones(n, dtype=bool)
            starts[1:] = ~same
            first[acc[order[starts]]] = order[starts]
            self._future = (nxt, first)
        return self._future


class _All:
    def __contains__(self, x) -> bool:
        return True


_ALL = _All()


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
    recomputed_bytes: int = 0
    disk_reads: int = 0
    est_runtime: float = 0.0
    evicted: list = field(default_factory=list)  # victims, only with log_evictions

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.reads if self.reads else 1.0

    @property
    def effective_hit_ratio(self) -> float:
        return self.tasks_all_hit / self.tasks_with_reads if self.tasks_with_reads else 1.0

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["evicted"]
        d["hit_ratio"] = self.hit_ratio
        d["effective_hit_ratio"] = self.effective_hit_ratio
        return d


def simulate(trace: Trace | CompiledTrace, policy: str | Policy, cache_fraction: float,
             executors: int = 4, cores: int = 2, refs: str = "profile", peer_mode: str = "task",
             disk_bytes_per_s: float = DISK_BYTES_PER_S, log_evictions: bool = False,
             engine: str = "fast") -> SimResult:
    """Replay ``trace`` with cluster cache = ``cache_fraction`` x the cached working set (the
    most bytes cached at once with unlimited memory), split evenly over ``executors``.
    ``log_evictions`` records victims in ``result.evicted``.
    ``engine="fast"`` (default) runs built-in policies through ``lrc.fastsim`` (same results,
    cross-checked by tests); ``"reference"`` forces the straightforward ``_Simulator``."""
    from lrc.fastsim import FAST_POLICIES, run_fast

    if engine not in ("fast", "reference"):
        raise ValueError(f"engine must be 'fast' or 'reference', not {engine!r}")
    ct = trace if isinstance(trace, CompiledTrace) else CompiledTrace(trace)
    pol = get_policy(policy)
    if engine == "fast" and type(pol) in FAST_POLICIES:
        _check(refs, executors)
        return run_fast(ct, pol, cache_fraction, executors, cores, refs, peer_mode,
                        disk_bytes_per_s, log_evictions)
    return _Simulator(ct, pol, cache_fraction, executors, cores, refs, peer_mode,
                      disk_bytes_per_s, log_evictions).run()


def _check(refs: str, executors: int) -> None:
    if refs not in ("profile", "online"):
        raise ValueError(f"refs must be 'profile' or 'online', not {refs!r}")
    if executors < 1:
        raise ValueError("executors must be >= 1")


class _Simulator:
    def __init__(self, ct: CompiledTrace, policy: Policy, fraction: float, executors: int,
                 cores: int, refs: str, peer_mode: str, disk_bw: float, log: bool = False) -> None:
        _check(refs, executors)
        self.ct, self.policy, self.n, self.cores, self.disk_bw = ct, policy, executors, cores, disk_bw
        per_exec = int(fraction * ct.working_set_bytes / executors)
        index = LruIndex if policy.constant else PriorityIndex
        self.caches = [index(per_exec, ct.sizes, ct.rdd_of) for _ in range(executors)]
        self.res = SimResult(ct.name, policy.name, fraction, executors, refs,
                             cache_bytes=per_exec * executors)
        self.planner = None
        self.future_state = None
        if policy.needs_future:
            self.future_state = RefState()
            self.future_state.next_access = dict(enumerate(ct.future()[1].tolist()))
        elif not policy.constant:
            self.planner = Planner(policy, ct.trace if refs == "profile" else None, peer_mode,
                                   simulated=True)
        self.where: dict[int, int] = {}
        self.on_disk: set[int] = set()
        self.stamp = 0
        self.stage_load: dict[int, list[float]] = {}
        self.log = self.res.evicted if log else None

    # ---- priorities --------------------------------------------------------------------------
    def prio(self, b: int) -> float:
        if self.planner is not None:
            return self.policy.priority(self.planner.refs, self.ct.blocks[b])
        if self.future_state is not None:
            return self.policy.priority(self.future_state, b)
        return 0.0

    def apply_changes(self) -> None:
        ids, where, caches, blocks = self.ct.ids, self.where, self.caches, self.planner.refs
        for blk in self.planner.take_changes():
            b = ids.get(blk)
            ex = where.get(b) if b is not None else None
            if ex is not None:
                caches[ex].set_priority(b, self.policy.priority(blocks, blk))

    # ---- cache operations --------------------------------------------------------------------
    def insert(self, b: int, ex: int, pinned) -> None:
        self.stamp += 1
        victims = self.caches[ex].insert(b, self.prio(b), self.stamp, pinned)
        if victims is None:
            return
        where, planner, blocks = self.where, self.planner, self.ct.blocks
        for v in victims:
            del where[v]
            if self.ct.disk[v]:
                self.on_disk.add(v)
            if planner is not None:
                planner.block_removed(blocks[v], ex)
        self.res.evictions += len(victims)
        if self.log is not None:
            self.log.extend(blocks[v] for v in victims)
        where[b] = ex
        if planner is not None:
            planner.block_cached(blocks[b], ex, self.ct.sizes[b])
            if self.policy.needs_peers:
                self.apply_changes()

    def fetch(self, b: int, ex: int, pinned) -> float:
        """A miss: re-read from disk or recompute from lineage, then cache again; seconds."""
        ct = self.ct
        if b in self.on_disk:
            cost = ct.sizes[b] / self.disk_bw
            self.res.disk_reads += 1
        else:
            cost = ct.cost[b]
            self.res.recomputed_bytes += ct.sizes[b]
            for i in ct.inputs[b]:
                e = self.where.get(i)
                if e is None:
                    cost += self.fetch(i, ex, pinned)
                else:
                    self.stamp += 1
                    self.caches[e].touch(i, self.prio(i), self.stamp)
        self.insert(b, ex, pinned)
        return cost

    def place(self, part: int, rec_ex: int, reads) -> int:
        """Recorded executor if in range; else the one holding most input bytes; else spread."""
        if 0 <= rec_ex < self.n:
            return rec_ex
        where = self.where
        if len(reads) == 1:
            e = where.get(reads[0])
            return part % self.n if e is None else e
        held: dict[int, int] = {}
        for b in reads:
            e = where.get(b)
            if e is not None:
                held[e] = held.get(e, 0) + self.ct.sizes[b]
        return max(held, key=held.get) if held else part % self.n

    # ---- replay ------------------------------------------------------------------------------
    def run(self) -> SimResult:
        ct, res, planner = self.ct, self.res, self.planner
        dag = ct.trace.dag
        where, caches = self.where, self.caches
        fut = self.future_state.next_access if self.future_state is not None else None
        nxt = ct.future()[0].tolist() if fut is not None else None
        prio, pos = self.prio, 0
        for ev in ct.events:
            kind = ev[0]
            if kind != 2:
                if planner is not None:
                    self.control_event(kind, ev[1], dag)
                elif kind == 5:
                    self.unpersist(ev[1])
                continue
            _, stage, part, rec_ex, reads, creates, dur = ev
            ex = self.place(part, rec_ex, reads)
            cost = dur
            hit_reads = []
            for b in reads:
                self.stamp += 1
                if fut is not None:
                    fut[b] = nxt[pos]
                    pos += 1
                e = where.get(b)
                if e is None:
                    cost += self.fetch(b, ex, reads)
                else:
                    hit_reads.append((b, e, self.stamp))
            for b in creates:
                if fut is not None:
                    fut[b] = nxt[pos]
                    pos += 1
                e = where.get(b)
                if e is None:
                    self.insert(b, ex, reads)
                else:
                    self.stamp += 1
                    caches[e].touch(b, prio(b), self.stamp)
            if planner is not None:
                planner.task_finished(stage, part)
            for b, e, stamp in hit_reads:  # reads were pinned; their order takes effect now
                if where.get(b) == e:
                    caches[e].touch(b, prio(b), stamp)
            if planner is not None:
                self.apply_changes()
            if reads:
                res.reads += len(reads)
                res.hits += len(hit_reads)
                res.tasks_with_reads += 1
                res.tasks_all_hit += len(hit_reads) == len(reads)
            load = self.stage_load.get(stage)
            if load is None:
                load = self.stage_load[stage] = [0.0] * self.n
            load[ex] += cost
        res.est_runtime = sum(max(v) for v in self.stage_load.values()) / self.cores
        return res

    def control_event(self, kind: int, arg: int, dag) -> None:
        p = self.planner
        if kind == 0:
            job = dag.jobs.get(arg)
            if job is not None:
                p.add_job(job, [dag.stages[s] for s in job.stage_ids], self.ct.job_rdds[arg])
        elif kind == 1:
            p.stage_submitted(arg)
        elif kind == 3:
            p.stage_completed(arg)
        elif kind == 4:
            p.job_ended(arg)
        else:
            self.unpersist(arg)
            p.rdd_unpersisted(arg)
        self.apply_changes()

    def unpersist(self, rdd_id: int) -> None:
        for b in [b for b in self.where if self.ct.rdd_of[b] == rdd_id]:
            self.caches[self.where.pop(b)].remove(b)
        self.on_disk = {b for b in self.on_disk if self.ct.rdd_of[b] != rdd_id}
