"""A trace -> a Spark event log (JsonProtocol lines): event logs of any size without running Spark.

Why: the what-if path must be measured on logs of 100,000 tasks and more, which this machine
cannot produce with Spark in a test's time, and its parser must be exercised on logs whose truth
is known. The writer emits what ``lrc.eventlog`` reads, with Spark's field names: a resource
profile per GPU amount of the GPU stages, job starts with each stage's "RDD Info" (the stage's
narrow lineage, its final RDD first; parents listed by id, so a parent outside the stage is a
shuffle) and its "Resource Profile Id", stage submissions and completions (a submission after the
first is the stage's next attempt, with the number of partitions it computes), one successful task
end per task event (duration from the trace, 1 ms when it has none; its input metrics count the
bytes of the cached blocks it read, as Spark's do), block updates for the cached
blocks a task creates (``block_updates=True``, like ``spark.eventLog.logBlockUpdates.enabled``),
unpersists and job ends, between a log start and an application end.

Exact dependency mappings (ranges, explicit partition maps) do not survive: an event log does not
carry them either, and the reader applies Spark's rules to what it does carry.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from lrc.dag import AppDAG, block_name
from lrc.trace import Trace

SPARK_VERSION = "4.3.0-lrc-synthetic"
_MEMORY = {"Use Disk": False, "Use Memory": True, "Use Off Heap": False, "Deserialized": True,
           "Replication": 1}
_DISK_AND_MEMORY = {**_MEMORY, "Use Disk": True}
_NONE = {"Use Disk": False, "Use Memory": False, "Use Off Heap": False, "Deserialized": False,
         "Replication": 1}


def _level(dag: AppDAG, rdd_id: int) -> dict:
    r = dag.rdds[rdd_id]
    if not r.cached:
        return _NONE
    return _DISK_AND_MEMORY if "DISK" in r.storage_level else _MEMORY


def _stage_rdds(dag: AppDAG, final: int) -> list[int]:
    """The stage's RDDs: its final RDD first, then its narrow lineage (shuffles end it)."""
    out, seen, todo = [], {final}, [final]
    while todo:
        rid = todo.pop(0)
        out.append(rid)
        for d in dag.rdds[rid].deps:
            if d.kind != "shuffle" and d.parent not in seen:
                seen.add(d.parent)
                todo.append(d.parent)
    return out


def _profiles(dag: AppDAG) -> dict[float, int]:
    """A resource profile id per GPU amount of the DAG's GPU stages (0: Spark's default)."""
    return {g: i + 1 for i, g in enumerate(sorted({s.gpus for s in dag.stages.values() if s.gpus}))}


def _stage_info(dag: AppDAG, sid: int, profiles: dict[float, int]) -> dict:
    s = dag.stages[sid]
    infos = []
    for rid in _stage_rdds(dag, s.rdd_id):
        r = dag.rdds[rid]
        infos.append({"RDD ID": rid, "Name": r.name or f"rdd{rid}", "Callsite": f"synthetic:{rid}",
                      "Parent IDs": [d.parent for d in r.deps], "Storage Level": _level(dag, rid),
                      "Number of Partitions": r.num_partitions})
    return {"Stage ID": sid, "Stage Attempt ID": 0, "Stage Name": f"stage {sid}",
            "Number of Tasks": s.num_tasks, "RDD Info": infos, "Parent IDs": list(s.parent_ids),
            "Resource Profile Id": profiles.get(s.gpus, 0)}


def event_lines(trace: Trace, block_updates: bool = True) -> Iterator[str]:
    """The event log's lines, in the trace's event order."""
    dag, clock, task_id = trace.dag, 1_700_000_000_000, 0
    dumps = json.dumps
    yield dumps({"Event": "SparkListenerLogStart", "Spark Version": SPARK_VERSION})
    yield dumps({"Event": "SparkListenerApplicationStart", "App Name": trace.name or "synthetic",
                 "App ID": "app-synthetic", "Timestamp": clock, "User": "lrc"})
    profiles = _profiles(dag)
    for gpus, pid in profiles.items():  # GPU stages: stage-level scheduling's profiles
        yield dumps({"Event": "SparkListenerResourceProfileAdded", "Resource Profile Id": pid,
                     "Executor Resource Requests": {"gpu": {
                         "Resource Name": "gpu", "Amount": max(1, round(gpus)),
                         "Discovery Script": "", "Vendor": ""}},
                     "Task Resource Requests": {"gpu": {"Resource Name": "gpu", "Amount": gpus}}})
    attempts: dict[int, int] = {}  # stage -> its latest attempt (a trace's reruns)
    for ev in trace.events:
        k = ev.kind
        if k == "job_start":
            job = dag.jobs[ev.job_id]
            yield dumps({"Event": "SparkListenerJobStart", "Job ID": ev.job_id,
                         "Submission Time": clock,
                         "Stage Infos": [_stage_info(dag, s, profiles) for s in job.stage_ids],
                         "Stage IDs": list(job.stage_ids)})
        elif k == "stage_submitted":
            attempt = attempts[ev.stage_id] = attempts.get(ev.stage_id, -1) + 1
            info = {"Stage ID": ev.stage_id, "Stage Attempt ID": attempt}
            if ev.partitions is not None:  # (an attempt on part of its stage)
                info["Number of Tasks"] = len(ev.partitions)
            yield dumps({"Event": "SparkListenerStageSubmitted", "Stage Info": info})
        elif k == "stage_completed":
            yield dumps({"Event": "SparkListenerStageCompleted", "Stage Info": {
                "Stage ID": ev.stage_id, "Stage Attempt ID": attempts.get(ev.stage_id, 0)}})
        elif k == "task":
            ms = max(1, round((ev.duration_s or 0.0) * 1000))
            task_id += 1
            executor = ev.executor or "0"
            yield dumps({"Event": "SparkListenerTaskEnd", "Stage ID": ev.stage_id,
                         "Stage Attempt ID": attempts.get(ev.stage_id, 0), "Task Type": "ResultTask",
                         "Task End Reason": {"Reason": "Success"},
                         "Task Info": {"Task ID": task_id, "Index": ev.partition, "Attempt": 0,
                                       "Partition ID": ev.partition, "Launch Time": clock,
                                       "Executor ID": executor, "Finish Time": clock + ms,
                                       "Failed": False, "Killed": False},
                         "Task Metrics": {"Executor Run Time": ms, "Input Metrics": {
                             "Bytes Read": sum(max(1, dag.rdds[r].size(p)) for r, p in ev.reads),
                             "Records Read": 0}}})
            clock += ms
            if block_updates:
                for rid, p in ev.creates:
                    r = dag.rdds[rid]
                    yield dumps({"Event": "SparkListenerBlockUpdated", "Block Updated Info": {
                        "Block Manager ID": {"Executor ID": executor, "Host": "localhost",
                                             "Port": 7337},
                        "Block ID": block_name((rid, p)), "Storage Level": _level(dag, rid),
                        "Memory Size": max(1, r.size(p)), "Disk Size": 0}})
        elif k == "unpersist":
            yield dumps({"Event": "SparkListenerUnpersistRDD", "RDD ID": ev.rdd_id})
        elif k == "job_end":
            yield dumps({"Event": "SparkListenerJobEnd", "Job ID": ev.job_id,
                         "Completion Time": clock, "Job Result": {"Result": "JobSucceeded"}})
    yield dumps({"Event": "SparkListenerApplicationEnd", "Timestamp": clock})


def write_eventlog(trace: Trace, path: str | Path, block_updates: bool = True) -> Path:
    """Writes ``trace`` as an uncompressed single-file event log at ``path``."""
    path = Path(path)
    with open(path, "w") as f:
        for line in event_lines(trace, block_updates):
            f.write(line)
            f.write("\n")
    return path
