"""Session 49: the prototypes of `variant.py` side by side in the simulator (online refs; crd
with admission, crd, mrd; crd with admission from a profile for reference), on the synthetic
workloads and the calibration traces given:

    PYTHONPATH=. python results/foresight-live/reuse-session49/explore/evalv.py base,mem,memfresh,memfresh_nf TRACES
    PYTHONPATH=. python results/foresight-live/reuse-session49/explore/evalv.py base,win,win8,win16 TRACES
"""
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
import variant
from lrc import synth
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes
V = sys.argv[1].split(",")
traces = [(f"syn-{w}", synth.make(w), 4, 2) for w in ("pagerank", "cc", "ml", "svdpp", "zip", "gpu_train")]
traces += [(p.split("/")[-1].split("-calib")[0], working_set_bytes(p)[2], 2, 1) for p in sys.argv[2:]]
for name, ct, ex, cores in traces:
    for f in (0.3, 0.5, 0.7):
        row = []
        for pol, admit in (("crd", True), ("crd", False), ("mrd", False)):
            cells = []
            for v in V:
                variant.MODE["v"] = v
                r = simulate(ct, pol, f, executors=ex, cores=cores, refs="online", admit=admit)
                cells.append(f"{r.hit_ratio:.3f}/{r.est_runtime:.1f}")
            row.append(" ".join(cells))
        variant.MODE["v"] = "base"
        pr = simulate(ct, "crd", f, executors=ex, cores=cores, refs="profile", admit=True)
        print(f"{name:12s} {f} | " + " | ".join(row) + f" | prof {pr.hit_ratio:.3f}/{pr.est_runtime:.1f}", flush=True)
