"""Simulator throughput: block accesses (reads + creates) replayed per second, per policy."""
from __future__ import annotations

import cProfile
import pstats
import statistics
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


def bench_speed(accesses: int, policies: list[str], out: Path | None, profile: bool,
                fractions: tuple[float, ...] = (0.3, 0.5), repeat: int = 3) -> list[dict]:
    """Each policy at each cache fraction, ``repeat`` times; reports the median time."""
    t0 = time.perf_counter()
    ct = bench_trace(accesses)
    n = len(ct.access)
    print(f"trace: {n:,} accesses, {len(ct.blocks):,} blocks "
          f"(built and compiled in {time.perf_counter() - t0:.1f} s)")
    rows = []
    for f in fractions:
        for p in policies:
            times = []
            for _ in range(repeat):
                prof = cProfile.Profile() if profile else None
                t = time.perf_counter()
                if prof:
                    prof.enable()
                r = simulate(ct, p, f)
                if prof:
                    prof.disable()
                times.append(time.perf_counter() - t)
                if prof:
                    pstats.Stats(prof).sort_stats("tottime").print_stats(12)
            dt = statistics.median(times)
            goal = GOALS.get(p)
            rows.append({"policy": p, "fraction": f, "seconds": dt, "rate": n / dt, "goal": goal,
                         "hit_ratio": r.hit_ratio, "evictions": r.evictions,
                         "runs": [round(x, 2) for x in times]})
            print(f"{f:4.2f} {p:5s} {dt:6.2f} s  {n / dt:12,.0f} accesses/s  "
                  f"goal {goal or 'O(n log n)'}  hit ratio {r.hit_ratio:.3f}  "
                  f"evictions {r.evictions:,}  runs {rows[-1]['runs']}", flush=True)
    if out:
        lines = ["| fraction | policy | median s | accesses/s | goal | hit ratio | evictions | runs (s) |",
                 "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['fraction']} | {r['policy']} | {r['seconds']:.2f} | {r['rate']:,.0f} | "
                  f"{r['goal'] and format(r['goal'], ',') or 'O(n log n)'} | {r['hit_ratio']:.3f} | "
                  f"{r['evictions']:,} | {', '.join(map(str, r['runs']))} |" for r in rows]
        out.write_text(f"Trace: synthetic pagerank, {n:,} accesses, 4 executors, median of "
                       f"{repeat} runs.\n\n" + "\n".join(lines) + "\n")
    return rows
