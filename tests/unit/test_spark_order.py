"""A task's reads and stores replayed in the order Spark makes them (lrc.compiled.spark_order).

Spark computes a task's RDD by pulling from its narrow parents in dependency order: a union (or
a cogroup of co-partitioned RDDs) reads its first parent to the end before its second, and a
cached block is stored as soon as its partition is computed. So a store can push out a block
the same task reads next, which then misses: connected components (workloads/cc.py) does it
every iteration, and replays that read every input first counted hits live runs never had
(issue 10: cc LRU at F = 0.3, 38 points above the live hit ratio)."""
from lrc.compiled import spark_order
from lrc.dag import AppDAG, Dependency, Job, RDD, Stage
from lrc.derive import derive_reads
from lrc.sim import CompiledTrace, simulate
from lrc.trace import Event, Trace

R, C = (1, 0), (2, 0)  # the block read (RDD 1) and the block created (RDD 2)


def _union_case(created_first: bool) -> Trace:
    """RDD 1 (R, cached, 5 bytes) is built by job 0. Job 1 computes a union of RDD 2 (C, cached,
    4 bytes, new) and a map of RDD 1, in that order or the other; RDD 5 then reads C."""
    d = AppDAG()
    d.add_rdd(RDD(0, 1))
    d.add_rdd(RDD(1, 1, (Dependency(0),), cached=True, block_bytes=5, compute_cost=1.0))
    d.add_rdd(RDD(2, 1, (Dependency(0),), cached=True, block_bytes=4, compute_cost=1.0))
    d.add_rdd(RDD(3, 1, (Dependency(1),)))  # a map of R
    parents = (2, 3) if created_first else (3, 2)
    d.add_rdd(RDD(4, 1, tuple(Dependency(p) for p in parents), name="PartitionerAwareUnionRDD"))
    d.add_rdd(RDD(5, 1, (Dependency(2),)))
    ev = []
    for j, rdd in enumerate([1, 4, 5]):
        d.add_stage(Stage(j, rdd, 1, job_id=j))
        d.add_job(Job(j, (j,)))
        ev += [Event.job_start(j), Event.stage_submitted(j), Event.task(j, 0, executor="0"),
               Event.stage_completed(j), Event.job_end(j)]
    events, _ = derive_reads(d, ev)
    return Trace(d, events)


def test_a_union_stores_its_first_parent_before_it_reads_its_second():
    t = _union_case(created_first=True)
    task = [e for e in t.events if e.kind == "task" and e.stage_id == 1][0]
    assert (task.reads, task.creates) == ((R,), (C,))
    assert spark_order(t.dag, 1, 0, task.reads, task.creates) == ([0], [0], (True, False))
    # the other way round every read comes first: no interleaving to record
    t = _union_case(created_first=False)
    task = [e for e in t.events if e.kind == "task" and e.stage_id == 1][0]
    assert spark_order(t.dag, 1, 0, task.reads, task.creates) == ([0], [0], None)


def test_a_store_evicts_the_block_its_task_reads_next_which_then_misses():
    # 6 bytes of cache hold R (5) or C (4), not both. Storing C first evicts R (not read yet, so
    # not pinned); R's read then misses and its store evicts C; job 2's read of C misses too, and
    # its store evicts R. Read in the other order (before session 29), R hit.
    r = simulate(_union_case(created_first=True), "lru", 6 / 9 + 1e-9, executors=1,
                 log_evictions=True)
    assert (r.reads, r.hits) == (2, 0)
    assert r.evicted == [R, C, R]
    # R read first: pinned while C's store looks for room, so C is not cached; R hits, C misses
    r = simulate(_union_case(created_first=False), "lru", 6 / 9 + 1e-9, executors=1,
                 log_evictions=True)
    assert (r.reads, r.hits) == (2, 1)
    assert r.evicted == [R]  # by job 2's store of C


def test_the_order_survives_a_lineage_the_walk_cannot_follow():
    # blocks the walk does not meet keep their order: reads first, creates last
    t = _union_case(created_first=True)
    assert spark_order(t.dag, 1, 0, ((9, 9),) + (R,), (C, (8, 8))) == \
        ([0, 1], [0, 1], (False, True, False, True))
    assert spark_order(t.dag, 99, 0, (R,), (C,)) == ([0], [0], None)  # an unknown stage
    assert CompiledTrace(t).events  # compiles
