"""``python -m lrc whatif EVENTLOG``: how much would a cache policy help this application, and how
much cache memory does it really need? Replays a Spark event log (`lrc.eventlog`) under each
policy at a range of cache sizes; ``lrc.whatif_report`` writes the report (table, plots,
recommendation).

Cache sizes are fractions of the cached working set (the most bytes cached at once with
unlimited memory, as in `lrc.sim`) or absolute bytes per executor (``512m``, ``2g``). "Unlimited"
is every executor able to hold the whole working set (nothing is ever evicted). The
recommendation is the smallest cache at which the best policy's estimated job time is within 5%
of unlimited memory's, and the same for LRU (Spark's own order).

An estimated job time is the replay's (``lrc.sim``: the logged task times, plus what each miss
costs) plus the time the logged run spent outside its tasks - its jobs' span less the replay of
the run as it ran (LRU in its executors' memory): the driver's work between jobs, scheduling,
result collection, which no cache policy changes. Without it the estimates of an application of
many short jobs fell 0.56-0.67x short of its live times (sql, results/whatif/online).
"""
from __future__ import annotations

import logging
import math
import multiprocessing
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from lrc.bound import hit_bound
from lrc.eventlog import EventLogTrace, read_eventlog
from lrc.execmem import claim_scale, resolve_storage_fraction, storage_limit
from lrc.policies import admits, get_policy
from lrc.sim import CompiledTrace, simulate
from lrc.task_order import check_task_order, order_for

log = logging.getLogger("lrc.whatif")

DEFAULT_FRACTIONS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
DEFAULT_POLICIES = ("lru", "lrc", "lerc", "mrd", "crd")
WITHIN = 0.05  # "as good as unlimited memory": estimated time within 5%
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40,
          "tib": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


@dataclass(frozen=True)
class CacheSize:
    """A fraction of the working set, or bytes per executor."""

    fraction: float | None = None
    per_executor: int | None = None

    def label(self) -> str:
        return f"{self.fraction:g}" if self.fraction is not None else fmt_bytes(self.per_executor)


def parse_sizes(text: str) -> list[CacheSize]:
    """``"0.1,0.5,512m"`` -> sizes: a number with a unit (b, k, m, g, t; KiB-based) is bytes per
    executor, a plain number a fraction of the working set."""
    out = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        m = _SIZE.fullmatch(item)
        if m is None or m[2].lower() not in _UNITS:
            raise ValueError(f"cache size {item!r}: expected a fraction (0.5) or bytes per "
                             "executor with a unit (512m, 2g)")
        num = float(m[1])
        if not math.isfinite(num) or num <= 0:
            raise ValueError(f"cache size {item!r} must be > 0")
        if m[2]:
            nbytes = int(num * _UNITS[m[2].lower()])
            if nbytes < 1 or nbytes > 1 << 60:
                raise ValueError(f"cache size {item!r} is out of range")
            out.append(CacheSize(per_executor=nbytes))
        else:
            if num > 1000:
                raise ValueError(f"cache size {item!r}: a fraction of the working set that large "
                                 "makes no sense; for bytes add a unit (e.g. 512m)")
            out.append(CacheSize(fraction=num))
    if not out:
        raise ValueError("no cache sizes given")
    return out


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


@dataclass
class WhatIf:
    log: EventLogTrace
    executors: int
    cores: int
    refs: str
    working_set: int
    unlimited_time: float
    admit: str = "auto"  # spark.lrc.admit's value the replays followed (lrc.policies.admits)
    # seconds the logged run spent outside the replayed tasks (its jobs' span less the replay of
    # it as it ran): driver work between jobs, scheduling; in every estimate
    outside_s: float = 0.0
    task_order: str = "spark"  # the replays' (lrc.task_order); the bound's is the logged one
    rows: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    recommendation: dict[str, dict | None] = field(default_factory=dict)


def run_whatif(path: str | Path, sizes: list[CacheSize] | None = None,
               policies: list[str] | None = None, executors: int | None = None,
               cores: int | None = None, refs: str = "profile", progress: bool | None = None,
               jobs: int | None = None, admit: str = "auto",
               task_order: str = "spark") -> WhatIf:
    """Parse the event log and replay it under ``policies`` x ``sizes``. ValueError names what
    makes the question unanswerable (nothing cached, absolute sizes without known block sizes).
    ``admit``: admission as spark.lrc.admit sets it live (auto, the default: on for crd, so its
    rows are what spark-lrc's default policy does; true; false: every policy as ranked alone).
    ``task_order``: each stage's tasks replay in the order Spark's scheduler gives them from
    what each replay caches (``lrc.task_order``, the default: the logged order is the run's, with
    its memory), or in the logged order (``logged``). The bound keeps the logged order.
    The replays and the bounds run in ``jobs`` processes (default: one per core; 1: in this
    process); the results are the same either way."""
    sizes = list(sizes or [CacheSize(fraction=f) for f in DEFAULT_FRACTIONS])
    policies = list(policies or DEFAULT_POLICIES)
    admitted = {p for p in policies if admits(p, admit)}  # (checks ``admit`` before the parse)
    check_task_order(task_order)
    t0 = time.perf_counter()
    el = read_eventlog(path, progress=progress)
    t1 = time.perf_counter()
    if not el.size_source:
        raise ValueError(f"{path}: the application caches no RDD (no storage level in any job's "
                         "RDD Info), so no cache policy or size changes anything; "
                         f"used: {el.summary()}")
    n = executors or max(1, sum(1 for e in el.executors if e != "driver") or 1)
    if n < 1:
        raise ValueError("executors must be >= 1")
    c = cores or el.cores or 1
    ct = CompiledTrace(el.trace)
    t2 = time.perf_counter()
    ws = ct.working_set_bytes
    if ws <= 0 or not any(e[0] == 2 and (e[4] or e[5]) for e in ct.events):
        raise ValueError(f"{path}: no task read or created a cached block; nothing to replay "
                         f"(used: {el.summary()})")
    if any(s.per_executor is not None for s in sizes) and not el.sizes_known:
        unknown = sorted(r for r, s in el.size_source.items() if s == "unknown")
        raise ValueError(f"{path}: block sizes of cached RDDs {unknown[:10]} are unknown (log "
                         "written without spark.eventLog.logBlockUpdates.enabled and no other "
                         "estimate), so absolute cache sizes cannot be placed; give fractions")
    points = []
    for s in sizes:
        f = s.fraction if s.fraction is not None else s.per_executor * n / ws
        points.append((s, f))
    fractions = list(dict.fromkeys(f for _, f in points))
    # unlimited memory: every executor holds it all and the largest unroll reservation
    # (lrc.unroll) beyond it, and execution never needs the room
    t = ct.trace.unroll_threshold
    extra = max(r - s for r, s in zip(ct.reserves(t), ct.sizes)) if t and ct.sizes else 0
    unlimited = n * (ws + extra) / ws * 1.01
    # the logged run as it ran: Spark's LRU in its executors' memory (unlimited when not known),
    # its tasks in their logged order
    logged = ("as ran", "lru", min(unlimited, n * ct.trace.executor_memory / ws)
              if ct.trace.executor_memory else unlimited)
    todo = [("unlimited", "lru", unlimited), logged]
    todo += [("bound", None, f) for f in fractions]
    todo += [("sim", p, f) for f in fractions for p in policies]
    show = progress if progress is not None else el.tasks > 20_000
    done, cpu = replay(ct, todo, n, c, refs, jobs, show, admitted, task_order)
    t3 = time.perf_counter()
    outside = max(0.0, el.jobs_span_s - done[logged].est_runtime) if el.jobs_span_s else 0.0
    unl_time = done[todo[0]].est_runtime + outside
    res = WhatIf(el, n, c, refs, ws, unl_time, admit, outside_s=outside, task_order=task_order)
    for s, f in points:
        bound = done[("bound", None, f)].hit_ratio
        for p in policies:
            r = done[("sim", p, f)]
            row = r.to_dict()
            row["est_runtime"] += outside
            row.update(size=s.label(), per_executor_bytes=int(f * ws / n), bound_hit_ratio=bound,
                       admit=p in admitted,
                       vs_unlimited=row["est_runtime"] / unl_time if unl_time else 1.0)
            res.rows.append(row)
    res.timings = {"parse_s": t1 - t0, "compile_s": t2 - t1, "replay_s": t3 - t2,
                   "replay_cpu_s": cpu["sim"], "bound_cpu_s": cpu["bound"],
                   "workers": cpu["workers"], "runs_same_as_unlimited": cpu["same"],
                   "total_s": t3 - t0}
    res.recommendation = recommend(res.rows, res.unlimited_time)
    return res


def _bar(total: int, show: bool):
    if not show:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="replaying", file=sys.stderr, leave=False, disable=None)


# ---- the replays, in parallel ------------------------------------------------------------------
# A job is ("sim", policy, fraction), ("unlimited", "lru", fraction) or ("bound", None, fraction);
# every job reads one compiled trace and nothing else, so they run in any order in any process
# with the same result. Worker
# processes are forked: they inherit the trace (nothing is pickled but the jobs and the results).
_COST = {"bound": 2.0, "lerc": 3.0, "crd": 2.0, "mrd": 1.7, "lrc": 1.1}  # relative, measured
_TRACE: tuple | None = None  # (compiled trace, executors, cores, refs, admitted) in a worker


def default_jobs() -> int:
    """Processes for the replays: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _job_cost(job: tuple) -> float:
    """A rough relative run time, to start the longest jobs first (the pool then ends evenly)."""
    kind, policy, f = job
    base = _COST.get(kind if kind == "bound" else policy, 1.0)
    return base * (0.5 if f >= 0.7 else 1.0)


def _init_worker(trace: tuple) -> None:
    global _TRACE
    _TRACE = trace


def _run_job(job: tuple, trace: tuple | None = None):
    """Run one job; returns (its result, CPU seconds it took)."""
    ct, n, c, refs, admitted, order = trace or _TRACE
    kind, policy, f = job
    t = time.process_time()
    if kind == "bound":
        out = hit_bound(ct, f, n)
    else:
        out = simulate(ct, policy, f, executors=n, cores=c, refs=refs,
                       exec_claims=kind != "unlimited", admit=kind == "sim" and policy in admitted,
                       task_order="logged" if kind == "as ran" else order_for(policy, order))
    return out, time.process_time() - t


def _same_as(base, job: tuple, ct: CompiledTrace, n: int, cores: int) -> bool:
    """Whether replay ``job`` is ``base`` (a run that never evicted) under another name: its
    caches hold at least what ``base``'s ever held or were asked to, even while the largest
    execution memory claim holds its room (``lrc.execmem``), so it never evicts either and
    every policy makes the same moves (priorities only order evictions)."""
    kind, _, f = job
    memory = int(f * ct.working_set_bytes / n)
    room = memory
    if ct.exec_claims:
        sf = resolve_storage_fraction(ct.trace)
        claim = ct.max_claim * claim_scale(ct.trace.executor_memory, memory, sf, cores)
        room = storage_limit(memory, int(claim), sf)
    return (kind == "sim" and base.peak_cache_bytes <= base.cache_bytes // n
            and room >= base.peak_cache_bytes)


def _renamed(base, job: tuple, ws: int, n: int):
    _, policy, f = job
    return replace(base, policy=get_policy(policy).name, cache_fraction=f,
                   cache_bytes=int(f * ws / n) * n, evicted=[])


def replay(ct: CompiledTrace, todo: list[tuple], executors: int, cores: int, refs: str,
           jobs: int | None = None, progress: bool = False,
           admitted: set[str] | frozenset = frozenset(), task_order: str = "logged"
           ) -> tuple[dict, dict]:
    """Run every job of ``todo``: {job: SimResult or BoundResult}, and the CPU seconds spent in
    replays (``sim``) and bounds (``bound``), the number of processes (``workers``) and of
    replays not run (``same``: a cache so large that the first job, unlimited memory, never
    filled it gives that run's numbers whatever the policy). ``jobs`` processes (default: one
    per core), forked from this one; 1, or no fork (not Linux), runs them here one after the
    other. The results do not depend on ``jobs``. ``admitted``: policies replayed with
    admission (``simulate``'s ``admit``); ``task_order``: ``simulate``'s, for every replay."""
    todo = list(dict.fromkeys(todo))
    jobs = min(default_jobs() if jobs is None else max(1, jobs), len(todo))
    if jobs > 1 and "fork" not in multiprocessing.get_all_start_methods():
        jobs = 1
    trace = (ct, executors, cores, refs, admitted, task_order)
    ws, n = ct.working_set_bytes, executors
    first = todo[0]
    done: dict = {}
    cpu = {"sim": 0.0, "bound": 0.0, "workers": jobs, "same": 0}
    bar = _bar(len(todo), progress) if jobs == 1 else None
    try:
        if jobs == 1:
            for job in todo:
                if job is not first and _same_as(done[first], job, ct, n, cores):
                    done[job] = _renamed(done[first], job, ws, n)
                    cpu["same"] += 1
                else:
                    done[job], sec = _run_job(job, trace)
                    cpu["bound" if job[0] == "bound" else "sim"] += sec
                if bar:
                    bar.update()
            return done, cpu
        # the first job first (what it tells may save others), then the longest first
        order = [first] + sorted(todo[1:], key=_job_cost, reverse=True)
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_init_worker, initargs=(trace,))
        try:
            futures = {pool.submit(_run_job, job): job for job in order}
            bar = _bar(len(todo), progress)  # (after the fork: its thread stays here)
            for fut in as_completed(futures):
                if fut.cancelled():
                    continue
                job = futures[fut]
                done[job], sec = fut.result()
                cpu["bound" if job[0] == "bound" else "sim"] += sec
                if bar:
                    bar.update()
                if job is first:
                    for other, job2 in futures.items():  # not started yet: not needed
                        if _same_as(done[first], job2, ct, n, cores) and job2 is not first \
                                and other.cancel():
                            done[job2] = _renamed(done[first], job2, ws, n)
                            cpu["same"] += 1
                            if bar:
                                bar.update()
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # a failed job: drop the rest
            raise
        pool.shutdown(wait=True)
        return done, cpu
    finally:
        if bar:
            bar.close()


def recommend(rows: list[dict], unlimited: float) -> dict[str, dict | None]:
    """Smallest cache (bytes per executor) at which the best policy, and LRU, estimate a job
    time within 5% of unlimited memory's; None where no size tried gets there."""
    limit = unlimited * (1 + WITHIN)
    by_size: dict[int, list[dict]] = {}
    for r in rows:
        by_size.setdefault(r["per_executor_bytes"], []).append(r)
    out: dict[str, dict | None] = {"best": None, "lru": None}
    for nbytes in sorted(by_size):
        group = by_size[nbytes]
        best = min(group, key=lambda r: (r["est_runtime"], -r["hit_ratio"]))
        if out["best"] is None and best["est_runtime"] <= limit:
            out["best"] = best
        lru = next((r for r in group if r["policy"] == "lru"), None)
        if out["lru"] is None and lru is not None and lru["est_runtime"] <= limit:
            out["lru"] = lru
    return out
