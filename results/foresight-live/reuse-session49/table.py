"""Per cell of a bench results.json with lru, crd and crd+noreuse (and unlimited): median job
times, the paired ratio crd+noreuse / crd per repeat with a bootstrap 95% interval of its median,
LRU's speed over crd's, each crd variant's share of LRU's distance to unlimited memory (medians;
bootstrap 95% interval resampling each policy's runs), and the misses of every run; a run without
lru (the extra repeats) shows the paired columns only.

    python results/foresight-live/reuse-session49/table.py results/foresight-live/reuse-session49/results.json
"""
import json
import sys
from collections import defaultdict

import numpy as np

runs = [r for r in json.load(open(sys.argv[1]))["runs"] if r.get("status") == "ok"]
cell = defaultdict(dict)  # (workload, F) -> policy -> repeat -> run
unl = defaultdict(list)
for r in runs:
    if r["policy"] == "unlimited":
        unl[r["workload"]].append(r["jct_s"])
    else:
        cell[(r["workload"], r["cache_fraction"])].setdefault(r["policy"], {})[r["repeat"]] = r
rng = np.random.default_rng(0)
med = np.median


def boot(f, *samples, n=10_000):
    vals = [f(*(rng.choice(s, len(s)) for s in samples)) for _ in range(n)]
    return np.percentile(vals, [2.5, 97.5])


print("| cell | job time, s: lru / crd+noreuse / crd (unlimited) | crd+noreuse / crd per repeat "
      "| median [95%] | LRU / crd | share closed: crd+noreuse / crd [95%] "
      "| misses: lru / crd+noreuse / crd |")
print("|---|---|---|---|---|---|---|")
for (w, f), by in sorted(cell.items()):
    t = {p: np.array([by[p][k]["jct_s"] for k in sorted(by[p])]) for p in by}
    both = sorted(set(by["crd"]) & set(by["crd+noreuse"]))
    ratio = np.array([by["crd+noreuse"][k]["jct_s"] / by["crd"][k]["jct_s"] for k in both])
    lo, hi = boot(med, ratio)
    u = np.array(unl.get(w, []))
    shares = "-"
    if len(u) and "lru" in t:
        def share(a, b, c):
            return (med(a) - med(b)) / (med(a) - med(c))
        slo, shi = boot(share, t["lru"], t["crd"], u)
        shares = (f"{share(t['lru'], t['crd+noreuse'], u):+.2f} / {share(t['lru'], t['crd'], u):+.2f} "
                  f"[{slo:+.2f}, {shi:+.2f}]")
    miss = " / ".join(",".join(str(by[p][k]["misses"]) for k in sorted(by[p])) if p in by else "-"
                      for p in ("lru", "crd+noreuse", "crd"))
    unl_s = f" ({med(u):.1f})" if len(u) else ""
    lru = f"{med(t['lru']):.1f}" if "lru" in t else "-"
    vs_lru = f"{med(t['lru']) / med(t['crd']):.2f}x" if "lru" in t else "-"
    print(f"| {w} {f} | {lru} / {med(t['crd+noreuse']):.1f} / {med(t['crd']):.1f}{unl_s} "
          f"| {', '.join(f'{x:.2f}' for x in ratio)} | {med(ratio):.2f}x [{lo:.2f}, {hi:.2f}] "
          f"| {vs_lru} | {shares} | {miss} |")
