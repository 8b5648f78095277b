"""One benchmark run in a fresh process: the runner calls `run_child`, which starts
`python -m workloads.bench.child SPEC.json OUT.json`, one per run, so that every run gets a fresh
driver JVM: `spark.jars` (the JVM shim) reaches the driver's class loader only when the driver JVM
starts, and PySpark's `SparkConf()` picks up JVM system properties, so confs of one session could
leak into the next one in the same process.

SPEC (JSON): workload, scale, seed, kwargs, master, executors, conf (Spark confs), policy
(null = plugin off), trace_path, stats_path, profile, timeout_s.
OUT (JSON): ok, error, checksum, result, jct_s (the workload's `run()` only), startup_s,
executors (host:port -> max storage bytes at start), storage_bytes_per_executor (min over them),
stats (the plugin's stats JSON, when it ran), spark_metrics (`spark_metrics`: Spark's own task
metrics of the application - run and CPU time, GC, spills, shuffle bytes - totals, per executor and
per stage, read from the driver's status store, which Spark keeps with the UI off), process_cpu
(CPU seconds of the driver's Python process, the driver JVM and the executors, from /proc:
`proc_cpu`).
"""
from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from workloads.bench.proc_cpu import process_cpu
from workloads.cluster import ROOT

# Confs every benchmark session gets (the spec's conf wins).
BASE_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.python.worker.reuse": "true",
    "spark.driver.memory": "1g",
}


def run_child(spec: dict, workdir: Path, timeout: float, env: dict[str, str]) -> dict:
    """Run `spec` in a child process, in its own session (Ctrl-C or a timeout here kills it and
    whatever it started); its OUT, or {"ok": False, "error": ...}, plus the path of its log."""
    workdir.mkdir(parents=True, exist_ok=True)
    fd, spec_path = tempfile.mkstemp(suffix=".json", prefix="spec-", dir=workdir)
    os.close(fd)
    out_path = spec_path.replace("spec-", "out-")
    log_path = spec_path.replace("spec-", "log-").replace(".json", ".log")
    Path(spec_path).write_text(json.dumps(spec))
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "workloads.bench.child", spec_path, out_path],
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


# ---------------------------------------------------------------------- the child's side
def executor_storage(sc) -> dict[str, int]:
    """Max storage memory per executor block manager (the driver's own excluded), as Spark's
    status store reports it: for the UnifiedMemoryManager (heap - 300 MB) x spark.memory.fraction,
    heap being the executor JVM's Runtime.maxMemory(). (Not through SparkEnv's BlockManager:
    py4j's reflection on it needs protobuf classes that are not on the driver's class path.)"""
    summaries = sc._jsc.sc().statusStore().executorList(True)
    out = {}
    for i in range(summaries.size()):
        e = summaries.apply(i)
        if e.id() != "driver" and e.maxMemory() > 0:
            out[str(e.hostPort())] = int(e.maxMemory())
    return out


def wait_for_executors(sc, n: int, timeout: float = 120.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    seen = executor_storage(sc)
    while len(seen) < n and time.monotonic() < deadline:
        time.sleep(0.2)
        seen = executor_storage(sc)
    if len(seen) < n:
        raise RuntimeError(f"only {len(seen)} of {n} executors registered within {timeout:.0f}s")
    return seen


def workload_kwargs(run, spec: dict) -> dict[str, Any]:
    kw = dict(spec.get("kwargs") or {})
    params = inspect.signature(run).parameters
    if "verify" in params and "verify" not in kw and spec.get("verify") is not None:
        kw["verify"] = spec["verify"]
    unknown = set(kw) - set(params)
    if unknown:
        raise ValueError(f"{spec['workload']}: unknown workload arguments {sorted(unknown)}; "
                         f"valid: {sorted(p for p in params if p != 'spark')}")
    return kw


STAGE_FIELDS = {  # per stage, from org.apache.spark.status.api.v1.StageData (times in ms, bytes)
    "tasks": "numCompleteTasks", "failed_tasks": "numFailedTasks",
    "executor_run_time_ms": "executorRunTime", "jvm_gc_time_ms": "jvmGcTime",
    "memory_bytes_spilled": "memoryBytesSpilled", "disk_bytes_spilled": "diskBytesSpilled",
    "shuffle_read_bytes": "shuffleReadBytes", "shuffle_write_bytes": "shuffleWriteBytes",
    "input_bytes": "inputBytes"}


def spark_metrics(sc, wait_ms: int = 5000) -> dict[str, Any]:
    """Spark's own task metrics of this application so far: {"totals": {...}, "executors": {id:
    {gc_time_ms, duration_ms, tasks}}, "stages": [{stage, attempt, name, ...}]}. Read through
    py4j from the driver's AppStatusStore (the REST API's data; it exists with spark.ui.enabled
    false) after the listener bus has caught up with the last task ends."""
    jsc = sc._jsc.sc()
    try:
        jsc.listenerBus().waitUntilEmpty(wait_ms)
    except Exception:  # pragma: no cover - private[spark]; the metrics may miss the last tasks
        pass
    gw = sc._gateway
    store = jsc.statusStore()
    stages = []
    it = store.stageList(None, False, False, gw.new_array(gw.jvm.double, 0),
                         gw.jvm.java.util.ArrayList()).iterator()
    while it.hasNext():
        s = it.next()
        row = {"stage": int(s.stageId()), "attempt": int(s.attemptId()), "name": str(s.name())[:80],
               "status": str(s.status())}
        row.update({k: int(getattr(s, m)()) for k, m in STAGE_FIELDS.items()})
        row["executor_cpu_time_ms"] = int(s.executorCpuTime()) / 1e6  # ns in Spark
        stages.append(row)
    stages.sort(key=lambda r: (r["stage"], r["attempt"]))
    totals: dict[str, Any] = {k: sum(r[k] for r in stages) for k in
                              [*STAGE_FIELDS, "executor_cpu_time_ms"]}
    totals["stages"] = len(stages)
    execs = {}
    it = store.executorList(False).iterator()
    while it.hasNext():
        e = it.next()
        if str(e.id()) != "driver":
            execs[str(e.id())] = {"gc_time_ms": int(e.totalGCTime()),
                                  "duration_ms": int(e.totalDuration()), "tasks": int(e.totalTasks())}
    return {"totals": totals, "executors": execs, "stages": stages}


def execute(spec: dict) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import workloads

    out: dict[str, Any] = {"ok": False, "error": None}
    mod = workloads.get(spec["workload"])
    kw = workload_kwargs(mod.run, spec)
    t0 = time.perf_counter()
    b = SparkSession.builder.master(spec["master"]).appName(
        f"bench-{spec['workload']}-{spec.get('policy') or 'off'}")
    conf = {**BASE_CONF, **(spec.get("conf") or {})}
    extra = [str(j) for j in getattr(mod, "extra_jars", list)()]  # e.g. the GraphX workloads' jar
    if extra:  # on spark.jars before the driver JVM starts (the plugin's configure keeps them)
        have = [j for j in str(conf.get("spark.jars") or "").split(",") if j.strip()]
        conf["spark.jars"] = ",".join(have + [j for j in extra if j not in have])
    for k, v in conf.items():
        b = b.config(k, str(v))
    if spec.get("policy"):
        import spark_plugin

        b = spark_plugin.configure(b, policy=spec["policy"], trace_path=spec.get("trace_path"),
                                   stats_path=spec.get("stats_path"), profile=spec.get("profile"))
    spark = b.getOrCreate()
    try:
        sc = spark.sparkContext
        sc.setLogLevel("ERROR")
        execs = wait_for_executors(sc, int(spec.get("executors") or 2))
        out["executors"] = execs
        out["storage_bytes_per_executor"] = min(execs.values())
        out["startup_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        res = mod.run(spark, scale=int(spec.get("scale") or 1), seed=int(spec.get("seed", 42)), **kw)
        out["jct_s"] = time.perf_counter() - t1
        out["checksum"] = res["checksum"]
        out["result"] = json.loads(json.dumps(res.get("result"), default=str))
        out["ok"] = True
        out["process_cpu"] = process_cpu(sc)  # (None when it cannot tell)
        try:  # diagnostics: never fail a run for them
            out["spark_metrics"] = spark_metrics(sc)
        except Exception as e:  # pragma: no cover - depends on Spark's internals
            out["spark_metrics_error"] = f"{type(e).__name__}: {e}"
    finally:
        spark.stop()  # the brain writes its stats and trace here
    if spec.get("stats_path") and Path(spec["stats_path"]).exists():
        out["stats"] = json.loads(Path(spec["stats_path"]).read_text())
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    spec = json.loads(Path(argv[0]).read_text())
    try:
        out = execute(spec)
    except BaseException as e:  # report, never hang the runner
        out = {"ok": False, "error": f"{type(e).__name__}: {e}",
               "traceback": traceback.format_exc()[-4000:]}
    Path(argv[1]).write_text(json.dumps(out, indent=1, sort_keys=True, default=str))
    return 0 if out.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
