"""Predictor variants tried in session 47, in the simulator (crd, crd with admission, mrd; online refs
against the profile's gain over LRU), on the synthetic workloads and the calibration traces in
/tmp/s47 (see ../README.md). `base` is the rule before the tail, `tail` today's code, `dk8` the
prototype of it:

    PYTHONPATH=. python results/foresight-live/recurring-session47/explore/evalpred.py base,tail,recent8,rec8_2,d8,dk8 > out.txt
    python results/foresight-live/recurring-session47/explore/table.py out.txt base,tail,d8,dk8
"""
import sys, glob, json
sys.path.insert(0, __import__("os").path.dirname(__file__))
import lrc.predict as P
from lrc.sim import simulate
from lrc import synth
from lrc.compiled import CompiledTrace
from workloads.bench.replay import working_set_bytes
import variants

def traces():
    out = []
    for w in ("pagerank", "cc", "ml", "svdpp", "zip", "gpu_train"):
        out.append((f"syn-{w}", synth.make(w), 4, 2))
    for p in sorted(glob.glob("/tmp/s47/cal-*/traces/*-calib-lru.parquet")) + ["/tmp/s47/zip1/traces/zip-calib-lru.parquet"]:
        ws, _, ct = working_set_bytes(p)
        out.append(("live-" + p.split("/")[-1].split("-calib")[0], ct, 2, 1))
    return out

POL = ("lru", "mrd", "crd", "crd+a")
def cellrun(tr, ex, cores, refs):
    res = {}
    for f in (0.3, 0.5, 0.7):
        for p in POL:
            r = simulate(tr, p.split("+")[0], f, executors=ex, cores=cores, refs=refs, admit=p.endswith("+a"))
            res[(f, p)] = (r.hit_ratio, r.est_runtime)
    return res

if __name__ == "__main__":
    out = {}
    T = traces()
    today = P.Predictor.cycle
    base_cycle, base_init = P.Predictor._period, P.Predictor.__init__
    variants.TODAY = today
    prof = {name: cellrun(tr, ex, c, "profile") for name, tr, ex, c in T}
    for v in sys.argv[1].split(","):
        P.Predictor.cycle, P.Predictor.__init__ = base_cycle, base_init
        getattr(variants, v)()
        for name, tr, ex, c in T:
            on = cellrun(tr, ex, c, "online")
            for f in (0.3, 0.5, 0.7):
                lru = on[(f, "lru")]
                cells = []
                for p in ("mrd", "crd", "crd+a"):
                    h, t = on[(f, p)]
                    ph = prof[name][(f, p)][0]
                    gain = (h - lru[0]) / (ph - lru[0]) if ph - lru[0] > 0.005 else float("nan")
                    cells.append(f"{p} {h:.3f}/{t:6.1f} g{gain:5.2f}")
                print(f"{v:10s} {name:14s} {f} lru {lru[0]:.3f}/{lru[1]:6.1f}  " + "  ".join(cells), flush=True)
