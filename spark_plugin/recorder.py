"""Records a live run as an `lrc` trace, the same format the simulator replays.

The recorder keeps only the order of events, block sizes (and the element counts executors
report for deserialized blocks, which the replay's unroll reservation follows) and task
durations; which blocks each task reads or creates is derived from the DAG when the trace is
saved, exactly as the simulator and the planner derive it, so a replay of the recording means
the same thing as the run. The derivation (`lrc.derive`) is shared with `lrc.eventlog`: a Spark
event log of the same run gives the same reads.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

from lrc.dag import AppDAG, Block, Job, parse_block
from lrc.derive import build_trace
from lrc.trace import Event, Trace, save_trace
from lrc.execmem import executor_memory, storage_fraction_of
from lrc.unroll import threshold_of

from . import wire
from .events import job_from_event


log = logging.getLogger("spark_lrc")


def memory_conf(bridge) -> tuple[int | None, float | None]:
    """The run's spark.storage.unrollMemoryThreshold (``lrc.unroll``) and
    spark.memory.storageFraction (``lrc.execmem``; None when unset), for its trace; (None, None),
    with a warning, when the driver's conf cannot be read or holds a malformed value."""
    try:
        conf = bridge.spark_conf()
        return threshold_of(conf), storage_fraction_of(conf)
    except Exception as e:  # the trace is informative: never lose the application for it
        log.warning("spark-lrc: the trace will not carry the run's memory settings: %s", e)
        return None, None


def write_outputs(stats: dict, stats_path: str | None, recorder: "TraceRecorder | None",
                  trace_path: str | None) -> dict:
    """Writes the stats (spark.lrc.statsPath) and the trace (spark.lrc.tracePath) at the end of
    the application; returns ``stats``. A trace that cannot be written is logged, not raised."""
    if stats_path:
        path = Path(stats_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stats, indent=2, sort_keys=True))
    if recorder is not None and trace_path:
        try:
            recorder.save(trace_path)
        except Exception as e:
            log.warning("spark-lrc: could not write the trace to %s: %r", trace_path, e)
    return stats


class TraceRecorder:
    """``unroll_threshold`` and ``storage_fraction``: the run's (``memory_conf``); with the
    executors' memory (their block managers') they let a replay at another memory model the
    run's unroll reservations and execution claims (``lrc.unroll``, ``lrc.execmem``)."""

    def __init__(self, unroll_threshold: int | None = None,
                 storage_fraction: float | None = None) -> None:
        self.unroll_threshold = unroll_threshold  # replays reserve unroll memory as the run did
        self.storage_fraction = storage_fraction
        self.memory: dict[str, int] = {}  # executor -> its unified memory (block manager)
        self.cores: dict[str, int] = {}  # executor -> its task slots (which tasks ran cold)
        self.dag = AppDAG()  # every job's stages and RDDs (the brain's planner forgets ended ones)
        self.events: list[Event] = []
        self.sizes: dict[Block, int] = {}
        self.elements: dict[Block, int] = {}  # values per stored block, where counted
        self.ever_cached: dict[int, str] = {}  # rdd id -> storage level while it was cached

    def event(self, ev: object) -> None:
        """Take one decoded shim event; ignores kinds a trace does not hold."""
        match ev:
            case wire.JobStart():
                job, stages, rdds = job_from_event(ev)  # the stages new in this job start
                for r in rdds:
                    self.dag.add_rdd(r)
                for st in stages:
                    self.dag.add_stage(st)
                # the others were described by earlier job starts (unless events were lost)
                self.dag.add_job(Job(job.id, tuple(s for s in job.stage_ids
                                                   if s in self.dag.stages)))
                for s in ev.stages:
                    for r in s.rdds:
                        if r.cached:
                            self.ever_cached[r.id] = r.level
                self.events.append(Event.job_start(ev.job))
            case wire.StageSubmitted():
                self.events.append(Event.stage_submitted(ev.stage, ev.parts))
            case wire.StageCompleted():
                self.events.append(Event.stage_completed(ev.stage))
            case wire.JobEnd():
                self.events.append(Event.job_end(ev.job))
            case wire.Unpersist():
                self.events.append(Event.unpersist(ev.rdd))
            case wire.TaskEnd(success=True):
                self.events.append(Event.task(ev.stage, ev.partition, executor=ev.executor,
                                              duration_s=ev.duration_ms / 1000,
                                              exec_bytes=ev.exec_mem))
            case wire.TaskCache():
                if len(ev.put_elements) != len(ev.puts):
                    return  # a malformed report: its counts are not used
                for name, n in zip(ev.puts, ev.put_elements):
                    b = parse_block(name)
                    if b is not None and n > 0:
                        self.elements[b] = n
            case wire.BlockManagerAdded():
                self.memory[ev.executor] = ev.mem
            case wire.ExecutorAdded():
                self.cores[ev.executor] = ev.cores
            case wire.BlockUpdate():
                b = parse_block(ev.block)
                size = max(ev.mem, ev.disk)
                if b is not None and size > 0:
                    self.sizes[b] = max(size, self.sizes.get(b, 0))

    def build(self, dag: AppDAG | None = None) -> Trace:
        """The trace: DAG with measured sizes and estimated costs, events with reads/creates
        (`lrc.derive.build_trace`, which event logs go through too)."""
        trace = build_trace(self.dag if dag is None else dag, self.events, self.sizes,
                            self.ever_cached, name="recorded", elements=self.elements,
                            cores=self.cores)
        trace.unroll_threshold = self.unroll_threshold
        trace.storage_fraction = self.storage_fraction
        trace.executor_memory = executor_memory(self.memory)
        return trace

    def save(self, path: str | Path, dag: AppDAG | None = None) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return save_trace(self.build(dag), path)
