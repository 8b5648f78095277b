"""Per cell of bench results.json files: two policies' median job times, the paired ratio
BASE / NEW per repeat (above 1: NEW faster) with a bootstrap 95% interval of its median, each
run's misses, and each policy's live hit ratio minus the replay of its own trace. Several
results.json: their runs of a cell pooled, paired within each file.

    python results/fidelity/costs-session51/table.py BASE NEW results.json [...]
    (session 50 used it with BASE=crd+wholecost NEW=crd; tpch at scale 4 is "tpch x4" here)
"""
import json
import sys
from collections import defaultdict

import numpy as np

base_policy, new_policy, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
cell = defaultdict(dict)  # (workload and scale, F) -> policy -> (file, repeat) -> run
for i, path in enumerate(paths):
    doc = json.load(open(path))
    for r in doc["runs"]:
        if r.get("status") == "ok" and r["policy"] in (base_policy, new_policy):
            scale = (doc.get("settings", {}).get("scales") or {}).get(r["workload"], 1)
            key = (r["workload"] + (f" x{scale}" if scale != 1 else ""), r["cache_fraction"])
            cell[key].setdefault(r["policy"], {})[(i, r["repeat"])] = r
rng = np.random.default_rng(0)


def boot_median(x, n=10_000):
    return np.percentile([np.median(rng.choice(x, len(x))) for _ in range(n)], [2.5, 97.5])


def gap(rs):
    g = [100 * (r["hit_ratio"] - r["replay_hit_ratio"]) for r in rs if r.get("replay_hit_ratio")]
    return f"{np.median(g):+.1f} [{min(g):+.1f}, {max(g):+.1f}]" if g else "-"


b, n = base_policy, new_policy
print(f"| cell | job time, s: {b} / {n} | {b} / {n} per repeat | median [95%] "
      f"| misses: {b} / {n} | live - replay, points: {b} / {n} |")
print("|---|---|---|---|---|---|")
for (w, f), by in sorted(cell.items()):
    old, new = by.get(b, {}), by.get(n, {})
    both = sorted(set(old) & set(new))
    ratio = np.array([old[k]["jct_s"] / new[k]["jct_s"] for k in both])
    lo, hi = boot_median(ratio) if len(ratio) else (np.nan, np.nan)
    t = lambda rs: np.median([r["jct_s"] for r in rs.values()])
    m = lambda rs: ",".join(str(rs[k]["misses"]) for k in sorted(rs))
    jt = lambda rs: ",".join(f"{rs[k]['jct_s']:.0f}" for k in sorted(rs))
    print(f"| {w} {f} | {t(old):.1f} / {t(new):.1f} ({jt(old)} / {jt(new)}) "
          f"| {', '.join(f'{x:.2f}' for x in ratio)} "
          f"| {np.median(ratio):.2f}x [{lo:.2f}, {hi:.2f}] | {m(old)} / {m(new)} "
          f"| {gap(old.values())} / {gap(new.values())} |")
