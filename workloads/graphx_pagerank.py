"""GraphX's own PageRank (`org.apache.spark.graphx.lib.PageRank.run`, fixed iterations, reset
probability 0.15, ranks normalised to sum to the number of vertices) on a seeded power-law graph:
`GraphGenerators.logNormalGraph` out-degrees (~12 edges per vertex), destinations skewed to a power
law, 80k*scale generated vertices, `partitions` edge partitions. Driven through py4j by the Java
application in workloads/java/ (see workloads/graphx.py); the GraphX library decides what is cached.

Caching pattern (GraphX caches graphs, each as two RDDs: a VertexRDD and an EdgeRDD whose edge
partitions also carry the replicated vertex attributes; `storage_level`, default MEMORY_ONLY, is the
level of every one of them):
- the input graph (`Graph.fromEdges`): its EdgeRDD and VertexRDD are cached when built and read by
  the out-degree join that sets up the rank graph; dead from then on (the workload unpersists it at
  the end).
- rank graph i (vertices and edges with the ranks of iteration i): cached and materialised by one
  job per iteration; read by iteration i+1: its `aggregateMessages` scans the edge partitions
  (with the source ranks replicated into them), its join reads the vertex partitions, and graph
  i+1's edge partitions are built from graph i's (zipped with the shipped new ranks). PageRank
  unpersists graph i as soon as graph i+1 is materialised, so about two generations are cached at
  a time, each hot for one iteration and dead right after.
- the final normalised graph: read by the result jobs (checksum, count, top ranks).
One job per iteration plus a few at the start and the end.

Checksum: every (vertex, rank rounded to 6 significant digits), order-independent (GraphX sums may
differ in the last bits between runs). Self-check: the ranks sum to the number of vertices; at
small scales (`verify`, default scale <= 0.25) the ranks equal a numpy power iteration over the
collected edge list.
"""
from __future__ import annotations

import numpy as np

from workloads import graphx

extra_jars = graphx.extra_jars


def reference(edges: np.ndarray, iterations: int, reset: float = 0.15) -> dict[int, float]:
    """GraphX's static PageRank on the driver: ranks start at 1.0, r' = reset + (1 - reset) *
    sum over in-edges of r[src] / outdeg[src] (every edge counts, parallel ones too), then scaled
    so that they sum to the number of vertices."""
    ids, inv = np.unique(edges.reshape(-1), return_inverse=True)
    src, dst = inv.reshape(-1, 2).T
    outdeg = np.bincount(src, minlength=len(ids)).astype(np.float64)
    r = np.ones(len(ids))
    for _ in range(iterations):
        msg = np.zeros(len(ids))
        np.add.at(msg, dst, r[src] / outdeg[src])
        r = reset + (1.0 - reset) * msg
    r *= len(ids) / r.sum()
    return dict(zip(ids.tolist(), r.tolist()))


def run(spark, *, scale: float = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, iterations: int = 10, verify: bool | None = None) -> dict:
    """GraphX PageRank, `iterations` rounds, on an 80k*scale-vertex log-normal power-law graph."""
    out, verify = graphx.run_method(spark, "pagerank", scale=scale, seed=seed,
                                    storage_level=storage_level, partitions=partitions,
                                    iterations=iterations, verify=verify)
    res = out["result"]
    if abs(res["rank_sum"] - res["vertices"]) > 1e-6 * res["vertices"]:
        raise AssertionError(f"graphx_pagerank: ranks sum to {res['rank_sum']}, "
                             f"not to the {res['vertices']} vertices")
    if verify:
        want = reference(np.asarray(out["edge_list"], dtype=np.int64), iterations)
        got = {int(k): v for k, v in out["values"].items()}
        if got.keys() != want.keys():
            raise AssertionError(f"graphx_pagerank: {len(got)} ranked vertices, reference has {len(want)}")
        worst = max(abs(got[v] - want[v]) / want[v] for v in want)
        if worst > 1e-9:
            raise AssertionError(f"graphx_pagerank: ranks differ from the numpy power iteration "
                                 f"(max relative error {worst:.3g})")
        res["verified"] = True
    return {"checksum": out["checksum"], "result": res}


if __name__ == "__main__":
    graphx.main("graphx_pagerank", run)
