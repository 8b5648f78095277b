"""Block sizes of cached RDDs estimated from a Spark event log's task input metrics, for logs
written without block updates (`lrc.eventlog` uses it when nothing better is known)."""
from __future__ import annotations

from collections import Counter, defaultdict
from statistics import median

from lrc.trace import Trace


def input_metrics_sizes(trace: Trace, task_bytes: list[int]) -> dict[int, int]:
    """Block size per cached RDD from the bytes tasks read (Spark counts a cached block a
    task reads in its Input Metrics): first from tasks that read one RDD's blocks, then, with
    those sizes known, from tasks whose other reads are known; an even split for the rest."""
    tasks = [e for e in trace.events if e.kind == "task"]
    if len(tasks) != len(task_bytes):
        return {}
    samples = [(Counter(r for r, _ in e.reads), n) for e, n in zip(tasks, task_bytes)
               if e.reads and n > 0]
    known: dict[int, int] = {}
    while True:
        found: dict[int, list[float]] = defaultdict(list)
        for by_rdd, n in samples:
            todo = [r for r in by_rdd if r not in known]
            if len(todo) == 1:
                rest = n - sum(known[r] * k for r, k in by_rdd.items() if r in known)
                if rest > 0:
                    found[todo[0]].append(rest / by_rdd[todo[0]])
        if not found:
            break
        for r, vals in found.items():
            known[r] = max(1, int(median(vals)))
    split: dict[int, list[float]] = defaultdict(list)
    for by_rdd, n in samples:
        total = sum(by_rdd.values())
        for r in by_rdd:
            if r not in known:
                split[r].append(n / total)
    for r, vals in split.items():
        known[r] = max(1, int(median(vals)))
    return known
