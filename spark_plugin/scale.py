"""Driver-side scale: a synthetic application's events through the brain, timed and sized.

`python -m spark_plugin scale [--jobs 1000 --parts 500]` builds the shim's event lines of an
application of ``jobs`` jobs (10 new RDDs and 2 stages of ``parts`` tasks each: 1,000 jobs x 500
partitions = a 10,000-RDD DAG and 1,000,000 tasks) and feeds them through the path the live brain
takes: `wire.decode_event`, the brain's handlers, `lrc.Planner` (add_job, stage_submitted,
task_finished, block_cached, rdd_unpersisted) and its publishes (take_changes, priorities, table
text), with a bridge that only counts what it is sent. Reports wall time per phase, peak memory
(RSS; tracemalloc with ``--tracemalloc``) and the sizes of the brain's structures.

The shape: job j caches ``c_j`` (base -> m1 -> m2 -> c_j, base cached once by job 0), reads the
previous job's ``c_{j-1}`` (zip), shuffles, and a result stage ends it; then ``c_{j-2}`` is
unpersisted, as an iterative application does. Each job's lineage reaches one job back, so the
events per job do not grow with the application's age (an application whose lineage reaches every
earlier job sends Spark's whole stage graph with every job: quadratic in Spark itself).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import time
import tracemalloc
from collections import Counter, defaultdict
from typing import Any

from .brain import Brain
from .config import LrcSettings

RDDS_PER_JOB = 10


def _rdd(rid: int, parts: int, parents: tuple[int, ...] = (), cached: bool = False,
         kind: str = "one_to_one") -> dict[str, Any]:
    return {"id": rid, "name": f"r{rid}", "callsite": f"site{rid % RDDS_PER_JOB}", "parts": parts,
            "level": "MEMORY_ONLY" if cached else "NONE", "cached": cached, "parents": list(parents),
            "deps": [{"parent": p, "kind": kind, "in_start": 0, "out_start": 0, "length": 0,
                      "map": []} for p in parents]}


def _ids(j: int) -> dict[str, int]:
    """RDD ids of job j (base is RDD 0; job j owns ids 1 + 10j .. 10 + 10j)."""
    b = 1 + RDDS_PER_JOB * j
    return dict(m1=b, m2=b + 1, c=b + 2, x=b + 3, z=b + 4, m3=b + 5, s=b + 6, m4=b + 7, m5=b + 8,
                r=b + 9)


def job_lines(j: int, parts: int, executors: int = 2) -> list[str]:
    """Every event line job ``j`` produces, in the order the shim sends them."""
    ids, prev = _ids(j), _ids(j - 1) if j > 0 else None
    a, b = 2 * j, 2 * j + 1  # stage ids: map stage, result stage
    now = 1_700_000_000_000 + j
    rdds_a = [_rdd(0, parts, cached=True), _rdd(ids["m1"], parts, (0,)),
              _rdd(ids["m2"], parts, (ids["m1"],)), _rdd(ids["c"], parts, (ids["m2"],), True)]
    if prev is not None:  # c_{j-1} and its narrow ancestors (one job back)
        rdds_a += [_rdd(prev["m1"], parts, (0,)), _rdd(prev["m2"], parts, (prev["m1"],)),
                   _rdd(prev["c"], parts, (prev["m2"],), True),
                   _rdd(ids["x"], parts, (prev["c"],))]
    zp = (ids["c"], ids["x"]) if prev is not None else (ids["c"],)
    rdds_a += [_rdd(ids["z"], parts, zp), _rdd(ids["m3"], parts, (ids["z"],))]
    rdds_b = [_rdd(ids["s"], parts, (ids["m3"],), kind="shuffle"),
              _rdd(ids["m4"], parts, (ids["s"],)), _rdd(ids["m5"], parts, (ids["m4"],)),
              _rdd(ids["r"], parts, (ids["m5"],))]
    out = [json.dumps({"e": "job_start", "job": j, "time": now, "received": now, "sent": now,
                       "stage_ids": [a, b], "stages": [
        {"stage": a, "attempt": 0, "rdd": ids["m3"], "tasks": parts, "parents": [],
         "shuffle": j, "rdd_ids": [r["id"] for r in rdds_a], "rdds": rdds_a},
        {"stage": b, "attempt": 0, "rdd": ids["r"], "tasks": parts, "parents": [a],
         "shuffle": -1, "rdd_ids": [r["id"] for r in rdds_b], "rdds": rdds_b}]})]
    for stage in (a, b):
        out.append(json.dumps({"e": "stage_submitted", "stage": stage, "attempt": 0,
                               "tasks": parts, "time": now}))
        for p in range(parts):
            ex = str(1 + p % executors)
            end = json.dumps({"e": "task_end", "stage": stage, "attempt": 0, "partition": p,
                              "executor": ex, "task": p, "success": True, "duration_ms": 5,
                              "exec_mem": 0})
            if p % 2 == 0:  # the executor's report comes after the task's end, or before it
                out.append(end)
            hits, puts = [], []
            if stage == a:
                hits = [f"rdd_0_{p}"] + ([f"rdd_{prev['c']}_{p}"] if prev else [])
                puts = [f"rdd_{ids['c']}_{p}"] + ([f"rdd_0_{p}"] if j == 0 else [])
                for blk in puts:
                    out.append(json.dumps({"e": "block", "executor": ex, "block": blk,
                                           "level": "MEMORY_ONLY", "mem": 1000, "disk": 0,
                                           "time": now}))
            out.append(json.dumps({"e": "task_cache", "executor": ex, "stage": stage,
                                   "partition": p, "task": p, "hits": hits, "puts": puts,
                                   "put_elements": [-1] * len(puts), "evicted": [],
                                   "evictions": [], "table_version": 0,
                                   "hooks_cpu_ns": 0, "watch_cpu_ns": 0}))
            if p % 2:
                out.append(end)
        out.append(json.dumps({"e": "stage_completed", "stage": stage, "attempt": 0,
                               "failed": False, "time": now}))
    out.append(json.dumps({"e": "job_end", "job": j, "time": now, "success": True}))
    if j >= 2:  # the application unpersists c_{j-2}: its blocks go
        old = _ids(j - 2)["c"]
        out.append(json.dumps({"e": "unpersist", "rdd": old}))
        for p in range(parts):
            out.append(json.dumps({"e": "block", "executor": str(1 + p % executors),
                                   "block": f"rdd_{old}_{p}", "level": "NONE", "mem": 0,
                                   "disk": 0, "time": now}))
    return out


class CountingBridge:
    """The JvmBridge surface the brain uses: hands out queued lines, counts what it is sent."""

    def __init__(self, batch: int = 10_000) -> None:
        self.pending: list[str] = []
        self.batch = batch
        self.publishes = 0
        self.published_at = 0.0
        self.published_chars = 0
        self.sent: list[tuple[int, str, str]] = []  # (version, arrays, stages) when recording
        self.record = False

    def drain(self, max_events: int = 10_000, wait_ms: int = 0, linger_ms: int = 0) -> list[str]:
        out, self.pending = self.pending[:self.batch], self.pending[self.batch:]
        return out

    def publish(self, version: int, arrays: str, stages: str, moves: str | None = None) -> None:
        self.published_at = time.perf_counter()  # (what plan-speed times: the table sent)
        self.publishes += 1
        self.published_chars += len(arrays) + len(stages)
        if self.record:
            self.sent.append((version, arrays, stages))

    def attach_brain(self) -> None: ...
    def detach_brain(self) -> None: ...
    def task_ends_urgent(self, urgent: bool) -> None: ...
    def dropped(self) -> int: return 0
    def plugin_cpu(self) -> dict: return {}
    def report_metrics(self, text: str) -> None: ...


def structure_sizes(brain: Brain) -> dict[str, int]:
    """Entries in the brain's per-application structures (what must stay bounded)."""
    p, refs, m = brain.planner, brain.planner.refs, brain.metrics
    out = {
        "dag.rdds": len(p.dag.rdds), "dag.stages": len(p.dag.stages), "dag.jobs": len(p.dag.jobs),
        "planner.completed": len(p.completed), "planner.planned": len(p.planned),
        "planner.written": len(p.written),
        "brain.stage_memory": brain.stage_memory.sizes()[0],
        "brain.stage_memory_rdds": brain.stage_memory.sizes()[1],
        "planner.materialized": len(p.materialized), "planner.tried": len(p.tried),
        "planner.creates": len(p.failed_stores.creates),
        "planner.lookups": len(p.failed_stores.lookups),
        "planner.locations": len(p.locations),
        "planner.origin": len(p._origin), "planner.builder": len(p._builder),
        "planner.recurring": len(p._recurring),
        "planner.builds": len(p._builds), "costs.tasks": len(refs.costs.tasks),
        "refs.pending": len(refs.pending), "refs.stage_seq": len(refs.stage_seq),
        "refs.count": len(refs.count), "refs.next_ref": len(refs.next_ref),
        "costs.size": len(refs.costs.size), "costs.lineages": len(refs.costs._lineages),
        "costs.retired": len(refs.costs._retired),
        "brain.published_rdds": len(brain._published_rdds),
        "brain.published_stages": len(brain._published_stages),
        "brain.in_table": len(brain._in_table), "brain.finished_reads": len(brain._finished_reads),
        "brain.reported": len(getattr(brain, "_reported", ())),
        "metrics.plan_latency_ms": len(m.plan_latency_ms),
        "metrics.executor_wait_ms": len(m.executor_wait_ms),
        "metrics.per_rdd": len(m.hits_per_rdd) + len(m.misses_per_rdd) + len(m.evictions_per_rdd),
    }
    if refs.peers is not None:
        out["peers"] = sum(len(v) for v in vars(refs.peers).values() if hasattr(v, "__len__"))
    if brain.recorder is not None:
        out["recorder.events"] = len(brain.recorder.events)
    return out


def new_brain(policy: str = "lrc", batch: int = 10_000) -> tuple[Brain, CountingBridge]:
    bridge = CountingBridge(batch)
    return Brain(bridge, LrcSettings.from_conf(policy=policy)), bridge


def feed(brain: Brain, bridge: CountingBridge, lines: list[str]) -> None:
    """Through the brain's own loop body (drain, apply, publish), a batch at a time."""
    bridge.pending.extend(lines)
    while bridge.pending:
        brain.step(force=True)


def _rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB."""
    cur = 0.0
    try:
        with open("/proc/self/statm") as f:
            cur = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        pass
    return cur, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed_handlers(brain: Brain, spent: dict[str, float]) -> None:
    """Wrap the brain's handlers and publish to add their wall time into ``spent``."""
    def wrap(name, fn):
        def timed(*a):
            t0 = time.perf_counter()
            try:
                return fn(*a)
            finally:
                spent[name] += time.perf_counter() - t0
        return timed
    for cls, fn in list(brain._handlers.items()):
        brain._handlers[cls] = wrap(cls.__name__, fn)
    brain._publish = wrap("publish", brain._publish)


def run(jobs: int, parts: int, policy: str = "lrc", trace_memory: bool = False,
        every: int = 0, keep_all: bool = False, decode_jobs: int = 20) -> dict[str, Any]:
    """The benchmark; ``every`` > 0 also samples memory and sizes every that many jobs;
    ``keep_all``: the planner keeps the whole DAG (as the simulator does) instead of forgetting
    ended jobs; the decode cost alone is timed over the first ``decode_jobs`` jobs' events."""
    from . import wire

    gc.collect()
    rss0 = _rss_mb()[0]
    if trace_memory:
        tracemalloc.start()
    brain, bridge = new_brain(policy)
    if keep_all:
        brain.planner.bounded = False
    spent: dict[str, float] = defaultdict(float)
    _timed_handlers(brain, spent)
    kinds: Counter = Counter()
    peak_rdds = 0
    samples, t_gen, t_decode, t_all, decoded = [], 0.0, 0.0, 0.0, 0
    for j in range(jobs):
        t0 = time.perf_counter()
        lines = job_lines(j, parts)
        t1 = time.perf_counter()
        if j < decode_jobs:  # decode cost alone (the brain decodes again as it applies)
            for line in lines:
                wire.decode_event(line)
            decoded += len(lines)
        t2 = time.perf_counter()
        for line in lines:
            kinds[line[7:line.index('"', 7)]] += 1  # {"e": "kind", ...
        feed(brain, bridge, lines)
        t3 = time.perf_counter()
        t_gen, t_decode, t_all = t_gen + t1 - t0, t_decode + t2 - t1, t_all + t3 - t2
        peak_rdds = max(peak_rdds, len(brain.planner.dag.rdds))
        if every and (j + 1) % every == 0:
            gc.collect()
            s = {"jobs": j + 1, "rss_mb": round(_rss_mb()[0], 1),
                 "brain_s": round(t_all, 2), **structure_sizes(brain)}
            if trace_memory:
                s["tracemalloc_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
            samples.append(s)
    events = sum(kinds.values())
    out: dict[str, Any] = {
        "jobs": jobs, "parts": parts, "policy": policy, "events": events,
        "events_by_kind": dict(kinds), "keep_all": keep_all,
        "rdds_in_app": 10 * jobs, "planner_rdds_peak": peak_rdds,
        "tasks": kinds["task_end"], "publishes": bridge.publishes,
        "generate_s": round(t_gen, 2), "decode_events": decoded,
        "decode_us_per_event": round(t_decode / max(1, decoded) * 1e6, 2),
        "brain_s": round(t_all, 2), "brain_us_per_event": round(t_all / max(1, events) * 1e6, 2),
        "phases_s": {k: round(v, 2) for k, v in sorted(spent.items(), key=lambda kv: -kv[1])},
        "rss_start_mb": round(rss0, 1), "rss_end_mb": round(_rss_mb()[0], 1),
        "rss_peak_mb": round(_rss_mb()[1], 1), "sizes": structure_sizes(brain),
        "samples": samples,
    }
    if trace_memory:
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["tracemalloc_end_mb"], out["tracemalloc_peak_mb"] = round(cur / 2**20, 2), \
            round(peak / 2**20, 2)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m spark_plugin scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--parts", type=int, default=500, help="tasks per stage (2 stages per job)")
    ap.add_argument("--policy", default="lrc")
    ap.add_argument("--every", type=int, default=0, help="sample memory every N jobs")
    ap.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations "
                    "(slower: time figures are then inflated)")
    ap.add_argument("--profile", action="store_true", help="print the top of a cProfile")
    ap.add_argument("--keep-all", action="store_true", help="the planner keeps the whole DAG "
                    "(as the simulator does), not only what live jobs hold")
    args = ap.parse_args(argv)
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        res = prof.runcall(run, args.jobs, args.parts, args.policy, args.tracemalloc, args.every,
                           args.keep_all)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
    else:
        res = run(args.jobs, args.parts, args.policy, args.tracemalloc, args.every, args.keep_all)
    print(json.dumps(res, indent=1))
    return 0
