"""Simulator throughput: block accesses (reads + creates) replayed per second, per policy."""
from __future__ import annotations

import cProfile
import pstats
import time
from pathlib import Path

from lrc.sim import CompiledTrace, simulate
from lrc.synth import pagerank

GOALS = {"lru": 1_000_000, "lrc": 300_000, "lerc": 300_000, "mrd": 300_000}


def bench_trace(accesses: int) -> CompiledTrace:
    """A pagerank trace (4 accesses per partition per iteration) of at least ``accesses``."""
    parts = 2000
    iters = max(1, -(-accesses // (4 * parts)))
    return CompiledTrace(pagerank(seed=1, parts=parts, iters=iters))


def bench_speed(accesses: int, policies: list[str], out: Path | None, profile: bool) -> list[dict]:
    t0 = time.perf_counter()
    ct = bench_trace(accesses)
    n = len(ct.access)
    print(f"trace: {n:,} accesses, {len(ct.blocks):,} blocks "
          f"(built and compiled in {time.perf_counter() - t0:.1f} s)")
    rows = []
    for p in policies:
        prof = cProfile.Profile() if profile else None
        t = time.perf_counter()
        if prof:
            prof.enable()
        r = simulate(ct, p, 0.5)
        if prof:
            prof.disable()
        dt = time.perf_counter() - t
        goal = GOALS.get(p)
        rows.append({"policy": p, "seconds": dt, "rate": n / dt, "goal": goal,
                     "hit_ratio": r.hit_ratio})
        print(f"{p:5s} {dt:6.2f} s  {n / dt:12,.0f} accesses/s  goal {goal or 'O(n log n)'}  "
              f"hit ratio {r.hit_ratio:.3f}")
        if prof:
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    if out:
        lines = ["| policy | seconds | accesses/s | goal |", "|---|---|---|---|"]
        lines += [f"| {r['policy']} | {r['seconds']:.2f} | {r['rate']:,.0f} | "
                  f"{r['goal'] and format(r['goal'], ',') or 'O(n log n)'} |" for r in rows]
        out.write_text(f"Trace: synthetic pagerank, {n:,} accesses, cache fraction 0.5, "
                       "4 executors.\n\n" + "\n".join(lines) + "\n")
    return rows
