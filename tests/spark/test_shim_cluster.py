"""The shim with separate executor JVMs (`local-cluster[2,1,1024]`): plugin installed in each
executor JVM, events and per-task cache reports from them, eviction order per executor."""
from __future__ import annotations

import os
import statistics
import time
from operator import add
from pathlib import Path

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import (PRESSURE_CONF, Events, FakeBrain, bridge, cached_order, evicted_blocks,
                              expected_digests, job_done, pressure_scenario, running, session,
                              until_job_end)

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

MASTER = "local-cluster[2,1,1024]"
N_A, N_B = 8, 12
PRIO_A = [7, 1, 9, 3, 8, 2, 6, 4]
CONF = {**BASE_CONF, **PRESSURE_CONF, "spark.lrc.tableWaitMs": "5000",
        "spark.executor.memory": "512m"}
EXECUTORS = {"0", "1"}


@pytest.fixture(scope="module")
def cluster():
    spark = session(MASTER, CONF, plugin=True, app_name="shim-cluster")
    ev = Events(spark)
    deadline = time.time() + 60
    while len({e["executor"] for e in ev.of("executor_plugin")}) < 2 and time.time() < deadline:
        spark.sparkContext.parallelize(range(4), 4).count()  # executors register lazily
        ev.drain()
    spark.startup_events = ev.all
    yield spark
    spark.stop()


def per_executor(events, rdd_id):
    """Per executor: A's blocks in caching order and in eviction order, while A and B were
    cached (jobs 1-2 of the scenario; the read-back jobs recompute and re-cache)."""
    events = until_job_end(events, 2)
    out = {}
    for ex in EXECUTORS:
        cached = [int(b.rsplit("_", 1)[1]) for b in cached_order(events, rdd_id, ex)]
        evicted = [int(b.rsplit("_", 1)[1]) for b in evicted_blocks(events, rdd_id, ex)]
        out[ex] = (cached, evicted)
    return out


def test_executor_plugin_installed_in_each_executor_jvm(cluster):
    plug = [e for e in cluster.startup_events if e["e"] == "executor_plugin"]
    assert {e["executor"] for e in plug} == EXECUTORS
    assert all(e["installed"] is True and e["error"] == "" for e in plug)
    added = {e["executor"]: e for e in cluster.startup_events if e["e"] == "executor_added"}
    assert set(added) == EXECUTORS and all(e["cores"] == 1 for e in added.values())
    # the executors really are other processes
    pids = set(cluster.sparkContext.parallelize(range(8), 8).map(lambda _: os.getpid()).collect())
    assert os.getpid() not in pids and len(pids) >= 1


def test_task_reports_and_block_events_come_from_executors(cluster):
    sc = cluster.sparkContext
    ev = Events(cluster)
    ev.clear()
    y = sc.parallelize(range(40), 4).map(lambda i: (i % 5, i)).reduceByKey(add, 4).cache()
    first, second = y.collect(), y.collect()
    assert sorted(first) == sorted(second) == sorted(
        {k: sum(i for i in range(40) if i % 5 == k) for k in range(5)}.items())
    ev.wait_for(job_done(2))
    ev.wait_for(lambda es: sum(1 for e in es if e["e"] == "task_cache") >= 12)
    evs = ev.all
    rdds = {r["id"]: r for e in evs if e["e"] == "job_start" for s in e["stages"] for r in s["rdds"]}
    assert rdds[y.id()]["cached"] and {d["kind"] for d in rdds[y.id()]["deps"]} == {"one_to_one"}
    blocks = {f"rdd_{y.id()}_{p}" for p in range(4)}
    caches = [e for e in evs if e["e"] == "task_cache"]
    assert {e["executor"] for e in caches} <= EXECUTORS
    assert {b for e in caches for b in e["puts"]} == blocks
    block_evs = [e for e in evs if e["e"] == "block" and e["block"] in blocks]
    assert block_evs and {e["executor"] for e in block_evs} <= EXECUTORS
    # each block's put is reported by the executor whose block manager holds it
    holder = {e["block"]: e["executor"] for e in block_evs if e["level"] != "NONE"}
    assert {b: e["executor"] for e in caches for b in e["puts"]} == holder
    # second job: a read is a hit of the executor's own MemoryStore exactly when the block is
    # there (a block fetched from the other executor is that executor's remote serve, not a hit)
    second = [e for e in evs if e["e"] == "job_start"][1]
    result_stage = [s["stage"] for s in second["stages"] if s["shuffle"] == -1][0]
    reads = [e for e in caches if e["stage"] == result_stage]
    assert sorted(e["partition"] for e in reads) == [0, 1, 2, 3]
    for e in reads:
        block = f"rdd_{y.id()}_{e['partition']}"
        assert e["puts"] == []
        assert e["hits"] == ([block] if holder[block] == e["executor"] else []), e
    ends = [e for e in evs if e["e"] == "task_end" and e["executor"] in EXECUTORS]
    assert len(ends) >= 12
    y.unpersist(blocking=True)


def test_without_table_each_executor_evicts_in_lru_order(cluster):
    ev = Events(cluster)
    ev.clear()
    out = pressure_scenario(cluster, N_A, N_B)
    ev.wait_for(job_done(4))
    time.sleep(0.5)
    ev.drain()
    assert out["digests_a"] == expected_digests(N_A, 1, 600_000)
    assert out["digests_b"] == expected_digests(N_B, 2, 600_000)
    total = 0
    for ex, (cached, evicted) in per_executor(ev.all, out["a"]).items():
        assert evicted == cached[:len(evicted)], f"executor {ex}: {evicted} vs LRU {cached}"
        total += len(evicted)
    assert total >= 4, "the scenario must create memory pressure on the executors"


def test_published_table_orders_eviction_on_each_executor(cluster):
    holder = {}

    def plan(job_start):
        if "a" not in holder:
            return None
        stages = ",".join(map(str, job_start["stage_ids"]))
        return f"{holder['a']}=" + ",".join(map(str, PRIO_A)), stages

    with FakeBrain(cluster, plan) as brain:
        out = pressure_scenario(cluster, N_A, N_B,
                                before_b=lambda a: holder.setdefault("a", a.id()))
        time.sleep(0.5)
    evs = brain.events.all
    assert out["digests_a"] == expected_digests(N_A, 1, 600_000)
    differs, total = False, 0
    for ex, (cached, evicted) in per_executor(evs, out["a"]).items():
        by_priority = sorted(cached, key=lambda p: PRIO_A[p])
        assert evicted == by_priority[:len(evicted)], f"executor {ex}: {evicted} vs {by_priority}"
        differs |= evicted != cached[:len(evicted)]
        total += len(evicted)
    assert total >= 4
    assert differs, "on some executor LRU would have evicted other blocks"
    forced = [e for e in evs if e["e"] == "table_in_force"]
    assert {e["executor"] for e in forced} == EXECUTORS
    assert all(e["waited_ms"] < 5000 and e["version"] >= brain.published[0][0] for e in forced)


def test_partition_changes_reach_each_executor_and_order_its_eviction(cluster):
    """A's priorities go out whole in reverse order first; once both executors applied them,
    B's job start changes them partition by partition (`rdd@part:p`), which the driver passes on
    to executors holding A's array as just those partitions. Eviction must follow the changed
    priorities, not the whole array's (which would evict in the reverse of PRIO_A's order)."""
    holder = {}

    def before_b(a):
        holder["a"] = a.id()
        b = holder["brain"].b
        version = int(b.tableVersion()) + 1
        b.publish(version, f"{a.id()}=" + ",".join(str(10 - p) for p in PRIO_A), "")
        deadline = time.time() + 30
        while {e["executor"] for e in holder["brain"].events.all if e["e"] == "table_applied"
               and e["version"] >= version} != EXECUTORS and time.time() < deadline:
            time.sleep(0.05)

    def plan(job_start):
        if "a" not in holder:
            return None
        changes = ",".join(f"{p}:{x}" for p, x in enumerate(PRIO_A))
        return f"{holder['a']}@{changes}", ",".join(map(str, job_start["stage_ids"]))

    with FakeBrain(cluster, plan) as brain:
        holder["brain"] = brain
        out = pressure_scenario(cluster, N_A, N_B, before_b=before_b)
        time.sleep(0.5)
    assert out["digests_a"] == expected_digests(N_A, 1, 600_000)
    total = 0
    for ex, (cached, evicted) in per_executor(brain.events.all, out["a"]).items():
        by_priority = sorted(cached, key=lambda p: PRIO_A[p])
        assert evicted == by_priority[:len(evicted)], f"executor {ex}: {evicted} vs {by_priority}"
        total += len(evicted)
    assert total >= 4


def test_table_published_mid_stage_is_in_force_on_both_executors_within_10_ms(cluster):
    """Push: while a stage runs on both executors, each version published on the driver is
    applied by both executor JVMs in one RPC message - no polling exists. Each executor reports
    when it applied a version (`table_applied`, lag from the driver's publish; one host, one
    clock). The median lag must be <= 10 ms, and every lag far below the 2 s hold time after
    which an unchanged request would be answered anyway (so none came from a re-ask)."""
    sc = cluster.sparkContext
    b = bridge(cluster)
    ev = Events(cluster)
    ev.clear()
    slow = sc.parallelize(range(4), 4).map(lambda i: (time.sleep(2.0), i)[1])
    published = []
    with running(slow.count):
        ev.wait_for(lambda es: any(e["e"] == "stage_submitted" for e in es))
        time.sleep(0.3)  # tasks are running on both executors
        for i in range(20):
            version = int(b.tableVersion()) + 1
            b.publish(version, f"{900000 + i}=1,2,3", "")
            published.append(version)
            time.sleep(0.03)
    evs = ev.wait_for(lambda es: {e["executor"] for e in es if e["e"] == "table_applied"
                                  and e["version"] == published[-1]} == EXECUTORS)
    for ex in EXECUTORS:
        lags = [e["lag_ms"] for e in evs if e["e"] == "table_applied" and e["executor"] == ex
                and e["version"] in published]
        assert len(lags) >= len(published) // 2, f"executor {ex} applied {len(lags)} versions"
        assert statistics.median(lags) <= 10.0, f"executor {ex}: lags {sorted(lags)}"
        assert max(lags) < 1000.0, f"executor {ex}: lags {sorted(lags)}"


def test_install_failure_in_executor_jvms_falls_back(cluster):
    cluster.stop()  # one SparkContext per JVM: this test needs its own application
    spark = session(MASTER, {**CONF, "spark.lrc.entriesField": "noSuchField"}, plugin=True,
                    app_name="shim-cluster-fallback")
    try:
        sc = spark.sparkContext
        ev = Events(spark)
        got = dict(sc.parallelize(range(100), 4).map(lambda x: (x % 3, x)).reduceByKey(add)
                   .collect())
        assert got == {k: sum(x for x in range(100) if x % 3 == k) for k in range(3)}
        deadline = time.time() + 60
        while len({e["executor"] for e in ev.of("executor_plugin")}) < 2 \
                and time.time() < deadline:
            sc.parallelize(range(4), 4).count()
            ev.drain()
        plug = ev.of("executor_plugin")
        assert {e["executor"] for e in plug} == EXECUTORS
        assert all(e["installed"] is False and "NoSuchFieldException" in e["error"] for e in plug)
        # the clear warning is in each executor's own log
        import pyspark

        home = os.environ.get("SPARK_HOME") or str(Path(pyspark.__file__).parent)
        work = Path(home) / "work" / sc.applicationId
        logs = {p.parent.name: p.read_text(errors="replace") for p in work.glob("*/stderr")}
        assert set(logs) == EXECUTORS
        for ex, text in logs.items():
            assert text.count("spark-lrc: could not install the policy-ordered MemoryStore map "
                              f"on executor {ex}; Spark's LRU stays in effect") == 1
    finally:
        spark.stop()
