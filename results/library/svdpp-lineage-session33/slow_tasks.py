"""The tasks over a threshold in a benchmark run's recorded trace, with the cached blocks they
read, and the narrow lineage of each read RDD down to shuffles: cached (C) or not, and whether
the application had unpersisted it (U) before the task ran, and its parents (an RDD already
printed is not walked again). What the README's "finding" and "pattern" sections read.

    python results/library/svdpp-lineage-session33/slow_tasks.py TRACE.parquet [--over 5]
"""
from __future__ import annotations

import argparse

from lrc.trace import load_trace


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--over", type=float, default=5.0, help="seconds")
    args = ap.parse_args()
    t = load_trace(args.trace)
    unpersisted_at = {e.rdd_id: i for i, e in enumerate(t.events) if e.kind == "unpersist"}
    lineages = set()
    for i, e in enumerate(t.events):
        if e.kind == "task" and (e.duration_s or 0) > args.over:
            print(f"stage {e.stage_id} partition {e.partition}: {e.duration_s:.1f} s, "
                  f"reads {list(e.reads)}, stores {list(e.creates)}")
            lineages.update((r, i) for r, _ in e.reads)
    for rdd, at in sorted(lineages)[:1]:  # the first read RDD's lineage, as of its first slow task
        print(f"\nlineage of rdd {rdd} (C: cached, U: unpersisted before that task):")
        seen: set[int] = set()

        def walk(r: int, depth: int) -> None:
            if r in seen or r not in t.dag.rdds:
                return
            seen.add(r)
            x = t.dag.rdds[r]
            gone = unpersisted_at.get(r, len(t.events)) < at
            deps = ", ".join(f"{d.parent}{' (shuffle)' if d.kind == 'shuffle' else ''}"
                             for d in x.deps)
            print(f"{'  ' * min(depth, 20)}{r} {'C' if x.cached else ' '}{'U' if gone else ' '} "
                  f"{x.call_site} <- {deps}")
            if x.cached and not gone and depth:
                return  # read from the cache, not recomputed
            for d in x.deps:
                if d.kind != "shuffle":
                    walk(d.parent, depth + 1)
        walk(rdd, 0)


if __name__ == "__main__":
    main()
