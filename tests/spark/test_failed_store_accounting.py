"""A block whose store failed is a miss when a later job needs it again (real Spark).

Storage is 4 MiB (PRESSURE_CONF); one partition of a cached RDD holds 6 MiB, so its store fails
every time, whatever the policy or admission decide. Spark's getOrElseUpdate looks the block up
before computing it again: the brain must count that lookup as a miss (`Planner.tried`), not
leave it out of hits and misses, as it did while the plan saw only blocks once cached.
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
