"""Per fraction: LRU / crd+norecur / crd medians, and the per-repeat ratios, from a bench results.json:
    python ab_table.py live-tpch/results.json"""
import json, sys, statistics as st
d = json.load(open(sys.argv[1]))
runs = [r for r in d["runs"] if r.get("ok")]
fr = sorted({r["cache_fraction"] for r in runs})
for f in fr:
    by = {}
    for r in runs:
        if r["cache_fraction"] == f:
            by.setdefault(r["repeat"], {})[r["policy"]] = r
    def med(p, k): return st.median(ps[p][k] for ps in by.values())
    def rng(vals): return f"{st.median(vals):.2f}x [{min(vals):.2f}-{max(vals):.2f}]"
    lc = [ps["lru"]["jct_s"] / ps["crd"]["jct_s"] for ps in by.values()]
    ln = [ps["lru"]["jct_s"] / ps["crd+norecur"]["jct_s"] for ps in by.values()]
    nc = [ps["crd+norecur"]["jct_s"] / ps["crd"]["jct_s"] for ps in by.values()]
    hits = {p: [round(ps[p]["hit_ratio"], 3) for ps in by.values()] for p in ("lru", "crd+norecur", "crd")}
    miss = {p: [ps[p]["misses"] for ps in by.values()] for p in ("lru", "crd+norecur", "crd")}
    print(f"| {f} | {med('lru','jct_s'):.1f} / {med('crd+norecur','jct_s'):.1f} / {med('crd','jct_s'):.1f} | {rng(nc)} | {rng(ln)} | {rng(lc)} | "
          f"{', '.join(map(str, hits['lru']))} / {', '.join(map(str, hits['crd+norecur']))} / {', '.join(map(str, hits['crd']))} | "
          f"{st.median(miss['lru'])} / {st.median(miss['crd+norecur'])} / {st.median(miss['crd'])} |")
