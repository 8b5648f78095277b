"""The simulator's fast path (lrc.fastsim) must give exactly the reference replay's results."""
import pytest
from hypothesis import given, settings, strategies as st

from lrc.dag import AppDAG, Dependency, RDD, Stage
from lrc.planner import Planner
from lrc.policies import POLICIES
from lrc.sim import CompiledTrace, simulate
from lrc.synth import make
from lrc.trace import Event, Trace


def _same(build, policy, f, **kw):
    # each engine gets its own trace: the Planner marks unpersisted RDDs uncached in the DAG
    a = simulate(CompiledTrace(build()), policy, f, log_evictions=True, **kw)
    b = simulate(CompiledTrace(build()), policy, f, log_evictions=True, engine="reference", **kw)
    assert a.to_dict() == b.to_dict()
    assert a.evicted == b.evicted


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["pagerank", "cc", "ml", "svdpp", "zip"]), st.integers(0, 10 ** 6),
       st.integers(2, 12), st.sampled_from(list(POLICIES)), st.sampled_from([0.1, 0.25, 0.4, 0.6]),
       st.integers(1, 4), st.sampled_from(["profile", "online"]), st.sampled_from(["task", "stage"]))
def test_fast_equals_reference_on_synthetic_workloads(w, seed, parts, policy, f, ex, refs, pm):
    _same(lambda: make(w, seed=seed, parts=parts), policy, f, executors=ex, refs=refs,
          peer_mode=pm)


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
        level = draw(st.sampled_from(["MEMORY_ONLY", "MEMORY_AND_DISK"]))
        sizes = draw(st.lists(st.integers(1, 9), min_size=parts, max_size=parts))
        d.add_rdd(RDD(r, parts, tuple(Dependency(p) for p in ps), cached=cached,
                      storage_level=level if cached else "NONE", block_bytes=sizes,
                      compute_cost=draw(st.floats(0.0, 1.0))))
    ev, mat, sid = [], set(), 0
    from lrc.dag import Job
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
        order = draw(st.permutations(list(range(parts))))
        for p in order:
            reads, creates = d.task_reads(sid, p, mat)
            mat.update(creates)
            exe = draw(st.sampled_from([None, "0", "1", "7"]))
            ev.append(Event.task(sid, p, reads, creates, executor=exe))
        ev.append(Event.stage_completed(sid))
        ev.append(Event.job_end(j))
        sid += 1 + ghost
        if draw(st.integers(0, 4)) == 0:
            r = draw(st.integers(1, nrdd))
            ev.append(Event.unpersist(r))
            mat = {b for b in mat if b[0] != r}
    return d, ev


@settings(max_examples=150, deadline=None)
@given(random_traces(), st.sampled_from(list(POLICIES)), st.sampled_from([0.15, 0.3, 0.5, 0.8]),
       st.integers(1, 3), st.sampled_from(["profile", "online"]), st.sampled_from(["task", "stage"]))
def test_fast_equals_reference_on_random_traces(case, policy, f, ex, refs, pm):
    d, ev = case
    doc = d.to_json()
    _same(lambda: Trace(AppDAG.from_json(doc), list(ev)), policy, f, executors=ex, refs=refs,
          peer_mode=pm)


def test_engine_argument_is_checked():
    ct = CompiledTrace(make("pagerank", parts=2, iters=1))
    with pytest.raises(ValueError, match="engine"):
        simulate(ct, "lru", 0.5, engine="turbo")
    with pytest.raises(ValueError, match="refs"):
        simulate(ct, "lrc", 0.5, refs="nope")


def test_take_changes_hands_over_the_set():
    p = Planner("lerc", profile=make("zip", parts=2))
    first = p.take_changes()
    assert first and p.take_changes() == set()
    blk = next(iter(first))
    first.add(("x", 1))  # the caller owns what it got: no effect on the planner
    p.block_cached(blk, "1")
    assert ("x", 1) not in p.take_changes()
