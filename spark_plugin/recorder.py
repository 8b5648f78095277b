"""Records a live run as an `lrc` trace, the same format the simulator replays.

The recorder keeps only the order of events, block sizes and task durations; which blocks each
task reads or creates is derived from the DAG when the trace is saved, exactly as the simulator
and the planner derive it, so a replay of the recording means the same thing as the run.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path
from statistics import median

from lrc.dag import AppDAG, Block, parse_block
from lrc.trace import Event, Trace, save_trace

from . import wire


class TraceRecorder:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.sizes: dict[Block, int] = {}
        self.ever_cached: dict[int, str] = {}  # rdd id -> storage level while it was cached

    def event(self, ev: object) -> None:
        """Take one decoded shim event; ignores kinds a trace does not hold."""
        match ev:
            case wire.JobStart():
                for s in ev.stages:
                    for r in s.rdds:
                        if r.cached:
                            self.ever_cached[r.id] = r.level
                self.events.append(Event.job_start(ev.job))
            case wire.StageSubmitted():
                self.events.append(Event.stage_submitted(ev.stage))
            case wire.StageCompleted():
                self.events.append(Event.stage_completed(ev.stage))
            case wire.JobEnd():
                self.events.append(Event.job_end(ev.job))
            case wire.Unpersist():
                self.events.append(Event.unpersist(ev.rdd))
            case wire.TaskEnd(success=True):
                self.events.append(Event.task(ev.stage, ev.partition, executor=ev.executor,
                                              duration_s=ev.duration_ms / 1000))
            case wire.BlockUpdate():
                b = parse_block(ev.block)
                size = max(ev.mem, ev.disk)
                if b is not None and size > 0:
                    self.sizes[b] = max(size, self.sizes.get(b, 0))

    def build(self, dag: AppDAG) -> Trace:
        """The trace: DAG with measured sizes and estimated costs, events with reads/creates."""
        rdds = {rid: dataclasses.replace(r) for rid, r in dag.rdds.items()}  # the planner keeps its own
        for rid, level in self.ever_cached.items():
            if rid in rdds:
                rdds[rid].cached, rdds[rid].storage_level = True, level
        out = AppDAG(rdds=rdds, stages=dict(dag.stages), jobs=dict(dag.jobs))
        events, shares = self._derive_reads(out)
        for rid, r in rdds.items():
            if shares.get(rid):
                r.compute_cost = median(shares[rid])
            if r.cached:
                known = [self.sizes[(rid, p)] for p in range(r.num_partitions) if (rid, p) in self.sizes]
                fill = int(median(known)) if known else None
                if fill is not None:
                    r.block_bytes = [self.sizes.get((rid, p), fill) for p in range(r.num_partitions)]
        return Trace(out, events, name="recorded")

    def _derive_reads(self, dag: AppDAG) -> tuple[list[Event], dict[int, list[float]]]:
        """Replay the events: each task's reads/creates given what earlier tasks materialized.
        A task's duration is shared evenly among the RDDs it computed (its cost estimate)."""
        materialized: set[Block] = set()
        events: list[Event] = []
        shares: dict[int, list[float]] = defaultdict(list)
        for ev in self.events:
            if ev.kind == "task":
                if ev.stage_id not in dag.stages:
                    continue
                reads, creates = dag.task_reads(ev.stage_id, ev.partition, materialized)
                materialized.update(creates)
                ev = dataclasses.replace(ev, reads=tuple(reads), creates=tuple(creates))
                computed = {b[0] for b in creates} | {dag.stages[ev.stage_id].rdd_id}
                for rid in computed:
                    shares[rid].append((ev.duration_s or 0.0) / len(computed))
            elif ev.kind == "unpersist":
                materialized = {b for b in materialized if b[0] != ev.rdd_id}
            events.append(ev)
        return events, shares

    def save(self, path: str | Path, dag: AppDAG) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return save_trace(self.build(dag), path)
