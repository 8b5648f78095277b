"""What spark-lrc costs when there is nothing to gain: no memory pressure, plugin off vs on.

    python -m workloads.overhead --workload pagerank --scale 4 --repeat 5 --out results/overhead

Runs on the local mini-cluster (a standalone master and two workers), each run in its own
process (`workloads.bench.child`). Every repeat runs plugin off, on (lrc) and off again - an A/A
control, in rotated order - so that drift in machine load hits all three, and the spread of the
off/off ratios shows how small a difference this machine can resolve at all.
Reports the median job time of each, the median of the per-repeat ratios, the plan latency
(job start seen by the driver -> table published) and the brain's CPU time of the plugin runs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from workloads.bench import machine
from workloads.bench.child import run_child
from workloads.bench.goals import OVERHEAD
from workloads.cluster import MiniCluster, spark_env


def measure(workload: str, scale: int, repeat: int, out: Path, workers: int, worker_memory: str,
            kwargs: dict) -> dict:
    runs: list[dict] = []
    with MiniCluster(workers=workers, worker_memory=worker_memory) as cluster:
        env = spark_env()
        for i in range(repeat):
            variants = [("off", None), ("lrc", "lrc"), ("off-b", None)]
            for name, policy in variants[i % 3:] + variants[:i % 3]:
                spec = {"workload": workload, "scale": scale, "kwargs": kwargs, "master": cluster.master_url,
                        "executors": workers, "conf": cluster.spark_conf(), "policy": policy,
                        "stats_path": str(out / "work" / f"stats-{i}-{policy}.json") if policy else None}
                r = run_child(spec, out / "work", timeout=900, env=env)
                if not r.get("ok"):
                    raise RuntimeError(f"run {i} ({name}) failed: {r.get('error')} (log {r.get('log')})")
                runs.append({"repeat": i, "plugin": name, "jct_s": r["jct_s"],
                             "checksum": r["checksum"], "stats": r.get("stats")})
                print(f"  repeat {i} {name:>5}: {r['jct_s']:.2f} s", flush=True)
    return summarize(runs)


def summarize(runs: list[dict]) -> dict:
    by = {name: {r["repeat"]: r["jct_s"] for r in runs if r["plugin"] == name}
          for name in ("off", "lrc", "off-b")}
    off, on, off_b = by["off"], by["lrc"], by["off-b"]
    # on vs the mean of the two off runs of the same repeat; the A/A control is off-b / off
    pairs = [on[i] / ((off[i] + off_b.get(i, off[i])) / 2) for i in sorted(off) if i in on]
    control = [off_b[i] / off[i] for i in sorted(off) if i in off_b]
    lat = [r["stats"]["plan_latency_ms"] for r in runs if r.get("stats")]
    cpu = [r["stats"].get("brain_cpu_s") for r in runs if r.get("stats")]
    return {
        "runs": runs,
        "checksums_equal": len({r["checksum"] for r in runs}) == 1,
        "median_off_s": statistics.median(list(off.values()) + list(off_b.values())),
        "median_on_s": statistics.median(on.values()),
        "median_pair_ratio": statistics.median(pairs),
        "pair_ratios": pairs,
        "control_ratios": control,
        "control_spread": (max(abs(x - 1) for x in control) if control else None),
        "brain_cpu_s_median": statistics.median(c for c in cpu if c is not None) if any(
            c is not None for c in cpu) else None,
        "plan_latency_ms_median_of_runs": statistics.median(x["median"] for x in lat if x["median"] is not None),
        "plan_latency_ms_p99_max_of_runs": max(x["p99"] for x in lat if x["p99"] is not None),
        "plan_latency_jobs": sum(x["count"] for x in lat),
    }


def report(res: dict, command: str) -> str:
    ratio, goal = res["median_pair_ratio"], OVERHEAD["at_most"]
    return "\n".join([
        "# Overhead of spark-lrc with no memory pressure (policy lrc vs plugin off)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {machine.describe(res.get('machine', {}))}; each repeat runs off, on, off "
        f"(rotated), each in a fresh driver process, on the local mini-cluster "
        f"({res['workers']} workers). Ratios, not seconds, are the result.",
        "",
        "| | value |",
        "|---|---|",
        f"| workload | {res['workload']} (scale {res['scale']}) |",
        f"| runs | {len(res['runs'])} ({len(res['pair_ratios'])} repeats of off, on, off) |",
        f"| median job time, plugin off | {res['median_off_s']:.2f} s |",
        f"| median job time, plugin on (lrc) | {res['median_on_s']:.2f} s |",
        f"| **median of per-repeat ratios on / mean(off)** | **{ratio:.3f}** ({(ratio - 1) * 100:+.1f}%; goal <= {goal:+.0%}) |",
        f"| per-repeat ratios | {', '.join(f'{x:.3f}' for x in res['pair_ratios'])} |",
        f"| A/A control: off-b / off per repeat | {', '.join(f'{x:.3f}' for x in res['control_ratios'])} "
        f"(largest deviation {res['control_spread'] * 100:.1f}%: differences below that are noise) |",
        f"| brain CPU time per run (median) | {res['brain_cpu_s_median']} s |",
        f"| plan latency, median over runs of the per-run median | {res['plan_latency_ms_median_of_runs']:.1f} ms |",
        f"| plan latency, largest per-run p99 | {res['plan_latency_ms_p99_max_of_runs']:.1f} ms |",
        f"| jobs planned | {res['plan_latency_jobs']} |",
        f"| checksums equal | {res['checksums_equal']} |",
        "",
        "Plan latency: from the listener's job-start time (driver JVM) to the moment the Python brain "
        "has published the table that covers the job's stages.",
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="workloads.overhead", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="pagerank")
    ap.add_argument("--scale", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="2g")
    ap.add_argument("--out", default="results/overhead")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0, host = time.time(), machine.measure()
    res = measure(args.workload, args.scale, args.repeat, out, args.workers, args.worker_memory, {})
    host["load_avg_end"] = machine.load_average()
    res.update(workload=args.workload, scale=args.scale, workers=args.workers, wall_s=time.time() - t0,
               machine=host)
    command = "python -m workloads.overhead " + " ".join(sys.argv[1:] if argv is None else argv)
    res["command"] = command
    (out / "results.json").write_text(json.dumps(res, indent=1, default=str))
    (out / "report.md").write_text(report(res, command))
    print(report(res, command))
    return 0 if res["checksums_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
