"""Issue 12: a live run whose profile is the Spark event log of an earlier plain-Spark run gets the
hit ratio it gets with a profile recorded by spark-lrc (a trace).

One plain-Spark run (plugin off) writes an event log; one spark-lrc run under `lru` records a
trace. Then, interleaved and repeated, each policy runs with `spark.lrc.profile` = the event log
and = the trace. Every run is a fresh Python process and driver JVM: PageRank (scale 2, 6
iterations, seed 3), local[1], 6 MiB of storage, the configuration of
tests/spark/test_plugin_submit.py's replay test. Writes profile_live.json and profile_live.md.

    python results/whatif/profile_live.py --repeat 3 --policies lrc,crd --out results/whatif
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STORAGE = 6 << 20
CONF = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
        "spark.default.parallelism": "4", "spark.sql.shuffle.partitions": "4",
        "spark.testing.memory": str(2 * STORAGE), "spark.testing.reservedMemory": "0",
        "spark.memory.fraction": "0.5", "spark.storage.unrollMemoryThreshold": str(1 << 20),
        "spark.python.worker.reuse": "true"}


def one(spec: dict) -> dict:
    """Runs in the child: one PageRank application; its checksum, time and spark-lrc stats."""
    from pyspark.sql import SparkSession

    import spark_plugin
    from workloads import pagerank

    b = SparkSession.builder.master("local[1]").appName(spec["name"])
    for k, v in {**CONF, **spec.get("conf", {})}.items():
        b = b.config(k, v)
    if spec.get("policy"):
        b = spark_plugin.configure(b, policy=spec["policy"], profile=spec.get("profile"),
                                   trace_path=spec.get("trace_path"))
    spark = b.getOrCreate()
    try:
        t0 = time.perf_counter()
        res = pagerank.run(spark, scale=2, seed=3, iterations=6, verify=False)
        jct = time.perf_counter() - t0
    finally:
        spark.stop()
    stats = spark_plugin.stats() if spec.get("policy") else {}
    return {"checksum": res["checksum"], "jct_s": jct, "hit_ratio": stats.get("hit_ratio"),
            "effective_hit_ratio": stats.get("effective_hit_ratio"),
            "evictions": stats.get("evictions"), "degraded": stats.get("degraded"),
            "profile": stats.get("profile")}


def run(spec: dict) -> dict:
    p = subprocess.run([sys.executable, __file__, "--one", json.dumps(spec)],
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"{spec['name']} failed: {p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policies", default="lrc,crd")
    ap.add_argument("--out", default="results/whatif")
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(json.loads(a.one))))
        return
    work = Path(tempfile.mkdtemp(prefix="profile-live-"))
    (work / "events").mkdir()
    plain = run({"name": "plain", "conf": {"spark.eventLog.enabled": "true",
                                           "spark.eventLog.dir": f"file:{work / 'events'}"}})
    eventlog = str(next((work / "events").iterdir()))
    trace = str(work / "lru.parquet")
    recorded = run({"name": "record", "policy": "lru", "trace_path": trace})
    runs = []
    for rep in range(a.repeat):
        for policy in a.policies.split(","):
            for source, profile in (("event log", eventlog), ("spark-lrc trace", trace)):
                r = run({"name": f"{policy}-{rep}", "policy": policy, "profile": profile})
                runs.append({"policy": policy, "profile_source": source, "repeat": rep, **r})
                print(policy, source, rep, r["hit_ratio"], f"{r['jct_s']:.1f}s", file=sys.stderr)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cmd = "python results/whatif/profile_live.py " + " ".join(sys.argv[1:])
    (out / "profile_live.json").write_text(json.dumps(
        {"command": cmd, "plain": plain, "recorded_lru": recorded, "runs": runs}, indent=1))
    lines = [f"# A live run profiled by a plain-Spark event log vs by a spark-lrc trace", "",
             f"Command: `{cmd}`", "",
             "PageRank (scale 2, 6 iterations), local[1], 6 MiB of storage; every run a fresh "
             "driver. Profiles: the event log of one plain-Spark run (no block updates), and "
             "the trace spark-lrc recorded in one `lru` run.", "",
             f"Checksums: {'all equal' if len({r['checksum'] for r in runs} | {plain['checksum']}) == 1 else 'DIFFER'}.",
             "", "| policy | profile | hit ratio per repeat | median | JCT median s |",
             "|---|---|---|---|---|"]
    for policy in a.policies.split(","):
        for source in ("event log", "spark-lrc trace"):
            rs = [r for r in runs if r["policy"] == policy and r["profile_source"] == source]
            hrs = [r["hit_ratio"] for r in rs]
            lines.append(f"| {policy} | {source} | {', '.join(f'{h:.3f}' for h in hrs)} | "
                         f"{statistics.median(hrs):.3f} | "
                         f"{statistics.median(r['jct_s'] for r in rs):.1f} |")
    (out / "profile_live.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
