"""Share of LRU's distance to unlimited memory that crd closes, per cell, with a bootstrap 95%
interval (runs resampled within each of the three samples: lru, crd, unlimited; medians).

    python results/latest/online-session48/closed.py results/latest/online-session48/results.json
"""
import json
import sys
from collections import defaultdict

import numpy as np

runs = json.load(open(sys.argv[1]))["runs"]
jct = defaultdict(list)
for r in runs:
    if r.get("status") == "ok":
        jct[(r["workload"], r["cache_fraction"], r["policy"])].append(r["jct_s"])
rng = np.random.default_rng(0)
print("| workload | F | runs | LRU / unlimited | crd share closed | bootstrap 95% interval |")
print("|---|---|---|---|---|---|")
for (w, f, p), lru in sorted(jct.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
    if p != "lru":
        continue
    crd, unl = np.array(jct[(w, f, "crd")]), np.array(jct[(w, None, "unlimited")])
    lru = np.array(lru)

    def share(a, b, u):
        return (np.median(a) - np.median(b)) / (np.median(a) - np.median(u))

    boot = [share(rng.choice(lru, len(lru)), rng.choice(crd, len(crd)), rng.choice(unl, len(unl)))
            for _ in range(10_000)]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    print(f"| {w} | {f} | {len(lru)} | {np.median(lru) / np.median(unl):.2f}x "
          f"| {share(lru, crd, unl):+.2f} | [{lo:+.2f}, {hi:+.2f}] |")
