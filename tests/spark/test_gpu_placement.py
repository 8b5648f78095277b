"""GPU placement that acts (issue 13), on a standalone mini-cluster with separate executor JVMs.

Worker 0 has no GPUs; worker 1 reports one fake GPU through a discovery script. Dynamic
allocation (shuffle tracking, no external shuffle service) gives the default profile a CPU
executor and the GPU resource profile a GPU executor, which the master can only place on worker
1. A CPU stage caches the data on the CPU executor; GPU stages (`withResources`) then read it.
What the mechanism guarantees, checked against Spark's own state: once the first GPU stage has
run, every cached input block is in the GPU executor's memory (Spark's status store, fed by the
BlockManagerMaster's block updates), later GPU stages' tasks run PROCESS_LOCAL on the GPU executor
(Spark's task data) and read every block from its own memory store (the executor's report), the
CPU copies stay readable, and results equal the same computation done without Spark.
"""
from __future__ import annotations

import json
import time

import pytest

from conftest import BASE_CONF, spark_block_holders

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

PARTS, PER_PART = 4, 2000


def _functions():
    """The task functions, defined here so that cloudpickle ships them by value (executors
    cannot import this test module)."""

    def rows(part, it):
        import random

        rnd = random.Random(part)  # random payload: blocks sized like real data
        return [(part, i, rnd.getrandbits(256)) for i in it]

    def gpu_sum(it):
        from pyspark import TaskContext

        gpus = TaskContext.get().resources()["gpu"].addresses  # runs holding its (fake) GPU
        total = 0
        for _part, i, r in it:
            total += (r % 1009) * (i % 7)
        yield (len(gpus), total)

    return rows, gpu_sum


_rows, _gpu_sum = _functions()


def _expected() -> list[tuple[int, int]]:
    out = []
    for p in range(PARTS):
        rows = _rows(p, range(p * PER_PART, (p + 1) * PER_PART))
        out.append((1, sum((r % 1009) * (i % 7) for _, i, r in rows)))
    return out


def _tasks(sc, stage_id: int) -> list[tuple[str, str]]:
    """(executor, locality) of each task of the stage's first attempt, per Spark's status store."""
    store = sc._jsc.sc().statusStore()
    tasks = store.taskList(stage_id, 0, 1000)
    return [(tasks.apply(i).executorId(), tasks.apply(i).taskLocality())
            for i in range(tasks.size())]


def _gpu_stage(sc, rdd, rp, n=[0]) -> tuple[list, int]:
    """Run one GPU stage over the cached RDD; its result and stage id."""
    n[0] += 1
    group = f"gpu-stage-{n[0]}"
    sc.setJobGroup(group, group)
    result = rdd.mapPartitions(_gpu_sum).withResources(rp).collect()
    tracker = sc.statusTracker()
    (job,) = tracker.getJobIdsForGroup(group)
    (stage,) = tracker.getJobInfo(job).stageIds
    return result, stage


@pytest.fixture(scope="module")
def gpu_cluster(tmp_path_factory):
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from jvm_shim.testing import restart_jvm_if_needed
    from spark_plugin import configure
    from workloads.cluster import MiniCluster

    base = tmp_path_factory.mktemp("gpu-mc")
    script = base / "discover_gpus.sh"
    script.write_text("#!/usr/bin/env bash\necho '%s'\n"
                      % json.dumps({"name": "gpu", "addresses": ["0"]}))
    script.chmod(0o755)
    gpu_worker = {"spark.worker.resource.gpu.amount": "1",
                  "spark.worker.resource.gpu.discoveryScript": str(script)}
    conf = {**BASE_CONF,
            "spark.locality.wait": "3s",  # Spark's default: GPU tasks wait for a local copy
            "spark.executor.memory": "512m", "spark.executor.cores": "1",
            "spark.dynamicAllocation.enabled": "true",
            "spark.dynamicAllocation.shuffleTracking.enabled": "true",
            "spark.dynamicAllocation.minExecutors": "0",
            "spark.dynamicAllocation.maxExecutors": "1",
            "spark.dynamicAllocation.executorIdleTimeout": "300s"}
    with MiniCluster(workers=2, worker_memory="1g", worker_cores=2, base_dir=base,
                     worker_opts=[None, gpu_worker]) as mc:
        restart_jvm_if_needed()
        b = SparkSession.builder.master(mc.master_url).appName("spark-lrc-gpu-placement")
        for k, v in conf.items():
            b = b.config(k, v)
        spark = configure(b, policy="crd").getOrCreate()
        try:
            yield spark, script
        finally:
            spark.stop()
            for k in conf:  # the first session's confs become system properties of this JVM
                if k.startswith("spark.dynamicAllocation") or k == "spark.locality.wait":
                    SparkContext._jvm.java.lang.System.clearProperty(k)


def test_gpu_stage_inputs_move_to_the_gpu_executor_and_are_read_locally(gpu_cluster):
    from pyspark.resource import (ExecutorResourceRequests, ResourceProfileBuilder,
                                  TaskResourceRequests)

    from spark_plugin import gpu_executors, stats
    from spark_plugin.session import active_brain

    spark, script = gpu_cluster
    sc = spark.sparkContext
    brain = active_brain()
    data = sc.parallelize(range(PARTS * PER_PART), PARTS).mapPartitionsWithIndex(_rows).cache()
    assert data.count() == PARTS * PER_PART  # the CPU stage: cached on the CPU executor
    cpu_holders = spark_block_holders(sc, data.id())
    assert set(cpu_holders) == set(range(PARTS)), cpu_holders
    cpu_execs = set().union(*cpu_holders.values())

    ereqs = ExecutorResourceRequests().cores(1).memory("512m").resource("gpu", 1, str(script))
    treqs = TaskResourceRequests().cpus(1).resource("gpu", 1)
    rp = ResourceProfileBuilder().require(ereqs).require(treqs).build
    expected = _expected()

    first, s1 = _gpu_stage(sc, data, rp)
    assert first == expected
    gpu = set(gpu_executors())
    assert len(gpu) == 1 and not gpu & cpu_execs, (gpu, cpu_execs)
    (g,) = gpu
    assert {ex for ex, _ in _tasks(sc, s1)} == {g}  # the profile binds the stage to the GPU

    # placement ran: every cached input is in the GPU executor's memory, per Spark
    deadline = time.time() + 30
    while time.time() < deadline:
        brain.sync()
        holders = spark_block_holders(sc, data.id())
        if all(g in holders.get(p, ()) for p in range(PARTS)):
            break
        time.sleep(0.2)
    assert all(g in holders.get(p, ()) for p in range(PARTS)), holders
    assert all(holders[p] & cpu_execs for p in range(PARTS)), holders  # copies, not lost

    for _ in range(2):  # later GPU stages: local reads, same results
        result, s = _gpu_stage(sc, data, rp)
        assert result == expected
        tasks = _tasks(sc, s)
        assert len(tasks) == PARTS and all(t == (g, "PROCESS_LOCAL") for t in tasks), tasks

    deadline = time.time() + 20
    while time.time() < deadline:
        brain.sync()
        st = stats()
        if st.get("placement", {}).get("gpu_stage_reads", 0) >= 3 * PARTS:
            break
        time.sleep(0.1)
    pl = st["placement"]
    assert pl["moved"] == PARTS and pl["bytes_moved"] > 0, pl
    assert set(pl["moved_blocks"]) == {f"rdd_{data.id()}_{p}" for p in range(PARTS)}, pl
    assert pl["gpu_stage_local_reads"] >= 2 * PARTS, pl  # the two later stages at least
    assert pl["bytes_saved"] >= 2 * sum(
        brain.planner.refs.costs.size[(data.id(), p)] for p in range(PARTS)) > 0, pl
    later = [s for s in pl["gpu_stages_served_locally"] if s > s1]
    assert len(later) == 2, pl
    assert st["degraded"] is None
    assert data.map(lambda r: r[2] % 13).sum() == sum(  # CPU reads still right
        r % 13 for p in range(PARTS) for _, _, r in _rows(p, range(p * PER_PART, (p + 1) * PER_PART)))
