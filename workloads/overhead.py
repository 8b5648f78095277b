"""What spark-lrc costs, plugin off vs on: by default with no memory pressure (nothing to gain).

    python -m workloads.overhead --workload pagerank --scale 4 --repeat 5 --out results/overhead
    python -m workloads.overhead --workload mllib --scale 8 --repeat 3 \
        --variants lru,lru+sidecar --conf spark.memory.fraction=0.0202 --out results/overhead/mllib

Runs on the local mini-cluster (a standalone master and two workers), each run in its own
process (`workloads.bench.child`). Every repeat runs plugin off, each plugin-on variant and off
again - an A/A control - in rotated order, so that drift in machine load hits all of them, and
the spread of the off/off ratios shows how small a difference this machine can resolve at all.
A variant is a policy, optionally `+sidecar` (the brain in a child process of the driver JVM
instead of the PySpark driver's own interpreter), `+shim` (the JVM shim without a brain, so
executors evict in Spark's order), `+trace` (the brain also records the run's trace, as every
plugin run of `workloads.bench` does) or `+admit` (spark.lrc.admit on): side by side they say
whether a cost is the brain sharing the application's interpreter, the brain's work, the
recording, or the shim's - or, under memory pressure, what admission changes.
Reports the median job time of each, the per-repeat ratios with their median and a bootstrap
interval checked against the goal (`workloads.bench.goals.OVERHEAD`), the plan latency
(job start seen by the driver -> table published), the brain's CPU time of the plugin runs, and
per variant the CPU seconds of each process (`workloads.bench.proc_cpu`: driver Python, driver
JVM with its GC and JIT time, executors): on a machine the executors keep busy, what the plugin
adds there is what its runs lose.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from spark_plugin.metrics import DRIVER_CPU_PARTS, EXECUTOR_CPU_PARTS
from workloads.bench import machine
from workloads.bench.child import run_child
from workloads.bench.cli import parse_conf, parse_kwargs, parse_list
from workloads.bench.goals import OVERHEAD
from workloads.bench.stats import paired_ratio_interval
from workloads.bench.variants import SUFFIXES, described, variant_conf
from workloads.cluster import MiniCluster, spark_env

OFF, OFF_B = "off", "off-b"


def measure(workload: str, scale: int, repeat: int, out: Path, workers: int, worker_memory: str,
            kwargs: dict, variants: list[str], conf: dict[str, str]) -> dict:
    runs: list[dict] = []
    order = [OFF, *variants, OFF_B]
    with MiniCluster(workers=workers, worker_memory=worker_memory) as cluster:
        env = spark_env()
        for i in range(repeat):
            k = i % len(order)
            for name in order[k:] + order[:k]:
                policy, extra = variant_conf(name) if name not in (OFF, OFF_B) else (None, {})
                tag = name.replace("+", "-")
                spec = {"workload": workload, "scale": scale, "kwargs": kwargs, "master": cluster.master_url,
                        "executors": workers, "conf": {**cluster.spark_conf(), **conf, **extra},
                        "policy": policy,
                        "stats_path": str(out / "work" / f"stats-{i}-{tag}.json") if policy else None}
                if name.endswith("+trace"):
                    spec["trace_path"] = str(out / "work" / f"trace-{i}-{tag}.parquet")
                r = run_child(spec, out / "work", timeout=900, env=env)
                if not r.get("ok"):
                    raise RuntimeError(f"run {i} ({name}) failed: {r.get('error')} (log {r.get('log')})")
                runs.append({"repeat": i, "plugin": name, "jct_s": r["jct_s"],
                             "checksum": r["checksum"], "stats": r.get("stats"),
                             "process_cpu": r.get("process_cpu")})
                print(f"  repeat {i} {name:>12}: {r['jct_s']:.2f} s", flush=True)
    return summarize(runs)


def summarize(runs: list[dict]) -> dict:
    """Per plugin-on variant: its job time over the mean of the two off runs of the same repeat."""
    names = list(dict.fromkeys(r["plugin"] for r in runs))
    by = {name: {r["repeat"]: r["jct_s"] for r in runs if r["plugin"] == name} for name in names}
    off, off_b = by[OFF], by.get(OFF_B, {})
    control = [off_b[i] / off[i] for i in sorted(off) if i in off_b]
    variants = {}
    for name in names:
        if name in (OFF, OFF_B):
            continue
        on = by[name]
        mine = [r["stats"] for r in runs if r["plugin"] == name and r.get("stats")]
        lat = [s["plan_latency_ms"] for s in mine]
        cpu = [s.get("brain_cpu_s") for s in mine if s.get("brain_cpu_s") is not None]
        pairs = [on[i] / ((off[i] + off_b.get(i, off[i])) / 2) for i in sorted(off) if i in on]
        variants[name] = {
            "median_on_s": statistics.median(on.values()),
            "median_pair_ratio": statistics.median(pairs),
            "pair_ratios": pairs,
            "interval": paired_ratio_interval(pairs, OVERHEAD["level"]),
            "brain_cpu_s_median": statistics.median(cpu) if cpu else None,
            "plan_latency_ms_median_of_runs": statistics.median(
                x["median"] for x in lat if x["median"] is not None) if lat else None,
            "plan_latency_ms_p99_max_of_runs": max(
                (x["p99"] for x in lat if x["p99"] is not None), default=None),
            "plan_latency_jobs": sum(x["count"] for x in lat),
            "plugin_cpu": plugin_cpu_medians([r for r in runs if r["plugin"] == name]),
        }
    return {
        "runs": runs,
        "process_cpu": {name: cpu_medians([r for r in runs if r["plugin"] == name])
                        for name in names},
        "checksums_equal": len({r["checksum"] for r in runs}) == 1,
        "median_off_s": statistics.median(list(off.values()) + list(off_b.values())),
        "control_ratios": control,
        "control_spread": (max(abs(x - 1) for x in control) if control else None),
        "control_interval": paired_ratio_interval(control, OVERHEAD["level"]),
        "variants": variants,
    }


CPU_FIELDS = ("python_s", "driver_jvm_s", "driver_gc_s", "driver_jit_s", "executors_s")


def cpu_medians(runs: list[dict]) -> dict[str, float] | None:
    """Median CPU seconds per process over ``runs`` (`proc_cpu`), and of their total."""
    rows = [r["process_cpu"] for r in runs if r.get("process_cpu")]
    if not rows:
        return None
    out = {k: statistics.median(x[k] for x in rows) for k in CPU_FIELDS
           if all(x.get(k) is not None for x in rows)}
    totals = [t for x in rows if (t := cpu_total(x)) is not None]
    if totals:
        out["total_s"] = statistics.median(totals)
    return out


PLUGIN_CPU_PARTS = (*DRIVER_CPU_PARTS, *EXECUTOR_CPU_PARTS, "brain", "total")  # stats.plugin_cpu_s


def plugin_cpu_medians(runs: list[dict]) -> dict[str, float] | None:
    """Median over ``runs`` of the plugin's own CPU seconds per part (`stats.plugin_cpu_s`,
    org.sparklrc.PluginCpu), and of its share of the run's CPU (every process, `proc_cpu`)."""
    rows = [(r["stats"]["plugin_cpu_s"], r.get("process_cpu") or {}) for r in runs
            if (r.get("stats") or {}).get("plugin_cpu_s")]
    if not rows:
        return None
    out = {k: statistics.median(c.get(k, 0.0) for c, _ in rows) for k in PLUGIN_CPU_PARTS}
    shares = [c["total"] / t for c, p in rows if (t := cpu_total(p))]
    out["share"] = statistics.median(shares) if shares else None
    return out


def cpu_total(row: dict) -> float | None:
    """A run's CPU seconds over every process (`proc_cpu`), None if a process is missing."""
    keys = ("python_s", "driver_jvm_s", "executors_s")
    return sum(row[k] for k in keys) if all(row.get(k) is not None for k in keys) else None


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f} ms"


def _interval(iv: dict | None) -> str:
    return "-" if not iv else f"{iv['geomean']:.3f} [{iv['low']:.3f}-{iv['high']:.3f}]"


def _verdict(iv: dict | None, limit: float) -> str:
    """Whether the interval lies under the limit, over it, or across it (not resolved)."""
    if not iv:
        return "-"
    if iv["high"] < limit:
        return f"met (< {limit:.2f})"
    if iv["low"] > limit:
        return f"missed (> {limit:.2f})"
    return f"not resolved (spans {limit:.2f})"


def report(res: dict, command: str) -> str:
    goal, level = OVERHEAD["at_most"], OVERHEAD["level"]
    variants = res["variants"]
    conf = res.get("conf") or {}
    pressure = (", ".join(f"`{k}={v}`" for k, v in conf.items()) if conf
                else "no memory pressure")
    lines = [
        f"# Overhead of spark-lrc, plugin off vs on ({', '.join(variants)}; {pressure})",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {machine.describe(res.get('machine', {}))}; each repeat runs off, "
        f"{', '.join(variants)}, off (rotated), each in a fresh driver process, on the local "
        f"mini-cluster ({res['workers']} workers). Ratios, not seconds, are the result.",
        "",
        "| | value |",
        "|---|---|",
        f"| workload | {res['workload']} (scale {res['scale']}) |",
        f"| runs | {len(res['runs'])} ({len(res['control_ratios']) or 1} repeats) |",
        f"| median job time, plugin off | {res['median_off_s']:.2f} s |",
        f"| A/A control: off-b / off per repeat | {', '.join(f'{x:.3f}' for x in res['control_ratios'])} "
        f"(largest deviation {(res['control_spread'] or 0) * 100:.1f}%; "
        f"{_interval(res.get('control_interval'))}) |",
        f"| checksums equal | {res['checksums_equal']} |",
        "",
        f"Goal: the {level:.0%} interval of on / off lies under {1 + goal:.2f}. Interval: percentile "
        "bootstrap over the repeats of the geometric mean of the per-repeat ratios (each run over "
        "the mean of its repeat's two off runs; `workloads.bench.stats.paired_ratio_interval`). "
        "The A/A control's interval (off-b / off, the same statistic) is what this machine resolves "
        "with these repeats: an interval of the control as wide as the goal means the goal cannot be "
        "shown here.",
        "",
        f"| plugin on | median job time | **on / off, geometric mean [{level:.0%} interval]** | goal | "
        "median of per-repeat ratios | per-repeat ratios | brain CPU per run (median) "
        "| plan latency (median of runs / largest p99) | jobs planned |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, v in variants.items():
        ratio = v["median_pair_ratio"]
        cpu = "-" if v["brain_cpu_s_median"] is None else f"{v['brain_cpu_s_median']} s"
        lines.append(
            f"| {name} | {v['median_on_s']:.2f} s | **{_interval(v.get('interval'))}** | "
            f"{_verdict(v.get('interval'), 1 + goal)} | {ratio:.3f} | "
            f"{', '.join(f'{x:.3f}' for x in v['pair_ratios'])} | {cpu} | "
            f"{_ms(v['plan_latency_ms_median_of_runs'])} / {_ms(v['plan_latency_ms_p99_max_of_runs'])} "
            f"| {v['plan_latency_jobs']} |")
    cpu = res.get("process_cpu") or {}
    if any(cpu.values()):
        lines += ["", "CPU seconds per run by process (median over runs; `workloads/bench/proc_cpu.py`):",
                  "", "| runs | driver Python | driver JVM | of it GC | of it JIT | executors | total |",
                  "|---|---|---|---|---|---|---|"]
        for name, c in cpu.items():
            if c:
                lines.append("| " + name + " | " + " | ".join(
                    "-" if c.get(k) is None else f"{c[k]:.1f}" for k in (*CPU_FIELDS, "total_s"))
                    + " |")
    own = {name: v["plugin_cpu"] for name, v in variants.items() if v.get("plugin_cpu")}
    if own:
        lines += ["", "The plugin's own CPU seconds per run, by part (median over runs; "
                  "`org.sparklrc.PluginCpu`, measured in every run: the listener's events, "
                  "executors' messages and table requests in the driver JVM, the py4j thread "
                  "serving the brain, the table hold thread; the executors' task hooks and table "
                  "watch threads; the brain's Python thread. Not counted: Spark's RPC carrying "
                  "the plugin's messages, and the ordered map's operations in MemoryStore):", "",
                  "| plugin on | " + " | ".join(p.replace("_", " ") for p in PLUGIN_CPU_PARTS)
                  + " | share of the run's CPU |",
                  "|---|" + "---|" * (len(PLUGIN_CPU_PARTS) + 1)]
        for name, c in own.items():
            share = "-" if c["share"] is None else f"{c['share']:.1%}"
            lines.append(f"| {name} | " + " | ".join(f"{c[p]:.2f}" for p in PLUGIN_CPU_PARTS)
                         + f" | {share} |")
    lines += [
        "",
        "Plan latency: from the listener's job-start time (driver JVM) to the moment the Python brain "
        "has published the table that covers the job's stages. `+sidecar`: the brain runs in a child "
        "process of the driver JVM instead of the PySpark driver's interpreter; `+shim`: the JVM shim "
        "without a brain; `+trace`: the brain also records the run's trace, as benchmark runs do.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="workloads.overhead", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="pagerank")
    ap.add_argument("--scale", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--variants", default="lrc",
                    help="plugin-on variants, comma-separated: POLICY, or POLICY with one of "
                         f"{described(SUFFIXES)} (default lrc)")
    ap.add_argument("--conf", action="append", default=[],
                    help="extra Spark conf KEY=VALUE for every run, e.g. spark.memory.fraction=0.02 "
                         "for memory pressure (repeatable)")
    ap.add_argument("--kw", action="append", default=[],
                    help="workload arguments, as the benchmark's: cc.prep=50 (repeatable)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="2g")
    ap.add_argument("--out", default="results/overhead")
    args = ap.parse_args(argv)
    variants = parse_list(args.variants)
    for v in variants:
        variant_conf(v)
    conf = parse_conf(args.conf)
    kwargs = parse_kwargs(args.kw)
    if set(kwargs) - {args.workload}:
        raise SystemExit(f"--kw names {', '.join(sorted(set(kwargs) - {args.workload}))}, "
                         f"not the --workload {args.workload!r}")
    kwargs = kwargs.get(args.workload, {})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0, host = time.time(), machine.measure()
    res = measure(args.workload, args.scale, args.repeat, out, args.workers, args.worker_memory,
                  kwargs, variants, conf)
    host["load_avg_end"] = machine.load_average()
    res.update(workload=args.workload, scale=args.scale, workers=args.workers, wall_s=time.time() - t0,
               machine=host, conf=conf, kwargs=kwargs)
    command = "python -m workloads.overhead " + " ".join(sys.argv[1:] if argv is None else argv)
    res["command"] = command
    (out / "results.json").write_text(json.dumps(res, indent=1, default=str))
    (out / "report.md").write_text(report(res, command))
    print(report(res, command))
    return 0 if res["checksums_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
