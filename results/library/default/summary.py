"""Issue 11's library workloads under the default policy (crd with admission) against spark-lrc's
LRU and plain Spark, one row per workload and cache fraction, read from the result folders each
session committed (their results.json), with the benchmark's own per-repeat ratio
(`workloads.bench.stats.speedup`: median of LRU time / crd time in the same repeat, [min-max]).

    python results/library/default/summary.py > results/library/default/summary.md
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from workloads.bench.stats import ok_runs, select, speedup

HERE = Path(__file__).resolve().parent
LIB = HERE.parent
# (workload, folder under results/library, the fractions that folder holds for the default)
CELLS = [
    ("graphx_pagerank", "graphx-pagerank-default-session30", 0.3),
    ("graphx_pagerank", "graphx-pagerank-default-session29", 0.5),
    ("graphx_pagerank", "graphx-pagerank-default-session30", 0.7),
    ("graphx_cc", "graphx-cc-default-session30", 0.3),
    ("graphx_cc", "graphx-cc-default-session30", 0.5),
    ("graphx_cc", "graphx-cc-default-session30", 0.7),
    ("graphx_svdpp", "svdpp-default-session32", 0.3),
    ("graphx_svdpp", "svdpp-default-session29", 0.5),
    ("graphx_svdpp", "svdpp-default-session32", 0.7),
    ("mllib", "mllib-default-session31", 0.3),
    ("mllib", "mllib-default-session32", 0.5),
    ("mllib", "mllib-default-session31", 0.7),
    ("tpch", "tpch-default-session31", 0.3),
    ("tpch", "tpch-default-session31", 0.5),
    ("tpch", "tpch-default-session31", 0.7),
]


def _ratio(runs, w, policy, f, base) -> str:
    s = speedup(runs, w, policy, f, baseline=base)
    return "-" if s is None else f"{s['median']:.2f}x [{s['min']:.2f}-{s['max']:.2f}]"


def _hits(runs, w, policy, f) -> str:
    xs = [r["hit_ratio"] for r in ok_runs(select(runs, w, policy, f)) if r.get("hit_ratio") is not None]
    return "-" if not xs else f"{100 * statistics.median(xs):.1f}%"


def _checksums(runs, w, f) -> str:
    rs = select(runs, w, None, f)
    good = sum(1 for r in rs if r.get("checksum_ok"))
    return f"{good}/{len(rs)}"


def rows() -> list[str]:
    out = ["| workload | F | LRU / crd | plain / crd | plain / LRU | hit ratio LRU / crd | "
           "checksums equal | runs in |",
           "|---|---|---|---|---|---|---|---|"]
    for w, folder, f in CELLS:
        path = LIB / folder / "results.json"
        if not path.exists():
            out.append(f"| {w} | {f} | not measured | | | | | `{folder}/` |")
            continue
        runs = json.loads(path.read_text())["runs"]
        out.append(f"| {w} | {f} | {_ratio(runs, w, 'crd', f, 'lru')} | "
                   f"{_ratio(runs, w, 'crd', f, 'plain')} | {_ratio(runs, w, 'lru', f, 'plain')} | "
                   f"{_hits(runs, w, 'lru', f)} / {_hits(runs, w, 'crd', f)} | "
                   f"{_checksums(runs, w, f)} | `{folder}/` |")
    return out


if __name__ == "__main__":
    print("\n".join(rows()))
