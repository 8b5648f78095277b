"""Each cached RDD's rebuild cost in a recorded trace (block 0): the trace's `lineage_cost`
(each RDD of the narrow lineage once per block) against Spark's recomputation when no RDD of
the lineage is kept (an RDD once per narrow path: 2^k for a GraphX generation k deep).

    PYTHONPATH=. python results/fidelity/costs-session51/explore/paths.py TRACE.parquet
"""
import sys
from functools import lru_cache
from lrc.trace import load_trace
t = load_trace(sys.argv[1])
d = t.dag
unp = {e.rdd_id for e in t.events if e.kind == "unpersist"}

@lru_cache(None)
def per_path(r, p):
    rdd = d.rdds[r]
    c = rdd.compute_cost
    for dep in rdd.deps:
        if dep.kind == "shuffle":
            continue
        par = d.rdds.get(dep.parent)
        if par is None:
            continue
        for q in dep.parent_partitions(p, rdd.num_partitions, par.num_partitions):
            c += per_path(dep.parent, q)
    return c

for r in sorted(x.id for x in d.rdds.values() if x.cached):
    print(r, "unpersisted" if r in unp else "kept", "dedup %.3f per-path %.3f own %.4f" % (d.lineage_cost((r, 0)), per_path(r, 0), d.rdds[r].compute_cost), d.rdds[r].name if hasattr(d.rdds[r], 'name') else '')
