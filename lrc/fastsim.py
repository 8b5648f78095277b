"""The simulator's fast path: the same replay as ``lrc.sim._Simulator`` (the reference
implementation), specialised per built-in policy and flattened into one function.

What differs is only how the work is done, never what is computed (tests/unit/test_sim_fast.py
cross-checks both on random traces):
- blocks are the compiled trace's dense int ids everywhere, including inside the Planner's
  reference state (``_IdPlanner``: the DAG walks of control events are translated once);
- ``where`` / heap entries are lists indexed by block id; a heap entry is a tuple
  ``(priority, stamp, block)`` that is live iff it is the block's current entry (identity);
- per task, the reference updates of ``task_finished`` are done inline (lrc, mrd) and only blocks
  cached on an executor get a new heap entry, only when their priority really moved;
- control events (job start/end, stage submit/complete, unpersist) still go through the Planner.
"""
from __future__ import annotations

from heapq import heapify, heappop, heappush

from lrc.planner import Planner, _Either
from lrc.policies import LERC, LRC, LRU, MIN, MRD

INF = float("inf")
FAST_POLICIES = (LRU, LRC, LERC, MRD, MIN)


class _IdView:
    """``block in view`` for tuple blocks, against a set of int ids."""

    __slots__ = ("ids", "members")

    def __init__(self, ids: dict, members: set) -> None:
        self.ids, self.members = ids, members

    def __contains__(self, blk) -> bool:
        i = self.ids.get(blk)
        return i is not None and i in self.members


class _IdPlanner(Planner):
    """A Planner whose blocks are int ids (``idof`` maps a tuple block to its id, adding ids for
    blocks the trace never touches). Only the simulator uses it."""

    def __init__(self, policy, ct, idof, ids: dict, profile: bool, peer_mode: str) -> None:
        super().__init__(policy, None, peer_mode, simulated=True)
        self._deferred: list | None = None
        self._idof, self._ids, self._rdd_of = idof, ids, ct.rdd_of
        if profile:
            trace = ct.trace
            for r in trace.dag.rdds.values():
                self.dag.add_rdd(r)
            for s in trace.dag.stages.values():
                self.dag.add_stage(s)
            seqs: dict[int, int] = {}
            refs = self.refs
            if refs.peers is not None or refs.track_order:
                add = refs.add_task
                for ev in ct.events:
                    if ev[0] == 2:
                        seq = seqs.get(ev[1]) or seqs.setdefault(ev[1], self._next_seq())
                        add(ev[1], ev[2], ev[4], seq)
            else:  # RefState.add_task inlined: counts only
                pending, stage_seq, count = refs.pending, refs.stage_seq, refs.count
                touched = set()
                for ev in ct.events:
                    if ev[0] != 2:
                        continue
                    sid, part, reads = ev[1], ev[2], ev[4]
                    seq = seqs.get(sid) or seqs.setdefault(sid, self._next_seq())
                    tasks = pending.get(sid)
                    if tasks is None:
                        tasks = pending[sid] = {}
                    if part in tasks:
                        continue
                    if len(reads) > 1:
                        reads = tuple(dict.fromkeys(reads))
                    tasks[part] = reads
                    stage_seq.setdefault(sid, seq)
                    for b in reads:
                        count[b] = count.get(b, 0) + 1
                    touched.update(reads)
                refs.changed |= touched
            self.planned.update(seqs)

    def add_job(self, job, stages, rdds) -> None:
        self._deferred = []
        try:
            super().add_job(job, stages, rdds)
        finally:
            self._deferred = None

    def _plan_stage(self, stage, created) -> None:
        seq = self._next_seq()
        mat = _Either(_IdView(self._ids, self.materialized), created)
        pending = self.refs.pending.get(stage.id)
        deferred = self._deferred
        for p in stage.task_partitions():
            if pending is not None and p in pending and deferred is not None:
                # add_task would be a no-op; only the creates matter, and only if a later
                # stage of this job needs a walk: walk lazily, in the same order
                deferred.append((stage.id, p))
                continue
            if deferred:
                for sid, q in deferred:
                    created.update(self.dag.task_reads(sid, q, mat)[1])
                deferred.clear()
            reads, creates = self.dag.task_reads(stage.id, p, mat)
            idof = self._idof
            self.refs.add_task(stage.id, p, [idof(b) for b in reads], seq)
            created.update(creates)
        self.planned.add(stage.id)

    def unpersist_cached(self, rdd_id: int, cached: list[int]) -> None:
        """``rdd_unpersisted`` for the simulator: ``cached`` are the RDD's cached block ids."""
        for b in cached:
            self.refs.set_cached(b, False)
        rdd_of = self._rdd_of
        self.materialized = {b for b in self.materialized if rdd_of[b] != rdd_id}
        if rdd_id in self.dag.rdds:
            self.dag.rdds[rdd_id].cached = False


def run_fast(ct, policy, fraction: float, n: int, cores: int, refs_mode: str, peer_mode: str,
             disk_bw: float, log_evictions: bool = False):
    """``lrc.sim.simulate`` for a policy in ``FAST_POLICIES`` (arguments already validated)."""
    from lrc.sim import SimResult

    nb = len(ct.blocks)
    sizes, rdd_of, disk, cost_of, inputs = ct.sizes, ct.rdd_of, ct.disk, ct.cost, ct.inputs
    capacity = int(fraction * ct.working_set_bytes / n)
    res = SimResult(ct.name, policy.name, fraction, n, refs_mode, cache_bytes=capacity * n)
    log = res.evicted if log_evictions else None
    blocks = ct.blocks
    dag = ct.trace.dag

    where = [-1] * nb
    on_disk = bytearray(nb)
    used = [0] * n
    lru = isinstance(policy, LRU)
    kind = type(policy)
    # per executor: one lazy heap per RDD (``sub[ex][rdd]``) and a heap ``top[ex]`` holding, for
    # every RDD, its least live entry or a dead entry <= it (see ``push`` / ``insert``)
    sub: list[dict] = [{} for _ in range(n)]
    top: list[list] = [[] for _ in range(n)]
    live = [0] * n
    ent: list = [None] * nb
    stamp = 0
    evictions = disk_reads = recomputed = 0

    # ---- reference state ---------------------------------------------------------------------
    planner = refs = None
    fut = nxt = None
    if kind is MIN:
        fut = (-ct.future()[1]).tolist()  # priority = -(next access position)
        nxt = (-ct.future()[0]).tolist()
    elif not lru:
        ids = dict(ct.ids)

        def idof(blk):
            i = ids.get(blk)
            if i is None:  # a block the trace never touches: never cached
                i = ids[blk] = len(where)
                where.append(-1)
                ent.append(None)
            return i

        planner = _IdPlanner(policy, ct, idof, ids, refs_mode == "profile", peer_mode)
        refs = planner.refs
    count = refs.count if refs is not None else None
    next_ref = refs.next_ref if refs is not None else None
    pending = refs.pending if refs is not None else None
    peers = refs.peers if refs is not None else None
    eff = peers.effective if peers is not None else None

    if kind is LRC:
        def prio(b):
            return count.get(b, 0)
    elif kind is LERC:
        def prio(b):
            return eff.get(b, 0)
    elif kind is MRD:
        def prio(b):
            return -next_ref.get(b, INF)
    elif kind is MIN:
        def prio(b):
            return fut[b]
    else:
        def prio(b):
            return 0

    def push(ex, e):
        # ``e`` is already ent[b]: into its RDD's heap, and into ``top`` if it is that heap's
        # least live entry (dead tops are dropped on the way)
        d = sub[ex]
        q = rdd_of[e[2]]
        h = d.get(q)
        if h is None:
            d[q] = [e]
            heappush(top[ex], e)
            return
        heappush(h, e)
        t = h[0]
        while ent[t[2]] is not t:
            heappop(h)
            t = h[0]
        if t is e:
            heappush(top[ex], e)

    def refresh(ex, q):
        # put RDD q's least live entry (if any) into ``top``
        h = sub[ex].get(q)
        while h:
            t = h[0]
            if ent[t[2]] is t:
                heappush(top[ex], t)
                return
            heappop(h)

    def compact(ex):
        d = sub[ex]
        t = []
        for q in list(d):
            h = [x for x in d[q] if ent[x[2]] is x]
            if h:
                heapify(h)
                d[q] = h
                t.append(h[0])
            else:
                del d[q]
        heapify(t)
        top[ex] = t

    def set_priority(b, p):
        old = ent[b]
        if old is not None and old[0] != p:
            e = ent[b] = (p, old[1], b)
            push(where[b], e)

    def apply_changes():
        changed = refs.changed
        if not changed:
            return
        refs.changed = set()
        if peers is not None:
            peers._changed = refs.changed
        for b in changed:
            if where[b] >= 0:
                set_priority(b, prio(b))

    def insert(b, ex, pinned):
        nonlocal stamp, evictions
        stamp += 1
        size = sizes[b]
        need = used[ex] + size - capacity
        victims = ()
        if need > 0:
            rdd = rdd_of[b]
            taken, freed = [], 0
            # candidates in (priority, stamp) order, merged over the RDDs' heaps through
            # ``top``; the inserted block's RDD is skipped as a whole (refreshed afterwards)
            tp, d, kept, skipped = top[ex], sub[ex], [], False
            while freed < need and tp:
                e = heappop(tp)
                v = e[2]
                q = rdd_of[v]
                if q == rdd:
                    skipped = True
                    continue
                h = d.get(q)
                if h is None:
                    continue
                if ent[v] is not e:  # a dead representative: bring the RDD's least live in
                    while h:
                        t = h[0]
                        if ent[t[2]] is t:
                            heappush(tp, t)
                            break
                        heappop(h)
                    continue
                while h:
                    t = h[0]
                    if ent[t[2]] is t:
                        break
                    heappop(h)
                if not h or h[0] is not e:  # a duplicate of an entry already taken or kept
                    continue
                heappop(h)
                while h:
                    t = h[0]
                    if ent[t[2]] is t:
                        heappush(tp, t)
                        break
                    heappop(h)
                if v in pinned:
                    kept.append(e)
                else:
                    taken.append(v)
                    freed += sizes[v]
            if freed < need:
                for v in taken:
                    e = ent[v]
                    heappush(d[rdd_of[v]], e)
                    heappush(tp, e)
                for e in kept:
                    heappush(d[rdd_of[e[2]]], e)
                    heappush(tp, e)
                if skipped:
                    refresh(ex, rdd)
                return
            for e in kept:
                heappush(d[rdd_of[e[2]]], e)
                heappush(tp, e)
            if skipped:
                refresh(ex, rdd)
            for v in taken:
                ent[v] = None
            live[ex] -= len(taken)
            used[ex] -= freed
            victims = taken
        e = ent[b] = (prio(b), stamp, b)
        live[ex] += 1
        push(ex, e)
        used[ex] += size
        for v in victims:
            where[v] = -1
            if disk[v]:
                on_disk[v] = 1
            if peers is not None:
                peers.set_cached(v, False)
        evictions += len(victims)
        if log is not None:
            log.extend(blocks[v] for v in victims)
        where[b] = ex
        if planner is not None:
            planner.materialized.add(b)
            if peers is not None:
                peers.set_cached(b, True)
                apply_changes()

    def fetch(b, ex, pinned):
        nonlocal stamp, disk_reads, recomputed
        if on_disk[b]:
            cost = sizes[b] / disk_bw
            disk_reads += 1
        else:
            cost = cost_of[b]
            recomputed += sizes[b]
            for i in inputs[b]:
                e = where[i]
                if e < 0:
                    cost += fetch(i, ex, pinned)
                else:
                    stamp += 1
                    en = ent[i] = (prio(i), stamp, i)
                    push(e, en)
        insert(b, ex, pinned)
        return cost

    by_rdd: dict[int, list[int]] = {}

    def unpersist(rdd_id):
        if not by_rdd:
            for b in range(nb):
                by_rdd.setdefault(rdd_of[b], []).append(b)
        mine = by_rdd.get(rdd_id, ())
        gone = [b for b in mine if where[b] >= 0]
        for b in gone:
            ex = where[b]
            where[b] = -1
            used[ex] -= sizes[b]
            ent[b] = None
            live[ex] -= 1
        for d in sub:
            d.pop(rdd_id, None)
        for b in mine:
            on_disk[b] = 0
        return gone

    # ---- replay ------------------------------------------------------------------------------
    stage_load: dict[int, list[float]] = {}
    pos = 0
    nreads = nhits = twr = tah = 0
    inline = kind in (LRC, MRD)
    is_lrc = kind is LRC
    npush = 0
    cur_stage, load = None, None
    stage_seq = refs.stage_seq if refs is not None else None
    next_seqs = refs.next_seqs if refs is not None else None
    for ev in ct.events:
        k = ev[0]
        if k != 2:
            if planner is not None:
                arg = ev[1]
                if k == 0:
                    job = dag.jobs.get(arg)
                    if job is not None:
                        planner.add_job(job, [dag.stages[s] for s in job.stage_ids],
                                        ct.job_rdds[arg])
                elif k == 1:
                    planner.stage_submitted(arg)
                elif k == 3:
                    planner.stage_completed(arg)
                elif k == 4:
                    planner.job_ended(arg)
                else:
                    planner.unpersist_cached(arg, unpersist(arg))
                apply_changes()
            elif k == 5:
                unpersist(ev[1])
            continue
        _, stage, part, rec_ex, reads, creates, dur = ev
        # placement: recorded executor if in range; else the one holding most input bytes
        if 0 <= rec_ex < n:
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
        for b in reads:
            stamp += 1
            if fut is not None:
                fut[b] = nxt[pos]
                pos += 1
            e = where[b]
            if e < 0:
                cost += fetch(b, ex, reads)
            else:
                hit_reads.append((b, e, stamp))
        for b in creates:
            if fut is not None:
                fut[b] = nxt[pos]
                pos += 1
            e = where[b]
            if e < 0:
                insert(b, ex, reads)
            else:
                stamp += 1
                en = ent[b] = (prio(b), stamp, b)
                push(e, en)
        finished = ()
        if planner is not None:
            if inline:
                tasks = pending.get(stage)
                if tasks and part in tasks:
                    finished = tasks.pop(part)
                    if kind is LRC:
                        for b in finished:
                            count[b] -= 1
                    else:
                        seq = stage_seq[stage]
                        for b in finished:
                            count[b] -= 1
                            seqs = next_seqs[b]
                            left = seqs[seq] - 1
                            if left:
                                seqs[seq] = left
                            else:
                                del seqs[seq]
                                if next_ref[b] == seq:
                                    next_ref[b] = min(seqs) if seqs else INF
            else:
                refs.finish_task(stage, part)
        for b, e, st in hit_reads:  # reads were pinned; their order takes effect now
            if where[b] == e:
                if lru:  # Spark's LRU: access order is the order of these moves
                    stamp += 1
                    st = stamp
                en = ent[b] = (prio(b), st, b)
                push(e, en)
        npush += len(hit_reads) + 1
        if npush > 16384:  # compact heaps full of dead entries now and then
            npush = 0
            for x in range(n):
                if len(top[x]) + sum(map(len, sub[x].values())) > 4 * live[x] + 1024:
                    compact(x)
        if finished:
            for b in finished:
                e = where[b]
                if e >= 0:
                    p = count[b] if is_lrc else -next_ref[b]
                    old = ent[b]
                    if old[0] != p:
                        en = ent[b] = (p, old[1], b)
                        push(e, en)
        elif planner is not None:
            apply_changes()
        if reads:
            nreads += len(reads)
            nhits += len(hit_reads)
            twr += 1
            tah += len(hit_reads) == len(reads)
        if stage != cur_stage:
            cur_stage = stage
            load = stage_load.get(stage)
            if load is None:
                load = stage_load[stage] = [0.0] * n
        load[ex] += cost
    res.reads, res.hits, res.tasks_with_reads, res.tasks_all_hit = nreads, nhits, twr, tah
    res.evictions, res.disk_reads, res.recomputed_bytes = evictions, disk_reads, recomputed
    res.est_runtime = sum(max(v) for v in stage_load.values()) / cores
    return res
