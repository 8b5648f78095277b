"""GPU placement on a standalone mini-cluster: a CPU ETL stage caches a dataset, then a stand-in
GPU stage (a resource profile asking for one GPU; each task holds its fake GPU while it runs)
reads it `--repeats` times. Each policy runs with and without spark-lrc's placement, plus plain
Spark, each a fresh application on the same cluster; worker 0 has no GPUs, worker 1 one fake GPU.

    python -m workloads.gpu_placement_bench --out results/gpu/live

Reports per run: the first GPU stage's time (includes launching the GPU executor), the median of
the later GPU stages, their tasks' locality (Spark's status store) and the brain's GPU-stage
remote reads and bytes (cached blocks fetched from another executor).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _functions(row_bytes: int, rows: int):
    def make(part, _it):
        import random

        rnd = random.Random(part)
        return [(part, i, rnd.randbytes(row_bytes)) for i in range(rows)]

    def gpu_stage(it):
        from pyspark import TaskContext

        assert TaskContext.get().resources()["gpu"].addresses  # holds its fake GPU
        total = 0
        for _p, i, payload in it:
            total += payload[i % len(payload)] * (i % 7)
        yield total

    return make, gpu_stage


def run_one(master: str, script: str, policy: str | None, placement: bool, args) -> dict:
    from pyspark.resource import (ExecutorResourceRequests, ResourceProfileBuilder,
                                  TaskResourceRequests)
    from pyspark.sql import SparkSession

    from spark_plugin import configure
    from spark_plugin.session import active_brain

    conf = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.executor.memory": "512m", "spark.executor.cores": "1",
            "spark.python.worker.reuse": "true",
            "spark.dynamicAllocation.enabled": "true",
            "spark.dynamicAllocation.shuffleTracking.enabled": "true",
            "spark.dynamicAllocation.minExecutors": "0",
            "spark.dynamicAllocation.maxExecutors": "1",
            "spark.dynamicAllocation.executorIdleTimeout": "300s"}
    b = SparkSession.builder.master(master).appName(f"gpu-bench-{policy}-{placement}")
    for k, v in conf.items():
        b = b.config(k, v)
    if policy is not None:
        b = configure(b, policy=policy, gpu_placement=str(placement).lower())
    spark = b.getOrCreate()
    try:
        sc = spark.sparkContext
        make, gpu_stage = _functions(args.row_bytes, args.rows)
        data = sc.parallelize(range(args.parts), args.parts).mapPartitionsWithIndex(make).cache()
        t0 = time.perf_counter()
        assert data.count() == args.parts * args.rows
        etl_s = time.perf_counter() - t0
        rp = (ResourceProfileBuilder()
              .require(ExecutorResourceRequests().cores(1).memory("512m").resource("gpu", 1, script))
              .require(TaskResourceRequests().cpus(1).resource("gpu", 1)).build)
        times, checks, locality = [], set(), []
        for i in range(args.repeats):
            group = f"gpu-{i}"
            sc.setJobGroup(group, group)
            t0 = time.perf_counter()
            checks.add(sum(data.mapPartitions(gpu_stage).withResources(rp).collect()))
            times.append(time.perf_counter() - t0)
            tracker = sc.statusTracker()
            (job,) = tracker.getJobIdsForGroup(group)
            (stage,) = tracker.getJobInfo(job).stageIds
            tasks = sc._jsc.sc().statusStore().taskList(stage, 0, 1000)
            locality.append(sorted(tasks.apply(j).taskLocality() for j in range(tasks.size())))
            if i == 0:
                time.sleep(args.settle_s)  # placement copies (if on) land before the next stage
        placement_stats = {}
        if policy is not None:
            brain = active_brain()
            time.sleep(1.0)
            brain.sync()
            placement_stats = brain.stats().get("placement", {})
        return {"policy": policy or "plain", "placement": placement and policy is not None,
                "etl_s": round(etl_s, 3), "gpu_stage_s": [round(t, 3) for t in times],
                "first_gpu_stage_s": round(times[0], 3),
                "later_gpu_stage_median_s": round(statistics.median(times[1:]), 3),
                "later_process_local": sum(loc.count("PROCESS_LOCAL") for loc in locality[1:]),
                "later_tasks": sum(len(loc) for loc in locality[1:]),
                "checksum": sorted(checks),
                **{k: placement_stats.get(k) for k in (
                    "moved", "bytes_moved", "gpu_stage_reads", "gpu_stage_local_reads",
                    "gpu_stage_remote_reads", "gpu_stage_remote_bytes", "bytes_saved")}}
    finally:
        spark.stop()


def report(rows: list[dict], command: str) -> str:
    out = ["# GPU placement, live (standalone mini-cluster, one CPU and one fake-GPU executor)", "",
           f"Command: `{command}`", "",
           "| policy | placement | first GPU stage s | later GPU stages s (median) | later tasks "
           "PROCESS_LOCAL | GPU-stage remote reads | remote MB | moved | MB saved | checksum |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    mb = lambda x: "-" if x is None else f"{x / 2**20:.1f}"  # noqa: E731
    for r in rows:
        out.append(f"| {r['policy']} | {'on' if r['placement'] else 'off'} | "
                   f"{r['first_gpu_stage_s']} | {r['later_gpu_stage_median_s']} | "
                   f"{r['later_process_local']}/{r['later_tasks']} | "
                   f"{r['gpu_stage_remote_reads'] if r['gpu_stage_remote_reads'] is not None else '-'} | "
                   f"{mb(r['gpu_stage_remote_bytes'])} | {r['moved'] if r['moved'] is not None else '-'} | "
                   f"{mb(r['bytes_saved'])} | {r['checksum']} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m workloads.gpu_placement_bench")
    ap.add_argument("--out", default="results/gpu/live")
    ap.add_argument("--policies", default="lru,lrc,crd")
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--row-bytes", type=int, default=64 * 1024)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--settle-s", type=float, default=2.0)
    ap.add_argument("--child", nargs=4, metavar=("MASTER", "SCRIPT", "POLICY", "PLACEMENT"),
                    help=argparse.SUPPRESS)  # one run, in a fresh driver process (and JVM)
    args = ap.parse_args(argv)
    if args.child:
        master, script, policy, on = args.child
        row = run_one(master, script, None if policy == "plain" else policy, on == "true", args)
        print("RESULT " + json.dumps(row), flush=True)
        return 0
    import subprocess

    from workloads.cluster import MiniCluster, spark_env

    base = Path(tempfile.mkdtemp(prefix="gpu-bench-"))
    script = base / "discover_gpus.sh"
    script.write_text('#!/usr/bin/env bash\necho \'{"name": "gpu", "addresses": ["0"]}\'\n')
    script.chmod(0o755)
    gpu_worker = {"spark.worker.resource.gpu.amount": "1",
                  "spark.worker.resource.gpu.discoveryScript": str(script)}
    rows = []
    with MiniCluster(workers=2, worker_memory="1g", worker_cores=2, base_dir=base,
                     worker_opts=[None, gpu_worker]) as mc:
        configs = [(None, False)] + [(p, on) for p in args.policies.split(",")
                                     for on in (False, True)]
        own = [a for a in (argv if argv is not None else sys.argv[1:])]
        for policy, on in configs:
            cmd = [sys.executable, "-m", "workloads.gpu_placement_bench", *own, "--child",
                   mc.master_url, str(script), policy or "plain", str(on).lower()]
            done = subprocess.run(cmd, env=spark_env(mc.spark_home), capture_output=True,
                                  text=True, timeout=900)
            lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
            if not lines:
                raise RuntimeError(f"run {policy}/{on} failed:\n{done.stderr[-3000:]}")
            rows.append(json.loads(lines[-1][len("RESULT "):]))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(rows, indent=2))
    command = "python -m workloads.gpu_placement_bench " + " ".join(argv or sys.argv[1:])
    (out / "report.md").write_text(report(rows, command.strip()))
    print(report(rows, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
