"""Translate decoded shim events (`spark_plugin.wire` records) into `lrc` DAG types.

`wire` knows the field names; this module knows what they mean for the planner.
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from dataclasses import fields, replace
from typing import Container, Iterable, Sequence

from lrc.dag import RDD, Dependency, Job, Stage, parse_block

from .wire import JobStart, RddInfo, StageInfo

IN_MEMORY_LEVELS = ("MEMORY",)  # MEMORY_ONLY, MEMORY_AND_DISK, *_SER, *_2, OFF_HEAP is separate
STAGE_MEMORY = 2048  # 2 x the listener's Described.STAGES
RDD_MEMORY = 2048  # 2 x Described.RDDS


_STAGE_FIELDS = [f.name for f in fields(StageInfo)]
_stage_values = operator.attrgetter(*_STAGE_FIELDS)
_RDDS_AT = _STAGE_FIELDS.index("rdds")


def _with_rdds(s: StageInfo, rdds: tuple[RddInfo, ...]) -> StageInfo:
    """`dataclasses.replace(s, rdds=rdds)` at a third of its cost (it ran once per stage of a
    job start: 5 ms of a 1,000-stage job's planning)."""
    values = list(_stage_values(s))
    values[_RDDS_AT] = rdds
    return StageInfo(*values)


class StageMemory:
    """The stage and RDD descriptions of earlier job starts, for the later ones that name them
    by id only (the listener's `Described`: Spark lists every stage of a job, skipped ones
    too, under new stage ids over the same RDDs).

    Each job start touches its stages, and the RDDs of the stages it describes, in the order
    the listener did, and this memory is larger, least recently used out: it holds everything
    the listener takes as described (LRU's inclusion property). Only lost events break that;
    `resolve` then names the stages it cannot complete. Work per job start: a dictionary
    operation per stage id and per RDD id of its described stages."""

    def __init__(self, capacity: int | None = None, rdd_capacity: int | None = None) -> None:
        self.capacity = STAGE_MEMORY if capacity is None else capacity
        self.rdd_capacity = RDD_MEMORY if rdd_capacity is None else rdd_capacity
        self._stages: OrderedDict[int, StageInfo] = OrderedDict()
        self._rdds: OrderedDict[int, RddInfo] = OrderedDict()

    def __len__(self) -> int:
        return len(self._stages)

    def sizes(self) -> tuple[int, int]:
        """(stages, RDDs) remembered."""
        return len(self._stages), len(self._rdds)

    def learn(self, stages: Iterable[StageInfo]) -> None:
        """Whole descriptions from elsewhere (`LrcBridge.describeStages`) for what `resolve`
        lacked."""
        for s in stages:
            self._stages[s.stage] = s
            for r in s.rdds:
                self._rdds[r.id] = r

    def _complete(self, s: StageInfo) -> StageInfo | None:
        """The stage with every RDD described (None if one is unknown); touches them in order."""
        own = {r.id: r for r in s.rdds}
        mem, rdds = self._rdds, []
        for rid in s.rdd_ids:
            r = own.get(rid)
            if r is not None:
                mem[rid] = r
            elif (r := mem.get(rid)) is None:
                return None
            mem.move_to_end(rid)
            rdds.append(r)
        return s if len(rdds) == len(s.rdds) else _with_rdds(s, tuple(rdds))

    def resolve(self, ev: JobStart) -> tuple[JobStart, list[StageInfo], list[int]]:
        """(the event with its described stages completed, the job's stages in its order as far
        as known, the ids of those it cannot complete)."""
        new = {}
        for s in ev.stages:
            full = self._complete(s)
            if full is not None:
                new[s.stage] = full
        mem, out, missing = self._stages, [], []
        for sid in ev.stage_ids:
            s = new.get(sid)
            if s is not None:
                mem[sid] = s
            elif (s := mem.get(sid)) is None:
                missing.append(sid)
                continue
            mem.move_to_end(sid)
            out.append(s)
        for m, cap in ((mem, self.capacity), (self._rdds, self.rdd_capacity)):
            while len(m) > cap:
                m.popitem(last=False)
        return replace(ev, stages=tuple(new.values())), out, missing


def _rdd(r: RddInfo, stage_rdds: set[int]) -> RDD:
    """An RDD as the listener saw it. Without `deps` (no lineage walk), a parent outside the
    stage is a shuffle boundary and one inside it a narrow dependency of unknown mapping."""
    if r.deps is not None:
        deps = r.deps
    else:
        deps = tuple(Dependency(parent=p, kind="unknown" if p in stage_rdds else "shuffle")
                     for p in r.parents)
    return RDD(id=r.id, num_partitions=r.parts, deps=deps, cached=r.cached,
               storage_level=r.level, name=r.name, call_site=r.callsite)


def job_from_event(ev: JobStart, described: Sequence[StageInfo] | None = None,
                   skip: Container[int] = ()) -> tuple[Job, list[Stage], list[RDD]]:
    """`job_start` -> (Job of all its stage ids, Stages, the RDDs they contain; each RDD once).
    Stages and RDDs are built from `described` (default: the event's own descriptions, its new
    stages), except stages in `skip` that the event does not describe itself (the planner's
    completed stages: a later job skips them, and building them again would cost work per job
    proportional to the application's age, not to the job's new stages)."""
    stages: list[Stage] = []
    rdds: dict[int, RDD] = {}
    walked: set[int] = set()  # RDDs built from the lineage walk's deps
    new = {s.stage for s in ev.stages}
    for s in ev.stages if described is None else described:
        if s.stage in skip and s.stage not in new:
            continue
        stage_rdds = {r.id for r in s.rdds}
        for r in s.rdds:
            # The same RDD appears in many stages' lists (a job lists every ancestor stage, and
            # GraphX's narrow lineage puts hundreds of RDDs in each): the first description the
            # lineage walk reached is kept, else the first one; each is built once.
            if r.id in walked or (r.id in rdds and r.deps is None):
                continue
            rdds[r.id] = _rdd(r, stage_rdds)
            if r.deps is not None:
                walked.add(r.id)
        parts = rdds[s.rdd].num_partitions if s.rdd in rdds else s.tasks
        stages.append(Stage(
            id=s.stage,
            rdd_id=s.rdd,
            num_tasks=s.tasks,
            parent_ids=s.parents,
            job_id=ev.job,
            partitions=s.parts if s.parts is not None
            else None if s.tasks >= parts else tuple(range(s.tasks)),
            gpus=s.gpus,
            shuffle=s.shuffle,
        ))
    job = Job(id=ev.job, stage_ids=tuple(ev.stage_ids))
    return job, stages, list(rdds.values())


def in_memory(level: str) -> bool:
    return any(tag in (level or "").upper() for tag in IN_MEMORY_LEVELS)


def blocks(names: Iterable[str]) -> list[tuple[int, int]]:
    """RDD block names -> (rdd, partition); other blocks (broadcast, ...) are dropped."""
    out = []
    for name in names:
        b = parse_block(name)
        if b is not None:
            out.append(b)
    return out
