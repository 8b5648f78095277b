"""Under lru, Spark's own order, no task waits for a table: a brain that is attached but never
plans cannot hold a stage back, where under any other policy each stage's first task waits up
to `spark.lrc.tableWaitMs` for its plan (measured on GraphX, whose job starts take ~100 ms to
plan: `results/library/`)."""
from __future__ import annotations

import os
import time

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import FakeBrain, session, stop_jvm

pytestmark = pytest.mark.spark

WAIT_MS = int(os.environ.get("LRC_TEST_WAIT_MS", "30000"))


@pytest.mark.parametrize("policy", [os.environ.get("LRC_TEST_POLICY", "lru"), " LRU "])
def test_under_lru_a_brain_that_never_plans_holds_no_task_back(policy):
    """(LRC_TEST_POLICY=lrc: the test must fail, checked; " LRU ": the executor reads the name
    as the brain does, trimmed and in any case.)"""
    spark = session("local[1]", {**BASE_CONF, "spark.lrc.policy": policy,
                                 "spark.lrc.tableWaitMs": str(WAIT_MS)}, app_name="lru-no-wait")
    try:
        sc = spark.sparkContext
        with FakeBrain(spark, lambda job_start: None) as brain:  # attached, never publishes
            brain.b.publish(1, "", "")  # a first (empty) version: executors know a brain is on
            t0 = time.monotonic()
            assert sc.parallelize(range(100), 4).map(lambda x: x * 2).sum() == 9900
            took = time.monotonic() - t0
        assert took < WAIT_MS / 2000, f"{took:.1f} s: a task waited for a plan under {policy}"
    finally:
        stop_jvm()  # the next module's session must not inherit this JVM's spark.lrc.policy
