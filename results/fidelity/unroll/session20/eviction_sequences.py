"""Live vs simulated evictions per stage, for one bench run: which blocks each evicts, stage by stage.
Usage: python eviction_sequences.py OUT_DIR TAG [STAGES] (TAG e.g. graphx_svdpp-f0.5-crd-r0);
live victims with a finite priority are marked *. A probe (patches lrc.sim names), not package code."""
import json, sys, collections
import lrc.sim as sim
from workloads.bench.replay import working_set_bytes
out, tag = sys.argv[1], sys.argv[2]
run = [r for r in json.load(open(f"{out}/results.json"))["runs"] if r.get("trace","").endswith(tag + ".parquet")][0]
ws, _, ct = working_set_bytes(run["trace"])
f = run["storage_bytes_per_executor"] * 2 / ws
P = {}
def planner(*a, _make=sim.Planner, **k):
    p = P["p"] = _make(*a, **k); return p
sim.Planner = planner
class Log(list):
    def extend(self, it):
        refs = P["p"].refs
        seq2stage = {q: s for s, q in refs.stage_seq.items()}
        for b in it:
            self.append((seq2stage.get(refs.now, -1), f"rdd_{b[0]}_{b[1]}"))
orig = sim.SimResult.__init__
def init(self, *a, **k):
    orig(self, *a, **k); self.evicted = Log()
sim.SimResult.__init__ = init
res = sim.simulate(ct, run["policy"], f, executors=2, cores=1, refs="online", storage_fraction=0.5, log_evictions=True)
st = json.load(open(f"{out}/traces/{tag}.stats.json"))
live = collections.defaultdict(list); simd = collections.defaultdict(list)
for e in st["recent_evictions"]:
    live[e["stage"]].append(e["block"] + ("" if e["priority"] is None else "*"))
for s, b in res.evicted:
    simd[s].append(b)
for s in sorted(set(live) | set(simd))[: int(sys.argv[3]) if len(sys.argv) > 3 else 40]:
    print(s, "live:", " ".join(sorted(live[s])), "| sim:", " ".join(sorted(simd[s])))
