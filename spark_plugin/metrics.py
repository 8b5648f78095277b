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

from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from .wire import Eviction

Block = tuple[int, int]
RECENT_PUSHES = 100_000
RECENT_SAMPLES = 2_000  # plan latencies and executor waits summarized: the most recent ones
RECENT_EVICTIONS = 200


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
    evictions_per_rdd: Counter = field(default_factory=Counter)
    hits_per_rdd: Counter = field(default_factory=Counter)
    misses_per_rdd: Counter = field(default_factory=Counter)
    # recent only (bounded: a long application must not grow them per job)
    plan_latency_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    executor_wait_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_SAMPLES))
    push_lag_ms: deque = field(default_factory=lambda: deque(maxlen=RECENT_PUSHES))  # recent only
    eviction_orders: Counter = field(default_factory=Counter)
    evicted_for_rdd: Counter = field(default_factory=Counter)
    recent_evictions: deque = field(default_factory=lambda: deque(maxlen=RECENT_EVICTIONS))

    def executor_plugin(self, executor: str, installed: bool, error: str) -> None:
        e = self.executors[executor]
        e.installed, e.error = installed, error

    def table_applied(self, executor: str, version: int, lag_ms: float) -> None:
        e = self.executors[executor]
        e.table_version = max(e.table_version, version)
        self.push_lag_ms.append(lag_ms)

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
            self.hits_per_rdd[rdd] += 1
        for rdd, _ in reads - local - remote:
            self.misses_per_rdd[rdd] += 1
        if reads:
            e.tasks_with_reads += 1
            e.effective_hits += hit == len(reads)
        for rdd, _ in evicted:
            e.evictions += 1
            self.evictions_per_rdd[rdd] += 1

    def eviction_reasons(self, executor: str, stage: int, partition: int,
                         reasons: Iterable[Eviction]) -> None:
        """The executor's reason for each eviction of one task (see module docstring)."""
        for r in reasons:
            self.eviction_orders[r.order] += 1
            self.evicted_for_rdd[_rdd_of(r.for_block)] += 1
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
            "evictions_per_rdd": {str(k): v for k, v in sorted(self.evictions_per_rdd.items())},
            "hits_per_rdd": {str(k): v for k, v in sorted(self.hits_per_rdd.items())},
            "misses_per_rdd": {str(k): v for k, v in sorted(self.misses_per_rdd.items())},
            "eviction_reasons": {"order": dict(sorted(self.eviction_orders.items())),
                                 "for_rdd": dict(sorted(self.evicted_for_rdd.items()))},
            "recent_evictions": list(self.recent_evictions),
            "executors": {k: vars(v).copy() for k, v in sorted(execs.items())},
            "plan_latency_ms": _summary(self.plan_latency_ms),
            "executor_wait_ms": _summary(self.executor_wait_ms),
            "push_lag_ms": _summary(self.push_lag_ms),
            **extra,
        }
