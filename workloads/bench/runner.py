"""The benchmark itself: per workload a calibration at ample memory, then every policy at every
cache fraction, repeated, each run in a fresh driver process (`child`), then the simulator's replay
of the calibration trace. results.json is saved after every run: an interrupted benchmark keeps
what it measured.

Cache pressure. Calibration per workload (ample memory): (1) plugin off -> reference checksum and
the unlimited-cache job time, and the executors' usable heap (Spark reports max storage memory =
(heap - 300 MB) x spark.memory.fraction); (2) plugin on, policy lru, trace recorded -> the
workload's cached working set = the most bytes cached at once in the trace (blocks live until
their RDD is unpersisted; the same denominator `lrc.sim` uses for its cache fraction). A run at
cache fraction F then gets `spark.memory.fraction = F x working set / executors / usable heap`,
i.e. per-executor storage memory F x working set / executors, the same for every policy; each run
records the storage cap Spark really applied (`storage_bytes_per_executor`).

Unlimited memory. The time every policy is measured against - no eviction - is a cell of its own:
pseudo-policy `unlimited`, plugin off, spark.memory.fraction = CALIB_FRACTION as in the calibration,
`repeat` runs per workload, interleaved with the policy runs (`schedule`), so its median and spread
are measured like every other cell's (the calibration's single plugin-off run stays the reference
checksum and the usable-heap measurement; its time is kept as `jct_unlimited_s`). Every run also
records Spark's own task metrics (`spark_metrics`: run/CPU/GC time, spills, shuffle bytes; per
stage in traces/TAG.stages.json).
"""
from __future__ import annotations

import json
import shlex
import sys
import time
from typing import Any

from lrc.unroll import threshold_of
from workloads.bench import machine
from workloads.bench.child import run_child
from workloads.bench.replay import (admit_of, calibration_rows, own_run, storage_fraction,
                                    working_set_bytes)
from workloads.bench.report import render
from workloads.bench.settings import Settings
from workloads.bench.stats import PLAIN, UNLIMITED, fkey
from workloads.bench.store import write_results
from workloads.bench.target import Target
from workloads.bench.variants import variant_conf

CALIB_FRACTION = 0.8  # spark.memory.fraction for the ample-memory calibration runs


class RunFailed(RuntimeError):
    pass


def memory_fraction(cache_fraction: float, working_set: int, executors: int,
                    usable_heap: float) -> float:
    """spark.memory.fraction giving each executor cache_fraction x working_set / executors."""
    target = cache_fraction * working_set / executors
    return min(1.0, max(1e-6, target / usable_heap))


def schedule(policies: list[str], fractions: list[float], repeat: int,
             unlimited: bool = True) -> list[tuple[float | None, int, str]]:
    """The order of one workload's runs: (cache fraction, repeat, policy). Per fraction and repeat
    the policies in turn, their order rotated per repeat; with `unlimited`, its `repeat` runs
    (fraction None) spread evenly over those blocks, each at a different place in its block."""
    slots = [(f, rep) for f in fractions for rep in range(repeat)]
    homes = {int(k * len(slots) / repeat): k for k in range(repeat)} if unlimited else {}
    out: list[tuple[float | None, int, str]] = []
    for i, (f, rep) in enumerate(slots):
        k = rep % len(policies)
        block: list[tuple[float | None, int, str]] = [(f, rep, p)
                                                      for p in policies[k:] + policies[:k]]
        if i in homes:
            u = homes[i]
            block.insert(u % (len(block) + 1), (None, u, UNLIMITED))
        out += block
    return out


def metrics_fields(out: dict) -> dict:
    """What a run record keeps of a child's Spark metrics (totals and per executor; the per-stage
    rows go to a side file)."""
    m = out.get("spark_metrics") or {}
    return {"spark_metrics": {**(m.get("totals") or {}), "executors": m.get("executors")}
            if m else None, "spark_metrics_error": out.get("spark_metrics_error")}


class Bench:
    """One benchmark of `settings` on `target`; `argv` is recorded as the command."""

    def __init__(self, settings: Settings, target: Target, argv: list[str]):
        self.settings, self.target = settings, target
        self.out = settings.out
        self.traces = settings.out / "traces"
        self.results: dict[str, Any] = {
            "command": "python -m workloads.bench " + " ".join(shlex.quote(x) for x in argv),
            "argv": argv,
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": machine.measure(),
            "settings": settings.record(),
            "cluster": target.info,
            "calibration": {}, "runs": [], "sim": [],
        }

    # ------------------------------------------------------------------ helpers
    def spec(self, workload: str, policy: str | None, mem_fraction: float, tag: str,
             profile: str | None = None, extra: dict[str, str] | None = None) -> dict:
        """A child's spec; `extra`: the conf a policy's variant adds (`crd+admit`)."""
        s, t = self.settings, self.target
        conf = {**t.conf, **(extra or {}), "spark.memory.fraction": f"{mem_fraction:.6g}"}
        spec = {"workload": workload, "scale": s.scales.get(workload, 1), "seed": s.seed,
                "kwargs": s.kwargs.get(workload, {}), "verify": s.verify,
                "master": t.master, "executors": t.executors, "conf": conf, "policy": policy}
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
        return run_child(spec, self.traces / "specs", self.settings.run_timeout, self.target.env)

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        write_results(self.out, self.results)

    # ------------------------------------------------------------------ phases
    def calibrate(self, w: str, bar) -> dict:
        s, executors = self.settings, self.target.executors
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
        stats = on.get("stats") or {}
        cal = {"scale": s.scales.get(w, 1), "kwargs": s.kwargs.get(w, {}),
               "checksum": off["checksum"], "checksum_lru_plugin": on["checksum"],
               "jct_unlimited_s": off["jct_s"], "jct_unlimited_lru_plugin_s": on["jct_s"],
               "storage_bytes_per_executor": off["storage_bytes_per_executor"],
               "usable_heap_bytes": usable, "working_set_bytes": ws, "cached_blocks": nblocks,
               "calibration_evictions": stats.get("evictions"),
               "calibration_hit_ratio": stats.get("hit_ratio"),
               "calibration_effective_hit_ratio": stats.get("effective_hit_ratio"),
               "trace": str(trace), "result": off.get("result"),
               "memory_fraction": {fkey(f): memory_fraction(f, ws, executors, usable)
                                   for f in s.fractions}}
        if on["checksum"] != off["checksum"]:
            cal["warning"] = "the calibration run with the plugin (lru) differs from plugin off"
        return cal

    def run_one(self, w: str, f: float, rep: int, policy: str, cal: dict) -> dict:
        refs = self.settings.refs
        tag = f"{w}-f{fkey(f)}-{policy}-r{rep}"
        profile = cal["trace"] if refs == "profile" else None
        # plain: Spark without spark-lrc; `crd+admit`: crd with the variant's conf
        plugin, extra = (None, {}) if policy == PLAIN else variant_conf(policy)
        spec = self.spec(w, plugin, cal["memory_fraction"][fkey(f)], tag, profile, extra)
        t0 = time.perf_counter()
        out = self.child(spec)
        stats = out.get("stats") or {}
        target = f * cal["working_set_bytes"] / self.target.executors
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
            "plan_latency_ms": stats.get("plan_latency_ms"), "foreseen": stats.get("foreseen"),
            "executor_wait_ms": stats.get("executor_wait_ms"),
            "push_lag_ms": stats.get("push_lag_ms"),
            "degraded": stats.get("degraded"), "dropped_events": stats.get("dropped_events"),
            "checksum": out.get("checksum"), "reference_checksum": cal["checksum"],
            "spark_memory_fraction": cal["memory_fraction"][fkey(f)],
            "storage_bytes_target": target, "storage_bytes_per_executor": got,
            "storage_cap_error": (got / target - 1) if got and target else None,
            "refs": refs, "trace": spec.get("trace_path"), "log": out.get("log"),
            **metrics_fields(out), "stages_file": self.stages_file(tag, out),
        }
        rec["checksum_ok"] = rec["ok"] and rec["checksum"] == cal["checksum"]
        rec["status"] = "ok" if rec["checksum_ok"] else ("checksum mismatch" if rec["ok"] else "error")
        if rec["ok"] and self.settings.simulate and got and plugin:
            t = self.target
            rec.update(own_run(rec["trace"], plugin, got, t.executors, t.cores,
                               self.settings.refs, storage_fraction(t.conf), threshold_of(t.conf),
                               admit_of(spec["conf"], plugin)))
        return rec

    def stages_file(self, tag: str, out: dict) -> str | None:
        """Write the run's per-stage Spark metrics next to its trace; their path."""
        stages = (out.get("spark_metrics") or {}).get("stages")
        if not stages:
            return None
        self.traces.mkdir(parents=True, exist_ok=True)
        path = self.traces / f"{tag}.stages.json"
        path.write_text(json.dumps(stages, indent=0))
        return str(path)

    def run_unlimited(self, w: str, rep: int, cal: dict) -> dict:
        """One run of the `unlimited` cell: plugin off, the calibration's memory fraction."""
        tag = f"{w}-unlimited-r{rep}"
        t0 = time.perf_counter()
        out = self.child(self.spec(w, None, CALIB_FRACTION, tag))
        rec = {"workload": w, "policy": UNLIMITED, "cache_fraction": None, "repeat": rep,
               "ok": bool(out.get("ok")), "error": out.get("error"),
               "jct_s": out.get("jct_s"), "startup_s": out.get("startup_s"),
               "wall_s": time.perf_counter() - t0,
               "checksum": out.get("checksum"), "reference_checksum": cal["checksum"],
               "spark_memory_fraction": CALIB_FRACTION,
               "storage_bytes_per_executor": out.get("storage_bytes_per_executor"),
               "log": out.get("log"), **metrics_fields(out),
               "stages_file": self.stages_file(tag, out)}
        rec["checksum_ok"] = rec["ok"] and rec["checksum"] == cal["checksum"]
        rec["status"] = "ok" if rec["checksum_ok"] else ("checksum mismatch" if rec["ok"] else "error")
        return rec

    def simulate(self, w: str, cal: dict) -> list[dict]:
        s, t = self.settings, self.target
        return calibration_rows(w, cal["trace"], s.fractions, s.policies, s.refs, t.executors,
                                t.cores, threshold_of(t.conf), t.conf)

    def run(self) -> int:
        """Every phase, in order; 1 when a run failed, after writing the report that says which."""
        from tqdm import tqdm

        s = self.settings
        total = len(s.workloads) * (2 + len(s.fractions) * s.repeat * len(s.policies)
                                    + (s.repeat if s.unlimited else 0))
        self.save()
        try:
            with tqdm(total=total, unit="run", dynamic_ncols=True) as bar:
                for w in s.workloads:
                    cal = self.calibrate(w, bar)
                    self.results["calibration"][w] = cal
                    self.save()
                    for f, rep, pol in schedule(s.policies, s.fractions, s.repeat, s.unlimited):
                        where = "unlimited" if f is None else f"F={fkey(f)}"
                        bar.set_description(f"{w} {where} r{rep} {pol}")
                        rec = (self.run_unlimited(w, rep, cal) if pol == UNLIMITED
                               else self.run_one(w, f, rep, pol, cal))
                        self.results["runs"].append(rec)
                        self.save()
                        bar.update(1)
                        if rec["status"] != "ok":
                            tqdm.write(f"FAILED {w} {where} r{rep} {pol}: "
                                       f"{rec['status']} {rec.get('error') or ''}")
                    if s.simulate:
                        bar.set_description(f"simulate {w}")
                        self.results["sim"].extend(self.simulate(w, cal))
                        self.save()
        finally:
            self.results["machine"]["load_avg_end"] = machine.load_average()
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
