"""crd in the simulator with its cost per byte changed (monkeypatching lrc.cost.ArrayCosts.density),
replayed on the six live calibration traces (bench replay: 2 executors x 1 core, online refs, with
and without admission) and the synthetic workloads (4 executors, online):

    python crd_variants.py VARIANT OUT.json TRACEDIR

VARIANT: a number q (each density rounded to the nearest power of q; 1: crd as it is) or R (each
block's rebuild time over its RDD's mean block size). TRACEDIR holds W-calib-lru.parquet.
"""
import json
import math
import sys
from collections import defaultdict

import lrc.cost as C
from lrc.sim import CompiledTrace, simulate
from lrc.synth import WORKLOADS, make
from lrc.trace import load_trace

variant, out_path, trace_dir = sys.argv[1:4]
original = C.ArrayCosts.density


def rounded(q):
    lq = math.log(q)

    def density(self, block):
        x = original(self, block)
        return q ** round(math.log(x) / lq) if x > 0 else x
    return density


def per_rdd(self, block):
    d = self._density
    if d is None:
        cost, sizes, disk = self._arrays
        tot = defaultdict(lambda: [0, 0])
        for b, s in enumerate(sizes):
            t = tot[RDD_OF[b]]
            t[0] += s
            t[1] += 1
        d = self._density = [1.0 / self.disk_bytes_per_s if k else c / max(1, tot[RDD_OF[b]][0] / tot[RDD_OF[b]][1])
                             for b, (c, k) in enumerate(zip(cost, disk))]
    return d[block] if block < len(d) else C.UNKNOWN


if variant == "R":
    C.ArrayCosts.density = per_rdd
elif float(variant) > 1:
    C.ArrayCosts.density = rounded(float(variant))
RDD_OF = []
out = {}
cases = [("live", w, lambda w=w: CompiledTrace(load_trace(f"{trace_dir}/{w}-calib-lru.parquet")))
         for w in ("ml", "zip", "cc", "pagerank", "tpch", "sql")]
cases += [("syn", w, lambda w=w: CompiledTrace(make(w, seed=0))) for w in sorted(WORKLOADS)]
for kind, w, compile_ in cases:
    ct = compile_()
    RDD_OF = ct.rdd_of
    for f in (0.3, 0.5, 0.7):
        for adm in ((False, True) if kind == "live" else (False,)):
            kw = dict(executors=2, cores=1) if kind == "live" else dict(executors=4)
            r = simulate(ct, "crd", f, refs="online", admit=adm, **kw)
            out[f"{kind} {w} {f} crd{'+admit' if adm else ''}"] = (r.hit_ratio, r.est_runtime)
json.dump(out, open(out_path, "w"), indent=0)
