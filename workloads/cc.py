"""Connected components by label propagation (min label), on a sparse random graph.

Caching pattern:
- `adj` (vertex -> (sorted neighbours, per-vertex payload)), cached once, read by the join of every
  iteration and by the final check; never unpersisted.
- `labels_i` (vertex -> (label, per-vertex state payload)), cached in iteration i, read by the
  convergence job of iteration i (joined with `labels_{i-1}`) and by the propagation of iteration
  i+1. It is unpersisted one iteration late (GraphX Pregel style: after `labels_{i+1}` has been
  materialised), so at any time three label RDDs are cached and the oldest is already dead.
- `adj`, `labels_i` and `labels_{i-1}` share one hash partitioner: propagation tasks read
  (`adj_p`, `labels_i_p`), convergence tasks read (`labels_i_p`, `labels_{i-1}_p`) - peer groups.
- One convergence count job per iteration until no label changes (or `max_iterations`).
"""
from __future__ import annotations

import numpy as np

from workloads import common

VERTICES_PER_SCALE = 10_000
EDGES_PER_VERTEX = 1.5  # average degree 3: a giant component plus small ones, short diameter
ADJ_BYTES = 192
STATE_BYTES = 64


def _messages(kv):
    _v, ((nbrs, _blob), (label, _state)) = kv
    return ((u, label) for u in nbrs)


def _undirected(e):
    s, d = e
    return [(s, d), (d, s)] if s != d else [(s, d)]


def reference(n: int, m: int, seed: int) -> dict[int, int]:
    """Union-find on the driver: vertex -> smallest vertex id of its component."""
    src, dst = common.edge_arrays(seed, np.arange(m, dtype=np.int64), n, alpha=1.0)
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s, d in zip(src.tolist(), dst.tolist()):
        a, b = find(s), find(d)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {v: find(v) for v in list(parent)}


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, max_iterations: int = 40, prep: int = 0,
        verify: bool | None = None) -> dict:
    """Connected components of a 10k*scale-vertex random graph (label propagation); `prep` sets
    what an `adj` partition costs to rebuild (see `common.prepare`)."""
    sc = spark.sparkContext
    level = common.storage_level(storage_level)
    parts = partitions or common.default_partitions(spark, scale)
    n = VERTICES_PER_SCALE * scale
    m = int(EDGES_PER_VERTEX * n)

    edges = common.edge_rdd(sc, n, m, seed, parts, alpha=1.0)
    adj = (edges.flatMap(_undirected).distinct(parts).groupByKey(parts).mapValues(sorted)
           .mapPartitionsWithIndex(common.with_payload(seed, 20, ADJ_BYTES, prep), True))
    adj = common.persist(adj, level, "adj")
    labels = adj.mapPartitionsWithIndex(
        lambda p, it: ((v, (v, b"")) for v, _ in it), True)  # every vertex labels itself

    older = None
    changes = []
    for i in range(max_iterations):
        msgs = adj.join(labels, parts).flatMap(_messages)
        new = (labels.mapValues(lambda x: x[0]).union(msgs).reduceByKey(min, parts)
               .mapPartitionsWithIndex(common.with_payload(seed, 200 + i, STATE_BYTES), True))
        new = common.persist(new, level, f"labels_{i}")
        changed = (new.join(labels, parts)
                   .filter(lambda kv: kv[1][0][0] != kv[1][1][0]).count())
        changes.append(changed)
        if older is not None:
            older.unpersist()  # one iteration late, as GraphX Pregel does
        older, labels = labels, new
        if changed == 0:
            break

    final = labels.mapValues(lambda x: x[0])
    checksum = common.rdd_checksum(final)
    sizes = final.map(lambda kv: (kv[1], 1)).reduceByKey(lambda a, b: a + b, parts).values()
    result = {"vertices": n, "edges": m, "iterations": len(changes), "converged": changes[-1] == 0,
              "components": sizes.count(), "largest": sizes.max(), "changes": changes}

    if verify is None:
        verify = scale == 1
    if verify and result["converged"]:  # an unconverged run (max_iterations too small) cannot match
        common.check_against("cc", checksum, reference(n, m, seed).items(), "union-find reference",
                             result)
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("cc", run)
