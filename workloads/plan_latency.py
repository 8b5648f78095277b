"""Table latency on a real cluster: job start -> plan published -> in force on every executor.

`python -m workloads.plan_latency [--workload pagerank --kw iterations=10 --runs 1]` runs any
workload of `workloads/` (GraphX's included) on `local-cluster[2,1,1024]` (two executor JVMs) with
spark-lrc on, and prints, per run and pooled over runs, the brain's `stats()` latencies
(median / p99 / max, ms):

- `plan_latency_ms`: the listener's job start -> the version carrying the job's plan published;
- `in_force_ms`: job start -> that version applied on every executor (publish + its `table_applied`
  lag; issue 10's table latency);
- `push_lag_ms`: publish -> applied, per executor and version;
- `plan_breakdown_ms`: job start -> decoded in the brain, the planner's add_job, the publish;
- `job_start_chars`: the size of the job_start lines;
- `foreseen`: jobs planned, those that started while predictions (crd, mrd) were registered,
  their cached reads, and how many of those the table in force at their start already ranked as
  predicted reads (`Planner.foreseen`): that part of a plan is in force before its job starts.
Run it under the machine lock (`flock /tmp/machine.lock python -m workloads.plan_latency`).
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from workloads.bench.cli import parse_kwargs

KEYS = ("plan_latency_ms", "in_force_ms", "push_lag_ms")


def one_run(workload: str, kwargs: dict, policy: str) -> dict:
    from pyspark.sql import SparkSession

    import spark_plugin
    import workloads

    mod = workloads.get(workload)
    builder = (SparkSession.builder.master("local-cluster[2,1,1024]")
               .appName(f"spark-lrc-plan-latency-{workload}")
               .config("spark.executor.memory", "768m"))
    jars = [str(j) for j in getattr(mod, "extra_jars", list)()]  # the GraphX workloads' jar
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    spark = spark_plugin.configure(builder, policy=policy).getOrCreate()
    try:
        spark.sparkContext.parallelize(range(4), 4).count()  # executors up before the timing
        mod.run(spark, **kwargs)
        brain = spark_plugin.session.active_brain()
        brain.sync()
        return brain.stats(), list(brain.metrics.in_force_ms), list(brain.metrics.plan_latency_ms)
    finally:
        spark.stop()


def _summary(xs: list[float]) -> dict:
    if not xs:
        return {"count": 0}
    a = np.asarray(xs)
    return {"count": int(a.size), "median": round(float(np.median(a)), 2),
            "p99": round(float(np.percentile(a, 99)), 2), "max": round(float(a.max()), 2)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="workloads.plan_latency", description=__doc__.split("\n")[0])
    ap.add_argument("--workload", default="pagerank")
    ap.add_argument("--kw", action="append", default=[],
                    help="workload arguments, ARG=VALUE (repeatable); pagerank's default: "
                         "iterations=10 verify=False")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--policy", default="lrc")
    args = ap.parse_args(argv)
    kwargs = {"iterations": 10, "verify": False} if args.workload == "pagerank" else {}
    kwargs.update(parse_kwargs(f"{args.workload}.{kv}" for kv in args.kw).get(args.workload, {}))
    pooled_force, pooled_plan, runs = [], [], []
    for _ in range(args.runs):
        st, force, plan = one_run(args.workload, kwargs, args.policy)
        pooled_force += force
        pooled_plan += plan
        run = {k: st[k] for k in KEYS}
        run["plan_breakdown_ms"] = st["plan_breakdown_ms"]
        run["job_start_chars"] = st["job_start_chars"]
        run["whole_replies"] = st["whole_replies"]
        run["foreseen"] = st["foreseen"]
        runs.append(run)
        print(json.dumps(run, indent=1))
    out = {"runs": runs, "pooled": {"plan_latency_ms": _summary(pooled_plan),
                                    "in_force_ms": _summary(pooled_force)}}
    print(json.dumps(out["pooled"], indent=1))
    return out


if __name__ == "__main__":
    main()
