"""Every workload at scale 1 is deterministic: the same checksum on a second run and under another
partitioning / storage level, a different one for another seed. Real SparkSession, local mode.
Iteration counts are cut (keyword arguments of `run`) to keep the module fast; the default
iteration counts run in the cluster test and in the benchmark."""
from __future__ import annotations

import pytest

import workloads
from conftest import BASE_CONF, session_builder
from jvm_shim.testing import stop_jvm

pytestmark = pytest.mark.spark

# short runs: fewer iterations, same code paths (and the self-checks stay on where cheap)
FAST = {
    "pagerank": {"iterations": 2},
    "cc": {"max_iterations": 2},
    "ml": {"iterations": 4},
    "svdpp": {"rounds": 1, "eval_every": 1},
    "zip": {"rounds": 2},
    "sql": {"rounds": 1},
    "mllib": {"iterations": 5, "reg_params": (0.1,)},
    "tpch": {"rounds": 1},
}
# GraphX library workloads: tests/spark/test_graphx_workloads.py (their jar must be on spark.jars
# when the driver JVM starts)
GRAPHX = ("graphx_pagerank", "graphx_cc", "graphx_svdpp")
# the second configuration: other partition count and other storage level
OTHER_LEVEL = {"sql": "MEMORY_ONLY", "mllib": "MEMORY_ONLY", "tpch": "MEMORY_ONLY"}


@pytest.fixture(scope="module")
def spark():
    # A JVM keeps the confs it was launched with as system properties, and earlier modules launch
    # theirs with a few MiB of memory (jvm_shim.testing.PRESSURE_CONF): the workloads need Spark's
    # default memory, so they get a JVM of their own.
    stop_jvm()
    s = session_builder("test-workloads", BASE_CONF).getOrCreate()
    yield s
    s.stop()


def test_registry_lists_every_workload_with_run():
    assert sorted(workloads.WORKLOADS) == sorted([*FAST, *GRAPHX])
    for name, mod in workloads.WORKLOADS.items():
        assert callable(mod.run), name
        assert "Caching pattern" in (mod.__doc__ or ""), f"{name} must document its caching"
    with pytest.raises(KeyError, match="valid"):
        workloads.get("nope")


@pytest.mark.parametrize("name", sorted(FAST))
def test_checksum_is_deterministic_and_seed_sensitive(spark, name):
    run = workloads.get(name).run
    kw = FAST[name]
    first = run(spark, scale=1, seed=42, **kw)
    other = run(spark, scale=1, seed=42, partitions=3,
                storage_level=OTHER_LEVEL.get(name, "MEMORY_AND_DISK"), **kw)
    reseeded = run(spark, scale=1, seed=7, **kw)

    assert isinstance(first["checksum"], str) and first["result"]
    # a second run, with another partitioning and storage level, gives the same checksum
    assert other["checksum"] == first["checksum"], "checksum depends on run/partitioning/level"
    assert reseeded["checksum"] != first["checksum"], "checksum ignores the input seed"
    if "verified" in first["result"]:
        assert first["result"]["verified"] is True
    # nothing left cached but what the workload chose to leave (the benchmark reuses sessions)
    spark.catalog.clearCache()
    for rdd in spark.sparkContext._jsc.getPersistentRDDs().values():
        rdd.unpersist(False)


def test_unknown_storage_level_is_a_clear_error(spark):
    with pytest.raises(ValueError, match="MEMORY_ONLY"):
        workloads.get("pagerank").run(spark, storage_level="MEMORY_SOMETIMES")
