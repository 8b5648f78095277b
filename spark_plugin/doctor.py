"""`python -m spark_plugin doctor`: can spark-lrc control eviction on this machine?

Checks Java, javac and the shim build, then runs a small job on separate executor JVMs under
memory pressure: the ordered map must be installed on every executor, and the blocks evicted
must be those of the RDD nothing will read again (where Spark's LRU would evict the others).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from typing import Any, Callable

KB = 1024
SCENARIO_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.locality.wait": "3s",
    "spark.python.worker.reuse": "true",
}


def start_session(master: str, policy: str | None, extra: dict[str, str] | None = None):
    """A session with 4 MiB of storage per executor, with spark-lrc (`policy`) or plain Spark."""
    from pyspark.sql import SparkSession

    from jvm_shim.testing import PRESSURE_CONF, restart_jvm_if_needed

    from .session import configure

    restart_jvm_if_needed()
    b = SparkSession.builder.master(master).appName(f"spark-lrc-{policy or 'plain'}")
    for k, v in {**SCENARIO_CONF, **PRESSURE_CONF, **(extra or {})}.items():
        b = b.config(k, v)
    if policy is not None:
        # A generous bound: the wait ends when the plan arrives, but a loaded machine may be slow.
        b = configure(b, policy=policy, table_wait_ms=10_000)
    return b.getOrCreate()


def settle(expected_tasks: int, timeout: float = 20.0) -> dict[str, Any]:
    """The brain's stats once every task's executor report has arrived (or the timeout)."""
    from .session import active_brain

    brain = active_brain()
    deadline = time.time() + timeout
    while True:
        brain.sync()
        s = brain.stats()
        if s["tasks"] >= expected_tasks or time.time() > deadline:
            return s
        time.sleep(0.05)


def dead_vs_hot(master: str, policy: str, parts: int = 8, kb: int = 400, fresh_kb: int = 800,
                dead_parts: int | None = None):
    """`hot` is read again by the last job, `dead` never; then `fresh` is cached under pressure.

    LRU evicts the oldest blocks (hot's, cached first); LRC evicts dead's (no references left).
    Only the last job's evictions count: before it, online LRC knows of no reference to `hot`
    (uneven task placement can already press an executor then).
    `dead` gets as many blocks as `hot` by default, so that even with uneven task placement
    every executor has unreferenced blocks to give up.
    Returns (stats plus `rdd_ids` by name, evictions per RDD name in the last job, the last job's
    result).
    """
    dead_parts = parts if dead_parts is None else dead_parts
    from jvm_shim.testing import seeded_blocks

    spark = start_session(master, policy)
    sc = spark.sparkContext
    try:
        hot = seeded_blocks(sc, parts, seed=1, nbytes=kb * KB)
        dead = seeded_blocks(sc, dead_parts, seed=2, nbytes=kb * KB)
        fresh = seeded_blocks(sc, parts // 2, seed=3, nbytes=fresh_kb * KB)
        hot.count()
        dead.count()
        ids = {"hot": hot.id(), "dead": dead.id(), "fresh": fresh.id()}
        tasks = parts + dead_parts
        before = settle(expected_tasks=tasks)["evictions_per_rdd"]
        # One job: its shuffle-map stage computes `fresh` (evicting); its result stage then
        # reads `hot` again. The shuffle makes that order certain.
        shuffled = fresh.map(lambda b: (b[0] % 3, len(b))).reduceByKey(lambda a, b: a + b, 2)
        result = sorted(shuffled.union(hot.map(lambda b: (b[0], -len(b)))).collect())
        stats = settle(expected_tasks=tasks + parts // 2 + 2 + parts)
        after = stats["evictions_per_rdd"]
        per_rdd = {name: after.get(str(rid), 0) - before.get(str(rid), 0) for name, rid in ids.items()}
        return {**stats, "rdd_ids": ids}, per_rdd, result
    finally:
        spark.stop()


def _version(cmd: list[str]) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return (out.stdout + out.stderr).strip().splitlines()[0]


def run(master: str = "local-cluster[2,1,1024]", say: Callable[[str], None] = print) -> bool:
    ok = True

    def check(name: str, fn: Callable[[], str]) -> bool:
        nonlocal ok
        try:
            say(f"  [ok]   {name}: {fn()}")
            return True
        except Exception as e:  # every failure is a finding, never a crash
            ok = False
            say(f"  [FAIL] {name}: {e}")
            return False

    def java() -> str:
        if shutil.which("java") is None:
            raise RuntimeError("java not found: install a JDK 17 (apt-get install openjdk-17-jdk-headless)")
        return _version(["java", "-version"])

    def javac() -> str:
        if shutil.which("javac") is None:
            raise RuntimeError("javac not found: install a JDK 17, not only a JRE "
                               "(apt-get install openjdk-17-jdk-headless)")
        return _version(["javac", "-version"])

    def jar() -> str:
        from jvm_shim import jar_path

        t = time.perf_counter()
        path = jar_path(build=True)
        return f"{path} ({time.perf_counter() - t:.1f} s)"

    def pyspark_version() -> str:
        import pyspark

        return pyspark.__version__

    say("spark-lrc doctor")
    for name, fn in (("java", java), ("javac", javac), ("pyspark", pyspark_version), ("shim jar", jar)):
        check(name, fn)
    if not ok:
        say("verdict: FAIL - fix the items above first")
        return False

    outcome: dict[str, Any] = {}

    def scenario() -> str:
        import os
        from pathlib import Path

        from workloads.cluster import private_spark_home

        # local-cluster workers write work directories under SPARK_HOME: use one of our own.
        os.environ["SPARK_HOME"] = str(private_spark_home(Path.home() / ".cache" / "spark-lrc" / "spark-home"))
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        stats, victims, _ = dead_vs_hot(master, "lrc")
        outcome.update(stats=stats, victims=victims)
        execs = stats["executors"]
        installed = [e for e, v in execs.items() if v["installed"]]
        if len(installed) < 2 or len(installed) != len(execs):
            raise RuntimeError(f"ordered map installed on {len(installed)}/{len(execs)} executors: "
                               + "; ".join(f"{e}: {v['error']}" for e, v in execs.items() if not v["installed"]))
        return f"installed on {len(installed)}/{len(execs)} executors ({master})"

    if check("executor plugin", scenario):
        def obeyed() -> str:
            v = outcome["victims"]
            if v["dead"] == 0 or v["hot"] > 0:
                raise RuntimeError(f"evictions per RDD {v}: expected only the unreferenced RDD's blocks")
            return (f"{v['dead']} blocks of the unreferenced RDD evicted, 0 of the one read next "
                    f"(Spark's LRU would evict those); plan latency median "
                    f"{outcome['stats']['plan_latency_ms']['median']} ms, pushed to executors in "
                    f"{outcome['stats']['push_lag_ms']['median']} ms")

        check("eviction order", obeyed)
    say("verdict: " + ("OK - spark-lrc controls eviction on this machine" if ok
                       else "FAIL - Spark keeps its LRU here; see the items above"))
    return ok


def main() -> None:
    sys.exit(0 if run() else 1)
