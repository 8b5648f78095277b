"""Translate decoded shim events (`spark_plugin.wire` records) into `lrc` DAG types.

`wire` knows the field names; this module knows what they mean for the planner.
"""
from __future__ import annotations

from typing import Iterable

from lrc.dag import RDD, Dependency, Job, Stage, parse_block

from .wire import Dep, JobStart, RddInfo

IN_MEMORY_LEVELS = ("MEMORY",)  # MEMORY_ONLY, MEMORY_AND_DISK, *_SER, *_2, OFF_HEAP is separate


def _dependency(d: Dep) -> Dependency:
    return Dependency(parent=d.parent, kind=d.kind, in_start=d.in_start, out_start=d.out_start,
                      length=d.length, mapping=d.map)


def _rdd(r: RddInfo, stage_rdds: set[int]) -> RDD:
    """An RDD as the listener saw it. Without `deps` (no lineage walk), a parent outside the
    stage is a shuffle boundary and one inside it a narrow dependency of unknown mapping."""
    if r.deps is not None:
        deps = tuple(_dependency(d) for d in r.deps)
    else:
        deps = tuple(Dependency(parent=p, kind="unknown" if p in stage_rdds else "shuffle")
                     for p in r.parents)
    return RDD(id=r.id, num_partitions=r.parts, deps=deps, cached=r.cached,
               storage_level=r.level, name=r.name, call_site=r.callsite)


def job_from_event(ev: JobStart) -> tuple[Job, list[Stage], list[RDD]]:
    """`job_start` -> (Job, its Stages, the RDDs they contain; each RDD once)."""
    stages: list[Stage] = []
    rdds: dict[int, RDD] = {}
    for s in ev.stages:
        stage_rdds = {r.id for r in s.rdds}
        for r in s.rdds:
            rdd = _rdd(r, stage_rdds)
            # The same RDD appears in several stages' lists; keep the most detailed description.
            known = rdds.get(rdd.id)
            if known is None or (not known.deps and rdd.deps):
                rdds[rdd.id] = rdd
        parts = rdds[s.rdd].num_partitions if s.rdd in rdds else s.tasks
        stages.append(Stage(
            id=s.stage,
            rdd_id=s.rdd,
            num_tasks=s.tasks,
            parent_ids=s.parents,
            job_id=ev.job,
            partitions=None if s.tasks >= parts else tuple(range(s.tasks)),
            gpus=s.gpus,
        ))
    job = Job(id=ev.job, stage_ids=tuple(s.id for s in stages))
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
