"""The three ways to turn spark-lrc on, each against real Spark: spark-lrc-submit with an
unmodified PySpark script, a JVM application with only the JVM conf, and in code with a trace
that the simulator then replays."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import spark_plugin
from conftest import BASE_CONF, ROOT
from jvm_shim import jar_path
from jvm_shim.testing import restart_jvm_if_needed
from lrc.policies import admits
from lrc.sim import simulate
from lrc.trace import load_trace
from spark_plugin.report import load_stats
from workloads import pagerank

pytestmark = pytest.mark.spark
SUBMIT = str(Path(sys.executable).with_name("spark-lrc-submit"))
QUIET = ["--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false"]


def test_submit_runs_an_unmodified_pyspark_script_and_writes_stats(tmp_path):
    stats_path, trace_path, events = tmp_path / "stats.json", tmp_path / "trace.parquet", tmp_path / "ev"
    events.mkdir()
    out = subprocess.run(
        [SUBMIT, "--master", "local[2]", *QUIET, "--conf", "spark.eventLog.enabled=true",
         "--conf", f"spark.eventLog.dir=file:{events}", "--conf", "spark.testing.memory=50331648", "--conf", "spark.testing.reservedMemory=0",
         "--policy", "lrc", "--lrc-conf", f"statsPath={stats_path}", "--lrc-conf", f"tracePath={trace_path}",
         str(ROOT / "workloads" / "pagerank.py"), "--scale", "1"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "checksum=" in out.stdout
    stats = json.loads(stats_path.read_text())
    assert stats["policy"] == "lrc" and stats["degraded"] is None
    assert stats["tasks"] > 0 and stats["hits"] > 0
    assert stats["plan_latency_ms"]["count"] > 0
    assert load_trace(trace_path).accesses() > 0
    summary = load_stats(next(events.iterdir()))  # the event log keeps the stats (at stop)
    assert summary["policy"] == "lrc" and 0 < summary["hits"] <= stats["hits"]


def test_submit_rejects_an_unknown_policy_before_spark_starts():
    out = subprocess.run([SUBMIT, "--policy", "fifo", "app.py"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "spark.lrc.policy" in out.stderr and "lru, lrc, lerc, mrd" in out.stderr


JAVA_APP = """
import java.util.*;
import org.apache.spark.api.java.*;
import org.apache.spark.SparkConf;
public class CacheApp {
  public static void main(String[] args) {
    JavaSparkContext sc = new JavaSparkContext(new SparkConf().setAppName("java-app"));
    List<Integer> xs = new ArrayList<>();
    for (int i = 0; i < 1000; i++) xs.add(i);
    JavaRDD<Integer> r = sc.parallelize(xs, 4).map(x -> x * 2).cache();
    long n = r.count();
    int sum = r.reduce(Integer::sum);
    System.out.println("RESULT " + n + " " + sum);
    sc.stop();
  }
}
"""


def test_a_jvm_application_without_a_brain_runs_under_lru_and_says_so(tmp_path):
    """The JVM conf alone, with the sidecar brain turned off (test_sidecar.py covers it on)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    (tmp_path / "CacheApp.java").write_text(JAVA_APP)
    subprocess.run(["javac", "-cp", f"{jars}/*", "-d", str(tmp_path), str(tmp_path / "CacheApp.java")],
                   check=True, timeout=120)
    subprocess.run(["jar", "cf", str(tmp_path / "app.jar"), "-C", str(tmp_path), "CacheApp.class"],
                   check=True, timeout=60)
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    out = subprocess.run(
        [str(submit), "--master", "local[2]", *QUIET, "--class", "CacheApp",
         "--conf", "spark.plugins=org.sparklrc.LrcPlugin", "--conf", "spark.lrc.sidecar=false",
         "--jars", str(jar_path()), str(tmp_path / "app.jar")],
        capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "RESULT 1000 999000" in out.stdout
    assert "no policy brain attached; Spark's LRU stays in effect" in out.stderr


# crd is not here: its ranks are the run's measured task times, which the test does not control,
# and live it ranks a block at the median density until the first task that builds it ends,
# where the replay knows every price from the start. One CI run (session 52) replayed 0.654
# against 0.538 live, on code that had passed. That its live prices are the trace's is
# tests/spark/test_rebuild_cost_live.py; its live runs against their replays, the benchmarks.
@pytest.mark.parametrize("policy", ["lru", "lrc"])
def test_recorded_trace_replays_in_the_simulator_close_to_what_executors_measured(tmp_path, policy):
    """One executor with 6 MiB of storage runs PageRank under `policy`; the simulator replays the
    recording with the same policy and cache size and must agree on the hit ratio."""
    storage = 6 << 20
    restart_jvm_if_needed()
    b = SparkSession.builder.master("local[1]").appName("replay")
    # Spark's defaults where other tests' confs leak through JVM system properties: with a 64 KiB
    # unroll threshold (PRESSURE_CONF) a PySpark block's reservation grows in steps that follow
    # its pickled batches, which the trace does not record (lrc.unroll; measured before the
    # simulator modelled any reservation: lrc 0.471 live vs 0.712 simulated). At 1 MiB every
    # block here is below the threshold: each store reserves the threshold, as the replay does.
    for k, v in {**BASE_CONF, "spark.testing.memory": str(2 * storage),
                 "spark.testing.reservedMemory": "0", "spark.memory.fraction": "0.5",
                 "spark.storage.unrollMemoryThreshold": str(1 << 20),
                 "spark.cleaner.referenceTracking": "true"}.items():
        b = b.config(k, v)
    trace_path = tmp_path / "run.parquet"
    spark = spark_plugin.configure(b, policy=policy, trace_path=str(trace_path)).getOrCreate()
    try:
        pagerank.run(spark, scale=2, seed=3, iterations=6, verify=False)
    finally:
        spark.stop()
    measured = spark_plugin.stats()
    trace = load_trace(trace_path)
    total = sum(r.size(p) for r in trace.dag.rdds.values() if r.cached for p in range(r.num_partitions))
    assert total > storage, "the run must be under memory pressure for the comparison to mean anything"
    # with the admission the executors had (spark.lrc.admit=auto: off for lru and lrc)
    sim = simulate(trace, policy, storage / total, executors=1, cores=1, refs="online",
                   admit=admits(policy))
    assert measured["evictions"] > 0
    if policy == "lru":  # LRU keeps dead ranks and loses live blocks: misses to agree on
        assert measured["hit_ratio"] < 1
    print(f"replay {policy}: simulator hit ratio {sim.hit_ratio:.3f}, executors measured {measured['hit_ratio']:.3f}")
    # Tables are pushed after every batch of events the brain takes (spark.lrc.publishMs=0), so
    # the executor evicts with the counts the simulator uses: live 0.317 and 0.673 for lru and
    # lrc, replayed 0.365 and 0.663 with the trace's 1 MiB unroll reservation (0.317 and 0.712
    # without; session 21, lrc.unroll). lrc still depends on the brain
    # keeping up with the tasks, which the test does not control: one CI run measured lrc 0.644
    # (with polling every 50 ms it was 0.625-0.663). LRU needs no table: it must agree closely.
    tolerance = 0.05 if policy == "lru" else 0.10
    assert abs(sim.hit_ratio - measured["hit_ratio"]) <= tolerance, (sim.to_dict(), measured)


def test_a_recorded_run_serves_as_the_profile_of_the_next_run(tmp_path):
    """Recurring application: the second run loads the first run's trace (spark.lrc.profile), so
    references of later jobs are known from the start; results and health must not change."""

    def run(**opts):
        restart_jvm_if_needed()
        b = SparkSession.builder.master("local[1]").appName("profile")
        for k, v in {**BASE_CONF, "spark.testing.memory": str(12 << 20),
                     "spark.testing.reservedMemory": "0", "spark.memory.fraction": "0.5"}.items():
            b = b.config(k, v)
        spark = spark_plugin.configure(b, policy="lrc", **opts).getOrCreate()
        try:
            return pagerank.run(spark, scale=2, seed=3, iterations=4, verify=False)["checksum"]
        finally:
            spark.stop()

    profile = tmp_path / "first.parquet"
    first = run(trace_path=str(profile))
    online = spark_plugin.stats()
    second = run(profile=str(profile))
    with_profile = spark_plugin.stats()
    assert second == first
    assert with_profile["profile"] == str(profile) and with_profile["degraded"] is None
    assert with_profile["tasks"] == online["tasks"] > 0
    # No hit-ratio comparison: which blocks the two runs evict depends on when each table lands
    # relative to the puts (task timing), which this test does not control. That the profile's
    # counts drive eviction is tested in tests/spark/test_plugin_eviction.py.
