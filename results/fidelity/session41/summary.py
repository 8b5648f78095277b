"""Issue 10's fidelity cells from a benchmark's results.json: per workload, cache fraction and policy, each run's
live hit ratio, the simulator's replay of its own trace, and the median of live - replay (points).

    python results/fidelity/session41/summary.py RESULTS.json
"""
import json
import statistics
import sys


def main(path: str) -> None:
    runs = [r for r in json.load(open(path))["runs"] if r.get("ok") and "replay_hit_ratio" in r]
    cells = sorted({(r["workload"], r["cache_fraction"], r["policy"]) for r in runs})
    print("| workload | F | policy | live hit per repeat | replay per repeat | live - replay, median "
          "(per repeat), points | job time per repeat (s) |")
    print("|---|---|---|---|---|---|---|")
    for w, f, p in cells:
        rs = sorted((r for r in runs if (r["workload"], r["cache_fraction"], r["policy"]) == (w, f, p)),
                    key=lambda r: r["repeat"])
        live = [r["hit_ratio"] for r in rs]
        rep = [r["replay_hit_ratio"] for r in rs]
        diff = [100 * (a - b) for a, b in zip(live, rep)]
        print(f"| {w} | {f} | {p} | {', '.join(f'{x:.3f}' for x in live)} "
              f"| {', '.join(f'{x:.3f}' for x in rep)} "
              f"| **{statistics.median(diff):+.1f}** ({', '.join(f'{x:+.1f}' for x in diff)}) "
              f"| {', '.join(f'{t:.1f}' for t in (r['jct_s'] for r in rs))} |")


if __name__ == "__main__":
    main(sys.argv[1])
