"""One brain per running SparkContext: the registry forgets a brain when its context stops, and
stats() then returns the final stats it wrote, not a closed brain (real local SparkSessions)."""
from __future__ import annotations

import gc
import json

import pytest
from pyspark.sql import SparkSession

import spark_plugin
from conftest import BASE_CONF
from jvm_shim.testing import restart_jvm_if_needed
from spark_plugin import session

pytestmark = pytest.mark.spark


def _start(tmp_path, name: str) -> SparkSession:
    restart_jvm_if_needed()
    b = SparkSession.builder.master("local[1]").appName(f"spark-lrc-registry-{name}")
    for k, v in BASE_CONF.items():
        b = b.config(k, v)
    return spark_plugin.configure(b, policy="lrc", stats_path=str(tmp_path / f"{name}.json")).getOrCreate()


def test_a_stopped_context_forgets_its_brain_and_stats_are_the_final_ones(tmp_path):
    spark = _start(tmp_path, "first")
    sc = spark.sparkContext
    brain = session.active_brain()
    assert brain is not None and session._brains.get(sc) is brain
    assert sc.parallelize(range(100), 2).cache().count() == 100
    spark.stop()

    assert session.active_brain() is None
    assert sc not in session._brains
    final = spark_plugin.stats()
    assert final == json.loads((tmp_path / "first.json").read_text())
    assert final["tasks"] >= 2
    with pytest.raises(spark_plugin.LrcConfigError):
        spark_plugin.stats(sc)  # a stopped context has no brain any more

    spark2 = _start(tmp_path, "second")
    try:
        second = session.active_brain()
        assert second is not None and second is not brain
        assert spark_plugin.stats()["tasks"] == 0  # the live brain's, not the stopped one's
    finally:
        spark2.stop()
    del spark, sc, brain, second
    gc.collect()
    assert len(session._brains) == 0
