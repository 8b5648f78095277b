"""The GraphX library workloads (graphx_pagerank, graphx_cc, graphx_svdpp: GraphX's own PageRank,
ConnectedComponents and SVDPlusPlus driven by workloads/java/ through py4j) at small scales in real
SparkSessions: each one's self-check passes (numpy power iteration, union-find, RMSE bound), and its
checksum is the same with the plugin off and under policy lrc with memory pressure, in another
partitioning, and from the Java application's own `main` under spark-submit."""
from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

import workloads
from conftest import BASE_CONF, policy_session
from jvm_shim import jar_path
from jvm_shim.testing import restart_jvm_if_needed, stop_jvm
from workloads import graphx

pytestmark = pytest.mark.spark

NAMES = ("graphx_pagerank", "graphx_cc", "graphx_svdpp")
# small graphs, few iterations: the same library code paths in a few seconds each
SMALL = {"graphx_pagerank": {"scale": 0.1, "iterations": 4},
         "graphx_cc": {"scale": 0.02},
         "graphx_svdpp": {"scale": 0.03, "iterations": 2}}
# 4 MiB of unified memory: smaller than what the graphs cache, so the policies evict
TIGHT = {"spark.testing.memory": str(8 << 20), "spark.testing.reservedMemory": "0",
         "spark.memory.fraction": "0.5"}


@pytest.fixture(scope="module", autouse=True)
def _fresh_jvm_afterwards():
    """This module launches a JVM with tiny memory confs; later modules must not inherit them."""
    yield
    stop_jvm()


def _session(policy: str | None):
    restart_jvm_if_needed(("org.sparklrc.LrcBridge", "org.sparklrc.workloads.GraphxWorkloads"))
    conf = graphx.with_jars({**BASE_CONF, **TIGHT}, [str(jar_path()), *graphx.extra_jars()])
    spark = policy_session(f"graphx-{policy or 'off'}", conf, policy)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _run_all(spark) -> dict[str, dict]:
    return {name: workloads.get(name).run(spark, seed=7, verify=True, **SMALL[name])
            for name in NAMES}


@pytest.fixture(scope="module")
def reference() -> dict[str, dict]:
    spark = _session(None)
    try:
        return _run_all(spark)
    finally:
        spark.stop()


def test_graphx_workloads_are_registered_with_their_jar():
    for name in NAMES:
        mod = workloads.get(name)
        assert name in workloads.NAMES
        assert "Caching pattern" in (mod.__doc__ or ""), name
        (jar,) = mod.extra_jars()
        with zipfile.ZipFile(jar) as zf:
            assert "org/sparklrc/workloads/GraphxWorkloads.class" in zf.namelist()
    # built from source, cached outside the repository
    assert not Path(jar).resolve().is_relative_to(Path(workloads.__file__).resolve().parents[1])


def test_self_checks_pass_with_the_plugin_off(reference):
    for name, out in reference.items():
        assert out["result"]["verified"] is True, name
        assert isinstance(out["checksum"], str) and ":" in out["checksum"], name
    pr = reference["graphx_pagerank"]["result"]
    # (logNormalGraph seeds vertex v's RNG with seed ^ v, and java.util.Random's first draws of
    # nearby seeds are correlated: at small scales the mean degree depends much on the seed)
    assert pr["vertices"] > 1000 and pr["edges"] > pr["vertices"]
    cc = reference["graphx_cc"]["result"]
    assert cc["components"] > 10 and cc["largest"] > cc["vertices"] // 2  # a giant component
    svd = reference["graphx_svdpp"]["result"]
    assert svd["init"] == "seeded" and 0 < svd["rmse"] < svd["rating_std"]


def test_checksums_are_identical_under_lrc_with_memory_pressure(reference):
    from spark_plugin.session import active_brain

    spark = _session("lrc")
    try:
        got = _run_all(spark)
        # another partitioning and another seed (cheap on cc): same graph, same components
        cc = workloads.get("graphx_cc")
        other_parts = cc.run(spark, seed=7, partitions=3, **SMALL["graphx_cc"])
        reseeded = cc.run(spark, seed=8, **SMALL["graphx_cc"])
        stats = active_brain().stats()
        assert not spark.sparkContext._jsc.getPersistentRDDs(), "GraphX graphs left cached"
    finally:
        spark.stop()
    assert {n: o["checksum"] for n, o in got.items()} == \
        {n: o["checksum"] for n, o in reference.items()}
    assert all(o["result"]["verified"] for o in got.values())
    assert other_parts["checksum"] == reference["graphx_cc"]["checksum"]
    assert reseeded["checksum"] != reference["graphx_cc"]["checksum"]
    assert stats["tasks"] > 0 and stats["degraded"] is None
    assert stats["evictions"] > 0, "the memory limit must force evictions for this test to mean anything"


def test_java_main_under_spark_submit_prints_the_same_result(reference):
    home = Path(os.environ["SPARK_HOME"])
    cmd = [str(home / "bin" / "spark-submit"), "--master", "local[2]",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
           "--class", graphx.CLASS, str(graphx.jar()),
           "graphx-cc", "--scale", str(SMALL["graphx_cc"]["scale"]), "--seed", "7"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["checksum"] == reference["graphx_cc"]["checksum"]
    assert out["result"]["components"] == reference["graphx_cc"]["result"]["components"]
    assert "graphx-cc scale=" in res.stderr
