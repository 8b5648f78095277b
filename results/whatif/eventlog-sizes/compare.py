"""Event log vs spark-lrc's recorded trace of the same run, per workload: reads and reference
counts block by block, where the sizes came from, and the replayed hit ratios (lru, lrc;
F = 0.3 ... 0.9; one executor, as the runs were local[2]).
    python compare.py DIR...   (each DIR holds ev/ (the event log) and rec.parquet (run.py))"""
import sys
from collections import Counter

from lrc.eventlog import read_eventlog
from lrc.refcount import RefState
from lrc.sim import CompiledTrace, simulate
from lrc.trace import load_trace


def reads(t):
    return Counter(b for e in t.events if e.kind == "task" for b in e.reads)


def counts(t):
    refs, seq = RefState(), {}
    for e in t.events:
        if e.kind == "task":
            refs.add_task(e.stage_id, e.partition, e.reads, seq.setdefault(e.stage_id, len(seq)))
    return {b: refs.refs(b) for b in reads(t)}


worst, far = 0.0, 0
print("| run | reads, counts | size sources | F/policy: event log / recorded |")
print("|---|---|---|---|")
for d in sys.argv[1:]:
    rec, el = load_trace(f"{d}/rec.parquet"), read_eventlog(f"{d}/ev")
    same = reads(el.trace) == reads(rec) and counts(el.trace) == counts(rec)
    a, b = CompiledTrace(el.trace), CompiledTrace(rec)
    cells = []
    for f in (0.3, 0.5, 0.7, 0.9):
        for p in ("lru", "lrc"):
            x, y = simulate(a, p, f, executors=1).hit_ratio, simulate(b, p, f, executors=1).hit_ratio
            worst = max(worst, abs(x - y))
            far += abs(x - y) > 0.02
            cells.append(f"{f}/{p} {x:.3f}/{y:.3f}" + (" **!**" if abs(x - y) > 0.02 else ""))
    src = ", ".join(f"{n} {k}" for k, n in sorted(Counter(el.size_source.values()).items()))
    print(f"| {d.rstrip('/').split('/')[-1]} | {'equal' if same else 'DIFFER'} | {src} | {'; '.join(cells)} |")
print(f"\ncells more than 0.02 apart: {far}; largest distance {worst:.3f}")
