"""crd with its miss-cost density quantized to powers of Q (monkeypatch), on live traces and synthetic."""
import json, math, sys
import lrc.policies.crd as P
from lrc.sim import CompiledTrace, simulate
from lrc.trace import load_trace
from lrc.synth import WORKLOADS, make
Q = float(sys.argv[1])
INF = float("inf")
def bind(self, refs):
    get, density, weight = refs.next_ref.get, refs.costs.density, refs.seq_weight.get
    lq = math.log(Q) if Q > 1 else None
    def q(x):
        return Q ** round(math.log(x) / lq) if lq and x > 0 else x
    def priority(block):
        nxt = get(block)
        if nxt is None:
            return -INF
        d = max(1, nxt - refs.now + 1)
        w = weight(nxt)
        return q(density(block)) / (d * d) if w is None else w * q(density(block)) / (d * d)
    return priority
P.CRD.bind = bind
out = {}
for w in ("ml","zip","cc","pagerank","tpch","sql"):
    ct = CompiledTrace(load_trace(f"{sys.argv[-1]}/{w}-calib-lru.parquet"))
    for f in (0.3, 0.5, 0.7):
        for adm in (False, True):
            r = simulate(ct, "crd", f, executors=2, cores=1, refs="online", admit=adm)
            out[f"live {w} {f} crd{'+admit' if adm else ''}"] = (r.hit_ratio, r.est_runtime)
for w in sorted(WORKLOADS):
    ct = CompiledTrace(make(w, seed=0))
    for f in (0.3, 0.5, 0.7):
        r = simulate(ct, "crd", f, executors=4, refs="online")
        out[f"syn {w} {f} crd"] = (r.hit_ratio, r.est_runtime)
json.dump(out, open(sys.argv[2], "w"), indent=0)
