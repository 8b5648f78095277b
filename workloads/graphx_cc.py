"""GraphX's own ConnectedComponents (`org.apache.spark.graphx.lib.ConnectedComponents.run`, Pregel
until no vertex changes) on a sparse seeded power-law graph: `GraphGenerators.logNormalGraph`
out-degrees (~0.8 edges per generated vertex, so a giant component and many small ones), 250k*scale generated
vertices, `partitions` edge partitions. Driven through py4j by the Java application in
workloads/java/ (see workloads/graphx.py); the GraphX library decides what is cached.

Caching pattern (GraphX caches graphs as a VertexRDD plus an EdgeRDD whose partitions carry the
replicated vertex attributes, at `storage_level`, default MEMORY_ONLY; Pregel also caches its
message RDDs):
- the input graph (`Graph.fromEdges`): cached when built, read once to label every vertex with its
  own id; dead from then on (the workload unpersists it at the end).
- superstep i of Pregel: graph i (`joinVertices` of graph i-1 with the messages) is cached and read
  by the `aggregateMessages` that computes messages i (active edges only, both directions) and by
  the join of superstep i+1; messages i (a VertexRDD) is cached and read by the count that decides
  whether to go on and by the join of superstep i+1. Pregel unpersists messages i-1 and graph i-1
  once messages i are counted, and its periodic checkpointers keep at most the three newest
  graphs and message RDDs persisted: a sliding window of short-lived, each-once-reread blocks,
  the oldest ones already dead when they are dropped.
- the final graph: read by the result jobs (checksum, component sizes).
Two jobs per superstep; the number of supersteps is the graph's label-propagation depth.

Checksum: every (vertex, component id = smallest vertex id of its component): exact integers.
Self-check (at small scales, `verify`, default scale <= 0.25): the components equal a union-find over
the collected edge list.
"""
from __future__ import annotations

import numpy as np

from workloads import graphx

extra_jars = graphx.extra_jars


def reference(edges: np.ndarray) -> dict[int, int]:
    """Union-find on the driver: vertex -> smallest vertex id of its component."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s, d in edges.tolist():
        a, b = find(s), find(d)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {v: find(v) for v in list(parent)}


def run(spark, *, scale: float = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, max_iterations: int = 0,
        verify: bool | None = None) -> dict:
    """GraphX ConnectedComponents on a 250k*scale-vertex sparse log-normal power-law graph
    (`max_iterations` <= 0: until convergence)."""
    out, verify = graphx.run_method(spark, "connectedComponents", scale=scale, seed=seed,
                                    storage_level=storage_level, partitions=partitions,
                                    iterations=max_iterations, verify=verify)
    res = out["result"]
    if not 0 < res["largest"] <= res["vertices"] or res["components"] > res["vertices"]:
        raise AssertionError(f"graphx_cc: inconsistent component sizes {res}")
    if verify and max_iterations <= 0:  # a run cut short cannot match the reference
        want = reference(np.asarray(out["edge_list"], dtype=np.int64))
        got = {int(k): int(v) for k, v in out["values"].items()}
        if got != want:
            bad = sum(1 for v in want if got.get(v) != want[v])
            raise AssertionError(f"graphx_cc: {bad} of {len(want)} vertices differ from union-find")
        if res["components"] != len(set(want.values())):
            raise AssertionError("graphx_cc: component count differs from union-find")
        res["verified"] = True
    return {"checksum": out["checksum"], "result": res}


if __name__ == "__main__":
    graphx.main("graphx_cc", run)
