"""Iterative PageRank on a generated power-law graph (the classic Spark example, co-partitioned).

Caching pattern (what the policies are judged on):
- `links` (src -> (sorted out-neighbours, per-vertex payload)), cached once, read by the join of
  EVERY iteration and by the final check: hot for the whole application, never unpersisted.
- `ranks_i` (vertex -> (rank, per-vertex state payload)), cached in iteration i and read by one
  count job in iteration i and by the join of iteration i+1; dead from then on but - as in most user
  code - never unpersisted, so dead blocks pile up (the LRU pathology).
- `links` and `ranks_i` share one hash partitioner, so the join is narrow: each join task reads
  `links_p` and `ranks_i_p` together (a peer group of two).
- One count job per iteration (each a multi-stage job: join -> reduceByKey), plus a final checksum.

Ranks are fixed-point integers (`ONE` = 1.0), so results do not depend on summation order.
"""
from __future__ import annotations

from operator import add

import numpy as np

from workloads import common

ONE = 1_000_000_000
VERTICES_PER_SCALE = 10_000
EDGES_PER_VERTEX = 8
LINK_BYTES = 256
STATE_BYTES = 96


def _contribs(kv):
    _src, ((dsts, _blob), (rank, _state)) = kv
    share = rank // len(dsts)
    return ((d, share) for d in dsts)


def _damp(s: int) -> int:
    return 15 * ONE // 100 + 85 * s // 100


def reference(n: int, m: int, seed: int, iterations: int) -> dict[int, int]:
    """The same algorithm on the driver (for the self-check at small scales)."""
    src, dst = common.edge_arrays(seed, np.arange(m, dtype=np.int64), n)
    links: dict[int, list[int]] = {}
    for s, d in set(zip(src.tolist(), dst.tolist())):
        links.setdefault(s, []).append(d)
    ranks = {v: ONE for v in links}
    for _ in range(iterations):
        sums: dict[int, int] = {}
        for v, r in ranks.items():
            ds = links.get(v)
            if ds:
                share = r // len(ds)
                for d in ds:
                    sums[d] = sums.get(d, 0) + share
        ranks = {v: _damp(s) for v, s in sums.items()}
    return ranks


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, iterations: int = 10, prep: int = 0,
        verify: bool | None = None) -> dict:
    """PageRank, `iterations` rounds, over 10k*scale vertices and ~8 edges per vertex; `prep`
    sets what a `links` partition costs to rebuild (see `common.prepare`)."""
    sc = spark.sparkContext
    level = common.storage_level(storage_level)
    parts = partitions or common.default_partitions(spark, scale)
    n = VERTICES_PER_SCALE * scale
    m = EDGES_PER_VERTEX * n

    edges = common.edge_rdd(sc, n, m, seed, parts)
    links = (edges.distinct(parts).groupByKey(parts)
             .mapValues(sorted)
             .mapPartitionsWithIndex(common.with_payload(seed, 10, LINK_BYTES, prep), True))
    links = common.persist(links, level, "links")
    ranks = links.mapValues(lambda _: (ONE, b""))  # every vertex with out-links starts at 1.0

    totals = []
    for i in range(iterations):
        sums = links.join(ranks, parts).flatMap(_contribs).reduceByKey(add, parts)
        ranks = sums.mapValues(_damp).mapPartitionsWithIndex(
            common.with_payload(seed, 100 + i, STATE_BYTES), True)
        ranks = common.persist(ranks, level, f"ranks_{i}")
        totals.append(ranks.map(lambda kv: kv[1][0]).sum())  # one job per iteration

    final = ranks.mapValues(lambda v: v[0])
    checksum = common.rdd_checksum(final)
    top = final.takeOrdered(5, key=lambda kv: (-kv[1], kv[0]))
    result = {"vertices": n, "edges": m, "iterations": iterations, "ranked": final.count(),
              "total_rank": totals[-1], "top": top}

    if verify is None:
        verify = scale == 1
    if verify:
        common.check_against("pagerank", checksum, reference(n, m, seed, iterations).items(),
                             "driver reference", result)
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("pagerank", run)
