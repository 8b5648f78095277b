"""The benchmark runner: every workload under every policy at equal cache pressure, one fresh
driver process per run, plus simulator bounds, results.json, report.md and plots.

    python -m workloads.bench --workloads pagerank,cc,zip,sql --policies lru,lrc,lerc \\
        --cache-fraction 0.3,0.5,0.7 --repeat 3 --out results/latest
    python -m workloads.bench --render results/latest     # re-render report.md and the plots

Without `--master` a local standalone mini-cluster (`workloads.cluster.MiniCluster`) runs for the
whole benchmark and is torn down at the end (also on Ctrl-C); `--master spark://HOST:PORT` uses an
existing cluster (the docker-compose submitter).

Cache pressure. Calibration per workload (ample memory): (1) plugin off -> reference checksum and
the unlimited-cache job time, and the executors' usable heap (Spark reports max storage memory =
(heap - 300 MB) x spark.memory.fraction); (2) plugin on, policy lru, trace recorded -> the
workload's cached working set = the most bytes cached at once in the trace (blocks live until
their RDD is unpersisted; the same denominator `lrc.sim` uses for its cache fraction). A run at
cache fraction F then gets `spark.memory.fraction = F x working set / executors / usable heap`,
i.e. per-executor storage memory F x working set / executors, the same for every policy; each run
records the storage cap Spark really applied (`storage_bytes_per_executor`).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parent.parent
CALIB_FRACTION = 0.8  # spark.memory.fraction for the ample-memory calibration runs
LIVE = ("lru", "lrc", "lerc", "mrd")
SLOWDOWN_LIMIT = 0.05
# Spark reserves spark.storage.unrollMemoryThreshold (1 MB by default) of storage memory before it
# unrolls a block; with storage regions of a few MB that reservation alone evicts most of the
# cache on every put, whatever the policy. A small initial reservation (grown as the block is
# unrolled) keeps eviction driven by the blocks themselves.
#
# The cache fraction shrinks Spark's unified memory (spark.memory.fraction), which execution shares:
# SQL's hash aggregates then failed with UNABLE_TO_ACQUIRE_MEMORY at F=0.3 while cached blocks sat
# in the protected half of the region. spark.memory.storageFraction=0.1 lets execution take
# memory back from the cache (evicting, in the policy's order) down to 10%.
DEFAULT_CONF = {"spark.storage.unrollMemoryThreshold": "65536", "spark.memory.storageFraction": "0.1"}
HIT_GAP = 0.10


# ============================================================================ CLI
def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m workloads.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default="pagerank,cc,zip,sql")
    ap.add_argument("--policies", default="lru,lrc,lerc")
    ap.add_argument("--cache-fraction", default="0.3,0.5,0.7",
                    help="storage memory relative to the workload's cached working set")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "results" / "latest"))
    ap.add_argument("--scale", default="", help="per workload: pagerank=2,cc=1 (default 1)")
    ap.add_argument("--kw", action="append", default=[],
                    help="workload arguments: pagerank.iterations=5,zip.rounds=4 (repeatable)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--master", default=None, help="spark://HOST:PORT; default: a local mini-cluster")
    ap.add_argument("--workers", type=int, default=2, help="mini-cluster workers (= executors)")
    ap.add_argument("--worker-memory", default="1g")
    ap.add_argument("--executor-memory", default=None,
                    help="default: what fits the mini-cluster's workers, 1g with --master")
    ap.add_argument("--conf", action="append", default=[],
                    help="extra Spark conf KEY=VALUE for every run (repeatable)")
    ap.add_argument("--refs", choices=("online", "profile"), default="online",
                    help="profile: the calibration trace is spark.lrc.profile (recurring app)")
    ap.add_argument("--verify", action="store_true",
                    help="let the workloads run their driver-side self-checks in every run")
    ap.add_argument("--run-timeout", type=float, default=900.0)
    ap.add_argument("--no-sim", action="store_true", help="skip the simulator replay")
    ap.add_argument("--render", metavar="DIR", default=None,
                    help="only re-render DIR/report.md and plots from DIR/results.json")
    ap.add_argument("--merge", nargs=2, metavar=("DIR", "SRC"), default=None,
                    help="replace DIR's results for SRC's workloads by SRC's (a re-run of some "
                         "workloads), keep the commands that still contribute, re-render DIR")
    return ap


def parse_list(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def parse_scales(s: str) -> dict[str, int]:
    out = {}
    for item in parse_list(s):
        name, _, val = item.partition("=")
        if not val:
            raise SystemExit(f"--scale: expected W=N, got {item!r}")
        out[name.strip()] = int(val)
    return out


def _value(v: str) -> Any:
    try:
        return json.loads(v)
    except ValueError:
        return v


def parse_kwargs(items: Iterable[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in (x for s in items for x in parse_list(s)):
        key, _, val = item.partition("=")
        wl, _, arg = key.partition(".")
        if not (arg and val):
            raise SystemExit(f"--kw: expected W.arg=value, got {item!r}")
        out.setdefault(wl.strip(), {})[arg.strip()] = _value(val.strip())
    return out


def fkey(f: float) -> str:
    return f"{f:g}"


# ============================================================================ child runs
class RunFailed(RuntimeError):
    pass


def run_child(spec: dict, workdir: Path, timeout: float, env: dict[str, str]) -> dict:
    """Run `workloads.bench_run` in a fresh process (its own session: Ctrl-C here kills it)."""
    workdir.mkdir(parents=True, exist_ok=True)
    fd, spec_path = tempfile.mkstemp(suffix=".json", prefix="spec-", dir=workdir)
    os.close(fd)
    out_path = spec_path.replace("spec-", "out-")
    log_path = spec_path.replace("spec-", "log-").replace(".json", ".log")
    Path(spec_path).write_text(json.dumps(spec))
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "workloads.bench_run", spec_path, out_path],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except BaseException:  # timeout, Ctrl-C, SIGTERM: never leave a driver behind
            _kill_group(proc)
            if not isinstance(sys.exc_info()[1], subprocess.TimeoutExpired):
                raise
            return {"ok": False, "error": f"timed out after {timeout:.0f}s", "log": log_path}
    try:
        out = json.loads(Path(out_path).read_text())
    except (OSError, ValueError):
        tail = Path(log_path).read_text(errors="replace")[-2000:]
        out = {"ok": False, "error": f"child exited {proc.returncode} without output:\n{tail}"}
    out["log"] = log_path
    return out


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def memory_fraction(cache_fraction: float, working_set: int, executors: int,
                    usable_heap: float) -> float:
    """spark.memory.fraction giving each executor cache_fraction x working_set / executors."""
    target = cache_fraction * working_set / executors
    return min(1.0, max(1e-6, target / usable_heap))


def write_results(path: Path, results: dict) -> None:
    """results.json, replaced atomically (a reader never sees half a file)."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, default=str))
    tmp.replace(path)


def working_set_bytes(trace_path: str | Path) -> tuple[int, int, Any]:
    """(cached working set = peak bytes cached at once, number of blocks, compiled trace)."""
    from lrc.sim import CompiledTrace
    from lrc.trace import load_trace

    ct = CompiledTrace(load_trace(trace_path))
    return int(ct.working_set_bytes), len(ct.blocks), ct


# ============================================================================ the benchmark
class Bench:
    def __init__(self, args: argparse.Namespace, argv: list[str]):
        self.a = args
        self.out = Path(args.out).resolve()
        self.workloads = parse_list(args.workloads)
        self.policies = parse_list(args.policies)
        self.fractions = [float(x) for x in parse_list(args.cache_fraction)]
        self.scales = parse_scales(args.scale)
        self.kwargs = parse_kwargs(args.kw)
        import workloads

        for w in self.workloads:
            workloads.get(w)
        for w in list(self.scales) + list(self.kwargs):
            if w not in self.workloads:
                raise SystemExit(f"--scale/--kw name {w!r} is not in --workloads")
        bad = [p for p in self.policies if p not in LIVE]
        if bad:
            raise SystemExit(f"unknown live policies {bad}; valid: {', '.join(LIVE)}")
        if any(not 0 < f for f in self.fractions):
            raise SystemExit("cache fractions must be > 0")
        if args.repeat < 1:
            raise SystemExit("--repeat must be >= 1")
        self.traces = self.out / "traces"
        self.results: dict[str, Any] = {
            "command": "python -m workloads.bench " + " ".join(shlex.quote(x) for x in argv),
            "argv": argv,
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "python": platform.python_version()},
            "settings": {"workloads": self.workloads, "policies": self.policies,
                         "cache_fractions": self.fractions, "repeat": args.repeat,
                         "scales": {w: self.scales.get(w, 1) for w in self.workloads},
                         "kwargs": {w: self.kwargs.get(w, {}) for w in self.workloads},
                         "seed": args.seed, "refs": args.refs, "verify": args.verify,
                         "working_set": "peak bytes cached at once in the calibration trace"},
            "calibration": {}, "runs": [], "sim": [],
        }

    # ------------------------------------------------------------------ helpers
    def spec(self, workload: str, policy: str | None, mem_fraction: float, tag: str,
             profile: str | None = None) -> dict:
        conf = {**self.conf, "spark.memory.fraction": f"{mem_fraction:.6g}"}
        spec = {"workload": workload, "scale": self.scales.get(workload, 1), "seed": self.a.seed,
                "kwargs": self.kwargs.get(workload, {}), "verify": self.a.verify or False,
                "master": self.master, "executors": self.executors, "conf": conf,
                "policy": policy}
        if policy:
            self.traces.mkdir(parents=True, exist_ok=True)
            ignore = self.traces / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# traces, stats and child logs stay out of git\n*\n")
            spec["trace_path"] = str(self.traces / f"{tag}.parquet")
            spec["stats_path"] = str(self.traces / f"{tag}.stats.json")
            spec["profile"] = profile
        return spec

    def child(self, spec: dict) -> dict:
        return run_child(spec, self.traces / "specs", self.a.run_timeout, self.env)

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        write_results(self.out / "results.json", self.results)

    # ------------------------------------------------------------------ phases
    def calibrate(self, w: str, bar) -> dict:
        bar.set_description(f"calibrate {w}: plugin off")
        off = self.child(self.spec(w, None, CALIB_FRACTION, f"{w}-calib-off"))
        bar.update(1)
        if not off.get("ok"):
            raise RunFailed(f"calibration of {w} (plugin off) failed: {off.get('error')}")
        usable = off["storage_bytes_per_executor"] / CALIB_FRACTION
        bar.set_description(f"calibrate {w}: lru + trace")
        tag = f"{w}-calib-lru"
        on = self.child(self.spec(w, "lru", CALIB_FRACTION, tag))
        bar.update(1)
        if not on.get("ok"):
            raise RunFailed(f"calibration of {w} (plugin on, lru) failed: {on.get('error')}")
        trace = self.traces / f"{tag}.parquet"
        ws, nblocks, _ = working_set_bytes(trace)
        cal = {"scale": self.scales.get(w, 1), "kwargs": self.kwargs.get(w, {}),
               "checksum": off["checksum"], "checksum_lru_plugin": on["checksum"],
               "jct_unlimited_s": off["jct_s"], "jct_unlimited_lru_plugin_s": on["jct_s"],
               "storage_bytes_per_executor": off["storage_bytes_per_executor"],
               "usable_heap_bytes": usable, "working_set_bytes": ws, "cached_blocks": nblocks,
               "calibration_evictions": (on.get("stats") or {}).get("evictions"),
               "calibration_hit_ratio": (on.get("stats") or {}).get("hit_ratio"),
               "calibration_effective_hit_ratio": (on.get("stats") or {}).get("effective_hit_ratio"),
               "trace": str(trace), "result": off.get("result"),
               "memory_fraction": {fkey(f): memory_fraction(f, ws, self.executors, usable)
                                   for f in self.fractions}}
        if on["checksum"] != off["checksum"]:
            cal["warning"] = "the calibration run with the plugin (lru) differs from plugin off"
        return cal

    def run_one(self, w: str, f: float, rep: int, policy: str, cal: dict) -> dict:
        tag = f"{w}-f{fkey(f)}-{policy}-r{rep}"
        profile = cal["trace"] if self.a.refs == "profile" else None
        spec = self.spec(w, policy, cal["memory_fraction"][fkey(f)], tag, profile)
        t0 = time.perf_counter()
        out = self.child(spec)
        stats = out.get("stats") or {}
        target = f * cal["working_set_bytes"] / self.executors
        got = out.get("storage_bytes_per_executor")
        rec = {
            "workload": w, "policy": policy, "cache_fraction": f, "repeat": rep,
            "ok": bool(out.get("ok")), "error": out.get("error"),
            "jct_s": out.get("jct_s"), "startup_s": out.get("startup_s"),
            "wall_s": time.perf_counter() - t0,
            "hit_ratio": stats.get("hit_ratio"), "effective_hit_ratio": stats.get("effective_hit_ratio"),
            "hits": stats.get("hits"), "misses": stats.get("misses"),
            "recomputed_partitions": stats.get("misses"),
            "effective_hits": stats.get("effective_hits"),
            "tasks_with_reads": stats.get("tasks_with_reads"),
            "evictions": stats.get("evictions"),
            "evictions_per_executor": stats.get("evictions_per_executor"),
            "evictions_per_rdd": stats.get("evictions_per_rdd"),
            "plan_latency_ms": stats.get("plan_latency_ms"),
            "executor_wait_ms": stats.get("executor_wait_ms"),
            "degraded": stats.get("degraded"), "dropped_events": stats.get("dropped_events"),
            "checksum": out.get("checksum"), "reference_checksum": cal["checksum"],
            "spark_memory_fraction": cal["memory_fraction"][fkey(f)],
            "storage_bytes_target": target, "storage_bytes_per_executor": got,
            "storage_cap_error": (got / target - 1) if got and target else None,
            "refs": self.a.refs, "trace": spec.get("trace_path"), "log": out.get("log"),
        }
        rec["checksum_ok"] = rec["ok"] and rec["checksum"] == cal["checksum"]
        rec["status"] = "ok" if rec["checksum_ok"] else ("checksum mismatch" if rec["ok"] else "error")
        return rec

    def simulate(self, w: str, cal: dict) -> list[dict]:
        from lrc.sim import simulate

        _, _, ct = working_set_bytes(cal["trace"])
        rows = []
        for f in self.fractions:
            for pol in ["min"] + [p for p in self.policies]:
                refs = "profile" if pol == "min" else self.a.refs
                try:
                    r = simulate(ct, pol, f, executors=self.executors, cores=self.cores, refs=refs)
                    d = r.to_dict()
                    rows.append({"workload": w, "cache_fraction": f, "policy": pol, "refs": refs,
                                 "hit_ratio": d["hit_ratio"],
                                 "effective_hit_ratio": d["effective_hit_ratio"],
                                 "est_runtime": d["est_runtime"], "evictions": d["evictions"],
                                 "recomputed_bytes": d["recomputed_bytes"]})
                except Exception as e:  # the bound is informative; never lose the runs for it
                    rows.append({"workload": w, "cache_fraction": f, "policy": pol, "refs": refs,
                                 "error": f"{type(e).__name__}: {e}"})
        return rows

    def main(self) -> int:
        from tqdm import tqdm

        from workloads.cluster import MiniCluster, parse_memory_mb, private_spark_home, spark_env

        a = self.a
        self.env = spark_env(private_spark_home())
        self.env.setdefault("PYTHONPATH", str(ROOT))
        self.cores = 1
        total = len(self.workloads) * (2 + len(self.fractions) * a.repeat * len(self.policies))
        cluster = None
        try:
            if a.master:
                self.master, self.executors = a.master, a.workers
                self.conf = {"spark.executor.memory": a.executor_memory or "1g",
                             "spark.executor.cores": "1", "spark.cores.max": str(a.workers)}
                self.results["cluster"] = {"master": a.master, "executors": a.workers}
            else:
                cluster = MiniCluster(workers=a.workers, worker_memory=a.worker_memory,
                                      worker_cores=1).start()
                self.master, self.executors = cluster.master_url, a.workers
                self.conf = cluster.spark_conf(a.executor_memory)
                self.results["cluster"] = {"master": "mini-cluster", "executors": a.workers,
                                           "worker_memory": a.worker_memory}
            self.conf.update(DEFAULT_CONF)
            for item in a.conf:
                k, _, v = item.partition("=")
                self.conf[k.strip()] = v.strip()
            self.results["cluster"]["conf"] = self.conf
            self.save()
            with tqdm(total=total, unit="run", dynamic_ncols=True) as bar:
                for w in self.workloads:
                    cal = self.calibrate(w, bar)
                    self.results["calibration"][w] = cal
                    self.save()
                    for f in self.fractions:
                        for rep in range(a.repeat):
                            k = rep % len(self.policies)
                            for pol in self.policies[k:] + self.policies[:k]:  # interleaved
                                bar.set_description(f"{w} F={fkey(f)} r{rep} {pol}")
                                rec = self.run_one(w, f, rep, pol, cal)
                                self.results["runs"].append(rec)
                                self.save()
                                bar.update(1)
                                if rec["status"] != "ok":
                                    tqdm.write(f"FAILED {w} F={fkey(f)} r{rep} {pol}: "
                                               f"{rec['status']} {rec.get('error') or ''}")
                    if not a.no_sim:
                        bar.set_description(f"simulate {w}")
                        self.results["sim"].extend(self.simulate(w, cal))
                        self.save()
        finally:
            if cluster is not None:
                cluster.stop()
            self.results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
            if self.results["runs"] or self.results["calibration"]:
                self.save()
                render(self.out)
        failed = [r for r in self.results["runs"] if r["status"] != "ok"]
        if failed:
            print(f"{len(failed)} of {len(self.results['runs'])} runs FAILED "
                  f"(checksum mismatch or error); see {self.out / 'report.md'}", file=sys.stderr)
            return 1
        print(f"wrote {self.out / 'results.json'} and {self.out / 'report.md'}")
        return 0


# ============================================================================ statistics
def _ok(runs: list[dict]) -> list[dict]:
    return [r for r in runs if r.get("status", "ok") == "ok" and r.get("jct_s") is not None]


def _sel(runs, workload, policy=None, fraction=None):
    return [r for r in runs if r["workload"] == workload
            and (policy is None or r["policy"] == policy)
            and (fraction is None or math.isclose(r["cache_fraction"], fraction))]


def median_jct(runs: list[dict], workload: str, policy: str, fraction: float) -> float | None:
    xs = [r["jct_s"] for r in _ok(_sel(runs, workload, policy, fraction))]
    return statistics.median(xs) if xs else None


def median_of(runs: list[dict], key: str, workload: str, policy: str, fraction: float):
    xs = [r[key] for r in _ok(_sel(runs, workload, policy, fraction)) if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def speedup(runs: list[dict], workload: str, policy: str, fraction: float,
            baseline: str = "lru") -> dict | None:
    """Median over repeats of (baseline time / policy time) in the same repeat, with min and max.
    Only repeats where both runs succeeded with the right checksum count."""
    base = {r["repeat"]: r["jct_s"] for r in _ok(_sel(runs, workload, baseline, fraction))}
    ratios = sorted(base[r["repeat"]] / r["jct_s"] for r in _ok(_sel(runs, workload, policy, fraction))
                    if r["repeat"] in base and r["jct_s"] > 0)
    if not ratios:
        return None
    return {"median": statistics.median(ratios), "min": ratios[0], "max": ratios[-1],
            "n": len(ratios)}


def sim_row(sim: list[dict], workload: str, policy: str, fraction: float) -> dict | None:
    for s in sim:
        if s["workload"] == workload and s["policy"] == policy and \
                math.isclose(s["cache_fraction"], fraction) and "error" not in s:
            return s
    return None


def goals(res: dict) -> list[dict]:
    """The issue's targets, evaluated on the medians."""
    runs, sim = res.get("runs", []), res.get("sim", [])
    st = res.get("settings", {})
    wls, pols, fracs = st.get("workloads", []), st.get("policies", []), st.get("cache_fractions", [])
    out = []

    def best(w, p):
        cands = [(speedup(runs, w, p, f), f) for f in fracs]
        cands = [(s["median"], f) for s, f in cands if s]
        return max(cands) if cands else (None, None)

    if "lrc" in pols and "lru" in pols:
        got = [(w, *best(w, "lrc")) for w in ("pagerank", "cc") if w in wls]
        got = [g for g in got if g[1] is not None]
        if got:
            w, s, f = max(got, key=lambda g: g[1])
            out.append({"goal": "LRC median speedup over LRU >= 1.5x on pagerank or cc (best fraction)",
                        "met": s >= 1.5, "value": f"{s:.2f}x ({w}, F={fkey(f)})",
                        "gap": None if s >= 1.5 else f"{1.5 - s:.2f}x short"})
    if "zip" in wls and "lerc" in pols and "lru" in pols:
        s, f = best("zip", "lerc")
        if s is not None:
            lrc = speedup(runs, "zip", "lrc", f) if "lrc" in pols else None
            faster = lrc is None or s > lrc["median"]
            out.append({"goal": "LERC >= 1.3x over LRU on zip and faster than LRC",
                        "met": s >= 1.3 and faster,
                        "value": f"{s:.2f}x at F={fkey(f)}" + (f" (LRC {lrc['median']:.2f}x)" if lrc else ""),
                        "gap": None if s >= 1.3 and faster else
                        ("; ".join(x for x in (f"{1.3 - s:.2f}x short" if s < 1.3 else "",
                                               "not faster than LRC" if not faster else "") if x))})
    worst = []
    for w in wls:
        for p in pols:
            if p == "lru":
                continue
            for f in fracs:
                s = speedup(runs, w, p, f)
                if s:
                    worst.append((s["median"], w, p, f))
    if worst:
        s, w, p, f = min(worst)
        lim = 1 / (1 + SLOWDOWN_LIMIT)
        out.append({"goal": "LRC/LERC never > 5% slower than LRU (median)", "met": s >= lim,
                    "value": f"worst {s:.2f}x ({w} {p} F={fkey(f)}): {100 * (1 / s - 1):+.0f}% time",
                    "gap": None if s >= lim else
                    f"{sum(1 for x in worst if x[0] < lim)} of {len(worst)} cells slower than 5%"})
    gaps = []
    for w in wls:
        for f in fracs:
            m = sim_row(sim, w, "min", f)
            if not m:
                continue
            for p in pols:
                if p == "lru":
                    continue
                h = median_of(runs, "hit_ratio", w, p, f)
                if h is not None:
                    gaps.append((m["hit_ratio"] - h, w, p, f))
    if gaps:
        g, w, p, f = max(gaps)
        out.append({"goal": "LRC/LERC hit ratio within 10 points of min (simulated Belady)",
                    "met": g <= HIT_GAP,
                    "value": f"largest gap {100 * g:.1f} points ({w} {p} F={fkey(f)})",
                    "gap": None if g <= HIT_GAP else
                    f"{sum(1 for x in gaps if x[0] > HIT_GAP)} of {len(gaps)} cells more than 10 points below min"})
    return out


# ============================================================================ report
def _f(x, fmt="{:.2f}", none="-"):
    return none if x is None else fmt.format(x)


def _pct(x):
    return _f(x, "{:.1%}")


def _workloads_of(command: str) -> list[str]:
    """The --workloads of a recorded bench command (its default when absent)."""
    args = shlex.split(command.split("#")[0])
    args = args[args.index("workloads.bench") + 1:] if "workloads.bench" in args else args
    return parse_list(parser().parse_known_args(args)[0].workloads)


def merge(dst_dir: str | Path, src_dir: str | Path) -> Path:
    """Fold a re-run of some workloads (SRC) into a full benchmark (DIR): SRC's runs, calibrations
    and simulator rows replace DIR's for those workloads; `command` lists DIR's commands that still
    contribute, then SRC's, one per line."""
    dst_p, src_p = Path(dst_dir) / "results.json", Path(src_dir) / "results.json"
    dst, src = json.loads(dst_p.read_text()), json.loads(src_p.read_text())
    ws = set(src["settings"]["workloads"])
    for key in ("runs", "sim"):
        dst[key] = [r for r in dst.get(key, []) if r["workload"] not in ws] + src.get(key, [])
    dst["calibration"].update(src.get("calibration", {}))
    st, sst = dst["settings"], src["settings"]
    for w in sst["workloads"]:
        if w not in st["workloads"]:
            st["workloads"].append(w)
        for k in ("scales", "kwargs"):
            st.setdefault(k, {})[w] = sst.get(k, {}).get(w)
    if st.get("working_set") != sst.get("working_set"):
        st["working_set"] = f"{st.get('working_set')}; for {', '.join(sorted(ws))}: " \
                            f"{sst.get('working_set')}"
    cmds = [c for c in dst.get("command", "?").splitlines()
            if not set(_workloads_of(c)) <= ws]  # drop the wholly superseded
    cmds.append(src.get("command", "?") + f"   # re-run of {', '.join(sorted(ws))}, merged with --merge")
    dst["command"] = "\n".join(cmds)
    dst["finished"] = src.get("finished", dst.get("finished"))
    write_results(dst_p, dst)
    return render(dst_dir)


def render(out_dir: str | Path) -> Path:
    """Write report.md, time_vs_fraction.png and hit_ratio_vs_fraction.png from results.json."""
    out = Path(out_dir)
    res = json.loads((out / "results.json").read_text())
    (out / "report.md").write_text(report_markdown(res, out))
    try:
        plots(res, out)
    except Exception as e:  # a missing matplotlib must not lose the report
        print(f"plots not written: {e!r}", file=sys.stderr)
    return out / "report.md"


def report_markdown(res: dict, out: Path | None = None) -> str:
    runs, sim, cal = res.get("runs", []), res.get("sim", []), res.get("calibration", {})
    st = res.get("settings", {})
    wls, pols, fracs = st.get("workloads", []), st.get("policies", []), st.get("cache_fractions", [])
    failed = [r for r in runs if r.get("status", "ok") != "ok"]
    L: list[str] = ["# spark-lrc benchmark: LRU vs DAG-aware eviction", ""]
    if failed:
        L += [f"> **FAILED: {len(failed)} of {len(runs)} runs failed** (checksum mismatch or error). "
              "Their times are excluded from every table; see *Checksums* below.", ""]
    elif runs:
        L += [f"All {len(runs)} runs returned the plugin-off reference checksum.", ""]
    L += ["Command:", "", "```", res.get("command", "?"), "```", ""]
    cl = res.get("cluster", {})
    L += [f"Started {res.get('started', '?')}, finished {res.get('finished', '?')}. "
          f"Cluster: {cl.get('master', '?')}, {cl.get('executors', '?')} executors x 1 core "
          f"(conf {json.dumps(cl.get('conf', {}))}). Machine: {res.get('machine', {}).get('cpus', '?')} "
          f"CPUs, shared with other jobs: timings are noisy, so compare **ratios and medians**, not "
          f"seconds. Every run is a fresh driver process; job time (`jct`) is the workload's `run()` "
          f"only (no session start-up). Policies run interleaved, their order rotated per repeat.",
          "",
          f"Reference counts: **{st.get('refs', 'online')}** "
          + ("(job by job as jobs are submitted, LRC-Online)." if st.get("refs", "online") == "online"
             else "(the calibration trace is `spark.lrc.profile`: recurring-application mode).")
          + f" Cache fraction F = per-executor storage memory x executors / the workload's cached "
          f"working set ({st.get('working_set', 'total bytes of all cached blocks')}), set through "
          f"`spark.memory.fraction` from the executors' measured usable heap; each run records the "
          f"storage cap Spark applied.", ""]

    # ---- calibration
    L += ["## Calibration (ample memory)", "",
          "| workload | scale / args | reference checksum | jct unlimited (s) | working set (MB) | blocks "
          "| usable heap / executor (MB) | spark.memory.fraction per F | live hit / eff. at ample memory "
          "(evictions) |", "|---|---|---|---|---|---|---|---|---|"]
    for w in wls:
        c = cal.get(w)
        if not c:
            continue
        mf = ", ".join(f"{k}: {v:.4f}" for k, v in c.get("memory_fraction", {}).items())
        args = ", ".join(f"{k}={v}" for k, v in (c.get("kwargs") or {}).items())
        L.append(f"| {w} | {c.get('scale')}{' / ' + args if args else ''} | `{c.get('checksum')}` | "
                 f"{_f(c.get('jct_unlimited_s'))} | {c.get('working_set_bytes', 0) / 2**20:.1f} | "
                 f"{c.get('cached_blocks')} | {c.get('usable_heap_bytes', 0) / 2**20:.0f} | {mf} | "
                 f"{_pct(c.get('calibration_hit_ratio'))} / {_pct(c.get('calibration_effective_hit_ratio'))} "
                 f"({c.get('calibration_evictions')}) |")
    caps = [r["storage_cap_error"] for r in runs if r.get("storage_cap_error") is not None]
    if caps:
        L += ["", f"Storage cap applied vs asked, over all runs: {min(caps):+.1%} .. {max(caps):+.1%}."]
    L.append("")

    # ---- speedups
    L += ["## Speedup vs LRU (median of per-repeat ratios LRU time / policy time, [min-max])", ""]
    others = [p for p in pols if p != "lru"]
    L += ["| workload | F | " + " | ".join(others) + " | min-bound (sim, est.) |",
          "|---|---|" + "---|" * (len(others) + 1)]
    for w in wls:
        for f in fracs:
            cells = []
            for p in others:
                s = speedup(runs, w, p, f)
                cells.append("-" if not s else
                             f"**{s['median']:.2f}x** [{s['min']:.2f}-{s['max']:.2f}]")
            m, l = sim_row(sim, w, "min", f), sim_row(sim, w, "lru", f)
            est = (f"{l['est_runtime'] / m['est_runtime']:.2f}x" if m and l and m["est_runtime"] > 0
                   else "-")
            L.append(f"| {w} | {fkey(f)} | " + " | ".join(cells) + f" | {est} |")
    L.append("")

    # ---- median times
    L += ["## Median job time (s)", "",
          "| workload | F | " + " | ".join(pols) + " | unlimited (plugin off) |",
          "|---|---|" + "---|" * (len(pols) + 1)]
    for w in wls:
        for f in fracs:
            cells = [_f(median_jct(runs, w, p, f)) for p in pols]
            L.append(f"| {w} | {fkey(f)} | " + " | ".join(cells) +
                     f" | {_f((cal.get(w) or {}).get('jct_unlimited_s'))} |")
    L.append("")

    # ---- hit ratios
    L += ["## Hit ratios (measured median; simulator replay of the calibration trace in brackets)", "",
          "Hit ratio = cached reads that hit / all cached reads; effective hit ratio = tasks whose "
          "cached inputs all hit / tasks with cached inputs. `min` is Belady's bound in the simulator.",
          "", "| workload | F | " + " | ".join(f"{p} hit / eff." for p in pols) + " | min hit / eff. (sim) |",
          "|---|---|" + "---|" * (len(pols) + 1)]
    for w in wls:
        for f in fracs:
            cells = []
            for p in pols:
                h = median_of(runs, "hit_ratio", w, p, f)
                e = median_of(runs, "effective_hit_ratio", w, p, f)
                s = sim_row(sim, w, p, f)
                simc = f" ({_pct(s['hit_ratio'])} / {_pct(s['effective_hit_ratio'])})" if s else ""
                cells.append(f"{_pct(h)} / {_pct(e)}{simc}")
            m = sim_row(sim, w, "min", f)
            L.append(f"| {w} | {fkey(f)} | " + " | ".join(cells) +
                     f" | {_pct(m['hit_ratio']) if m else '-'} / {_pct(m['effective_hit_ratio']) if m else '-'} |")
    L.append("")

    # ---- evictions / plan latency
    L += ["## Evictions, recomputations, plan latency (medians over repeats)", "",
          "| workload | F | policy | evictions | misses (recomputed or re-read partitions) | "
          "plan latency median / p99 (ms) | evictions per RDD (last repeat) |", "|---|---|---|---|---|---|---|"]
    for w in wls:
        for f in fracs:
            for p in pols:
                rs = _ok(_sel(runs, w, p, f))
                if not rs:
                    continue
                pl = [r["plan_latency_ms"] for r in rs if r.get("plan_latency_ms")]
                med = statistics.median([x["median"] for x in pl if x.get("median") is not None] or [0])
                p99 = statistics.median([x["p99"] for x in pl if x.get("p99") is not None] or [0])
                last = max(rs, key=lambda r: r["repeat"]).get("evictions_per_rdd") or {}
                top = ", ".join(f"{k}:{v}" for k, v in sorted(last.items(), key=lambda kv: -kv[1])[:6])
                L.append(f"| {w} | {fkey(f)} | {p} | {_f(median_of(runs, 'evictions', w, p, f), '{:.0f}')} | "
                         f"{_f(median_of(runs, 'misses', w, p, f), '{:.0f}')} | {med:.1f} / {p99:.1f} | {top} |")
    L.append("")

    # ---- goals
    L += ["## Goals", "", "| goal | met | measured | gap |", "|---|---|---|---|"]
    for g in goals(res):
        L.append(f"| {g['goal']} | {'yes' if g['met'] else '**NO**'} | {g['value']} | {g.get('gap') or ''} |")
    L.append("")

    # ---- checksums
    L += ["## Checksums", ""]
    if not runs:
        L.append("No runs recorded.")
    elif failed:
        L += [f"**{len(failed)} run(s) FAILED:**", "", "| workload | F | repeat | policy | status | checksum | reference | error |",
              "|---|---|---|---|---|---|---|---|"]
        for r in failed:
            err = (r.get("error") or "").splitlines()[0][:120] if r.get("error") else ""
            L.append(f"| {r['workload']} | {fkey(r['cache_fraction'])} | {r['repeat']} | {r['policy']} | "
                     f"{r.get('status')} | `{r.get('checksum')}` | `{r.get('reference_checksum')}` | {err} |")
    else:
        L.append(f"All {len(runs)} runs: checksum equal to the plugin-off reference.")
    L.append("")

    # ---- analysis
    L += ["## Analysis", ""]
    note = (out / "analysis.md") if out else None
    if note is not None and note.exists():
        L += [note.read_text().strip(), ""]
    else:
        L += ["(no analysis.md next to results.json)", ""]
    L += ["Plots: `time_vs_fraction.png` (median job time normalised to LRU), "
          "`hit_ratio_vs_fraction.png` (measured hit ratio per policy, `min` from the simulator).", ""]
    return "\n".join(L)


def plots(res: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs, sim = res.get("runs", []), res.get("sim", [])
    st = res.get("settings", {})
    wls, pols, fracs = st.get("workloads", []), st.get("policies", []), st.get("cache_fractions", [])
    n = max(1, len(wls))
    for name, what in (("time_vs_fraction.png", "time"), ("hit_ratio_vs_fraction.png", "hit")):
        fig, axes = plt.subplots(1, n, figsize=(4 * n, 3.4), squeeze=False)
        for ax, w in zip(axes[0], wls):
            for p in pols:
                ys = []
                for f in fracs:
                    if what == "time":
                        s = speedup(runs, w, p, f)
                        ys.append(1 / s["median"] if s else float("nan"))
                    else:
                        h = median_of(runs, "hit_ratio", w, p, f)
                        ys.append(h if h is not None else float("nan"))
                ax.plot(fracs, ys, marker="o", label=p)
            if what == "hit":
                ys = [(sim_row(sim, w, "min", f) or {}).get("hit_ratio", float("nan")) for f in fracs]
                ax.plot(fracs, ys, "k--", marker="x", label="min (sim)")
                ax.set_ylim(0, 1.05)
                ax.set_ylabel("hit ratio")
            else:
                ax.axhline(1.0, color="grey", lw=0.8)
                ax.set_ylabel("job time / LRU (median ratio)")
            ax.set_title(w)
            ax.set_xlabel("cache fraction")
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)


# ============================================================================ entry point
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parser().parse_args(argv)
    if a.render:
        print(render(a.render))
        return 0
    if a.merge:
        print(merge(*a.merge))
        return 0
    try:
        return Bench(a, argv).main()
    except RunFailed as e:
        print(f"benchmark aborted: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; partial results (if any) were written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
