"""A task end wakes the brain at once only when its count changes are published at once: under a
count-based policy with `spark.lrc.publishMs` = 0 it ends a lingering drain, so executors get the
new counts before the next tasks evict; with a publish period the brain would hold them back
anyway, so the task end waits in the driver's buffer like other events (`spark.lrc.batchMs`)
instead of costing a py4j round trip each (measured on MLlib:
`results/library/mllib-default-session32/`). The brain turns them off too while no executor's
cache is under memory pressure (`LrcBridge.taskEndsUrgent`, spark_plugin.pressure)."""
from __future__ import annotations

import threading
import time

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import bridge, session, stop_jvm

pytestmark = pytest.mark.spark

WAIT_S = 6.0  # the lingering drain's longest wait; the first task ends well within it
SLOW_TASK_S = 20.0  # the second task: still running when either drain returns (then cancelled)


@pytest.mark.parametrize("publish_ms, relaxed", [(0, False), (500, False), (0, True)],
                         ids=["publish-0", "publish-500", "publish-0-no-pressure"])
def test_a_task_end_ends_a_lingering_drain_only_without_a_publish_period(publish_ms, relaxed):
    spark = session("local[1]", {**BASE_CONF, "spark.lrc.policy": "lrc",
                                 "spark.lrc.publishMs": str(publish_ms)},
                    app_name=f"task-end-wake-{publish_ms}")
    try:
        sc, b = spark.sparkContext, bridge(spark)
        sc._jsc.sc().listenerBus().waitUntilEmpty()
        b.drainWait(100_000, 0, 0, False)  # the session's own events
        if relaxed:
            b.taskEndsUrgent(False)  # what the brain does while no cache is under pressure
        # local[1]: one task after the other (a lambda: the workers cannot import this module)
        rdd = sc.parallelize([1.0, SLOW_TASK_S], 2).map(lambda s: time.sleep(s) or s)
        job = threading.Thread(target=lambda: _swallow(rdd.collect), daemon=True)
        job.start()
        seen = ""
        deadline = time.monotonic() + 60
        while '"e":"job_start"' not in seen and time.monotonic() < deadline:
            seen += b.drainWait(100_000, 1_000, 0, False)  # a job start is urgent either way
        assert '"e":"job_start"' in seen
        t0 = time.monotonic()
        held = b.drainWait(100_000, int(WAIT_S * 1000), 60_000, False)
        waited = time.monotonic() - t0
        sc.cancelAllJobs()
        job.join(timeout=60)
        assert held.count('"e":"task_end"') == 1, held  # the first task's end; the second runs on
        if publish_ms == 0 and not relaxed:
            assert waited < WAIT_S - 0.5, f"{waited:.2f} s: the task end did not end the drain"
        else:
            assert waited >= WAIT_S - 0.1, f"{waited:.2f} s: the task end ended the drain"
    finally:
        stop_jvm()  # the next session must not inherit this JVM's spark.lrc.publishMs


def _swallow(action) -> None:
    try:
        action()
    except Exception:  # noqa: BLE001 - the job is cancelled once the drain has returned
        pass
