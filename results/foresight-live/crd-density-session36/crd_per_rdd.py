"""crd with per-RDD density (rebuild time / the RDD's mean block size), monkeypatched into ArrayCosts."""
import json, sys
from collections import defaultdict
import lrc.cost as C
from lrc.sim import CompiledTrace, simulate
from lrc.trace import load_trace
from lrc.synth import WORKLOADS, make
RDD_OF = {}
def density(self, block):
    d = self._density
    if d is None:
        cost, sizes, disk = self._arrays
        rdd_of = self.rdd_of
        tot = defaultdict(lambda: [0, 0])
        for b, s in enumerate(sizes):
            t = tot[rdd_of[b]]; t[0] += s; t[1] += 1
        mean = {r: t[0] / t[1] for r, t in tot.items()}
        d = self._density = [1.0 / self.disk_bytes_per_s if k else c / max(1, mean[rdd_of[b]])
                             for b, (c, k) in enumerate(zip(cost, disk))]
    return d[block] if block < len(d) else C.UNKNOWN
C.ArrayCosts.density = density
import lrc.sim as S
orig_init = S.ArrayCosts.__init__
def run(ct, *a, **k):
    C.ArrayCosts.rdd_of = ct.rdd_of
    return simulate(ct, *a, **k)
out = {}
for w in ("ml","zip","cc","pagerank","tpch","sql"):
    ct = CompiledTrace(load_trace(f"{sys.argv[-1]}/{w}-calib-lru.parquet"))
    for f in (0.3, 0.5, 0.7):
        for adm in (False, True):
            r = run(ct, "crd", f, executors=2, cores=1, refs="online", admit=adm)
            out[f"live {w} {f} crd{'+admit' if adm else ''}"] = (r.hit_ratio, r.est_runtime)
for w in sorted(WORKLOADS):
    ct = CompiledTrace(make(w, seed=0))
    for f in (0.3, 0.5, 0.7):
        r = run(ct, "crd", f, executors=4, refs="online")
        out[f"syn {w} {f} crd"] = (r.hit_ratio, r.est_runtime)
json.dump(out, open(sys.argv[1], "w"), indent=0)
