"""The brain's publishing cadence, driven by event lines in the shim's wire format (no JVM).

Plans of new jobs must go out at once (executors may be waiting for them); count changes from task
ends are coalesced to at most one publish per `spark.lrc.publishMs`; close() (the application has
ended) applies the last events but publishes nothing.
The bridge here only records what the brain sends: the table's effect on Spark is tested against
real executors in tests/spark.
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from spark_plugin.brain import Brain
from spark_plugin.config import LrcSettings


class RecordingBridge:
    """The JvmBridge surface the brain uses, fed from a list and recording publishes."""

    def __init__(self):
        self.pending: list[str] = []
        self.published: list[tuple[int, str, str]] = []

    def drain(self, max_events: int = 10_000, wait_ms: int = 0, linger_ms: int = 0) -> list[str]:
        out, self.pending = self.pending, []
        return out

    def spark_conf(self) -> dict[str, str]:
        return {"spark.storage.unrollMemoryThreshold": "65536"}

    def publish(self, version: int, arrays: str, stages: str, moves: str | None = None) -> None:
        self.published.append((version, arrays, stages))

    def attach_brain(self) -> None: ...
    def detach_brain(self) -> None: ...
    def task_ends_urgent(self, urgent: bool) -> None: ...
    def dropped(self) -> int: return 0
    def plugin_cpu(self) -> dict: return {}


def apply(table: dict[int, list[float]], arrays: str) -> dict[int, list[float]]:
    """What the JVM's TableCodec makes of a publish (`wire` module docstring): the new table."""
    table = {k: list(v) for k, v in table.items()}
    for item in filter(None, arrays.split(";")):
        if "@" in item:
            rdd, changes = item.split("@")
            row = table.setdefault(int(rdd), [])
            for c in changes.split(","):
                part, prio = c.split(":")
                row.extend([0.0] * (int(part) + 1 - len(row)))
                row[int(part)] = float(prio)
        else:
            rdd, vals = item.split("=")
            table[int(rdd)] = [float(x) for x in vals.split(",")] if vals else []
    return table


def job_start(job: int, stage: int, cached_rdd: int, reader: int, parts: int = 4) -> str:
    """One job whose single stage reads cached RDD `cached_rdd` through RDD `reader`."""
    return json.dumps({"e": "job_start", "job": job, "time": int(time.time() * 1000), "received": 0, "sent": 0,
                       "stage_ids": [stage], "stages": [{
        "stage": stage, "attempt": 0, "rdd": reader, "tasks": parts, "parents": [], "shuffle": -1,
        "rdd_ids": [cached_rdd, reader], "rdds": [
            {"id": cached_rdd, "name": "c", "callsite": "", "parts": parts, "level": "MEMORY_ONLY",
             "cached": True, "parents": []},
            {"id": reader, "name": "r", "callsite": "", "parts": parts, "level": "NONE",
             "cached": False, "parents": [cached_rdd],
             "deps": [{"parent": cached_rdd, "kind": "one_to_one", "in_start": 0, "out_start": 0,
                       "length": 0, "map": []}]}]}]})


def task_end(stage: int, part: int) -> str:
    return json.dumps({"e": "task_end", "stage": stage, "attempt": 0, "partition": part,
                       "executor": "1", "task": part, "success": True, "duration_ms": 1,
                       "exec_mem": 0})


def cached(rdd: int, part: int) -> str:
    return json.dumps({"e": "block", "executor": "1", "block": f"rdd_{rdd}_{part}",
                       "level": "MEMORY_ONLY", "mem": 1000, "disk": 0, "time": 0})


def brain(publish_ms: int) -> tuple[Brain, RecordingBridge]:
    """A brain that has seen job 0 cache RDD 1 (4 blocks) and job 1 start reading it (stage 1)."""
    bridge = RecordingBridge()
    b = Brain(bridge, LrcSettings.from_conf(policy="lrc", publish_ms=publish_ms))
    bridge.pending = ([job_start(0, 0, cached_rdd=1, reader=2)]
                      + [line for p in range(4) for line in (cached(1, p), task_end(0, p))]
                      + [json.dumps({"e": "job_end", "job": 0, "time": 0, "success": True})])
    b.step(force=True)
    bridge.published.clear()
    return b, bridge


def test_new_job_plan_is_published_at_once_and_task_ends_are_coalesced():
    b, bridge = brain(publish_ms=60_000)  # no count change is due within this test
    bridge.pending = [job_start(1, 1, cached_rdd=1, reader=3)]
    b.step()
    assert len(bridge.published) == 1, "a new job's plan must not wait for publishMs"
    _, arrays, stages = bridge.published[0]
    assert stages == "1" and arrays == "1=1,1,1,1", bridge.published
    # job 2 reads RDD 1 too: job 1's task ends leave every block a read to come (a task end
    # that leaves a cached block none is published at once: test_pressure.py)
    bridge.pending = [job_start(2, 2, cached_rdd=1, reader=4)]
    b.step()
    assert len(bridge.published) == 2
    table = apply(apply({}, arrays), bridge.published[1][1])
    assert table == {1: [2, 2, 2, 2]}, bridge.published
    for p in range(4):
        bridge.pending = [task_end(1, p)]
        b.step()
    assert len(bridge.published) == 2, "count changes within publishMs must be coalesced"
    b.step(force=True)
    assert len(bridge.published) == 3, "a forced step must flush the pending count changes"
    assert bridge.published[-1][1] == "1@0:1,1:1,2:1,3:1", "only changed partitions go out"
    assert apply(table, bridge.published[-1][1]) == {1: [1, 1, 1, 1]}
    bridge.pending = [task_end(2, 0)]
    stats = b.close()  # after the application ended: events still counted, nothing published
    assert len(bridge.published) == 3 and stats["table_version"] == bridge.published[-1][0]


def test_count_changes_go_out_once_publish_ms_has_passed():
    b, bridge = brain(publish_ms=50)
    bridge.pending = [job_start(1, 1, cached_rdd=1, reader=3), job_start(2, 2, cached_rdd=1,
                                                                          reader=4)]
    b.step()
    bridge.pending = [task_end(1, 0)]  # (job 2 still reads the block)
    b.step()
    assert len(bridge.published) == 1
    time.sleep(0.06)
    b.step()  # no new events, but changes are pending and due
    assert len(bridge.published) == 2
    assert bridge.published[-1][1] == "1@0:1", bridge.published
    assert apply({1: [2, 2, 2, 2]}, bridge.published[-1][1]) == {1: [1, 2, 2, 2]}
    b.step()
    assert len(bridge.published) == 2, "nothing new: no publish"


def test_a_malformed_event_is_logged_naming_its_field_and_the_next_ones_still_apply(caplog, capsys):
    b, bridge = brain(publish_ms=60_000)
    bad = json.loads(task_end(0, 0))
    bad["partition"] = "zero"
    bridge.pending = [json.dumps(bad), job_start(1, 1, cached_rdd=1, reader=3)]
    with caplog.at_level(logging.WARNING, logger="spark_lrc"):
        b.step()
    assert "task_end.partition: expected int, got 'zero'" in caplog.text
    assert len(bridge.published) == 1, "the job after the bad event must still be planned"
    assert capsys.readouterr().out == ""


def test_every_event_of_the_committed_jvm_fixture_applies_without_a_warning(caplog, tmp_path):
    lines = (Path(__file__).parents[1] / "fixtures" / "events.jsonl").read_text().splitlines()
    bridge = RecordingBridge()
    bridge.pending = list(lines)
    b = Brain(bridge, LrcSettings.from_conf(policy="lerc", trace_path=str(tmp_path / "t.parquet")))
    with caplog.at_level(logging.WARNING, logger="spark_lrc"):
        assert b.step(force=True) == len(lines)
    assert not caplog.records, caplog.text
    kinds = {e.kind for e in b.recorder.events}
    assert kinds >= {"job_start", "stage_submitted", "task", "stage_completed", "job_end",
                     "unpersist"}
    s = b.stats()
    events = [json.loads(line) for line in lines]
    plugin = next(e["executor"] for e in events if e["e"] == "executor_plugin")
    assert s["executors"][plugin]["installed"] is True
    assert s["eviction_reasons"]["order"] == {"priority": 1}
    alive = ({e["executor"] for e in events if e["e"] == "executor_added"}
             - {e["executor"] for e in events if e["e"] == "executor_removed"})
    assert s["executor_wait_ms"]["count"] == 1 and set(b.executors) == alive


def test_a_failed_publish_loses_no_event_and_its_rdds_go_out_with_the_next_one():
    b, bridge = brain(publish_ms=0)
    publish = bridge.publish

    def broken(*args):
        raise RuntimeError("driver plugin stopped")

    bridge.publish = broken
    bridge.pending = [job_start(1, 1, cached_rdd=1, reader=3), task_end(1, 0)]
    b.step()  # the plan's publish fails: logged, the batch is still applied
    assert b.planner.priority((1, 0)) == 0 and b.planner.priority((1, 1)) == 1
    bridge.publish = publish
    b.step()  # no new event: what the failed publish carried goes out now
    assert len(bridge.published) == 1, bridge.published
    _, arrays, stages = bridge.published[0]
    assert arrays == "1=0,1,1,1" and stages == "1", bridge.published


def test_a_plan_is_in_force_once_a_later_version_without_plans_is_applied():
    """crd publishes a version per task end: an executor whose one answer holds the plan's version
    and a later one applies only the later one, and that puts the plan in force. (Before, only
    versions carrying plans were timed, so such a job waited for the next job's plan: the 1-2 s
    `in_force` of crd on SVD++.)"""
    b, bridge = brain(publish_ms=0)
    bridge.pending = [json.dumps({"e": "executor_plugin", "executor": "1", "installed": True,
                                  "error": ""}), job_start(1, 1, cached_rdd=1, reader=3)]
    b.step()
    bridge.pending = [task_end(1, 0)]
    b.step()
    (plan, _, stages), (counts, _, no_stages) = bridge.published
    assert stages == "1" and no_stages == "" and counts > plan
    bridge.pending = [json.dumps({"e": "table_applied", "executor": "1", "version": counts,
                                  "lag_ms": 1.0})]
    b.step()
    assert b.stats()["in_force_ms"]["count"] == 2  # jobs 0 and 1: both plans are in force
