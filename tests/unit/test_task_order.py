"""Replaying a stage's tasks in the order Spark's scheduler picks them (lrc.sim, task_order).

A trace records the order its run ran each stage's tasks in. With ample memory every block is
cached and the order is the partitions'; under pressure Spark's TaskSetManager gives a free
executor first a task whose block it holds, so the cached partitions are read before the
missing ones' rebuilds can evict them. ml's plugin-off trace replays LRU at F = 0.3 at 0.028 in
its logged order and at 0.417 in the order a run under pressure used (live: 0.389;
results/whatif/online/session36/)."""
import pytest

from lrc.dag import AppDAG, Dependency, Job, RDD, Stage
from lrc.derive import derive_reads
from lrc.sim import simulate, spark_next
from lrc.trace import Event, Trace


def test_an_executor_takes_a_task_reading_its_own_cached_block_first():
    # compiled task events: (2, stage, partition, executor, reads, ...)
    t = [(2, 7, p, 1, reads, (), 0.1, 0, None) for p, reads in enumerate(([3], [4], [5], []))]
    where = [-1] * 6
    where[4], where[5] = 0, 1  # block 4 on executor 0, block 5 on executor 1
    nowhere = [-1] * 6  # no copy on a disk
    pending = list(t)
    assert spark_next(pending, 1, where, nowhere)[2:4] == (2, 1)  # PROCESS_LOCAL: block 5
    assert spark_next(pending, 1, where, nowhere)[2:4] == (0, 1)  # then the first, on 1
    assert spark_next(pending, 0, where, nowhere)[2:4] == (1, 0)  # executor 0 holds block 4
    assert [e[2] for e in pending] == [3]
    on_disk = [-1, -1, -1, 1, -1, -1]  # block 3's copy is on executor 1's disk: local there too
    assert spark_next(list(t), 1, [-1] * 6, on_disk)[2:4] == (0, 1)


def _rebuild_case() -> Trace:
    """RDD 1 (A, cached, 2 x 10 bytes) is built by job 0, partitions 0 then 1; job 1 builds RDD 2
    (C, cached, 2 x 10 bytes) from A, logged partition 1 first. One executor holds 10 bytes."""
    d = AppDAG()
    d.add_rdd(RDD(0, 2))
    d.add_rdd(RDD(1, 2, (Dependency(0),), cached=True, block_bytes=10, compute_cost=1.0))
    d.add_rdd(RDD(2, 2, (Dependency(1),), cached=True, block_bytes=10, compute_cost=1.0))
    ev = []
    for j, (rdd, order) in enumerate(((1, (0, 1)), (2, (1, 0)))):
        d.add_stage(Stage(j, rdd, 2, job_id=j))
        d.add_job(Job(j, (j,)))
        ev += [Event.job_start(j), Event.stage_submitted(j)]
        ev += [Event.task(j, p, executor="0") for p in order]
        ev += [Event.stage_completed(j), Event.job_end(j)]
    events, _ = derive_reads(d, ev)
    return Trace(d, events)


def test_the_cached_partition_is_read_before_a_rebuild_evicts_it():
    """Job 0 caches A0 (A1 cannot evict a block of its own RDD). Logged, job 1 runs partition 1
    first: it rebuilds A1 (not stored) and stores C1 over A0, so partition 0's read of A0 misses.
    In Spark's order the executor holding A0 runs partition 0 first, and that read hits."""
    t = _rebuild_case()
    logged = simulate(t, "lru", 0.25 + 1e-9, executors=1)
    spark = simulate(t, "lru", 0.25 + 1e-9, executors=1, task_order="spark")
    assert (logged.reads, logged.hits) == (2, 0)
    assert (spark.reads, spark.hits) == (2, 1)
    assert spark.tasks_with_reads == logged.tasks_with_reads == 2


def test_bad_task_orders_are_refused():
    t = _rebuild_case()
    with pytest.raises(ValueError, match="task_order must be one of logged, spark"):
        simulate(t, "lru", 0.5, executors=1, task_order="random")
    with pytest.raises(ValueError, match="needs the future"):
        simulate(t, "min", 0.5, executors=1, task_order="spark")
