"""The executors' cache counters in Spark's metrics system (`CacheMetrics.java`), read back from
Spark's CSV sink on two separate executor JVMs (`local-cluster[2,1,1024]`, 4 MiB of storage each).

Each executor JVM writes its own files, `<app>.<executor>.plugin.org.sparklrc.LrcPlugin.<name>.csv`,
one row per sink period (1 s). A counter is advanced before its task's `task_cache` event is sent,
so the first row a sink writes after the driver has every report carries the final value: the
tests wait for that row (polling, generous timeout) and compare it exactly, against Spark's own
task and block events, and against the brain's `stats()` per executor.
"""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import (PRESSURE_CONF, Events, expected_digests, pressure_scenario, session,
                              until_job_end)

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

MASTER = "local-cluster[2,1,1024]"
EXECUTORS = {"0", "1"}
N_A, N_B = 8, 12
SCENARIO_TASKS = N_A + N_B + N_B + N_A  # cache A, cache B, read B back, read A back
SOURCE = "plugin.org.sparklrc.LrcPlugin"
COUNTERS = ("tasks", "hits", "puts", "evictions")
SINK = "spark.metrics.conf.executor.sink.csv."


def sink_conf(directory: Path, instance: str = "executor") -> dict[str, str]:
    sink = SINK.replace("executor", instance)
    return {sink + "class": "org.apache.spark.metrics.sink.CsvSink", sink + "period": "1",
            sink + "unit": "seconds", sink + "directory": str(directory)}


def forget_sink_conf() -> None:
    """Confs given when the JVM started are system properties that later sessions of this JVM
    inherit: drop ours, so no later test writes metrics into a deleted directory."""
    from pyspark import SparkContext

    gw = SparkContext._gateway
    if gw is not None:
        for key in [*sink_conf(Path(".")), *sink_conf(Path("."), "driver")]:
            gw.jvm.java.lang.System.clearProperty(key)


def sink_files(directory: Path, app: str, executor: str) -> set[str]:
    prefix = f"{app}.{executor}.{SOURCE}."
    return {p.name[len(prefix):-len(".csv")] for p in directory.glob(prefix + "*.csv")}


def counter_after(directory: Path, app: str, executor: str, name: str, after: float,
                  timeout: float = 60.0) -> int:
    """The counter in the first row this executor's sink wrote after `after` (epoch seconds). Rows
    carry whole seconds of the report's start, and values are read after it: t > floor(after)
    means the row was taken after `after`. Only complete (newline-terminated) rows count."""
    path = directory / f"{app}.{executor}.{SOURCE}.{name}.csv"
    deadline = time.time() + timeout
    while True:
        rows = path.read_text().split("\n")[1:-1] if path.exists() else []
        for row in rows:
            t, value = row.split(",")
            if int(t) > int(after):
                return int(value)
        if time.time() > deadline:
            raise AssertionError(f"{path.name}: no row after {after:.0f} in {timeout:.0f} s: "
                                 f"{rows}")
        time.sleep(0.2)


def sink_counters(directory: Path, app: str, executors, after: float) -> dict[str, dict[str, int]]:
    return {ex: {name: counter_after(directory, app, ex, name, after) for name in COUNTERS}
            for ex in executors}


def test_counters_in_csv_sink_equal_task_reports_and_spark_block_events(tmp_path):
    """No brain: the test reads the shim's events itself. Per executor, the sink's counters equal
    the sums of its task reports, and those agree with Spark: one report per task Spark saw end
    there, puts = the RDD blocks its BlockManager reported cached, evictions = the RDD blocks it
    reported dropped (level NONE)."""
    conf = {**BASE_CONF, **PRESSURE_CONF, "spark.executor.memory": "512m", **sink_conf(tmp_path)}
    spark = session(MASTER, conf, plugin=True, app_name="metrics-sink")
    try:
        sc = spark.sparkContext
        app = sc.applicationId
        ev = Events(spark)
        deadline = time.time() + 60
        while len({e["executor"] for e in ev.of("executor_plugin")}) < 2 and time.time() < deadline:
            sc.parallelize(range(4), 4).count()  # executors register lazily
            ev.drain()
        assert {e["executor"] for e in ev.of("executor_plugin")} == EXECUTORS
        jobs_before = len(ev.of("job_end"))
        out = pressure_scenario(spark, N_A, N_B)
        assert out["digests_a"] == expected_digests(N_A, 1, 600_000)
        assert out["digests_b"] == expected_digests(N_B, 2, 600_000)

        def all_reported(evs):
            ended = Counter(e["executor"] for e in evs if e["e"] == "task_end")
            reported = Counter(e["executor"] for e in evs if e["e"] == "task_cache")
            return (sum(1 for e in evs if e["e"] == "job_end") >= jobs_before + 4
                    and ended == reported)

        evs = ev.wait_for(all_reported, timeout=60)
        ready = time.time()  # every report is in: every counter was advanced before this
        got = sink_counters(tmp_path, app, EXECUTORS, ready)
    finally:
        spark.stop()
        forget_sink_conf()

    scenario = until_job_end(evs, jobs_before + 4)  # the unpersists at the end are not evictions
    for ex in EXECUTORS:
        assert sink_files(tmp_path, app, ex) == set(COUNTERS), "no misses/effectiveHits here"
        reports = [e for e in evs if e["e"] == "task_cache" and e["executor"] == ex]
        from_reports = {"tasks": len(reports),
                        "hits": sum(len(e["hits"]) for e in reports),
                        "puts": sum(len(e["puts"]) for e in reports),
                        "evictions": sum(len(e["evicted"]) for e in reports)}
        assert got[ex] == from_reports, f"executor {ex}"
        blocks = [e for e in scenario if e["e"] == "block" and e["executor"] == ex
                  and e["block"].startswith("rdd_")]
        spark_saw = {"tasks": sum(1 for e in evs if e["e"] == "task_end" and e["executor"] == ex),
                     "puts": sum(1 for e in blocks if e["level"] != "NONE"),
                     "evictions": sum(1 for e in blocks if e["level"] == "NONE")}
        assert {k: got[ex][k] for k in spark_saw} == spark_saw, f"executor {ex}"
    total = {name: sum(got[ex][name] for ex in EXECUTORS) for name in COUNTERS}
    assert total["evictions"] >= 4, f"the scenario must press both executors' memory: {total}"
    assert total["hits"] >= 1 and total["puts"] >= N_A + N_B, total


def test_counters_in_csv_sink_equal_brain_stats_per_executor(tmp_path):
    """With the brain (policy lrc): per executor, the sink's tasks and evictions equal
    `stats()["executors"][id]`, and its hits the brain's hits minus remote hits (the executor
    sees only reads of its own MemoryStore)."""
    from spark_plugin.doctor import settle, start_session
    from spark_plugin.session import active_brain

    spark = start_session(MASTER, "lrc", extra={"spark.executor.memory": "512m",
                                                **sink_conf(tmp_path),
                                                **sink_conf(tmp_path, "driver")})
    try:
        assert active_brain() is not None
        app = spark.sparkContext.applicationId
        out = pressure_scenario(spark, N_A, N_B)
        assert out["digests_a"] == expected_digests(N_A, 1, 600_000)
        stats = settle(expected_tasks=SCENARIO_TASKS, timeout=60)
        assert stats["tasks"] == SCENARIO_TASKS, stats
        active_brain().report_metrics()  # the brain's gauges hold these stats from now on
        ready = time.time()  # the brain has every report: every counter was advanced before this
        execs = stats["executors"]
        assert set(execs) <= EXECUTORS and all(e["installed"] for e in execs.values()), execs
        got = sink_counters(tmp_path, app, execs, ready)
        gauges = {name: counter_after(tmp_path, app, "driver", f"brain.{name}", ready)
                  for name in ("hits", "misses", "effectiveHits", "evictions", "tasks")}
        per_executor = {ex: counter_after(tmp_path, app, "driver", f"brain.executor.{ex}.misses",
                                          ready) for ex in execs}
        driver_jvm_cpu = active_brain().bridge.plugin_cpu()
    finally:
        spark.stop()
        forget_sink_conf()

    for ex, e in execs.items():
        brain = {"tasks": e["tasks"], "hits": e["hits"] - e["remote_hits"],
                 "evictions": e["evictions"]}
        assert {k: got[ex][k] for k in brain} == brain, f"executor {ex}: {e}"
    assert sum(got[ex]["evictions"] for ex in execs) == stats["evictions"] >= 4, stats
    assert sum(got[ex]["hits"] for ex in execs) >= 1, got
    # What only the plan knows is in the driver's metrics: the brain's gauges equal its stats.
    assert gauges == {"hits": stats["hits"], "misses": stats["misses"],
                      "effectiveHits": stats["effective_hits"], "evictions": stats["evictions"],
                      "tasks": stats["tasks"]}, gauges
    assert per_executor == {ex: e["misses"] for ex, e in execs.items()}, per_executor
    assert stats["misses"] > 0  # the scenario makes the gauges carry something
    # The plugin's own CPU by part (PluginCpu.java): each part whose code ran has some; the task
    # hooks' and the table watch's come from the executor JVMs' reports (no task runs in the
    # driver JVM, whose own count of them is 0).
    cpu = stats["plugin_cpu_s"]
    assert all(cpu[p] > 0 for p in ("listener", "executor_events", "table_requests", "brain_calls",
                                    "task_hooks", "table_watch", "brain")), cpu
    assert driver_jvm_cpu["task_hooks"] == driver_jvm_cpu["table_watch"] == 0, driver_jvm_cpu
    assert cpu["total"] == pytest.approx(sum(v for p, v in cpu.items() if p != "total"), abs=0.01)
