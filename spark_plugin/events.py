"""Translate the shim's event JSON (docs/DESIGN.md §3) into `lrc` DAG types.

Only this module knows the wire field names; the rest of the brain speaks `lrc`.
"""
from __future__ import annotations

from typing import Any, Iterable

from lrc.dag import RDD, Dependency, Job, Stage, parse_block

IN_MEMORY_LEVELS = ("MEMORY",)  # MEMORY_ONLY, MEMORY_AND_DISK, *_SER, *_2, OFF_HEAP is separate


def _dependency(d: dict[str, Any]) -> Dependency:
    return Dependency(
        parent=int(d["parent"]),
        kind=d.get("kind", "unknown"),
        in_start=int(d.get("in_start", 0)),
        out_start=int(d.get("out_start", 0)),
        length=int(d.get("length", 0)),
        mapping=[list(m) for m in d["map"]] if d.get("map") is not None else None,
    )


def _rdd(r: dict[str, Any], stage_rdds: set[int]) -> RDD:
    """An RDD as the listener saw it. Without `deps` (no lineage walk), a parent outside the
    stage is a shuffle boundary and one inside it a narrow dependency of unknown mapping."""
    if r.get("deps") is not None:
        deps = tuple(_dependency(d) for d in r["deps"])
    else:
        deps = tuple(Dependency(parent=int(p), kind="unknown" if int(p) in stage_rdds else "shuffle")
                     for p in r.get("parents", ()))
    return RDD(
        id=int(r["id"]),
        num_partitions=int(r["parts"]),
        deps=deps,
        cached=bool(r.get("cached", False)),
        storage_level=r.get("level", "NONE"),
        name=r.get("name", ""),
    )


def job_from_event(ev: dict[str, Any]) -> tuple[Job, list[Stage], list[RDD]]:
    """`job_start` -> (Job, its Stages, the RDDs they contain; each RDD once)."""
    stages: list[Stage] = []
    rdds: dict[int, RDD] = {}
    for s in ev["stages"]:
        stage_rdds = {int(r["id"]) for r in s.get("rdds", ())}
        for r in s.get("rdds", ()):
            rdd = _rdd(r, stage_rdds)
            # The same RDD appears in several stages' lists; keep the most detailed description.
            known = rdds.get(rdd.id)
            if known is None or (not known.deps and rdd.deps):
                rdds[rdd.id] = rdd
        parts = rdds[int(s["rdd"])].num_partitions if int(s["rdd"]) in rdds else int(s["tasks"])
        n = int(s["tasks"])
        stages.append(Stage(
            id=int(s["stage"]),
            rdd_id=int(s["rdd"]),
            num_tasks=n,
            parent_ids=tuple(int(p) for p in s.get("parents", ())),
            job_id=int(ev["job"]),
            partitions=None if n >= parts else tuple(range(n)),
        ))
    job = Job(id=int(ev["job"]), stage_ids=tuple(s.id for s in stages))
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
