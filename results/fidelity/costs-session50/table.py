"""Per cell of a bench results.json with crd and crd+wholecost: median job times, the paired
ratio crd+wholecost / crd per repeat (above 1: crd faster) with a bootstrap 95% interval of its
median, each run's misses, and each variant's live hit ratio minus the replay of its own trace
(the replay prices rebuilds as the trace does, which is crd's rule: for crd+wholecost it is not
its own policy's replay). Several results.json: their runs of a cell pooled, paired within each.

    python results/fidelity/costs-session50/table.py results/fidelity/costs-session50/results.json
"""
import json
import sys
from collections import defaultdict

import numpy as np

cell = defaultdict(dict)  # (workload, F) -> policy -> (file, repeat) -> run
for i, path in enumerate(sys.argv[1:]):
    for r in json.load(open(path))["runs"]:
        if r.get("status") == "ok" and r["policy"] in ("crd", "crd+wholecost"):
            key = (r["workload"], r["cache_fraction"])
            cell[key].setdefault(r["policy"], {})[(i, r["repeat"])] = r
rng = np.random.default_rng(0)


def boot_median(x, n=10_000):
    return np.percentile([np.median(rng.choice(x, len(x))) for _ in range(n)], [2.5, 97.5])


def gap(rs):
    g = [100 * (r["hit_ratio"] - r["replay_hit_ratio"]) for r in rs if r.get("replay_hit_ratio")]
    return f"{np.median(g):+.1f} [{min(g):+.1f}, {max(g):+.1f}]" if g else "-"


print("| cell | job time, s: crd+wholecost / crd | crd+wholecost / crd per repeat | median [95%] "
      "| misses: crd+wholecost / crd | live - replay, points: crd+wholecost / crd |")
print("|---|---|---|---|---|---|")
for (w, f), by in sorted(cell.items()):
    old, new = by.get("crd+wholecost", {}), by.get("crd", {})
    both = sorted(set(old) & set(new))
    ratio = np.array([old[k]["jct_s"] / new[k]["jct_s"] for k in both])
    lo, hi = boot_median(ratio) if len(ratio) else (np.nan, np.nan)
    t = lambda rs: np.median([r["jct_s"] for r in rs.values()])
    m = lambda rs: ",".join(str(rs[k]["misses"]) for k in sorted(rs))
    print(f"| {w} {f} | {t(old):.1f} / {t(new):.1f} | {', '.join(f'{x:.2f}' for x in ratio)} "
          f"| {np.median(ratio):.2f}x [{lo:.2f}, {hi:.2f}] | {m(old)} / {m(new)} "
          f"| {gap(old.values())} / {gap(new.values())} |")
