import json

import pytest

from lrc.dag import ALL, AppDAG, Dependency, Job, RDD, Stage, block_name, parse_block
from lrc.synth import make
from lrc.trace import Event, Trace, load_trace, save_trace


def test_block_names_round_trip_and_reject_non_rdd_blocks():
    assert block_name((3, 4)) == "rdd_3_4"
    assert parse_block("rdd_3_4") == (3, 4)
    assert parse_block("broadcast_1") is None and parse_block("rdd_3") is None


def small_dag():
    d = AppDAG()
    d.add_rdd(RDD(0, 4))
    d.add_rdd(RDD(1, 4, [Dependency(0, "shuffle")], cached=True, block_bytes=10))
    d.add_rdd(RDD(2, 4, [Dependency(1)], cached=True, block_bytes=[1, 2, 3, 4]))
    d.add_rdd(RDD(3, 2, [Dependency(2, "explicit", mapping=[[0, 1], [2, 3]])]))
    d.add_rdd(RDD(4, 6, [Dependency(1, "range", 0, 0, 4), Dependency(2, "range", 0, 4, 2)]))
    d.add_stage(Stage(0, 3, 2))
    d.add_stage(Stage(1, 4, 6))
    d.add_job(Job(0, [0, 1]))
    return d


def test_task_reads_stop_at_materialized_blocks_and_create_the_rest():
    d = small_dag()
    reads, creates = d.task_reads(0, 1, {(2, 2), (2, 3)})
    assert sorted(reads) == [(2, 2), (2, 3)] and creates == []
    reads, creates = d.task_reads(0, 0, set())
    assert reads == [] and set(creates) == {(1, 0), (1, 1), (2, 0), (2, 1)}
    assert creates.index((1, 0)) < creates.index((2, 0))  # inputs are created first


def test_range_dependencies_map_union_partitions():
    d = small_dag()
    assert d.task_reads(1, 2, ALL)[0] == [(1, 2)]
    assert d.task_reads(1, 5, ALL)[0] == [(2, 1)]
    assert d.block_inputs((2, 3)) == [(1, 3)]


def test_unknown_dependency_reads_every_parent_partition_when_counts_differ():
    d = AppDAG()
    d.add_rdd(RDD(0, 3, cached=True))
    d.add_rdd(RDD(1, 2, [Dependency(0, "unknown")]))
    d.add_stage(Stage(0, 1, 2))
    assert sorted(d.task_reads(0, 0, ALL)[0]) == [(0, 0), (0, 1), (0, 2)]


def test_dag_json_round_trip():
    d = small_dag()
    d2 = AppDAG.from_json(d.to_json())
    assert d2.to_dict() == d.to_dict()
    assert d2.task_reads(0, 1, {(2, 2)}) == d.task_reads(0, 1, {(2, 2)})


@pytest.mark.parametrize("doc, msg", [
    ("{not json", "not valid JSON"),
    ('{"rdds": 3}', "'rdds' must be a list"),
    ('{"rdds": [{"id": 1}]}', r"rdds\[0\] is malformed.*num_partitions"),
    ('{"rdds": [{"id": 1, "num_partitions": 2, "deps": [{"parent": 0, "kind": "weird"}]}]}', "weird"),
    ('{"rdds": [{"id": 1, "num_partitions": 2, "deps": [{"parent": 7}]}]}', "unknown RDD 7"),
    ('{"stages": [{"id": 0, "rdd_id": 5, "num_tasks": 1}]}', "unknown final RDD 5"),
])
def test_malformed_dag_gives_clear_error(doc, msg):
    with pytest.raises(ValueError, match=msg):
        AppDAG.from_json(doc)


@pytest.mark.parametrize("suffix", [".parquet", ".json"])
def test_trace_round_trip(tmp_path, suffix):
    tr = make("zip")
    tr.events.append(Event.task(0, 1, reads=[(1, 1)], executor="2", duration_s=0.5,
                                exec_bytes=1310704))
    back = load_trace(save_trace(tr, tmp_path / f"t{suffix}"))
    assert back.events == tr.events and back.name == "zip"
    assert back.dag.to_dict() == tr.dag.to_dict()
    assert (back.executor_memory, back.storage_fraction, back.unroll_threshold) == (0, None, None)
    tr.executor_memory, tr.storage_fraction, tr.unroll_threshold = 11784956, 0.1, 65536
    back = load_trace(save_trace(tr, tmp_path / f"m{suffix}"))
    assert (back.executor_memory, back.storage_fraction, back.unroll_threshold) == \
        (11784956, 0.1, 65536)


def test_malformed_trace_files_give_clear_errors(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    with pytest.raises(ValueError, match="does not exist"):
        load_trace(tmp_path / "missing.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"junk")
    with pytest.raises(ValueError, match="not a readable Parquet"):
        load_trace(tmp_path / "junk.parquet")
    pq.write_table(pa.table({"kind": ["task"]}), tmp_path / "nometa.parquet")
    with pytest.raises(ValueError, match="no 'lrc.dag' metadata"):
        load_trace(tmp_path / "nometa.parquet")
    bad = {"dag": small_dag().to_dict(), "events": [{"kind": "task", "partition": 0}]}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="event 0 is malformed.*stage_id"):
        load_trace(tmp_path / "bad.json")
    bad["events"] = [{"kind": "task", "stage_id": 0, "partition": 0, "exec_bytes": -1}]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="event 0 is malformed.*exec_bytes"):
        load_trace(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps({**bad, "events": [], "storage_fraction": 1.5}))
    with pytest.raises(ValueError, match="storage_fraction must be"):
        load_trace(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps({**bad, "events": [], "unroll_threshold": 0}))
    with pytest.raises(ValueError, match="unroll_threshold must be"):
        load_trace(tmp_path / "bad.json")
    bad["events"] = [{"kind": "explode"}]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="explode"):
        load_trace(tmp_path / "bad.json")


def test_trace_built_in_code_simulates(tmp_path):
    from lrc.sim import simulate

    d = small_dag()
    tr = Trace(d, [Event.job_start(0), Event.stage_submitted(0),
                   Event.task(0, 0, creates=[(1, 0), (2, 0)], executor="0", duration_s=1.0),
                   Event.task(0, 1, reads=[(2, 0)], executor="0", duration_s=1.0),
                   Event.stage_completed(0), Event.job_end(0)])
    r = simulate(load_trace(save_trace(tr, tmp_path / "t.parquet")), "lrc", 1.0, executors=1)
    assert (r.reads, r.hits, r.est_runtime) == (1, 1, 1.0)
