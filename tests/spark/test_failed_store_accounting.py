"""A block whose store failed is a miss when a later job needs it again (real Spark).

Storage is 4 MiB (PRESSURE_CONF); one partition of a cached RDD holds 6 MiB, so its store fails
every time, whatever the policy or admission decide. Spark's getOrElseUpdate looks the block up
before computing it again: the brain must count that lookup as a miss (`Planner.tried`), not
leave it out of hits and misses, as it did while the plan saw only blocks once cached.
A MEMORY_AND_DISK block whose memory store fails goes to disk: Spark reads it back from there and
does not compute it again, so a later task reads it (a miss), and not its inputs (`Planner.on_disk`).
"""
from __future__ import annotations

import pytest

from spark_plugin.doctor import settle
from spark_plugin.doctor import start_session as start
from spark_plugin.session import active_brain

pytestmark = pytest.mark.spark
KB = 1024


def test_a_block_that_never_fits_is_a_miss_of_every_later_job_that_reads_it():
    spark = start("local[1]", "crd")  # the default policy, with admission
    sc = spark.sparkContext
    try:
        def gen(idx, _it):
            import random
            yield random.Random(idx).randbytes(6 << 20 if idx == 2 else 300 * KB)

        data = sc.parallelize(range(3), 3).mapPartitionsWithIndex(gen).cache()
        rid = data.id()
        assert data.map(len).collect() == [300 * KB, 300 * KB, 6 << 20]
        first = settle(expected_tasks=3)
        assert first["misses"] == 0  # nothing was to be read from the cache yet
        assert data.map(len).collect() == [300 * KB, 300 * KB, 6 << 20]
        for _ in range(2):
            data.map(len).count()
        stats = settle(expected_tasks=12)
        assert stats["tasks"] == 12
        blocks = active_brain().planner.locations
        assert sorted(p for (r, p), where in blocks.items() if r == rid and where) == [0, 1]
        assert stats["hits_per_rdd"].get(str(rid)) == 6, stats
        assert stats["misses_per_rdd"].get(str(rid)) == 3, stats
        assert stats["misses"] == 3 and stats["hits"] == 6, stats
    finally:
        spark.stop()


def test_a_block_on_disk_is_read_back_and_its_inputs_are_not():
    spark = start("local[1]", "crd")
    sc = spark.sparkContext
    try:
        from pyspark import StorageLevel

        def gen(idx, _it):
            import random
            yield random.Random(idx).randbytes(100 * KB)

        def grow(idx, it):
            return (b * 60 if idx == 2 else b for b in it)  # 6 MB: never fits 4 MiB

        base = sc.parallelize(range(3), 3).mapPartitionsWithIndex(gen).cache()
        big = base.mapPartitionsWithIndex(grow).persist(StorageLevel.MEMORY_AND_DISK)
        sizes = [100 * KB, 100 * KB, 6000 * KB]
        assert big.map(len).collect() == sizes
        assert settle(expected_tasks=3)["misses"] == 0
        for _ in range(2):
            assert big.map(len).collect() == sizes
        stats = settle(expected_tasks=9)
        assert stats["tasks"] == 9
        planner = active_brain().planner
        assert (big.id(), 2) in planner.materialized and not planner.locations.get((big.id(), 2))
        # each later job reads big's 3 blocks: 2 from memory, the third back from disk; base's
        # blocks are not read (without on_disk: base's third block was, a hit, 2 per job)
        assert stats["hits_per_rdd"].get(str(big.id())) == 4, stats
        assert stats["misses_per_rdd"].get(str(big.id())) == 2, stats
        assert str(base.id()) not in stats["hits_per_rdd"], stats
        assert stats["hits"] == 4 and stats["misses"] == 2, stats
    finally:
        spark.stop()
