"""The online planner given the real next jobs as its prediction (horizons 1-100): python oracle.py TRACE"""
import sys, lrc.predict as P
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes
ws, _, ct = working_set_bytes(sys.argv[1])
seen = []
oo, oc = P.Predictor.observe, P.Predictor.cycle
def rec(self, shape):
    seen.append(shape); oo(self, shape)
P.Predictor.observe = rec
simulate(ct, "crd", 0.5, executors=2, cores=1, refs="online")
allshapes = list(seen)
for horizon in (1, 2, 3, 4, 6, 100):
    def observe(self, shape):
        oo(self, shape); self.n = getattr(self, "n", 0) + 1
    def cycle(self):
        return allshapes[self.n:self.n + horizon]
    P.Predictor.observe, P.Predictor.cycle = observe, cycle
    for f in (0.3, 0.5, 0.7):
        row = []
        for p in ("mrd", "crd", "crd+a"):
            r = simulate(ct, p.split("+")[0], f, executors=2, cores=1, refs="online", admit=p.endswith("+a"))
            row.append(f"{p} {r.hit_ratio:.3f}/{r.est_runtime:.1f}")
        print("oracle", horizon, f, "  ".join(row), flush=True)
