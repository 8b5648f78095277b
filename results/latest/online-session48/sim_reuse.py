"""Session 48: spark.lrc.predictReuse on/off in the simulator (online refs), with crd+admit's
profile for reference."""
import sys
import lrc.planner as PL
from lrc import synth
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes

ORIG = PL.Planner.__init__
def setr(on):
    def init(self, *a, **kw):
        ORIG(self, *a, **{**kw, "predict_reuse": on})
    PL.Planner.__init__ = init

traces = [(f"synthetic {w}", synth.make(w), 4, 2) for w in ("pagerank", "cc", "ml", "svdpp", "zip", "gpu_train")]
traces += [(p.split("/")[-1].split("-calib")[0], working_set_bytes(p)[2], 2, 1) for p in sys.argv[1:]]
print("| trace | F | lru | crd+admit, reuse off -> on | crd, off -> on | mrd, off -> on | crd+admit from a profile |")
print("|---|---|---|---|---|---|---|")
for name, ct, ex, cores in traces:
    for f in (0.3, 0.5, 0.7):
        lru = simulate(ct, "lru", f, executors=ex, cores=cores)
        row = [f"{lru.hit_ratio:.3f} / {lru.est_runtime:.1f}"]
        for pol, admit in (("crd", True), ("crd", False), ("mrd", False)):
            cells = []
            for on in (False, True):
                setr(on)
                r = simulate(ct, pol, f, executors=ex, cores=cores, refs="online", admit=admit)
                cells.append(f"{r.hit_ratio:.3f} / {r.est_runtime:.1f}")
            row.append(" -> ".join(cells))
        pr = simulate(ct, "crd", f, executors=ex, cores=cores, refs="profile", admit=True)
        row.append(f"{pr.hit_ratio:.3f} / {pr.est_runtime:.1f}")
        print(f"| {name} | {f} | " + " | ".join(row) + " |", flush=True)
