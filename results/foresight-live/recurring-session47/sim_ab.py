"""The recurring tail in the simulator: crd (with admission, as it runs live), mrd and crd
without admission, online refs with the tail (today's rule) and without it (the rule before),
and crd with admission from a profile, on calibration traces (plugin off, recorded by
`workloads.bench`) and every synthetic workload.

    PYTHONPATH=. python results/foresight-live/recurring-session47/sim_ab.py TRACE.parquet...

The rule before is the Predictor with a window of 0 (`spark.lrc.predictRecurring=false`); the
simulator builds its own Planner, so the script sets the window through Predictor's default.
Each cell: hit ratio / the cost model's estimated seconds."""
import sys

import lrc.predict as predict
from lrc import synth
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes

ORIGINAL = predict.Predictor.__init__


def tail(on: bool) -> None:
    def init(self, *a, **kw):
        ORIGINAL(self, *a, **{**kw, **({} if on else {"window": 0})})
    predict.Predictor.__init__ = init


def cell(ct, policy, f, ex, cores, refs="online"):
    name, _, admit = policy.partition("+")
    r = simulate(ct, name, f, executors=ex, cores=cores, refs=refs, admit=bool(admit))
    return f"{r.hit_ratio:.3f} / {r.est_runtime:.1f}"


traces = [(f"synthetic {w}", synth.make(w), 4, 2)
          for w in ("pagerank", "cc", "ml", "svdpp", "zip", "gpu_train")]
traces += [(path.split("/")[-1].split("-calib")[0], working_set_bytes(path)[2], 2, 1)
           for path in sys.argv[1:]]
print("| trace | F | lru | crd+admit, no tail -> tail | crd, no tail -> tail "
      "| mrd, no tail -> tail | crd+admit from a profile |")
print("|---|---|---|---|---|---|---|")
for name, ct, ex, cores in traces:
    for f in (0.3, 0.5, 0.7):
        row = [cell(ct, "lru", f, ex, cores)]
        for p in ("crd+admit", "crd", "mrd"):
            tail(False)
            before = cell(ct, p, f, ex, cores)
            tail(True)
            row.append(f"{before} -> {cell(ct, p, f, ex, cores)}")
        row.append(cell(ct, "crd+admit", f, ex, cores, refs="profile"))
        print(f"| {name} | {f} | " + " | ".join(row) + " |", flush=True)
