"""Replaying a stage's tasks in the order Spark's scheduler picks them (lrc.task_order).

A trace records the order its run ran each stage's tasks in. With ample memory every block is
cached and the order is the partitions'; under pressure Spark's TaskSetManager gives a free
executor first a task whose block it holds, so the cached partitions are read before the
missing ones' rebuilds can evict them. ml's plugin-off trace replays LRU at F = 0.3 at 0.028 in
its logged order and at 0.417 in the order a run under pressure used (live: 0.389;
results/whatif/online/session36/)."""
import pytest

from lrc.dag import AppDAG, Dependency, Job, RDD, Stage
from lrc.derive import derive_reads
from lrc.sim import simulate
from lrc.task_order import StageQueue, block_places, stage_places
from lrc.trace import Event, Trace


def test_an_executor_takes_a_task_filed_under_it_first():
    # compiled task events: (2, stage, partition, executor, reads, ...)
    t = [(2, 7, p, 1, reads, (), 0.1, 0, None) for p, reads in enumerate(([3], [4], [5], []))]
    where = [-1] * 6
    where[4], where[5] = 0, 1  # block 4 on executor 0, block 5 on executor 1
    nowhere = [-1] * 6  # no copy on a disk
    no_inputs = [()] * 6
    places = stage_places(t, where, nowhere, no_inputs)
    assert places == {0: set(), 1: {0}, 2: {1}, 3: set()}
    q = StageQueue(t, places)
    assert q.next(1)[2:4] == (2, 1)  # PROCESS_LOCAL: block 5
    assert q.next(1)[2:4] == (0, 1)  # then the first, on 1
    assert q.next(0)[2:4] == (1, 0)  # executor 0 holds block 4
    assert q.next(0)[2:4] == (3, 0)  # the one left
    on_disk = [-1, -1, -1, 1, -1, -1]  # block 3's copy is on executor 1's disk: local there too
    assert StageQueue(t, stage_places(t, [-1] * 6, on_disk, no_inputs)).next(1)[2:4] == (0, 1)


def test_the_lists_are_those_of_the_stage_start():
    """Spark files tasks under executors once, when the stage is submitted: a block evicted
    while the stage runs still draws its task to the executor that held it."""
    t = [(2, 7, p, 0, (p,), (), 0.1, 0, None) for p in range(3)]
    where = [-1, -1, 0]
    places = stage_places(t, where, [-1] * 3, [()] * 3)
    where[2] = -1  # evicted after the stage started
    assert StageQueue(t, places).next(0)[2] == 2


def test_a_block_cached_nowhere_prefers_its_nearest_cached_ancestor():
    """DAGScheduler.getPreferredLocs: a partition cached nowhere takes the locations of its
    narrow parents, depth first (a cached DataFrame's MEMORY_ONLY child whose blocks are gone
    runs where its parent table's partition sits: tpch under pressure)."""
    #        block: 0    1    2    3    4    5
    inputs = [(1, 2), (3,), (4,), (), (), (5,)]
    where, disk = [-1, -1, -1, -1, 1, -1], [-1, -1, -1, 0, -1, -1]
    assert block_places(0, where, disk, inputs) == {0}  # 0 -> 1 -> 3 (on disk at 0) first
    assert block_places(2, where, disk, inputs) == {1}
    assert block_places(5, where, disk, inputs) == set()
    where[0] = 1
    assert block_places(0, where, disk, inputs) == {1}  # its own copy decides
    disk[0] = 0
    assert block_places(0, where, disk, inputs) == {0, 1}  # memory or disk, both local


def test_a_deep_diamond_lineage_is_searched_once_per_block():
    """SVD++-like lineage: each generation reads the previous one twice. 2^60 paths; the
    search visits each block once."""
    n = 60
    inputs = [(i + 1, i + 1) for i in range(n)] + [()]
    assert block_places(0, [-1] * (n + 1), [-1] * (n + 1), inputs) == set()
    where = [-1] * n + [1]
    assert block_places(0, where, [-1] * (n + 1), inputs) == {1}


def _rebuild_case(size: int = 10) -> Trace:
    """RDD 1 (A, cached, 2 blocks of ``size`` bytes) is built by job 0, partitions 0 then 1; job 1
    builds RDD 2 (C, cached, 2 blocks) from A, logged partition 1 first."""
    d = AppDAG()
    d.add_rdd(RDD(0, 2))
    d.add_rdd(RDD(1, 2, (Dependency(0),), cached=True, block_bytes=size, compute_cost=1.0))
    d.add_rdd(RDD(2, 2, (Dependency(1),), cached=True, block_bytes=size, compute_cost=1.0))
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


def test_the_whatif_replays_in_sparks_order_unless_told(tmp_path):
    """`lrc whatif` answers for a log recorded with other memory than the sizes it asks about:
    each replay takes Spark's order (`--task-order spark`, the default), the bound and
    `--task-order logged` the log's."""
    from lrc.eventlog_write import write_eventlog
    from lrc.whatif import CacheSize, run_whatif
    from lrc.whatif_report import write_report

    # 4 MiB blocks: a store reserves Spark's 1 MiB of unroll memory first (lrc.unroll), and 0.4
    # of the working set holds one block with that headroom, not two
    log = write_eventlog(_rebuild_case(4 << 20), tmp_path / "app.log")
    size = [CacheSize(fraction=0.4)]
    runs = {o: run_whatif(log, size, ["lru"], executors=1, progress=False, jobs=1, task_order=o)
            for o in ("spark", "logged")}
    assert run_whatif(log, size, ["lru"], executors=1, progress=False, jobs=1).task_order == "spark"
    assert [r["hit_ratio"] for r in runs["spark"].rows] == [0.5]
    assert [r["hit_ratio"] for r in runs["logged"].rows] == [0.0]
    report = " ".join(write_report(runs["spark"], tmp_path / "o", "cmd").read_text().split())
    assert "in the order Spark's scheduler gives them" in report
    with pytest.raises(ValueError, match="task_order must be one of logged, spark"):
        run_whatif(log, size, ["lru"], executors=1, progress=False, task_order="random")


def test_lrc_simulate_takes_the_task_order(tmp_path):
    import json

    from lrc.cli import main
    from lrc.trace import save_trace

    path = save_trace(_rebuild_case(), tmp_path / "t.json")
    hits = {}
    for order in ("logged", "spark"):
        out = tmp_path / f"{order}.json"
        assert main(["simulate", "--trace", str(path), "--policies", "lru,min", "--executors", "1",
                     "--cache-fraction", "0.2500001", "--task-order", order,
                     "--json", str(out)]) == 0
        hits[order] = {r["policy"]: r["hits"] for r in json.loads(out.read_text())["results"]}
    assert hits["logged"]["lru"] == 0 and hits["spark"]["lru"] == 1
    assert hits["logged"]["min"] == hits["spark"]["min"]  # min replays the logged order
