"""Per job of a trace: each RDD's blocks in memory at the job's start under crd with admission, and
(online) the kinds the predictor predicts after it. How session 49 found what zip's online
predictions miss:

    PYTHONPATH=. python results/foresight-live/reuse-session49/explore/zipdbg.py /tmp/s48/live/zip/traces/zip-calib-lru.parquet 0.7 online
"""
import sys
from collections import Counter
import lrc.sim as S
from lrc.sim import simulate
from lrc import predict as P
from workloads.bench.replay import working_set_bytes

path, f, refs = sys.argv[1], float(sys.argv[2]), sys.argv[3]
ws, _, ct = working_set_bytes(path)
orig = S._Replay.control
names = {}
def control(self, kind, arg, partitions=None):
    if kind == 0:
        cached = Counter()
        for b, e in enumerate(self.where):
            if e >= 0:
                cached[self.ct.rdd_of[b]] += 1
        p = self.planner
        def nm(r):
            rr = p.dag.rdds.get(r) if p else None
            return (rr.name if rr else str(r))[:6]
        print(f"job {arg}: cached", {nm(r): n for r, n in sorted(cached.items())})
    orig(self, kind, arg, partitions)
    if kind == 0 and self.planner is not None and refs == "online":
        pr = self.planner.predictor
        if pr.shapes:
            last = pr.shapes[-1]
            print("   kind", [i.split(" @ ")[0].split()[-1] for i in last.inputs])
S._Replay.control = control
oc = P.Predictor.cycle
def cycle(self):
    out = oc(self)
    print("   predicts", [[i.split(" @ ")[0].split()[-1] for i in s.inputs] for s in out])
    return out
P.Predictor.cycle = cycle
r = simulate(ct, "crd", f, executors=2, cores=1, refs=refs, admit=True)
print(r.hit_ratio, r.est_runtime, r.reads, r.hits)
