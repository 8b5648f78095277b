"""crd's hit ratio and est. time / the best of lru/lrc/lerc/mrd per cell, for each variant given
(1: crd as it is; 1.1..2: densities rounded to powers of q; R: per-RDD mean block size):

    python results/foresight-live/crd-density-session36/compare.py 1 1.5 R
"""
import json, sys
from pathlib import Path
HERE = Path(__file__).parent
live = json.load(open(HERE / 'sim-traces-s36.json'))
syn = json.load(open('results/foresight/online.json'))['results']
qs = {q: json.load(open(HERE / f'crd-q{q}.json')) for q in sys.argv[1:]}
BASE = ("lru","lrc","lerc","mrd")
def best(kind, w, f):
    if kind == "live":
        return max(live[f"{w} {f} {p}"][0] for p in BASE), min(live[f"{w} {f} {p}"][1] for p in BASE)
    rs = [r for r in syn if r["workload"] == w and r["cache_fraction"] == f and r["policy"] in BASE]
    return max(r["hit_ratio"] for r in rs), min(r["est_runtime"] for r in rs)
def synref(w, f):
    r = next(r for r in syn if r["workload"] == w and r["cache_fraction"] == f and r["policy"] == "crd")
    return r["hit_ratio"], r["est_runtime"]
keys = list(qs[sys.argv[1]])
fails = {q: 0 for q in qs}
for k in keys:
    kind, w, f, p = k.split()
    f = float(f)
    bh, bt = best(kind, w, f)
    cells = []
    for q, d in qs.items():
        h, t = d[k]
        ok = h - bh >= -0.01 and t / bt <= 1.05
        fails[q] += not ok
        cells.append(f"q{q} {h:.3f}/{t/bt:.3f}{'' if ok else ' X'}")
    extra = f" (foresight crd {synref(w,f)[0]:.3f})" if kind == "syn" else ""
    print(f"{kind:4} {w:9} {f} {p:9} best {bh:.3f} | " + " | ".join(cells) + extra)
print("fails", fails)
