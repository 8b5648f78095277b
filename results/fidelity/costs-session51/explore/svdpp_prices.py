"""GraphX SVD++ once under crd with the trace's pricing (2 executor JVMs, 4 MiB of storage
each): the brain's rebuild price of every measured RDD just before each unpersist and at the
end, against the recorded trace's `lineage_cost`; per cached RDD, its last live price, both
lineages and each RDD's price in them.

    PYTHONPATH=. python results/fidelity/costs-session51/explore/svdpp_prices.py [scale]
"""
import sys
from workloads import graphx

from spark_plugin.doctor import start_session
from spark_plugin.session import active_brain
from workloads import graphx_svdpp
import tempfile
tmp = tempfile.mkdtemp()
spark = start_session("local-cluster[2,1,1024]", "crd", {
    "spark.lrc.priceShares": "true", "spark.lrc.tracePath": tmp + "/trace.parquet",
    "spark.memory.storageFraction": "0.5", "spark.jars": str(graphx.jar())})
brain = active_brain()
snaps = []
prices = []
orig = brain.planner.refs.costs.forget
def forget(rdd, blocks, _o=orig):
    c = brain.planner.refs.costs
    snaps.append({r: c.rebuild_s(r) for r in list(c.tasks)})
    prices.append({q: (t.value()) for q, t in c.tasks.items()})
    _o(rdd, blocks)
brain.planner.refs.costs.forget = forget
out = graphx_svdpp.run(spark, scale=float(sys.argv[1]) if len(sys.argv) > 1 else 0.25, iterations=3)
brain.sync()
c = brain.planner.refs.costs
snaps.append({r: c.rebuild_s(r) for r in list(c.tasks)})
trace = brain.recorder.build()
worst = []
for i, s in enumerate(snaps):
    for r, live in s.items():
        rep = trace.dag.lineage_cost((r, 0))
        worst.append((abs(live - rep) / max(rep, 1e-9), i, r, live, rep))
worst.sort(reverse=True)
last = {}
for i, s_ in enumerate(snaps):
    for r in s_: last[r] = i
for r, i in sorted(last.items()):
    live, rep = snaps[i][r], trace.dag.lineage_cost((r, 0))
    lin = c._lineages.get(r) or ()
    tl = [q.id for q in trace.dag.lineage_rdds((r,), True)]
    print(f"rdd {r} snap {i} live {live:.4f} trace {rep:.4f} live-lineage {sorted(lin)} trace-lineage {sorted(tl)}")
    pr = {}
    for p in prices: pr.update(p)
    print("   live prices", {q: round(pr[q], 4) for q in sorted(lin) if q in pr})
    print("   trace costs", {q: round(trace.dag.rdds[q].compute_cost, 4) for q in sorted(tl) if trace.dag.rdds[q].compute_cost},
          "cached", [q for q in sorted(tl) if trace.dag.rdds[q].cached], "nparts", {q: trace.dag.rdds[q].num_partitions for q in sorted(tl)})

print("snapshots", len(snaps), "prices", len(worst))
for w in worst[:15]:
    print("rel %.3f snap %d rdd %d live %.4f trace %.4f" % w)
spark.stop()
