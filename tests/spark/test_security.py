"""Security (issue 14): tables and executor reports travel over Spark's own RPC, so with
`spark.authenticate` on they still flow: separate executor JVMs install the plugin, apply the
brain's tables, report their evictions, and results are right. (The sidecar gateway's loopback
and secret: tests/spark/test_sidecar.py.)"""
from __future__ import annotations

import pytest

from spark_plugin.doctor import settle, start_session

pytestmark = [pytest.mark.spark, pytest.mark.cluster]
N, PARTS = 8000, 8


def test_tables_and_reports_flow_with_spark_authenticate_on():
    spark = start_session("local-cluster[2,1,1024]", "lrc", {
        "spark.authenticate": "true", "spark.authenticate.secret": "spark-lrc-test-secret"})
    try:
        sc = spark.sparkContext
        assert sc.getConf().get("spark.authenticate") == "true"
        a = sc.parallelize(range(N), PARTS).map(lambda x: (x % 7, x)).cache()
        assert a.count() == N
        assert a.values().sum() == sum(range(N))  # reads the cached blocks under a table
        stats = settle(expected_tasks=2 * PARTS)
        execs = stats["executors"]
        assert len(execs) == 2 and all(e["installed"] for e in execs.values()), execs
        assert stats["tasks"] >= 2 * PARTS and stats["hits"] > 0, stats  # executors' reports
        assert stats["push_lag_ms"]["count"] >= 2, stats  # tables applied by both executors
        assert stats["degraded"] is None
    finally:
        spark.stop()
