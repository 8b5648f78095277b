"""The one replay engine (lrc.sim) against a brute-force oracle, and replays that leave their
input alone.

The oracle is written for clarity, not speed: tuple blocks through the live Planner API
(block_cached / block_removed per executor, profiles loaded from the Trace), and each eviction
sorts the cached blocks by (priority now, last access stamp). A task's execution memory claim
(lrc.execmem) evicts the same way, any RDD, until the cache fits what the claim leaves. A block
of an unpersisted RDD is never stored again."""
import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from lrc.cost import ArrayCosts, MissCosts
from lrc.dag import AppDAG, Dependency, Job, RDD, Stage
from lrc.planner import Planner
from lrc.policies import POLICIES, Policy, get_policy
from lrc.refcount import RefState
from lrc.sim import REFS, CompiledTrace, simulate
from lrc.synth import cc, make
from lrc.trace import Event, Trace
from lrc.unroll import reserve_steps


CONTROL = {1: "stage_submitted", 3: "stage_completed", 4: "job_ended", 5: "rdd_unpersisted"}


def oracle(ct: CompiledTrace, policy, f, executors=4, cores=2, refs="profile", peer_mode="task",
           disk_bw=200e6, storage_fraction=0.5, unroll_threshold=None):
    pol = get_policy(policy)
    blocks, sizes, rdd_of = ct.blocks, ct.sizes, ct.rdd_of
    memory = int(f * ct.working_set_bytes / executors)
    caps = [memory] * executors
    stamps = [dict() for _ in range(executors)]  # per executor: cached block -> last access
    used, where, on_disk, gone = [0] * executors, {}, set(), set()
    out = dict(reads=0, hits=0, tasks_with_reads=0, tasks_all_hit=0, evictions=0,
               exec_evictions=0, recomputed_bytes=0, disk_reads=0, evicted=[])
    planner = state = None
    if pol.needs_future:
        state = RefState()
        nxt, first = ct.future()
        state.next_access.update((blocks[i], x) for i, x in enumerate(first.tolist()))
    elif not pol.constant:
        by_id = ArrayCosts(ct.lineage_cost, ct.sizes, ct.disk, disk_bw)
        costs = MissCosts()
        costs.density = lambda b: by_id.density(ct.ids.get(b, len(blocks)))
        planner = Planner(pol, ct.trace if refs == "profile" else None, peer_mode, simulated=True,
                          predict=None if refs == "online" else False, costs=costs)
    clock = [0]

    def tick():
        clock[0] += 1
        return clock[0]

    def prio(b):
        if planner is not None:
            return planner.priority(blocks[b])
        return pol.priority(state, blocks[b]) if state is not None else 0.0

    def evict(victims, ex):
        for v in victims:
            del stamps[ex][v], where[v]
            used[ex] -= sizes[v]
            if ct.disk[v]:
                on_disk.add(v)
            if planner is not None:
                planner.block_removed(blocks[v], ex)
            out["evicted"].append(blocks[v])
        out["evictions"] += len(victims)

    def lowest(need, b, ex, pinned):
        """The blocks to evict to free ``need`` bytes for ``b``, or None if they are not enough."""
        order = sorted((prio(v), s, v) for v, s in stamps[ex].items()
                       if rdd_of[v] != rdd_of[b] and v not in pinned)
        victims, freed = [], 0
        for _, _, v in order:
            if freed >= need:
                break
            victims.append(v)
            freed += sizes[v]
        return victims if freed >= need else None

    def insert(b, ex, pinned):
        if rdd_of[b] in gone:
            return
        stamp = tick()
        rdd = dag.rdds.get(blocks[b][0])
        steps = reserve_steps(sizes[b], unroll_threshold, *((rdd.elements(blocks[b][1]),
                              rdd.serialized) if rdd else ())) if unroll_threshold else (sizes[b],)
        need = used[ex] + steps[-1] - caps[ex]
        victims = lowest(need, b, ex, pinned) if need > 0 else []
        if victims is None:  # not stored; Spark reserved the earlier steps first, evicting
            for step in reversed(steps[:-1]):  # the steps it could meet stay met
                v = lowest(used[ex] + step - caps[ex], b, ex, pinned)
                if v is not None:
                    evict(v, ex)
                    break
            if ct.disk[b] and b not in on_disk:  # Spark writes it to disk instead
                on_disk.add(b)
                if planner is not None:
                    planner.on_disk(blocks[b])
            return
        evict(victims, ex)
        stamps[ex][b], where[b] = stamp, ex
        used[ex] += sizes[b]
        if planner is not None:
            planner.block_cached(blocks[b], ex, sizes[b])

    def fetch(b, ex, pinned):
        if b in on_disk:
            cost = sizes[b] / disk_bw
            out["disk_reads"] += 1
        else:
            cost = ct.cost[b]
            out["recomputed_bytes"] += sizes[b]
            for i in ct.inputs[b]:
                if i in where:
                    stamps[where[i]][i] = tick()
                else:
                    cost += fetch(i, ex, pinned)
        insert(b, ex, pinned)
        return cost

    dag, nxt, pos, load = ct.trace.dag, ct.future()[0].tolist(), 0, {}

    def accessed(b):
        nonlocal pos
        if state is not None:
            state.next_access[blocks[b]] = nxt[pos]
        pos += 1

    for ev in ct.events:
        kind, arg = ev[0], ev[1]
        if kind == 5:
            for b in [b for b in where if rdd_of[b] == arg]:
                ex = where.pop(b)
                del stamps[ex][b]
                used[ex] -= sizes[b]
            on_disk -= {b for b in on_disk if rdd_of[b] == arg}
            gone.add(arg)
        if kind != 2:
            if planner is None:
                continue
            if kind == 0 and arg in dag.jobs:
                job = dag.jobs[arg]
                new = [r for r in ct.job_rdds[arg] if r.id not in planner.dag.rdds]
                planner.add_job(job, [dag.stages[s] for s in job.stage_ids], new)
            elif kind in CONTROL:
                getattr(planner, CONTROL[kind])(arg)
            continue
        _, stage, part, rec, reads, creates, dur, claim, order = ev
        if 0 <= rec < executors:
            ex = rec
        else:
            held = {}
            for b in reads:
                if b in where:
                    held[where[b]] = held.get(where[b], 0) + sizes[b]
            ex = max(held, key=held.get) if held else part % executors
        cost, hits, read_so_far = dur, [], []

        def claim_memory():  # the trace knows no executor memory: claims as recorded
            caps[ex] = max(int(memory * storage_fraction), memory - claim)
            victims = []
            for _, _, v in sorted((prio(v), s, v) for v, s in stamps[ex].items()
                                  if v not in read_so_far):
                if used[ex] - sum(sizes[x] for x in victims) <= caps[ex]:
                    break
                victims.append(v)
            evict(victims, ex)
            out["exec_evictions"] += len(victims)

        # Spark's order (None: reads first); a block read stays pinned to the task's end
        if order is None:
            order = [False] * len(reads) + [True] * len(creates)
        todo_r, todo_c, claimed = list(reads), list(creates), not claim
        for is_create in order:
            if not is_create:
                b = todo_r.pop(0)
                stamp = tick()
                accessed(b)
                if b in where:
                    hits.append((b, where[b], stamp))
                else:
                    cost += fetch(b, ex, list(read_so_far))
                read_so_far.append(b)
                continue
            if not claimed:
                claim_memory()
                claimed = True
            b = todo_c.pop(0)
            accessed(b)
            if b in where:
                stamps[where[b]][b] = tick()
            else:
                insert(b, ex, list(read_so_far))
        if not claimed:
            claim_memory()
        caps[ex] = memory
        if planner is not None:
            planner.task_finished(stage, part)
        for b, e, stamp in hits:
            if where.get(b) == e:
                stamps[e][b] = tick() if pol.constant else stamp
        if reads:
            out["reads"] += len(reads)
            out["hits"] += len(hits)
            out["tasks_with_reads"] += 1
            out["tasks_all_hit"] += len(hits) == len(reads)
        load.setdefault(stage, [0.0] * executors)[ex] += cost
    out["est_runtime"] = sum(max(v) for v in load.values()) / cores
    return out


def _check(build, policy, f, **kw):
    got = simulate(CompiledTrace(build()), policy, f, log_evictions=True, **kw)
    want = oracle(CompiledTrace(build()), policy, f, **kw)
    d = got.to_dict()
    assert {k: d[k] for k in want if k != "evicted"} == {k: v for k, v in want.items()
                                                          if k != "evicted"}
    assert got.evicted == want["evicted"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["pagerank", "cc", "ml", "svdpp", "zip"]), st.integers(0, 10 ** 6),
       st.integers(2, 10), st.sampled_from(list(POLICIES)), st.sampled_from([0.1, 0.25, 0.4, 0.6]),
       st.integers(1, 4), st.sampled_from(list(REFS)), st.sampled_from(["task", "stage"]),
       st.sampled_from([None, 1 << 20, 4 << 20]))
def test_replay_equals_oracle_on_synthetic_workloads(w, seed, parts, policy, f, ex, refs, pm,
                                                     unroll):
    _check(lambda: make(w, seed=seed, parts=parts), policy, f, executors=ex, refs=refs,
           peer_mode=pm, unroll_threshold=unroll)


@st.composite
def random_traces(draw):
    """Random DAGs (chains and joins of cached / uncached RDDs, disk levels, unpersists) run the
    way Spark would, with random executors and stages that are planned but never run."""
    parts = draw(st.integers(1, 4))
    d = AppDAG()
    d.add_rdd(RDD(0, parts, compute_cost=0.1))
    nrdd = draw(st.integers(1, 6))
    for r in range(1, nrdd + 1):
        ps = draw(st.lists(st.integers(0, r - 1), min_size=1, max_size=2, unique=True))
        cached = draw(st.booleans())
        level = draw(st.sampled_from(["MEMORY_ONLY", "MEMORY_AND_DISK", "MEMORY_AND_DISK_SER"]))
        sizes = draw(st.lists(st.integers(1, 9), min_size=parts, max_size=parts))
        counts = draw(st.none() | st.lists(st.integers(1, 40), min_size=parts, max_size=parts))
        d.add_rdd(RDD(r, parts, tuple(Dependency(p) for p in ps), cached=cached,
                      storage_level=level if cached else "NONE", block_bytes=sizes,
                      compute_cost=draw(st.floats(0.0, 1.0)), block_elements=counts))
    ev, mat, gone, sid = [], set(), set(), 0
    for j in range(draw(st.integers(1, 8))):
        target = draw(st.integers(1, nrdd))
        stages = [Stage(sid, target, parts, job_id=j)]
        ghost = draw(st.booleans())  # a second stage of the job that never runs
        if ghost:
            stages.append(Stage(sid + 1, draw(st.integers(1, nrdd)), parts, job_id=j))
        for s in stages:
            d.add_stage(s)
        d.add_job(Job(j, tuple(s.id for s in stages)))
        ev.append(Event.job_start(j))
        ev.append(Event.stage_submitted(sid))
        for p in draw(st.permutations(list(range(parts)))):
            reads, creates = d.task_reads(sid, p, mat, unpersisted=gone)
            mat.update(creates)
            ev.append(Event.task(sid, p, reads, creates,
                                 executor=draw(st.sampled_from([None, "0", "1", "7"])),
                                 exec_bytes=draw(st.sampled_from([None, None, 0, 4, 30]))))
        ev.append(Event.stage_completed(sid))
        ev.append(Event.job_end(j))
        sid += 1 + ghost
        if draw(st.integers(0, 4)) == 0:
            r = draw(st.integers(1, nrdd))
            ev.append(Event.unpersist(r))
            mat = {b for b in mat if b[0] != r}
            gone.add(r)
    return d, ev


class MostReferenced(Policy):
    """A policy the engine has never seen: only ``priority`` is defined (evict the most
    referenced block first)."""

    name = "most-referenced"

    def priority(self, refs, block):
        return -float(refs.count.get(block, 0))


@settings(max_examples=150, deadline=None)
@given(random_traces(), st.sampled_from(list(POLICIES) + [MostReferenced()]),
       st.sampled_from([0.15, 0.3, 0.5, 0.8]), st.integers(1, 3),
       st.sampled_from(list(REFS)), st.sampled_from(["task", "stage"]),
       st.sampled_from([0.0, 0.1, 0.5]), st.sampled_from([None, 2, 5]))
def test_replay_equals_oracle_on_random_traces(case, policy, f, ex, refs, pm, sf, unroll):
    """Random sizes, element counts and unroll thresholds: stores of several reservation steps
    that fail part-way."""
    d, ev = case
    doc = d.to_json()
    _check(lambda: Trace(AppDAG.from_json(doc), list(ev)), policy, f, executors=ex, refs=refs,
           peer_mode=pm, storage_fraction=sf, unroll_threshold=unroll)


def _snapshot(trace: Trace):
    return ([dataclasses.astuple(r) for r in trace.dag.rdds.values()],
            [dataclasses.astuple(s) for s in trace.dag.stages.values()])


@pytest.mark.parametrize("refs", REFS)
@pytest.mark.parametrize("policy", list(POLICIES))
def test_a_compiled_trace_replays_the_same_every_time(policy, refs):
    # cc unpersists each iteration's messages: replaying used to mark them uncached in the
    # trace's own DAG, so the next replay of the same CompiledTrace planned other reads
    ct = CompiledTrace(cc(parts=8))
    before = _snapshot(ct.trace)
    for p in POLICIES:  # every policy first, as `python -m lrc simulate` does
        simulate(ct, p, 0.5, refs=refs)
    again = [simulate(ct, policy, 0.5, refs=refs, log_evictions=True) for _ in range(2)]
    fresh = simulate(CompiledTrace(cc(parts=8)), policy, 0.5, refs=refs, log_evictions=True)
    for r in again:
        assert r.to_dict() == fresh.to_dict() and r.evicted == fresh.evicted
    assert _snapshot(ct.trace) == before


def test_the_planner_keeps_its_own_copy_of_what_it_is_given():
    rdd = RDD(1, 2, (Dependency(0),), cached=True, block_bytes=1)
    stage = Stage(0, 1, 2)
    p = Planner("lrc")
    p.add_job(Job(0, (0,)), [stage], [RDD(0, 2), rdd])
    p.rdd_unpersisted(1)
    assert rdd.cached and stage.job_id is None
    assert not p.dag.rdds[1].cached and p.dag.stages[0].job_id == 0


def test_arguments_are_checked():
    ct = CompiledTrace(make("pagerank", parts=2, iters=1))
    with pytest.raises(ValueError, match="refs"):
        simulate(ct, "lrc", 0.5, refs="nope")
    with pytest.raises(ValueError, match="executors"):
        simulate(ct, "lrc", 0.5, executors=0)


def test_take_changes_hands_over_the_set():
    p = Planner("lerc", profile=make("zip", parts=2))
    first = p.take_changes()
    assert first and p.take_changes() == set()
    blk = next(iter(first))
    first.add(("x", 1))  # the caller owns what it got: no effect on the planner
    p.block_cached(blk, "1")
    assert ("x", 1) not in p.take_changes()


def test_a_read_added_behind_the_next_one_changes_no_distance_priority():
    """A policy ranking by the next read alone (mrd, crd) gets only the blocks whose next read
    moved, or that had one read left (crd ranks a store of such a block last,
    `CRD.bind_stored`): a read registered after two earlier ones changes nothing it ranks; a
    count policy gets every block read."""
    from lrc.refcount import RefState

    for counted in (True, False):
        refs = RefState(track_order=True)
        refs.count_changes = counted
        refs.add_tasks(0, [(0, ((1, 0),))], seq=5)
        assert refs.take_changes() == {(1, 0)}
        refs.add_tasks(1, [(0, ((1, 0), (2, 0)))], seq=7)  # (1, 0) had one read left
        assert refs.take_changes() == {(1, 0), (2, 0)}
        refs.add_tasks(3, [(0, ((1, 0), (2, 0)))], seq=9)
        assert refs.take_changes() == ({(1, 0), (2, 0)} if counted else {(2, 0)})
        refs.add_tasks(2, [(0, ((1, 0),))], seq=3)  # an earlier read: the next one moves
        assert refs.take_changes() == {(1, 0)}



def _unpersist_case() -> Trace:
    """Blocks of 2 bytes: B (RDD 2, cached) is built on A (RDD 1, cached); A is unpersisted; X, Y
    and Z (RDDs 3, 6, 7) are created, which pushes B out; then B is read (a miss), then Y. Reads
    and creates derived as the recorder and the event-log reader derive them (lrc.derive)."""
    from lrc.derive import derive_reads

    d = AppDAG()
    d.add_rdd(RDD(0, 1))
    for rid, parent in [(1, 0), (2, 1), (3, 0), (6, 0), (7, 0)]:
        d.add_rdd(RDD(rid, 1, (Dependency(parent),), cached=True, block_bytes=2, compute_cost=1.0))
    d.add_rdd(RDD(4, 1, (Dependency(2),)))  # reads B
    d.add_rdd(RDD(5, 1, (Dependency(6),)))  # reads Y
    ev = []
    for j, rdd in enumerate([2, 3, 6, 7, 4, 5]):
        d.add_stage(Stage(j, rdd, 1, job_id=j))
        d.add_job(Job(j, (j,)))
        ev += [Event.job_start(j), Event.stage_submitted(j), Event.task(j, 0, executor="0"),
               Event.stage_completed(j), Event.job_end(j)]
        if j == 0:
            ev.append(Event.unpersist(1))
    events, _ = derive_reads(d, ev)
    return Trace(d, events)


def test_a_miss_recomputes_an_unpersisted_input_without_storing_it():
    # Spark computes an unpersisted RDD's blocks without storing them: the miss on B goes through
    # A and stores B only (evicting X), so Y still hits. Before, the replay stored A again and
    # evicted X for it, then Y for B: no hit at all.
    trace = _unpersist_case()
    tasks = [e for e in trace.events if e.kind == "task"]
    assert [(t.reads, t.creates) for t in tasks] == [
        ((), ((1, 0), (2, 0))), ((), ((3, 0),)), ((), ((6, 0),)), ((), ((7, 0),)),
        (((2, 0),), ()), (((6, 0),), ())]
    ct = CompiledTrace(trace)
    assert ct.working_set_bytes == 8  # B, X, Y, Z: 6 bytes of cache at F = 0.75
    r = simulate(ct, "lru", 0.75, executors=1, log_evictions=True)
    assert (r.reads, r.hits, r.evicted) == (2, 1, [(2, 0), (3, 0)])
    for policy in ("lru", "lrc", "lerc", "mrd"):
        _check(_unpersist_case, policy, 0.75, executors=1)
