"""5,000 jobs in one application: does driver and executor state stay flat? (issue 14, scale)

    python -m workloads.scale_jobs --jobs 5000 --every 500 --out results/reliability/scale_jobs.json
    python -m workloads.scale_jobs --plugin-off ...   # the same rounds on plain Spark

One session on `local-cluster[2,1,1024]` (two executor JVMs) with spark-lrc on (lrc). Each round
caches a small RDD (a job), reads it (a second job) and unpersists it (JVM RDDs driven through
py4j: no Python worker start per task, which would make 5,000 jobs take hours here). Every ``--every`` jobs:
the brain's Python memory (tracemalloc, RSS of this process), its structures' sizes
(`spark_plugin.scale.structure_sizes`), the driver JVM's heap after a GC (through py4j), and each
executor's plugin state (`org.sparklrc.bench.StateProbe` run as a task on the executors: entries
of PriorityEntries' side maps, the planned stages it remembers, TableWatch's deadlines).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def executor_state(sc, tasks: int = 8) -> dict[str, dict[str, int]]:
    """Each executor's plugin state, from a JVM task on it (several tasks: every executor runs one)."""
    jvm = sc._jvm
    ints = jvm.java.util.ArrayList()
    for i in range(tasks):
        ints.add(i)
    rows = sc._jsc.parallelize(ints, tasks).mapPartitions(jvm.org.sparklrc.bench.StateProbe()) \
        .collect()
    out = {}
    for row in rows:
        if row:
            kv = dict(item.split("=") for item in str(row).split(","))
            out[kv.pop("executor")] = {k: int(v) for k, v in kv.items()}
    return out


def driver_heap_mb(sc) -> float:
    """The driver JVM's used heap after a full GC."""
    jvm = sc._jvm
    jvm.java.lang.System.gc()
    time.sleep(0.2)
    return jvm.java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage() \
        .getUsed() / 2**20


def run(jobs: int, every: int, parts: int = 2, policy: str | None = "lrc", top: int = 0) -> dict:
    """``policy`` None: plain Spark (no brain, no executor plugin state; the driver's heap and
    the Python process's memory are what is left to compare). ``top`` > 0: each sample also
    lists the ``top`` source lines whose Python allocations grew most since the last sample
    (where a growth comes from)."""
    from spark_plugin.doctor import start_session
    from spark_plugin.scale import structure_sizes
    from spark_plugin.session import active_brain

    tracemalloc.start()
    spark = start_session("local-cluster[2,1,1024]", policy)
    samples, snap = [], None
    try:
        sc = spark.sparkContext
        brain = active_brain() if policy else None
        t0, done, rounds = time.time(), 0, 0
        data = sc._jvm.java.util.ArrayList()
        for i in range(200):
            data.add(i)
        while done < jobs:
            # JVM jobs driven from here: no Python worker per task, so the ~10 ms a job takes is
            # Spark's and the plugin's; the listener, the brain and the executors see every event
            r = sc._jsc.parallelize(data, parts).cache()
            r.count()  # caches
            r.count()  # reads the cached blocks
            r.unpersist(True)
            done, rounds = done + 2, rounds + 1
            if done % every == 0:
                if brain:
                    brain.sync()
                gc.collect()
                s = {"jobs": done, "wall_s": round(time.time() - t0, 1),
                     "tracemalloc_mb": round(tracemalloc.get_traced_memory()[0] / 2**20, 2),
                     "rss_mb": round(_rss_mb(), 1), "driver_heap_mb": round(driver_heap_mb(sc), 1)}
                if brain:
                    s.update(brain=structure_sizes(brain), executors=executor_state(sc))
                if top:
                    now = tracemalloc.take_snapshot()
                    if snap is not None:
                        s["grew"] = [f"{st.traceback[0].filename.rsplit('/', 2)[-1]}:"
                                     f"{st.traceback[0].lineno} {st.size_diff / 1024:+.0f} KB"
                                     for st in now.compare_to(snap, "lineno")[:top]]
                    snap = now
                samples.append(s)
                print(json.dumps({k: s[k] for k in ("jobs", "wall_s", "tracemalloc_mb", "rss_mb",
                                                    "driver_heap_mb")}), flush=True)
        stats = brain.stats() if brain else {}
    finally:
        spark.stop()
    return {"jobs": jobs, "every": every, "policy": policy or "plain", "samples": samples,
            "degraded": stats.get("degraded"), "tasks": stats.get("tasks"),
            "hits": stats.get("hits"), "misses": stats.get("misses")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--every", type=int, default=500)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--plugin-off", action="store_true", help="plain Spark: the baseline")
    ap.add_argument("--top", type=int, default=0,
                    help="per sample, the N source lines whose allocations grew most")
    args = ap.parse_args(argv)
    if args.every % 2:
        ap.error("--every must be even (each round runs two jobs)")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from workloads.cluster import private_spark_home

    os.environ["SPARK_HOME"] = str(private_spark_home())
    res = run(args.jobs, args.every, policy=None if args.plugin_off else "lrc", top=args.top)
    text = json.dumps(res, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
