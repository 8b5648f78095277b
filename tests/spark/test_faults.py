"""Faults of the brain on real Spark (issue 14): a brain whose thread dies without a word, and
one whose event handling raises. Either way executors go back to Spark's LRU order (the table
is cleared, executors are told no plans will come and receive the cleared version), once, with a
warning that says why, and every job returns what plain Spark returns.

The silent death is caught by the driver's watchdog (spark.lrc.brainTimeoutMs without a drain
while events wait); the raising brain falls back itself, at once."""
from __future__ import annotations

import json
import time

import pytest

from spark_plugin.bridge import drain_lines
from spark_plugin.doctor import start_session
from spark_plugin.session import active_brain

pytestmark = pytest.mark.spark
N, PARTS = 8000, 8


def wait_until(pred, what: str, timeout: float = 30.0):
    deadline = time.time() + timeout
    while not (value := pred()):
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return value


def applied_versions(bridge) -> dict[str, int]:
    """Highest table version each executor reported applied, from the (brainless) event buffer."""
    out: dict[str, int] = {}
    for line in drain_lines(lambda n, _w: bridge.drain(n), 100000):
        e = json.loads(line)
        if e["e"] == "table_applied":
            out[e["executor"]] = max(out.get(e["executor"], 0), e["version"])
    return out


def stop_silently(brain) -> None:
    """The brain's thread ends without detaching or clearing anything: a killed brain."""
    brain._stop.set()
    brain._thread.join(10)
    assert not brain._thread.is_alive()


def raise_on_next_event(brain) -> None:
    def boom(line: str) -> None:
        raise RuntimeError("injected fault in the brain")

    brain._handle = boom


@pytest.mark.parametrize("master, fault", [
    pytest.param("local-cluster[2,1,1024]", stop_silently, marks=pytest.mark.cluster, id="silent"),
    pytest.param("local[2]", raise_on_next_event, id="raising"),
])
def test_a_brain_that_fails_is_replaced_by_spark_lru_and_results_do_not_change(master, fault):
    spark = start_session(master, "lrc", {"spark.lrc.brainTimeoutMs": "1500"})
    try:
        sc = spark.sparkContext
        bridge = sc._jvm.org.sparklrc.LrcBridge
        a = sc.parallelize(range(N), PARTS).map(lambda x: (x % 7, x)).cache()
        b = a.mapValues(lambda x: 2 * x).cache()
        assert b.count() == N
        assert b.values().sum() == 2 * sum(range(N))  # a job that reads b: b gets priorities
        brain = active_brain()
        brain.sync()
        wait_until(lambda: str(b.id()) in bridge.tableRdds().split(","), "b's priorities in the table")
        before = bridge.tableVersion()
        assert bridge.brainAttached()

        fault(brain)
        # jobs go on, their events wait for a brain that no longer takes them
        assert a.values().sum() == sum(range(N))
        wait_until(lambda: not bridge.brainAttached(), "the fallback to LRU")
        assert bridge.tableRdds() == "", "every priority cleared: Spark's LRU order"
        cleared = bridge.tableVersion()
        assert cleared > before
        # both executors (one in local mode) got the cleared version
        executors = 2 if master.startswith("local-cluster") else 1
        seen: dict[str, int] = {}
        def all_applied():
            for ex, v in applied_versions(bridge).items():
                seen[ex] = max(seen.get(ex, 0), v)
            return len([v for v in seen.values() if v >= cleared]) >= executors
        b.values().sum()  # a task asks for the table if no push reached it yet
        wait_until(all_applied, f"executors applying table version {cleared}: {seen}")

        # the same answers as plain Spark, also after the fallback
        assert b.values().sum() == 2 * sum(range(N))
        assert sorted(b.reduceByKey(lambda x, y: x + y).collect()) == sorted(
            (k, 2 * sum(x for x in range(N) if x % 7 == k)) for k in range(7))
        if fault is stop_silently:  # the driver's watchdog said why, once
            said = [w for w in str(bridge.warnings()).splitlines() if "has taken no events" in w]
            assert len(said) == 1, bridge.warnings()
        else:  # the brain fell back itself, saying why
            assert "injected fault" in brain.stats()["degraded"]
    finally:
        spark.stop()


def test_a_full_event_buffer_is_a_warning_and_lru_never_silently_wrong_counts():
    """The brain is held while a job runs (its consumer lock), so the JVM's buffer of 20 events
    overflows: the brain then clears the table and detaches, saying how many events it lost."""
    spark = start_session("local[2]", "lrc", {"spark.lrc.bufferSize": "20"})
    try:
        sc = spark.sparkContext
        bridge = sc._jvm.org.sparklrc.LrcBridge
        a = sc.parallelize(range(N), PARTS).cache()
        assert a.count() == N
        brain = active_brain()
        with brain._consume:  # the brain cannot drain while the job's events arrive
            assert sc.parallelize(range(N), 32).map(lambda x: x + 1).sum() == sum(range(1, N + 1))
            wait_until(lambda: bridge.dropped() > 0, "the buffer to overflow")
        wait_until(lambda: not bridge.brainAttached(), "the fallback to LRU")
        assert bridge.tableRdds() == ""
        degraded = brain.stats()["degraded"]
        assert "events were dropped" in degraded and "spark.lrc.bufferSize" in degraded, degraded
        assert a.sum() == sum(range(N))  # and results stay right
    finally:
        spark.stop()
