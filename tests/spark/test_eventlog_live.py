"""A Spark event log and spark-lrc's recorder, written by the same real run, give the same trace:
reference counts equal block by block, replayed hit ratios within 0.02 (lrc.eventlog).

One application runs PageRank, zip and a DataFrame aggregation (its hash map claims execution
memory: both record the same claim per task, lrc.execmem) (local SparkSession, plugin and
recorder on, event log on); the second test writes the log the other way (single lz4 file, no block updates: sizes are
then estimates). Every eventLog conf is set explicitly: PySpark's builder options outlive a
session within one process."""
from __future__ import annotations

import copy
from collections import Counter

import pytest
from pyspark.sql import SparkSession

import spark_plugin
from conftest import BASE_CONF
from jvm_shim.testing import stop_jvm
from lrc.eventlog import read_eventlog
from lrc.refcount import RefState
from lrc.sim import CompiledTrace, simulate
from lrc.trace import load_trace
from workloads import pagerank, zip as zip_workload

pytestmark = pytest.mark.spark


def _run(tmp_path, with_zip=True, **eventlog_conf):
    # a JVM an earlier test launched keeps that test's confs (e.g. a tiny memory fraction) as
    # system properties, and the aggregation below then runs out of execution memory: start one
    stop_jvm()
    logs = tmp_path / "eventlogs"
    logs.mkdir()
    b = SparkSession.builder.master("local[2]").appName("eventlog")
    conf = {**BASE_CONF, "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(logs),
            **eventlog_conf}
    for k, v in conf.items():
        b = b.config(k, v)
    trace_path = tmp_path / "recorded.parquet"
    spark = spark_plugin.configure(b, policy="lru", trace_path=str(trace_path)).getOrCreate()
    try:
        pagerank.run(spark, scale=1, seed=3, iterations=3, verify=False)
        if with_zip:
            zip_workload.run(spark, scale=1, seed=3, rounds=2, verify=False)
        spark.range(0, 200_000, numPartitions=2).selectExpr("id % 1000 AS k") \
            .groupBy("k").count().collect()
    finally:
        spark.stop()
    return logs, load_trace(trace_path)


def _reads(trace) -> Counter:
    c: Counter = Counter()
    for e in trace.events:
        if e.kind == "task":
            c.update(e.reads)
    return c


def _preloaded_counts(trace) -> dict:
    """Reference counts of every block after preloading the whole trace (a profile)."""
    refs = RefState()
    seq = {}
    for e in trace.events:
        if e.kind == "task":
            refs.add_task(e.stage_id, e.partition, e.reads, seq.setdefault(e.stage_id, len(seq)))
    return {b: refs.refs(b) for b in _reads(trace)}


def _claims(trace) -> list[tuple]:
    return [(e.stage_id, e.partition, e.exec_bytes) for e in trace.events if e.kind == "task"]


def _order(trace) -> list[tuple]:
    """The events in order, unpersists left out: Spark's ContextCleaner posts an unpersist from
    its own thread while the DAGScheduler posts job starts from another, and the listener bus
    hands a post to its queues one by one, so the event log's queue and spark-lrc's listener
    may see the two in either order."""
    return [(e.kind, e.stage_id, e.partition, e.creates) for e in trace.events
            if e.kind != "unpersist"]


def _unpersisted(trace) -> list[int]:
    return sorted(e.rdd_id for e in trace.events if e.kind == "unpersist")


def _uncounted(recorded):
    """The recorded trace without serialized blocks' value counts, which an event log cannot
    carry (the executors count them when a trace is recorded: spark.lrc.countValues=auto)."""
    serialized = [r for r in recorded.dag.rdds.values() if r.cached and r.serialized]
    assert serialized and all(r.block_elements is not None for r in serialized), \
        "the recorder got no value counts for the serialized (PySpark) blocks"
    out = copy.deepcopy(recorded)
    for r in out.dag.rdds.values():
        if r.serialized:
            r.block_elements = None
    return out


def _compare(el_trace, recorded, tolerance=0.02):
    recorded = _uncounted(recorded)
    assert _reads(el_trace) == _reads(recorded), "reads per block differ"
    assert _preloaded_counts(el_trace) == _preloaded_counts(recorded)
    assert _order(el_trace) == _order(recorded)
    assert _unpersisted(el_trace) == _unpersisted(recorded)
    a, b = CompiledTrace(el_trace), CompiledTrace(recorded)
    out = {}
    for policy in ("lru", "lrc"):
        ha = simulate(a, policy, 0.5, executors=2).hit_ratio
        hb = simulate(b, policy, 0.5, executors=2).hit_ratio
        out[policy] = (ha, hb)
        assert abs(ha - hb) <= tolerance, (policy, ha, hb)
    return out


def test_default_spark4_event_log_matches_the_recorded_trace(tmp_path):
    """Spark 4's default event log: a rolling directory of zstd files; block updates logged."""
    logs, recorded = _run(tmp_path, **{"spark.eventLog.logBlockUpdates.enabled": "true",
                                       "spark.eventLog.rolling.enabled": "true",
                                       "spark.eventLog.compress": "true",
                                       "spark.eventLog.compression.codec": "zstd",
                                       "spark.storage.unrollMemoryThreshold": "262144"})
    el = read_eventlog(logs)
    assert el.complete and el.files and el.files[0].name.startswith("events_1_")
    assert set(el.size_source.values()) == {"measured"}
    assert sum(_reads(recorded).values()) > 0
    assert _claims(el.trace) == _claims(recorded)  # Spark's peak on-heap execution memory
    assert any(c for *_, c in _claims(recorded)), "the aggregation claimed no execution memory"
    assert el.trace.executor_memory > 0 and el.trace.storage_fraction is None  # not set: default
    # the recorder knows the memory the claims were made in too (the block managers')
    assert recorded.executor_memory == el.trace.executor_memory
    assert recorded.storage_fraction is None
    # both replay the unroll reservation the run made (lrc.unroll), with the conf's threshold
    assert el.trace.unroll_threshold == recorded.unroll_threshold == 256 << 10
    ratios = _compare(el.trace, recorded)
    sized = [r for r in el.trace.dag.rdds.values() if r.cached and r.block_bytes is not None]
    for r in sized:
        assert r.block_bytes == recorded.dag.rdds[r.id].block_bytes
    print("hit ratios at F=0.5 (event log, recorded):", ratios)


def test_single_lz4_file_without_block_updates(tmp_path):
    """A plain single-file log compressed with lz4 and no block updates: the same reads;
    sizes are estimates (Input Metrics), so replays may differ more than with measured sizes."""
    logs, recorded = _run(tmp_path, with_zip=False,
                          **{"spark.eventLog.rolling.enabled": "false",
                             "spark.eventLog.logBlockUpdates.enabled": "false",
                             "spark.eventLog.compress": "true",
                             "spark.eventLog.compression.codec": "lz4",
                             "spark.memory.storageFraction": "0.3"})
    files = [p for p in logs.iterdir() if not p.name.startswith(".")]
    assert len(files) == 1 and files[0].suffix == ".lz4"
    el = read_eventlog(files[0])
    assert el.trace.storage_fraction == recorded.storage_fraction == 0.3
    assert el.trace.executor_memory == recorded.executor_memory > 0
    assert el.sizes_estimated and "measured" not in el.size_source.values()
    assert _reads(el.trace) == _reads(recorded)
    assert _preloaded_counts(el.trace) == _preloaded_counts(recorded)
    a, b = CompiledTrace(el.trace), CompiledTrace(recorded)
    for policy in ("lru", "lrc"):
        print(policy, "hit ratio F=0.5 estimated sizes vs recorded:",
              simulate(a, policy, 0.5, executors=2).hit_ratio,
              simulate(b, policy, 0.5, executors=2).hit_ratio)
