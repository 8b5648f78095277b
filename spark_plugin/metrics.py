"""Hit, miss, effective-hit and eviction counters, and plan latency: what `stats()` returns.

What a task *should* have read comes from the plan (`Planner.task_reads`). A planned read is a
hit when the executor reports it read the block from its own memory store, or when the task did
not recompute it (no put) and the block was in some executor's memory (a remote read): the same
definition the simulator uses. Otherwise it is a miss (recomputed, or read back from disk for
MEMORY_AND_DISK). A task with at least one planned read is an effective hit when all hit. Hits and
misses are counted per executor and per RDD (the report's per-RDD table).

Each eviction comes with its reason from the executor: the order that picked the victim
(`priority`: a table was in force and ranked it lowest, with its priority - ties go least recently
used first; `lru`: no table was in force, Spark's own order decided) and the block whose insert
needed the room (`for`).
"""
from __future__ import annotations

import time
from collections import Counter, OrderedDict, defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from .wire import Eviction

Block = tuple[int, int]
RECENT_SAMPLES = 2_000  # plan latencies, executor waits and push lags summarized: the most recent
RECENT_EVICTIONS = 200
AWAITED_JOBS = 1000  # jobs whose plan is published but not yet in force everywhere
PER_RDD = 1000  # RDDs with counts of their own: the ones counted most recently
# the plugin's own CPU by part (org.sparklrc.PluginCpu): measured in the driver JVM ...
DRIVER_CPU_PARTS = ("listener", "executor_events", "table_requests", "brain_calls", "table_hold")
EXECUTOR_CPU_PARTS = ("task_hooks", "table_watch")  # ... and reported by executors with each task
OLDER = "older"  # the key under which the counts of RDDs pushed out of that bound are summed


def _summary(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"count": 0, "median": None, "p99": None, "max": None}
    a = np.asarray(values, dtype=float)
    return {"count": int(a.size), "median": round(float(np.median(a)), 3),
            "p99": round(float(np.percentile(a, 99)), 3), "max": round(float(a.max()), 3)}


def _rdd_of(block: Any) -> str:
    """`rdd_17_3` -> "17"; other blocks (broadcast pieces) by kind; None -> "none"."""
    if not block:
        return "none"
    name = str(block)
    return name.split("_")[1] if name.startswith("rdd_") else name.split("_")[0]


class RecentCounter:
    """Counts per key (an RDD) for the ``limit`` keys counted most recently; the counts of keys
    pushed out are summed under ``OLDER``, so totals stay whole while an application that caches
    thousands of RDDs over its life does not grow its stats with them."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit, self.older = PER_RDD if limit is None else limit, 0
        self._counts: OrderedDict = OrderedDict()

    def add(self, key: Any, n: int = 1) -> None:
        counts = self._counts
        counts[key] = counts.pop(key, 0) + n  # re-inserted: now the most recent
        if len(counts) > self.limit:
            self.older += counts.popitem(last=False)[1]

    def __len__(self) -> int:
        return len(self._counts) + (self.older > 0)

    def as_dict(self) -> dict[str, int]:
        """By key as a string, numbers in numeric order, then names, then ``OLDER``."""
        out = {str(k): v for k, v in sorted(self._counts.items(),
                                            key=lambda kv: (isinstance(kv[0], str), kv[0]))}
        if self.older:
            out[OLDER] = self.older
        return out


@dataclass
class ExecutorCounts:
    installed: bool | None = None
    error: str = ""
    tasks: int = 0
    hits: int = 0
    remote_hits: int = 0
    misses: int = 0
    effective_hits: int = 0
    tasks_with_reads: int = 0
    evictions: int = 0
    table_version: int = 0  # the newest table version the executor reported applying


@dataclass
class Metrics:
    policy: str
    executors: dict[str, ExecutorCounts] = field(default_factory=lambda: defaultdict(ExecutorCounts))
    evictions_per_rdd: RecentCounter = field(default_factory=RecentCounter)
    hits_per_rdd: RecentCounter = field(default_factory=RecentCounter)
    misses_per_rdd: RecentCounter = field(default_factory=RecentCounter)
    # recent only (bounded: a long application must not grow them per job)
    plan_latency_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    executor_wait_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    push_lag_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))  # recent only
    eviction_orders: Counter = field(default_factory=Counter)
    evicted_for_rdd: RecentCounter = field(default_factory=RecentCounter)
    recent_evictions: deque = field(default_factory=lambda: deque(maxlen=RECENT_EVICTIONS))
    # job start (the driver's listener) -> its plan applied on every executor with the plugin
    in_force_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    # where plan latency goes: job start -> Spark's listener bus delivered it (to_listener) ->
    # the listener wrote its line (describe: the lineage walks, the encoding) -> the brain
    # decoded it (buffer, drain, py4j, decoding), the brain's job start (add_job), the publish
    # (changes, encoding, the py4j call); and the job_start line's size
    to_listener_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    describe_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    to_brain_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    add_job_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    publish_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    job_start_chars: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    whole_replies: bool = False  # the brain's drains come in one reply (bridge.whole_replies)
    _published_at: OrderedDict = field(default_factory=OrderedDict)  # version -> wall ms
    _awaited: OrderedDict = field(default_factory=OrderedDict)  # job -> (start ms, version, {ex: ms})
    _up_ms: dict = field(default_factory=dict)  # executor -> wall ms its plugin was reported up
    _executor_cpu_ns: dict = field(default_factory=dict)  # executor -> [hooks, watch] CPU ns so far

    def executor_plugin(self, executor: str, installed: bool, error: str,
                        now_ms: float | None = None) -> None:
        e = self.executors[executor]
        e.installed, e.error = installed, error
        self._up_ms[executor] = time.time() * 1000 if now_ms is None else now_ms

    def planned(self, jobs: Iterable[tuple[int, float]], version: int, now_ms: float) -> None:
        """Version ``version``, published at ``now_ms`` (after the publish call returned: an
        upper bound of the driver's stamp), carries the first plans of ``jobs`` (job, start ms),
        if any. Every version is recorded, plans or not: an executor whose answer holds several
        versions applies only the newest, which may carry no plan (crd publishes a version per
        task end), and that apply puts every older plan in force."""
        self._published_at[version] = now_ms
        while len(self._published_at) > AWAITED_JOBS:
            self._published_at.popitem(last=False)
        for job, start in jobs:
            self.plan_latency_ms.append(now_ms - start)
            self._awaited[job] = (start, version, {})
        while len(self._awaited) > AWAITED_JOBS:
            self._awaited.popitem(last=False)

    def table_applied(self, executor: str, version: int, lag_ms: float) -> None:
        """An executor applied ``version`` (and every one before it) ``lag_ms`` after its
        publish: the plans of awaited jobs up to that version are in force there; a job's
        in-force latency is taken once every executor with the plugin installed has it, each
        from the job's start or from its own start-up, whichever is later (an executor that came
        up after the job started - a warm driver's first jobs start while executor JVMs still
        launch - gets the table with its first ask: its start-up is not the plan's latency)."""
        e = self.executors[executor]
        e.table_version = max(e.table_version, version)
        published = self._published_at.get(version)
        up = self._up_ms.get(executor, float("-inf"))
        # a version published before the executor came up reached it with its first ask: the
        # push's lag is counted from its start-up (the multi-second lags of latency.md)
        self.push_lag_ms.append(lag_ms if published is None or up <= published
                                else max(0.0, published + lag_ms - up))
        if published is None or not self._awaited:
            return
        installed = {x for x, c in self.executors.items() if c.installed}
        for job, (start, v, at) in list(self._awaited.items()):
            if v <= version:
                at.setdefault(executor, published + lag_ms)
            if installed and installed <= at.keys():
                self.in_force_ms.append(max(at[x] - max(start, self._up_ms.get(x, start))
                                            for x in installed))
                del self._awaited[job]

    def task(self, executor: str, planned_reads: Iterable[Block], hits: set[Block], puts: set[Block],
             evicted: Iterable[Block], in_memory_somewhere: Callable[[Block], bool]) -> None:
        e = self.executors[executor]
        e.tasks += 1
        reads = set(planned_reads)
        local = reads & hits
        remote = {b for b in reads - local - puts if in_memory_somewhere(b)}
        hit = len(local) + len(remote)
        e.hits += hit
        e.remote_hits += len(remote)
        e.misses += len(reads) - hit
        for rdd, _ in local | remote:
            self.hits_per_rdd.add(rdd)
        for rdd, _ in reads - local - remote:
            self.misses_per_rdd.add(rdd)
        if reads:
            e.tasks_with_reads += 1
            e.effective_hits += hit == len(reads)
        for rdd, _ in evicted:
            e.evictions += 1
            self.evictions_per_rdd.add(rdd)

    def executor_cpu(self, executor: str, hooks_ns: int, watch_ns: int) -> None:
        """An executor's plugin CPU so far (cumulative; reports may arrive out of order)."""
        seen = self._executor_cpu_ns.setdefault(executor, [0, 0])
        seen[0], seen[1] = max(seen[0], hooks_ns), max(seen[1], watch_ns)

    def plugin_cpu(self, driver_ns: dict[str, int], brain_s: float) -> dict[str, float]:
        """The plugin's own CPU seconds by part: the driver JVM's parts (``driver_ns``, from
        ``LrcBridge.pluginCpu``), the executors' summed, the brain's Python thread, and their
        total. What it leaves out: PluginCpu.java's docstring."""
        ns = {p: driver_ns.get(p, 0) for p in DRIVER_CPU_PARTS}
        for i, part in enumerate(EXECUTOR_CPU_PARTS):
            ns[part] = sum(c[i] for c in self._executor_cpu_ns.values())
        out = {p: round(v / 1e9, 6) for p, v in ns.items()}  # microseconds: a short run's parts
        out["brain"] = round(brain_s, 6)
        out["total"] = round(sum(ns.values()) / 1e9 + brain_s, 6)
        return out

    def eviction_reasons(self, executor: str, stage: int, partition: int,
                         reasons: Iterable[Eviction]) -> None:
        """The executor's reason for each eviction of one task (see module docstring)."""
        for r in reasons:
            self.eviction_orders[r.order] += 1
            self.evicted_for_rdd.add(_rdd_of(r.for_block))
            self.recent_evictions.append({
                "executor": executor, "stage": stage, "partition": partition,
                "block": r.block, "order": r.order, "priority": r.priority, "for": r.for_block})

    def snapshot(self, **extra: Any) -> dict[str, Any]:
        execs = dict(self.executors)
        total = ExecutorCounts()
        for e in execs.values():
            for name in ("tasks", "hits", "remote_hits", "misses", "effective_hits", "tasks_with_reads",
                         "evictions"):
                setattr(total, name, getattr(total, name) + getattr(e, name))
        reads = total.hits + total.misses
        return {
            "policy": self.policy,
            "tasks": total.tasks,
            "hits": total.hits,
            "remote_hits": total.remote_hits,
            "misses": total.misses,
            "effective_hits": total.effective_hits,
            "tasks_with_reads": total.tasks_with_reads,
            "hit_ratio": total.hits / reads if reads else None,
            "effective_hit_ratio": (total.effective_hits / total.tasks_with_reads
                                    if total.tasks_with_reads else None),
            "evictions": total.evictions,
            "evictions_per_executor": {k: v.evictions for k, v in sorted(execs.items())},
            "evictions_per_rdd": self.evictions_per_rdd.as_dict(),
            "hits_per_rdd": self.hits_per_rdd.as_dict(),
            "misses_per_rdd": self.misses_per_rdd.as_dict(),
            "eviction_reasons": {"order": dict(sorted(self.eviction_orders.items())),
                                 "for_rdd": self.evicted_for_rdd.as_dict()},
            "recent_evictions": list(self.recent_evictions),
            "executors": {k: vars(v).copy() for k, v in sorted(execs.items())},
            "plan_latency_ms": _summary(self.plan_latency_ms),
            "executor_wait_ms": _summary(self.executor_wait_ms),
            "push_lag_ms": _summary(self.push_lag_ms),
            "in_force_ms": _summary(self.in_force_ms),
            "plan_breakdown_ms": {"to_listener": _summary(self.to_listener_ms),
                                  "describe": _summary(self.describe_ms),
                                  "to_brain": _summary(self.to_brain_ms),
                                  "add_job": _summary(self.add_job_ms),
                                  "publish": _summary(self.publish_ms)},
            "job_start_chars": _summary(self.job_start_chars),
            "whole_replies": self.whole_replies,
            **extra,
        }
