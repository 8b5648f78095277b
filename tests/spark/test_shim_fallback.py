"""Failure = fallback: when the MemoryStore map cannot be installed the application still runs
with Spark's LRU, correct results, an executor_plugin event installed=false and one warning."""
from __future__ import annotations

from operator import add

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import (PRESSURE_CONF, Events, bridge, digests, expected_digests, job_done,
                              seeded_blocks, session)

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("hook", [{"spark.lrc.forceInstallFailure": "true"},
                                  {"spark.lrc.entriesField": "noSuchField"}],
                         ids=["forced", "wrong-field"])
def test_install_failure_keeps_spark_lru_and_correct_results(hook):
    spark = session("local[1]", {**BASE_CONF, **PRESSURE_CONF, **hook}, plugin=True,
                    app_name="shim-fallback")
    try:
        sc = spark.sparkContext
        ev = Events(spark)
        a = seeded_blocks(sc, 4, 1, 600_000)
        b = seeded_blocks(sc, 6, 2, 600_000)
        assert a.count() == 4 and b.count() == 6  # memory pressure, evictions by plain Spark
        assert digests(a) == expected_digests(4, 1, 600_000)
        got = dict(sc.parallelize(range(100), 4).map(lambda x: (x % 3, x)).reduceByKey(add)
                   .collect())
        assert got == {k: sum(x for x in range(100) if x % 3 == k) for k in range(3)}
        evs = ev.wait_for(job_done(4))
        plug = [e for e in evs if e["e"] == "executor_plugin"]
        assert len(plug) == 1 and plug[0]["installed"] is False
        assert ("forceInstallFailure" if "spark.lrc.forceInstallFailure" in hook
                else "NoSuchFieldException") in plug[0]["error"]
        assert not [e for e in evs if e["e"] == "task_cache"]  # nothing installed, nothing counted
        assert any(e["e"] == "block" and e["level"] == "NONE" for e in evs)  # Spark still evicts
        warnings = bridge(spark).warnings()
        assert "spark-lrc: could not install the policy-ordered MemoryStore map on executor " \
               "driver; Spark's LRU stays in effect" in warnings
        assert "spark-lrc: no policy brain attached; Spark's LRU stays in effect" in warnings
        assert warnings.count("could not install") == 1  # one clear warning, not one per task
    finally:
        spark.stop()


def test_a_malformed_setting_of_a_jvm_only_application_is_named_and_its_default_used():
    """Without Python nothing validated spark.lrc.tableWaitMs: the executor names it in one
    warning and waits the registry's default instead of failing."""
    spark = session("local[1]", {**BASE_CONF, "spark.lrc.tableWaitMs": "soon"}, plugin=True,
                    app_name="shim-bad-setting")
    try:
        ev = Events(spark)
        assert spark.sparkContext.parallelize(range(4), 2).count() == 4
        evs = ev.wait_for(job_done(1))
        assert [e["installed"] for e in evs if e["e"] == "executor_plugin"] == [True]
        assert "spark-lrc: spark.lrc.tableWaitMs=soon is not a whole number; using 1000" \
            in bridge(spark).warnings()
    finally:
        spark.stop()
