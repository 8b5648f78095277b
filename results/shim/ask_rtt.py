"""Executor -> driver table ask round trip, as seen by executors (`table_in_force.waited_ms` of a
stage whose plan is already known to be absent and no brain is attached, so the driver answers at
once). Usage: SPARK_HOME=<private spark home> python results/shim/ask_rtt.py"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from conftest import BASE_CONF  # noqa: E402

from jvm_shim.testing import Events, bridge, session  # noqa: E402

for master in ["local[1]", "local-cluster[2,1,1024]"]:
    spark = session(master, dict(BASE_CONF), plugin=True)
    sc = spark.sparkContext
    ev = Events(spark)
    for _ in range(3):
        sc.parallelize(range(4), 4).count()
    bridge(spark).publish(1, "99999=1", "")  # a table in force, no stage ever planned
    for _ in range(20):
        sc.parallelize(range(4), 4).count()  # each job: a new stage -> one ask per executor
    time.sleep(1)
    ev.drain()
    w = [e["waited_ms"] for e in ev.of("table_in_force")]
    print(f"| {master} | {len(w)} | {statistics.median(w)} | {statistics.mean(w):.1f} | {max(w)} |")
    spark.stop()
