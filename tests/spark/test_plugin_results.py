"""Every workload returns the same result with the plugin off and under each live policy,
under memory pressure (so eviction and recomputation really happen)."""
from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

import spark_plugin
from conftest import BASE_CONF
from jvm_shim.testing import restart_jvm_if_needed
from spark_plugin.config import LIVE_POLICIES
from spark_plugin.session import active_brain
from workloads import WORKLOADS

pytestmark = pytest.mark.spark

# 24 MiB of storage: the workloads at scale 1 need more, so every policy evicts.
TIGHT = {"spark.testing.memory": str(48 << 20), "spark.testing.reservedMemory": "0",
         "spark.memory.fraction": "0.5"}


# Few iterations: enough to cache, evict and re-read, fast enough to run six times.
SHORT = {"pagerank": {"iterations": 3}, "cc": {"max_iterations": 4, "verify": False},
         "ml": {"iterations": 3}, "svdpp": {"rounds": 2, "eval_every": 1}, "zip": {"rounds": 3},
         "sql": {"rounds": 1}, "mllib": {"iterations": 5}, "tpch": {"rounds": 1}}


def run_all(policy: str | None) -> tuple[dict[str, str], dict | None]:
    restart_jvm_if_needed()
    b = SparkSession.builder.master("local[2]").appName(f"results-{policy}")
    for k, v in {**BASE_CONF, **TIGHT}.items():
        b = b.config(k, v)
    if policy is not None:
        b = spark_plugin.configure(b, policy=policy)
    else:  # confs of earlier sessions leak through JVM system properties: switch off explicitly
        b = b.config("spark.plugins", "").config("spark.lrc.brain", "false")
    spark = b.getOrCreate()
    try:
        sums = {name: mod.run(spark, scale=1, seed=7, **SHORT[name])["checksum"]
                for name, mod in WORKLOADS.items() if name in SHORT}  # graphx_*: test_graphx_workloads.py
        stats = active_brain().stats() if policy is not None else None
        return sums, stats
    finally:
        spark.stop()


@pytest.fixture(scope="module")
def reference() -> dict[str, str]:
    return run_all(None)[0]


@pytest.mark.parametrize("policy", LIVE_POLICIES)
def test_workload_results_are_identical_with_and_without_the_plugin(reference, policy):
    sums, stats = run_all(policy)
    assert sums == reference
    assert stats["tasks"] > 0 and stats["degraded"] is None
    assert stats["evictions"] > 0, "the memory limit must force evictions for this test to mean anything"
