"""GPU placement on a standalone mini-cluster: worker 0 has no GPUs, worker 1 one fake GPU; a CPU
stage caches data on the CPU executor and a stand-in GPU stage (a resource profile asking for one
GPU; each task holds its fake GPU while it runs) reads it. Cells: each policy with and without
spark-lrc's placement, plus plain Spark; each run a fresh application (driver process and JVM)
on the same cluster, every cell `--runs` times, interleaved (order rotated each repeat).

    python -m workloads.gpu_placement_bench --runs 3 --out results/gpu/live
    python -m workloads.gpu_placement_bench --runs 3 --pressure --out results/gpu/live-pressure

Ample storage (default): the ETL caches one dataset and the GPU stage reads it `--repeats` times;
nothing is evicted, so only placement changes what the GPU stages read.

`--pressure`: storage cannot hold everything, so the eviction order decides. Each of
`--repeats` rounds caches a new GPU input (ETL cost `--etl-s` per partition), the GPU stage
reads it, a CPU stage reads a long-lived CPU input, a scratch dataset is cached on the CPU
executor, and the GPU stage reads its input again. Storage is sized so that two datasets fit
and three do not: the scratch insert must evict the GPU input or the CPU input, both read once
more at equal counts. LRU (and lrc, whose tie goes to the least recently used) evicts the GPU
input, read before the CPU input, so the GPU stage rebuilds it; crd weighs the GPU stage's
reference by `spark.lrc.gpu.costWeight` and evicts the CPU input, which a CPU stage rebuilds;
with placement on, the GPU input's CPU copies (moved to the GPU executor) go first. The first
round has no predicted references yet (the predictor learns the loop from it).

Reports per cell (median [min-max] over runs, see `gpu_bench_report`): the later GPU stages'
time and its ratio to `lru, placement off`, the first GPU stage's time (includes launching the
GPU executor), locality (Spark's status store), the brain's GPU-stage remote reads and bytes,
moved blocks, evictions (of the GPU and CPU inputs) and GPU-stage misses, and a checksum.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from workloads.gpu_bench_report import cell_of, report, rotations

DATASETS_IN_STORAGE = 2.2  # --pressure: each dataset is storage / this (2 fit, 3 do not)


def _make(seed: object, rows: int, row_bytes: int, sleep_s: float = 0.0):
    """A partition of random rows, the same for a seed wherever it is (re)built; `sleep_s`
    stands for an ETL's cost, paid again by whoever rebuilds an evicted block."""
    def make(part, _it):
        import random
        import time

        rnd = random.Random(f"{seed}-{part}" if seed is not None else part)
        if sleep_s:
            time.sleep(sleep_s)
        return [(part, i, rnd.randbytes(row_bytes)) for i in range(rows)]

    return make


def _stages():
    """The stages' functions, nested so that they pickle by value (executors cannot import
    this module)."""
    def gpu_stage(it):
        from pyspark import TaskContext

        assert TaskContext.get().resources()["gpu"].addresses  # holds its fake GPU
        total = 0
        for _p, i, payload in it:
            total += payload[i % len(payload)] * (i % 7)
        yield total

    def cpu_stage(it):
        yield sum(payload[i % len(payload)] for _p, i, payload in it)

    def count(it):
        yield sum(1 for _ in it)

    return gpu_stage, cpu_stage, count


def _act(sc, rdd, fn, name: str, rp=None) -> tuple[int, float, list[str]]:
    """Run `fn` over `rdd` as one job whose result RDD is named `name` (the predictor tells
    jobs apart by it); its value, seconds, and its tasks' locality levels."""
    sc.setJobGroup(name, name)
    out = rdd.mapPartitions(fn).setName(name)
    if rp is not None:
        out = out.withResources(rp)
    t0 = time.perf_counter()
    value = sum(out.collect())
    took = time.perf_counter() - t0
    tracker = sc.statusTracker()
    job = max(tracker.getJobIdsForGroup(name))
    stage = max(tracker.getJobInfo(job).stageIds)
    tasks = sc._jsc.sc().statusStore().taskList(stage, 0, 1000)
    return value, took, sorted(tasks.apply(j).taskLocality() for j in range(tasks.size()))


def _storage_bytes(sc) -> int:
    """The (first) executor's storage memory, once one is up."""
    sc.parallelize([0], 1).count()
    execs = sc._jsc.sc().statusStore().executorList(True)
    mem = [execs.apply(i).maxMemory() for i in range(execs.size())
           if execs.apply(i).id() != "driver"]
    return min(mem)


def _ample(sc, rp, args) -> dict:
    """One dataset cached by the ETL, read by the GPU stage `--repeats` times."""
    src = sc.parallelize(range(args.parts), args.parts)
    data = src.mapPartitionsWithIndex(_make(None, args.rows, args.row_bytes)).cache()
    t0 = time.perf_counter()
    assert data.count() == args.parts * args.rows
    etl_s = time.perf_counter() - t0
    gpu_stage = _stages()[0]
    times, checks, locality = [], [], []
    for i in range(args.repeats or 4):
        value, took, loc = _act(sc, data, gpu_stage, f"gpu-{i}", rp)
        checks.append(value)
        times.append(took)
        locality.append(loc)
        if i == 0:
            time.sleep(args.settle_s)  # placement copies (if on) land before the next stage
    return {"etl_s": round(etl_s, 3), "times": times, "locality": locality,
            "later": list(range(1, len(times))), "checks": sorted(set(checks)), "rows": args.rows,
            "gpu_rdds": {data.id()}, "cpu_rdds": set()}


def _pressure(sc, rp, args) -> dict:
    """Rounds of: cache a new GPU input, GPU read, CPU read of the CPU input, cache a scratch
    dataset (the insert that must evict), GPU read again; see the module docstring."""
    storage = _storage_bytes(sc)
    rows = max(1, int(storage / DATASETS_IN_STORAGE / args.parts / args.row_bytes))
    etl = args.etl_s

    def source(seed, sleep_s, name):
        make = _make(seed, rows, args.row_bytes, sleep_s)
        rdd = sc.parallelize(range(args.parts), args.parts).mapPartitionsWithIndex(make)
        return rdd.setName(name).cache()

    gpu_stage, cpu_stage, count = _stages()
    t0 = time.perf_counter()
    cpu_input = source("cpu", etl, "cpu_input")
    _act(sc, cpu_input, count, "etl_cpu_input")
    etl_s = time.perf_counter() - t0
    times, checks, locality, later, gpu_rdds = [], [], [], [], set()

    def gpu_read(name):
        value, took, loc = _act(sc, gpu_input, gpu_stage, name, rp)
        checks.append(value)
        times.append(took)
        locality.append(loc)

    for r in range(args.repeats or 3):
        gpu_input = source(r, etl, "gpu_input")
        gpu_rdds.add(gpu_input.id())
        _act(sc, gpu_input, count, "etl_gpu_input")
        gpu_read("gpu_read_first")
        checks.append(_act(sc, cpu_input, cpu_stage, "cpu_read")[0])
        scratch = source(f"scratch-{r}", 0.0, "scratch")
        _act(sc, scratch, count, "etl_scratch")  # the insert that must evict
        if r > 0:  # round 0: no predicted references yet
            later.append(len(times))
        gpu_read("gpu_read_again")
        gpu_input.unpersist(True)
        scratch.unpersist(True)
    return {"etl_s": round(etl_s, 3), "times": times, "locality": locality, "later": later,
            "checks": sorted(checks), "rows": rows, "storage_mb": round(storage / 2**20, 1),
            "gpu_rdds": gpu_rdds, "cpu_rdds": {cpu_input.id()}}


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
    if args.pressure:
        conf["spark.memory.fraction"] = str(args.memory_fraction)
    b = SparkSession.builder.master(master).appName(f"gpu-bench-{policy}-{placement}")
    for k, v in conf.items():
        b = b.config(k, v)
    if policy is not None:
        b = configure(b, policy=policy, gpu_placement=str(placement).lower())
    spark = b.getOrCreate()
    try:
        sc = spark.sparkContext
        rp = (ResourceProfileBuilder()
              .require(ExecutorResourceRequests().cores(1).memory("512m").resource("gpu", 1, script))
              .require(TaskResourceRequests().cpus(1).resource("gpu", 1)).build)
        t0 = time.perf_counter()
        res = (_pressure if args.pressure else _ample)(sc, rp, args)
        total_s = time.perf_counter() - t0
        times, later, locality = res["times"], res["later"], res["locality"]
        stats: dict = {}
        if policy is not None:
            brain = active_brain()
            time.sleep(1.0)
            brain.sync()
            stats = brain.stats()
        place = stats.get("placement", {})
        per_rdd = stats.get("evictions_per_rdd", {})

        def brain_sum(ids):
            return sum(per_rdd.get(str(i), 0) for i in ids) if stats else None

        reads = place.get("gpu_stage_reads")
        return {"policy": policy or "plain", "placement": placement and policy is not None,
                "pressure": args.pressure, "etl_s": res["etl_s"], "total_s": round(total_s, 3),
                "rows": res["rows"], "storage_mb": res.get("storage_mb"),
                "gpu_stage_s": [round(t, 3) for t in times],
                "later_stages": later,
                "first_gpu_stage_s": round(times[0], 3),
                "later_gpu_stage_median_s": round(statistics.median(times[i] for i in later), 3),
                "later_process_local": sum(locality[i].count("PROCESS_LOCAL") for i in later),
                "later_tasks": sum(len(locality[i]) for i in later),
                "checksum": res["checks"],
                "evictions": stats.get("evictions"),
                "gpu_input_evictions": brain_sum(res["gpu_rdds"]),
                "cpu_input_evictions": brain_sum(res["cpu_rdds"]),
                "gpu_stage_misses": None if reads is None else
                reads - place["gpu_stage_local_reads"] - place["gpu_stage_remote_reads"],
                **{k: place.get(k) for k in (
                    "moved", "bytes_moved", "gpu_stage_reads", "gpu_stage_local_reads",
                    "gpu_stage_remote_reads", "gpu_stage_remote_bytes", "bytes_saved")}}
    finally:
        spark.stop()


def _child_argv(argv: list[str]) -> list[str]:
    """The parent's arguments minus those only the parent reads."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--runs", "--out"):
            skip = True
        elif a != "--merge" and not a.startswith(("--runs=", "--out=")):
            out.append(a)
    return out


def _earlier(path: Path, pressure: bool) -> list[dict]:
    """--merge: the runs already in `path` (none if it does not exist), of the same scenario."""
    if not path.exists():
        return []
    rows = json.loads(path.read_text())
    if any(r.get("pressure", False) != pressure for r in rows):
        raise SystemExit(f"--merge: {path} holds the other scenario's runs")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m workloads.gpu_placement_bench")
    ap.add_argument("--out", default="results/gpu/live")
    ap.add_argument("--policies", default="lru,lrc,crd")
    ap.add_argument("--runs", type=int, default=3, help="repeats of every cell, interleaved")
    ap.add_argument("--merge", action="store_true",
                    help="add these runs to OUT/results.json's (same settings) and report all")
    ap.add_argument("--pressure", action="store_true",
                    help="storage that cannot hold everything (see the module docstring)")
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--rows", type=int, default=64, help="rows per partition (ample storage)")
    ap.add_argument("--row-bytes", type=int, default=64 * 1024)
    ap.add_argument("--repeats", type=int, default=None,
                    help="GPU reads (ample, default 4) or rounds (--pressure, default 3)")
    ap.add_argument("--etl-s", type=float, default=2.0,
                    help="--pressure: seconds a partition of an input takes to build")
    ap.add_argument("--memory-fraction", type=float, default=0.2,
                    help="--pressure: spark.memory.fraction (datasets are sized from it)")
    ap.add_argument("--settle-s", type=float, default=2.0)
    ap.add_argument("--child", nargs=4, metavar=("MASTER", "SCRIPT", "POLICY", "PLACEMENT"),
                    help=argparse.SUPPRESS)  # one run, in a fresh driver process (and JVM)
    own = list(argv if argv is not None else sys.argv[1:])
    args = ap.parse_args(own)
    if args.child:
        master, script, policy, on = args.child
        row = run_one(master, script, None if policy == "plain" else policy, on == "true", args)
        print("RESULT " + json.dumps(row), flush=True)
        return 0
    import subprocess

    from workloads.cluster import MiniCluster, spark_env

    out = Path(args.out)
    rows = _earlier(out / "results.json", args.pressure) if args.merge else []
    first = 1 + max((r["run"] for r in rows), default=-1)
    base = Path(tempfile.mkdtemp(prefix="gpu-bench-"))
    script = base / "discover_gpus.sh"
    script.write_text('#!/usr/bin/env bash\necho \'{"name": "gpu", "addresses": ["0"]}\'\n')
    script.chmod(0o755)
    gpu_worker = {"spark.worker.resource.gpu.amount": "1",
                  "spark.worker.resource.gpu.discoveryScript": str(script)}
    cells = [("plain", False)] + [(p, on) for p in args.policies.split(",") for on in (False, True)]
    with MiniCluster(workers=2, worker_memory="1g", worker_cores=2, base_dir=base,
                     worker_opts=[None, gpu_worker]) as mc:
        for k, (run, (policy, on)) in enumerate(rotations(cells, args.runs)):
            cmd = [sys.executable, "-m", "workloads.gpu_placement_bench", *_child_argv(own),
                   "--child", mc.master_url, str(script), policy, str(on).lower()]
            done = subprocess.run(cmd, env=spark_env(mc.spark_home), capture_output=True,
                                  text=True, timeout=1800)
            lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
            if not lines:
                raise RuntimeError(f"run {policy}/{on} failed:\n{done.stderr[-3000:]}")
            row = {"run": first + run, "order": k % len(cells),
                   **json.loads(lines[-1][len("RESULT "):])}
            assert cell_of(row) == (policy, on)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(rows, indent=2))
    command = "python -m workloads.gpu_placement_bench " + " ".join(own)
    text = report(rows, command.strip(), args.pressure)
    (out / "report.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
