"""Helpers for the shim's Spark tests (real SparkSessions, no mocks): sessions that carry the
shim jar, an event collector over LrcBridge, and the eviction-pressure scenario."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager


from spark_plugin.bridge import drain_lines

from .build import jar_path

PLUGIN = "org.sparklrc.LrcPlugin"
LISTENER = "org.sparklrc.LrcListener"

# Storage = spark.testing.memory * spark.memory.fraction = 4 MiB, the same on every executor.
PRESSURE_CONF = {
    "spark.testing.memory": str(8 << 20),
    "spark.testing.reservedMemory": "0",
    "spark.memory.fraction": "0.5",
    "spark.storage.unrollMemoryThreshold": "65536",
    "spark.cleaner.referenceTracking": "false",
}


def _jvm_has(classes: tuple[str, ...]) -> bool:
    from py4j.java_gateway import JavaClass
    from pyspark import SparkContext

    gw = SparkContext._gateway
    if gw is None:
        return True
    for name in classes:
        handle = gw.jvm
        for part in name.split("."):
            handle = getattr(handle, part)
        if not isinstance(handle, JavaClass):
            return False
    return True


def restart_jvm_if_needed(classes: tuple[str, ...] = ("org.sparklrc.LrcBridge",)) -> None:
    """spark.jars reaches the driver's class loader only when the JVM starts: if this Python
    process already runs a JVM that lacks one of `classes` (the shim's bridge by default), stop it
    so the next session launches a new one."""
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    if not _jvm_has(classes):
        stop_jvm()


def stop_jvm() -> None:
    """Stop this process's py4j JVM (the next session launches a new one): a JVM keeps the confs
    it was launched with as system properties, which later sessions inherit."""
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    gw = SparkContext._gateway
    if gw is None:
        return
    proc = getattr(gw, "proc", None)
    try:
        gw.shutdown()
    finally:
        if proc is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=20)
            except Exception:  # noqa: BLE001 - best effort
                proc.kill()
        SparkContext._gateway = None
        SparkContext._jvm = None


def session(master: str, conf: dict[str, str], plugin: bool = True, listener_only: bool = False,
            app_name: str = "shim-test"):
    """A SparkSession with the shim jar: the plugin, or only the listener (plain Spark storage)."""
    from pyspark.sql import SparkSession

    restart_jvm_if_needed()
    # Confs given at JVM launch become system properties that later SparkConfs of the same JVM
    # inherit: set every key these tests vary explicitly.
    # Confs of earlier sessions leak through JVM system properties: set ours explicitly. No
    # Python brain here: these tests read the shim's events themselves, and publish the tables
    # whose eviction order they check: no admission (on by default under crd) unless asked.
    full = {"spark.lrc.forceInstallFailure": "false", "spark.lrc.entriesField": "entries",
            "spark.lrc.brain": "false", "spark.lrc.admit": "false"}
    full.update(conf)
    full["spark.jars"] = str(jar_path())
    full["spark.plugins"] = PLUGIN if plugin else ""
    full["spark.extraListeners"] = LISTENER if listener_only else ""
    b = SparkSession.builder.master(master).appName(app_name)
    for k, v in full.items():
        b = b.config(k, v)
    return b.getOrCreate()


def bridge(spark):
    return spark.sparkContext._jvm.org.sparklrc.LrcBridge


class Events:
    """Collects LrcBridge events; `wait_for` drains until a predicate over all events holds."""

    def __init__(self, spark):
        self.b = bridge(spark)
        self.all: list[dict] = []

    def drain(self) -> list[dict]:
        new = []
        while True:  # one reply holds at most EventBuffer.MAX_REPLY_CHARS: drain until empty
            lines = drain_lines(lambda n, _w: self.b.drain(n), 100000)
            if not lines:
                break
            new += [json.loads(line) for line in lines if line.strip()]
        self.all.extend(new)
        return new

    def clear(self) -> None:
        self.drain()
        self.all = []

    def wait_for(self, pred: Callable[[list[dict]], bool], timeout: float = 20.0) -> list[dict]:
        deadline = time.time() + timeout
        while True:
            self.drain()
            if pred(self.all):
                return self.all
            if time.time() > deadline:
                raise AssertionError(f"events never satisfied the condition; got {len(self.all)}:"
                                     f" {[e['e'] for e in self.all][-40:]}")
            time.sleep(0.05)

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.all if e["e"] == kind]


def seeded_blocks(sc, n_parts: int, seed: int, nbytes: int):
    """An RDD of one incompressible, reproducible `nbytes` record per partition, cached."""

    def gen(idx: int, _it: Iterable):
        import random

        yield random.Random(seed * 1000 + idx).randbytes(nbytes)

    return sc.parallelize(range(n_parts), n_parts).mapPartitionsWithIndex(gen).cache()


@contextmanager
def running(action: Callable[[], object]) -> Iterator[None]:
    """`action` (a Spark action) running in a thread for the length of the block: what a test
    does there happens while its job runs."""
    t = threading.Thread(target=action)
    t.start()
    try:
        yield
    finally:
        t.join()


def job_done(job_count: int) -> Callable[[list[dict]], bool]:
    return lambda evs: sum(1 for e in evs if e["e"] == "job_end") >= job_count


def until_job_end(events: list[dict], k: int) -> list[dict]:
    """The events up to and including the k-th job_end (1-based)."""
    seen = 0
    for i, e in enumerate(events):
        if e["e"] == "job_end":
            seen += 1
            if seen == k:
                return events[: i + 1]
    raise AssertionError(f"only {seen} job_end events, wanted {k}")


def evicted_blocks(events: list[dict], rdd_id: int, executor: str | None = None) -> list[str]:
    """Blocks of `rdd_id` dropped from memory (block events with level NONE), in order."""
    prefix = f"rdd_{rdd_id}_"
    return [e["block"] for e in events
            if e["e"] == "block" and e["level"] == "NONE" and e["block"].startswith(prefix)
            and (executor is None or e["executor"] == executor)]


def cached_order(events: list[dict], rdd_id: int, executor: str | None = None) -> list[str]:
    prefix = f"rdd_{rdd_id}_"
    return [e["block"] for e in events
            if e["e"] == "block" and e["level"] != "NONE" and e["block"].startswith(prefix)
            and (executor is None or e["executor"] == executor)]


def expected_digests(n_parts: int, seed: int, nbytes: int) -> list[str]:
    """What `seeded_blocks(...).map(sha256)` must return, computed without Spark."""
    import hashlib
    import random

    return [hashlib.sha256(random.Random(seed * 1000 + i).randbytes(nbytes)).hexdigest()
            for i in range(n_parts)]


def digests(rdd) -> list[str]:
    import hashlib

    return rdd.map(lambda b: hashlib.sha256(b).hexdigest()).collect()


def pressure_scenario(spark, n_a: int, n_b: int, nbytes: int = 600_000,
                      before_b: Callable | None = None) -> dict:
    """Cache A (n_a blocks), then B (n_b blocks): B's puts must evict A's blocks. Returns the RDD
    ids and the digests of both (read back after the pressure: evicted blocks are recomputed)."""
    sc = spark.sparkContext
    a = seeded_blocks(sc, n_a, 1, nbytes)
    a.count()
    if before_b is not None:
        before_b(a)
    b = seeded_blocks(sc, n_b, 2, nbytes)
    b.count()
    out = {"a": a.id(), "b": b.id(), "digests_b": digests(b), "digests_a": digests(a)}
    a.unpersist(blocking=True)
    b.unpersist(blocking=True)
    return out


class FakeBrain:
    """Stands in for the Python brain: attached, and on every job start publishes a table (from
    `plan(job_start_event)`: (rddArrays, plannedStagesCsv) or None) for that job's stages.
    `keep_buffered`: its events start with what the shim buffered before (e.g. executors that
    registered before the brain attached), else with the brain."""

    def __init__(self, spark, plan: Callable[[dict], tuple[str, str] | None],
                 keep_buffered: bool = False):
        import threading

        self.b = bridge(spark)
        self.events = Events(spark)
        self.plan = plan
        self.keep_buffered = keep_buffered
        self.published: list[tuple[int, str, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-brain", daemon=True)

    def __enter__(self):
        if not self.keep_buffered:
            self.events.clear()
        self.b.attachBrain()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)
        self.b.detachBrain()
        self.events.drain()

    def _run(self):
        while not self._stop.is_set():
            for e in self.events.drain():
                if e["e"] == "job_start":
                    r = self.plan(e)
                    if r is not None:
                        version = int(self.b.tableVersion()) + 1
                        self.b.publish(version, r[0], r[1])
                        self.published.append((version, r[0], r[1]))
            time.sleep(0.01)
