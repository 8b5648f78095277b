"""From a run's events to a trace: which cached blocks each task read or created, per-RDD compute
costs and block sizes. One function for every source of runs - spark-lrc's live recorder
(`spark_plugin.recorder`) and Spark's own event logs (`lrc.eventlog`) - so that two traces of
the same run mean the same thing block by block.

Reads/creates are derived from the DAG, exactly as the simulator and the planner derive them
(`AppDAG.task_reads` given what earlier tasks materialized); a task's duration is shared evenly
among the RDDs it computed (its compute-cost estimate: what a rebuild of one of its blocks
costs), from the tasks that ran with the executor's code warm (`warm_cost`).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from statistics import median
from typing import Iterable, Mapping

from lrc.cost import ColdStarts, warm_cost
from lrc.dag import RDD, AppDAG, Block
from lrc.trace import Event, Trace


def derive_reads(dag: AppDAG, events: Iterable[Event], limit: int | None = None,
                 cores: Mapping[str, int] | None = None
                 ) -> tuple[list[Event], dict[int, list[tuple[float, bool, str | None]]]]:
    """Replay ``events`` in order: each task's reads/creates given what earlier tasks
    materialized. An unpersist forgets the RDD's blocks, and later tasks neither read nor store
    them (Spark computes an unpersisted RDD's blocks without storing them; an RDD persisted again
    after its unpersist is not modelled). Task events of stages the DAG does not
    know are dropped. Returns the events with reads/creates set, and per RDD the task-duration
    shares (seconds) of the tasks that computed it, each with whether the task ran cold
    (``cores``: task slots per executor, `ColdStarts`) and its executor. ``limit``: a task whose
    narrow lineage covers more blocks than this is a ValueError (see `AppDAG.task_reads`)."""
    materialized: set[Block] = set()
    unpersisted: set[int] = set()
    out: list[Event] = []
    shares: dict[int, list[tuple[float, bool, str | None]]] = defaultdict(list)
    starts = ColdStarts((cores or {}).get)
    for ev in events:
        if ev.kind == "task":
            cold = starts.task_ended(ev.executor)
            if ev.stage_id not in dag.stages:
                continue
            try:
                reads, creates = dag.task_reads(ev.stage_id, ev.partition, materialized, limit,
                                                unpersisted)
            except ValueError as e:
                raise ValueError(f"task {ev.partition} of stage {ev.stage_id}: {e}") from None
            materialized.update(creates)
            ev = dataclasses.replace(ev, reads=tuple(reads), creates=tuple(creates))
            computed = {b[0] for b in creates} | {dag.stages[ev.stage_id].rdd_id}
            for rid in computed:
                shares[rid].append(((ev.duration_s or 0.0) / len(computed), cold, ev.executor))
        elif ev.kind == "unpersist":
            materialized = {b for b in materialized if b[0] != ev.rdd_id}
            unpersisted.add(ev.rdd_id)
        out.append(ev)
    return out, shares


def build_trace(dag: AppDAG, events: Iterable[Event], sizes: Mapping[Block, int],
                ever_cached: Mapping[int, str], name: str = "", limit: int | None = None,
                elements: Mapping[Block, int] | None = None,
                cores: Mapping[str, int] | None = None) -> Trace:
    """The trace of a run: a copy of ``dag`` (callers' RDD objects are not changed) with the
    RDDs in ``ever_cached`` (rdd id -> storage level while cached) marked cached, compute costs
    from task durations, block sizes from ``sizes`` and element counts from ``elements`` (a
    cached RDD's unmeasured partitions get the median of its measured ones; an RDD with none
    measured keeps what the DAG says), and the events with reads/creates derived. ``cores``:
    task slots per executor, which tells the cold tasks (`derive_reads`)."""
    rdds = {rid: dataclasses.replace(r) for rid, r in dag.rdds.items()}
    for rid, level in ever_cached.items():
        if rid in rdds:
            rdds[rid].cached, rdds[rid].storage_level = True, level
    out = AppDAG(rdds=rdds, stages=dict(dag.stages), jobs=dict(dag.jobs))
    derived, shares = derive_reads(out, events, limit, cores)
    measured = {"block_bytes": by_rdd(sizes), "block_elements": by_rdd(elements or {})}
    for rid, r in rdds.items():
        if shares.get(rid):
            r.compute_cost = warm_cost(shares[rid])
        if r.cached:
            for k, values in measured.items():
                fill_blocks(r, k, values.get(rid, {}))
    return Trace(out, derived, name=name)


def fill_blocks(r: RDD, attr: str, known: Mapping[int, int]) -> bool:
    """Sets ``r.<attr>`` (``block_bytes`` or ``block_elements``) per partition from ``known``
    (partition -> value), the median of them for the others; False (unchanged) if none fits."""
    known = {p: n for p, n in known.items() if 0 <= p < r.num_partitions}
    if not known:
        return False
    fill = int(median(known.values()))
    setattr(r, attr, [known.get(p, fill) for p in range(r.num_partitions)])
    return True


def by_rdd(per_block: Mapping[Block, int]) -> dict[int, dict[int, int]]:
    """``{(rdd, p): n}`` -> ``{rdd: {p: n}}`` (not range(num_partitions): it can be huge)."""
    out: dict[int, dict[int, int]] = defaultdict(dict)
    for (rid, p), n in per_block.items():
        out[rid][p] = n
    return out
