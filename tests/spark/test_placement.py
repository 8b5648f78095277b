"""Placement hints on real Spark with separate executor JVMs and fake GPUs.

local-cluster[2,1,1024] starts its workers with the driver's conf, so both workers discover the
same fake GPUs (a discovery script printing addresses "0" and "1") and give both to their
executor. The hints are checked against Spark's own BlockManagerMaster: each partition's first
executor is one Spark's status store says holds the block; the GPU-versus-no-GPU order is in
tests/unit/test_placement_rank.py.
"""
from __future__ import annotations

import json
import time

import pytest

from conftest import BASE_CONF, spark_block_holders

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

MASTER = "local-cluster[2,1,1024]"
ADDRESSES = ["0", "1"]
PARTS = 4


def gpu_conf(script: str) -> dict[str, str]:
    """What Spark 4 needs for fake GPUs in local-cluster/standalone: the worker discovers them
    (amount + script) and hands them, in a resources file, to executors that ask for them (so
    executors need no script of their own); tasks must ask for a share."""
    return {
        "spark.worker.resource.gpu.amount": str(len(ADDRESSES)),
        "spark.worker.resource.gpu.discoveryScript": script,
        "spark.executor.resource.gpu.amount": str(len(ADDRESSES)),
        "spark.task.resource.gpu.amount": "1",
    }


@pytest.fixture(scope="module")
def gpu_spark(tmp_path_factory):
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from jvm_shim.testing import restart_jvm_if_needed
    from spark_plugin import configure
    from spark_plugin.session import active_brain

    script = tmp_path_factory.mktemp("gpu") / "discover_gpus.sh"
    script.write_text("#!/usr/bin/env bash\necho '%s'\n"
                      % json.dumps({"name": "gpu", "addresses": ADDRESSES}))
    script.chmod(0o755)
    conf = {**BASE_CONF, "spark.executor.memory": "512m", **gpu_conf(str(script))}
    restart_jvm_if_needed()
    b = SparkSession.builder.master(MASTER).appName("spark-lrc-placement")
    for k, v in conf.items():
        b = b.config(k, v)
    spark = configure(b, policy="lrc").getOrCreate()
    try:
        brain = active_brain()
        deadline = time.time() + 60
        while len(brain.executors) < 2 and time.time() < deadline:
            spark.sparkContext.parallelize(range(2), 2).count()  # executors register lazily
            brain.sync()
        yield spark, brain
    finally:
        spark.stop()
        # Confs of the JVM's first session become system properties every later SparkConf of
        # this JVM inherits: do not hand GPU requests to the tests that run after this one.
        for k in conf:
            if k.startswith("spark.") and "resource.gpu" in k:
                SparkContext._jvm.java.lang.System.clearProperty(k)


def test_hints_prefer_the_executor_holding_the_block_and_report_gpus(gpu_spark):
    from spark_plugin import gpu_executors, placement_hints, stats

    spark, brain = gpu_spark
    sc = spark.sparkContext
    assert set(brain.executors) == {"0", "1"}, brain.executors
    # each executor's tasks see the GPU addresses Spark assigned them
    def task_gpus(_):
        from pyspark import TaskContext

        return TaskContext.get().resources()["gpu"].addresses

    seen = sc.parallelize(range(PARTS), PARTS).map(task_gpus).collect()
    assert all(a and set(a) <= set(ADDRESSES) for a in seen), seen

    def slow(it):  # long enough that both 1-core executors take tasks
        time.sleep(0.5)
        return ((i, str(i) * 10) for i in it)

    rdd = sc.parallelize(range(4000), PARTS).mapPartitions(slow).cache()
    assert rdd.count() == 4000
    rid = rdd.id()
    deadline = time.time() + 20
    while time.time() < deadline:
        brain.sync()
        with brain._lock:
            held = {p for (r, p), w in brain.planner.locations.items() if r == rid and w}
        holders = spark_block_holders(sc, rid)
        if held == set(range(PARTS)) and set(holders) == held and all(holders.values()):
            break
        time.sleep(0.1)
    assert held == set(range(PARTS)), f"block events for {held} only"
    assert set(holders) == held and all(holders.values()), holders

    hints = placement_hints(rid)
    assert placement_hints(rdd) == hints
    assert sorted(hints) == list(range(PARTS))
    for p, ranked in hints.items():
        assert sorted(ranked) == ["0", "1"], hints
        assert ranked[0] in holders[p], (p, ranked, holders[p])
        # a block cached once: the other executor comes after the holder
        if len(holders[p]) == 1:
            assert ranked[1] not in holders[p]
    # tasks of a 4-partition RDD on two 1-core executors: both end up holding blocks
    assert {r[0] for r in hints.values()} == {"0", "1"}, hints

    expected = {"0": ADDRESSES, "1": ADDRESSES}
    assert gpu_executors() == expected
    assert gpu_executors(brain) == expected
    assert stats()["gpus"] == expected
    rdd.unpersist(blocking=True)
