"""lrc.eventlog_sizes: block sizes and value counts from the tasks' Input Metrics, on small
hand-made traces (a task's reads and what it counted)."""
from __future__ import annotations

from lrc.dag import RDD, AppDAG, Dependency
from lrc.eventlog_sizes import block_values, read_once_records
from lrc.trace import Event


def dag(*rdds: RDD) -> AppDAG:
    d = AppDAG()
    for r in rdds:
        d.add_rdd(r)
    return d


def cached(rid, name="PythonRDD", parent=None, parts=2):
    deps = (Dependency(parent),) if parent is not None else ()
    return RDD(rid, parts, deps, cached=True, name=name, call_site="RDD at PythonRDD.scala:59")


def task(*reads):
    return Event("task", stage_id=0, partition=0, reads=reads)


def test_a_block_read_alone_tells_its_value_and_peels_the_next():
    d = dag(cached(1), cached(2))
    values, how = block_values([task((1, 0)), task((1, 0), (2, 0)), task((1, 1))],
                               [100, 350, 120], d)
    assert values == {(1, 0): 100, (2, 0): 250, (1, 1): 120}
    assert how == {1: "input_metrics", 2: "input_metrics"}


def test_the_value_most_samples_give_wins_and_a_rebuild_from_the_inputs_tells_nothing():
    # rdd 3 is built from rdd 1 (cached): a task that missed (3, 0) read (1, 0) instead, and
    # counted its 100 bytes; the one that found it counted 40. Misses are the majority here.
    d = dag(cached(1), cached(3, parent=1))
    tasks = [task((1, 0))] + [task((3, 0))] * 4 + [task((3, 0))]
    values, _ = block_values(tasks, [100, 100, 100, 100, 40, 40], d)
    assert values == {(1, 0): 100, (3, 0): 40}
    # read twice in one task (GraphX) or with a file: more; the common value still wins
    values, _ = block_values([task((1, 0))] * 3, [100, 300, 100], d)
    assert values == {(1, 0): 100}


def test_generations_read_only_with_another_dataset_inherit_the_one_read_alone():
    # PageRank: ranks_i is read with links in each iteration, the last ranks alone
    d = dag(cached(1, "links"), cached(2, "ranks_0"), cached(3, "ranks_1"), cached(4, "ranks_2"))
    tasks = [task((2, 0), (1, 0)), task((3, 0), (1, 0)), task((4, 0))]
    values, how = block_values(tasks, [1000, 1000, 270], d)
    assert values == {(4, 0): 270, (3, 0): 270, (2, 0): 270, (1, 0): 730}
    assert how == {4: "input_metrics", 3: "inherited", 2: "inherited", 1: "input_metrics"}


def test_blocks_only_ever_read_together_share_the_rest_by_weight():
    d = dag(cached(1, "x"), cached(2, "y"))
    values, how = block_values([task((1, 0), (2, 0))] * 2, [90, 90], d)
    assert values == {(1, 0): 45, (2, 0): 45} and how == {1: "shared", 2: "shared"}
    values, _ = block_values([task((1, 0), (2, 0))], [90], d,
                             weight=lambda b: 2.0 if b[0] == 1 else 1.0)
    assert values == {(1, 0): 60, (2, 0): 30}


def test_records_count_only_where_the_bytes_say_every_block_was_found_once():
    d = dag(cached(1), cached(2))
    d.rdds[1].block_bytes, d.rdds[2].block_bytes = [100, 100], [50, 50]
    tasks = [task((1, 0)), task((1, 0), (2, 0)), task((2, 1)), task((1, 1))]
    #            found once   found both     read twice    missed (rebuilt: no bytes)
    records = read_once_records(tasks, [100, 150, 100, 0], [21, 33, 24, 0], d.rdds)
    assert records == [21, 33, 0, 0]
    values, how = block_values(tasks, records, d, hits=True)
    assert values == {(1, 0): 21, (2, 0): 12} and how == {1: "input_metrics", 2: "input_metrics"}
