"""Live - replay per (workload, F, policy) for a results dir, replayed with the variant simulator of
replay-variants.diff (applied to a worktree at /tmp/exp22): PIN=reads|none|lineage (what a task
keeps from eviction while it stores), SER=size|exact (serialized blocks without a count: many
values / the size only), NOEL=1 (ignore element counts). Usage: replay_variants.py RESULTS_DIR"""
import json, sys, os, statistics
sys.path.insert(0, "/tmp/exp22")
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes
out = sys.argv[1]
res = json.load(open(f"{out}/results.json"))
cl = res["cluster"]
rows = {}
for r in res["runs"]:
    if not r.get("trace") or r["policy"] == "plain":
        continue
    ws, _, ct = working_set_bytes(r["trace"])
    f = r["storage_bytes_per_executor"] * cl["executors"] / ws
    d = simulate(ct, r["policy"], f, executors=cl["executors"], cores=cl["cores"], refs=res["settings"]["refs"],
                 storage_fraction=0.1, unroll_threshold=65536)
    rows.setdefault((r["workload"], r["cache_fraction"], r["policy"]), []).append(100 * (r["hit_ratio"] - d.hit_ratio))
print(os.environ.get("PIN"), os.environ.get("SER"), {k: round(statistics.median(v), 1) for k, v in rows.items()})
