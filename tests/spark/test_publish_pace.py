"""While no executor's cache is under memory pressure, the brain publishes count changes at most
every RELAXED_PUBLISH_MS instead of after every task end; once cached blocks fill half of an
executor's unified memory it publishes them at once again (spark_plugin.pressure). Real Spark,
real brain: the number of table versions is bounded by the jobs and the seconds the jobs took,
not by their tasks. The judgement itself is in tests/unit/test_pressure.py."""
from __future__ import annotations

import time

import pytest

from spark_plugin.doctor import settle
from spark_plugin.doctor import start_session as start
from spark_plugin.pressure import RELAXED_PUBLISH_MS
from spark_plugin.session import active_brain

pytestmark = pytest.mark.spark
KB = 1024
PARTS, JOBS = 16, 6


def _blocks(sc, parts: int, seed: int):
    def gen(idx, _it):
        import random
        yield random.Random(seed * 1000 + idx).randbytes(64 * KB)

    return sc.parallelize(range(parts), parts).mapPartitionsWithIndex(gen).cache()


def test_count_changes_wait_without_pressure_and_go_out_at_once_with_it():
    spark = start("local[1]", "crd")  # 4 MiB of unified memory: pressure from 2 MiB cached
    sc = spark.sparkContext
    try:
        data = _blocks(sc, PARTS, seed=1)
        assert data.map(len).sum() == PARTS * 64 * KB  # 1 MiB cached
        brain = active_brain()
        before = settle(expected_tasks=PARTS)["table_version"]
        t0 = time.monotonic()
        for _ in range(JOBS):
            assert data.map(len).sum() == PARTS * 64 * KB
        elapsed = time.monotonic() - t0
        stats = settle(expected_tasks=PARTS * (JOBS + 1))
        assert stats["memory_pressure"]["on"] is False, stats["memory_pressure"]
        versions = stats["table_version"] - before
        # one plan per job, one count publish per relaxed period, settle()'s own and the first
        bound = JOBS + elapsed * 1000 / RELAXED_PUBLISH_MS + 3
        assert versions <= bound, (f"{versions} versions for {JOBS} jobs of {PARTS} tasks in "
                                   f"{elapsed:.1f} s: count changes did not wait")
        more = _blocks(sc, 40, seed=2)  # 2.5 MiB more: 3.5 of 4 MiB cached
        assert more.map(len).sum() == 40 * 64 * KB
        stats = settle(expected_tasks=PARTS * (JOBS + 1) + 40)
        assert stats["memory_pressure"] == {"on": True, "switches": 1, "evicting_unpressed": 0}, \
            stats["memory_pressure"]
        assert brain.pace.period_ms() == 0, "under pressure: spark.lrc.publishMs (0)"
        assert sum(map(len, data.collect())) == PARTS * 64 * KB
    finally:
        spark.stop()
