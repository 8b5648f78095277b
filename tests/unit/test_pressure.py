"""Count changes wait while no executor's cache is under memory pressure (spark_plugin.pressure):
the judgement from Spark's reports, and the brain's publishes and task-end urgency following it.
The bridge only records; the JVM's side (task ends lingering) is tested in tests/spark."""
from __future__ import annotations

import json

import pytest

from spark_plugin import pressure
from spark_plugin.brain import Brain
from spark_plugin.config import LrcSettings
from spark_plugin.pressure import EVICTED_RECENTLY_S, MemoryPressure

from test_brain_publish import RecordingBridge, apply, job_start, task_end


class UrgencyBridge(RecordingBridge):
    def __init__(self):
        super().__init__()
        self.urgent: list[bool] = []

    def task_ends_urgent(self, urgent: bool) -> None:
        self.urgent.append(urgent)


def block(executor: str, name: str, mem: int, level: str = "MEMORY_ONLY") -> str:
    return json.dumps({"e": "block", "executor": executor, "block": name, "level": level,
                       "mem": mem, "disk": 0, "time": 0})


def manager(executor: str, mem: int) -> str:
    return json.dumps({"e": "block_manager", "executor": executor, "mem": mem})


def feed(b: Brain, *lines: str) -> None:
    """Through the brain's handlers, the path live events take."""
    b.bridge.pending = list(lines)
    b.step()


def test_pressure_from_cached_bytes_against_unified_memory():
    b = Brain(UrgencyBridge(), LrcSettings.from_conf(policy="lrc"))
    p = b.pace.pressure
    assert not p.on(0), "nothing cached: no pressure"
    feed(b, manager("1", 1000), manager("2", 1000), block("1", "rdd_1_0", 300))
    assert not p.on(0)
    feed(b, block("1", "rdd_1_1", 200))
    assert p.on(0), "half of executor 1's unified memory is cached"
    feed(b, block("1", "rdd_1_0", 300, level="NONE"))
    assert not p.on(0), "a removed block's bytes leave the count"
    feed(b, block("1", "rdd_1_1", 600))
    assert p.on(0), "a block stored again counts at its new size, once"
    feed(b, block("1", "rdd_1_1", 0, level="DISK_ONLY"))
    assert not p.on(0), "a block moved to disk leaves memory"
    feed(b, block("3", "rdd_1_2", 1))
    assert p.on(0), "cached blocks on an executor of unknown memory: judged under pressure"
    feed(b, json.dumps({"e": "executor_removed", "executor": "3"}))
    assert not p.on(0), "a lost executor's blocks are gone"


def evicting_report() -> str:
    return json.dumps({"e": "task_cache", "executor": "1", "stage": 0, "partition": 0,
                       "task": 0, "hits": [], "puts": ["rdd_1_0"], "evicted": ["rdd_1_1"],
                       "put_elements": [1], "evictions": [], "table_version": 0,
                       "hooks_cpu_ns": 0, "watch_cpu_ns": 0})


def test_an_eviction_means_pressure_for_a_while():
    p = MemoryPressure()
    p.evicted(100.0)
    assert p.on(100.0) and p.on(100.0 + EVICTED_RECENTLY_S - 1)
    assert not p.on(100.0 + EVICTED_RECENTLY_S + 1)


@pytest.fixture(autouse=True)
def long_relaxed_period(monkeypatch):
    """No test here may depend on how fast it runs: the relaxed period outlasts any of them."""
    monkeypatch.setattr(pressure, "RELAXED_PUBLISH_MS", 600_000)


def started(policy: str = "lrc", publish_ms: int = 0) -> tuple[Brain, UrgencyBridge]:
    """A brain whose job 0 cached RDD 1 (4 blocks of 100 bytes on executor 1, of 1,000 bytes of
    unified memory: no pressure) and job 1 started reading it."""
    bridge = UrgencyBridge()
    b = Brain(bridge, LrcSettings.from_conf(policy=policy, publish_ms=publish_ms))
    bridge.pending = ([manager("1", 1000), job_start(0, 0, cached_rdd=1, reader=2)]
                      + [line for p in range(4) for line in (block("1", f"rdd_1_{p}", 100),
                                                             task_end(0, p))]
                      + [json.dumps({"e": "job_end", "job": 0, "time": 0, "success": True}),
                         job_start(1, 1, cached_rdd=1, reader=3)])
    b.step(force=True)
    bridge.published.clear()
    return b, bridge


def test_without_pressure_count_changes_wait_and_task_ends_do_not_wake_the_brain():
    b, bridge = started()
    assert bridge.urgent == [False], "no pressure: task ends stop being urgent in the JVM"
    for p in range(2):
        bridge.pending = [task_end(1, p)]
        b.step()
    assert bridge.published == [], "count changes wait for the relaxed period"
    assert b.stats()["memory_pressure"] == {"on": False, "switches": 0, "evicting_unpressed": 0}
    bridge.pending = [block("1", "rdd_1_0", 400)]  # 700 of 1,000 bytes cached: pressure
    b.step()
    assert bridge.urgent == [False, True]
    assert len(bridge.published) == 1, "pressure began: what waited goes out at once"
    assert bridge.published[0][1] == "1@0:0,1:0", bridge.published
    bridge.pending = [task_end(1, 2)]
    b.step()
    assert len(bridge.published) == 2 and bridge.published[1][1] == "1@2:0", \
        "under pressure a task end's count change goes out with its batch"
    assert b.stats()["memory_pressure"] == {"on": True, "switches": 1, "evicting_unpressed": 0}


def test_a_new_jobs_plan_and_sync_never_wait_for_the_relaxed_period():
    b, bridge = started()
    bridge.pending = [task_end(1, 0)]
    b.step()
    assert bridge.published == []
    bridge.pending = [job_start(2, 2, cached_rdd=1, reader=4)]
    b.step()
    assert len(bridge.published) == 1 and bridge.published[0][2] == "2", bridge.published
    bridge.pending = [task_end(1, 1)]
    b.sync()
    assert len(bridge.published) == 2, "sync() leaves the table current"


def test_lru_never_changes_task_end_urgency():
    b, bridge = started(policy="lru")
    bridge.pending = [block("1", "rdd_1_0", 900)]
    b.step()
    assert bridge.urgent == [], "under lru task ends are never urgent: nothing to follow"


def test_an_eviction_the_judgement_did_not_foresee_is_counted_and_turns_pressure_on():
    b, bridge = started()
    bridge.pending = [task_end(1, 0), evicting_report()]
    b.step()
    assert b.stats()["memory_pressure"] == {"on": True, "switches": 1, "evicting_unpressed": 1}
    assert bridge.urgent == [False, True] and len(bridge.published) == 1


@pytest.mark.parametrize("policy", ["lrc", "lerc"])  # (no predicted reads keep it alive)
def test_under_pressure_a_block_left_with_no_read_goes_out_before_the_period(policy):
    """publishMs > 0: count changes wait for it, but not a task end that leaves a cached block
    with no read to come: that block is now the first victim. (Without pressure it waits: job
    1's task ends above empty their blocks and publish nothing.)"""
    b, bridge = started(policy, publish_ms=600_000)
    bridge.pending = [block("1", "rdd_1_0", 400), job_start(2, 2, cached_rdd=1, reader=4)]
    b.step()
    assert b.stats()["memory_pressure"]["on"] and len(bridge.published) == 1
    bridge.pending = [task_end(1, 1)]  # job 2 still reads rdd_1_1
    b.step()
    assert len(bridge.published) == 1, "a block still to be read waits for the period"
    bridge.pending = [task_end(2, 1)]  # its last read
    b.step()
    assert len(bridge.published) == 2, "a cached block left with no read goes out at once"
    assert apply({1: [5.0] * 4}, bridge.published[-1][1])[1][1] < 1, bridge.published
