"""Hit, miss, effective-hit and eviction counters, and plan latency: what `stats()` returns.

Hits come from the executors (a `get` of an RDD block in the MemoryStore by the task's thread);
what a task *should* have read comes from the plan (`Planner.task_reads`). A read that was not a
memory hit is a miss (recomputed, or read back from disk for MEMORY_AND_DISK). A task with at
least one planned read is an effective hit when every planned read hit.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

Block = tuple[int, int]


def _summary(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"count": 0, "median": None, "p99": None, "max": None}
    a = np.asarray(values, dtype=float)
    return {"count": int(a.size), "median": round(float(np.median(a)), 3),
            "p99": round(float(np.percentile(a, 99)), 3), "max": round(float(a.max()), 3)}


@dataclass
class ExecutorCounts:
    installed: bool | None = None
    error: str = ""
    tasks: int = 0
    hits: int = 0
    misses: int = 0
    effective_hits: int = 0
    tasks_with_reads: int = 0
    evictions: int = 0


@dataclass
class Metrics:
    policy: str
    executors: dict[str, ExecutorCounts] = field(default_factory=lambda: defaultdict(ExecutorCounts))
    evictions_per_rdd: Counter = field(default_factory=Counter)
    plan_latency_ms: list[float] = field(default_factory=list)
    executor_wait_ms: list[float] = field(default_factory=list)

    def executor_plugin(self, executor: str, installed: bool, error: str) -> None:
        e = self.executors[executor]
        e.installed, e.error = installed, error

    def task(self, executor: str, planned_reads: Iterable[Block], hits: set[Block],
             evicted: Iterable[Block]) -> None:
        e = self.executors[executor]
        e.tasks += 1
        reads = set(planned_reads)
        hit = len(reads & hits)
        e.hits += hit
        e.misses += len(reads) - hit
        if reads:
            e.tasks_with_reads += 1
            e.effective_hits += hit == len(reads)
        for rdd, _ in evicted:
            e.evictions += 1
            self.evictions_per_rdd[rdd] += 1

    def snapshot(self, **extra: Any) -> dict[str, Any]:
        execs = dict(self.executors)
        total = ExecutorCounts()
        for e in execs.values():
            for name in ("tasks", "hits", "misses", "effective_hits", "tasks_with_reads", "evictions"):
                setattr(total, name, getattr(total, name) + getattr(e, name))
        reads = total.hits + total.misses
        return {
            "policy": self.policy,
            "tasks": total.tasks,
            "hits": total.hits,
            "misses": total.misses,
            "effective_hits": total.effective_hits,
            "tasks_with_reads": total.tasks_with_reads,
            "hit_ratio": total.hits / reads if reads else None,
            "effective_hit_ratio": (total.effective_hits / total.tasks_with_reads
                                    if total.tasks_with_reads else None),
            "evictions": total.evictions,
            "evictions_per_executor": {k: v.evictions for k, v in sorted(execs.items())},
            "evictions_per_rdd": {str(k): v for k, v in sorted(self.evictions_per_rdd.items())},
            "executors": {k: vars(v).copy() for k, v in sorted(execs.items())},
            "plan_latency_ms": _summary(self.plan_latency_ms),
            "executor_wait_ms": _summary(self.executor_wait_ms),
            **extra,
        }
