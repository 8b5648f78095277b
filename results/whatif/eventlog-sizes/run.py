"""Runs workloads small (local[2], one application each, one JVM), spark-lrc's recorder and
Spark's event log both on: OUT/<workload>-<true|false>/{ev/, rec.parquet} for compare.py.
    python run.py OUT cc,sql,ml,... true|false   (spark.eventLog.logBlockUpdates.enabled)"""
import shutil
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

import spark_plugin
import workloads
from jvm_shim.testing import stop_jvm
from workloads import graphx

BASE = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "4",
        "spark.driver.memory": "1g", "spark.python.worker.reuse": "true",
        "spark.locality.wait": "0s"}
SMALL = {"cc": dict(max_iterations=4), "sql": dict(rounds=2), "ml": dict(iterations=3),
         "tpch": dict(rounds=1, verify=False), "svdpp": dict(rounds=2),
         "mllib": dict(iterations=3, verify=False), "graphx_pagerank": dict(scale=0.1, iterations=3),
         "graphx_cc": dict(scale=0.02), "graphx_svdpp": dict(scale=0.03, iterations=2),
         "pagerank": dict(iterations=3), "zip": dict(rounds=2)}
out_root, names, updates = Path(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
stop_jvm()
for w in names:
    tmp = out_root / f"{w}-{updates}"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "ev").mkdir(parents=True)
    conf = graphx.with_jars({**BASE, "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(tmp / "ev"),
                             "spark.eventLog.logBlockUpdates.enabled": updates,
                             "spark.eventLog.rolling.enabled": "true", "spark.eventLog.compress": "true",
                             "spark.eventLog.compression.codec": "zstd"}, graphx.extra_jars())
    b = SparkSession.builder.master("local[2]").appName(w)
    for k, v in conf.items():
        b = b.config(k, v)
    t0 = time.time()
    spark = spark_plugin.configure(b, policy="lru", trace_path=str(tmp / "rec.parquet")).getOrCreate()
    try:
        workloads.get(w).run(spark, seed=3, **SMALL[w])
    finally:
        spark.stop()
    print(f"{w} block updates {updates}: {time.time() - t0:.1f} s", flush=True)
