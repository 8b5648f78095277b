"""GraphX's own SVD++ (`org.apache.spark.graphx.lib.SVDPlusPlus.run`, rank 8, `iterations` rounds)
on a seeded bipartite power-law rating graph: users with `GraphGenerators.logNormalGraph`
out-degrees (~12 ratings each) rate items of power-law popularity (30k*scale users, 1/8 as many
items), ratings 1..5 from hidden user and item biases plus noise. Driven through py4j by the Java
application in workloads/java/ (see workloads/graphx.py); the GraphX library decides what is cached.

Caching pattern (SVDPlusPlus caches everything at MEMORY_ONLY whatever `storage_level`, so only
MEMORY_ONLY is accepted):
- the rating edges: cached by SVDPlusPlus, read by the global-mean job and by the graph build,
  then unpersisted.
- graph 0 (`Graph.fromEdges`: VertexRDD plus EdgeRDD with replicated vertex attributes): cached,
  read by the degree/bias `aggregateMessages`, replaced by the joined graph and unpersisted.
- every round has two phases; each caches a new graph (the old one joined with an
  `aggregateMessages` over all edges: phase 1 sends item vectors to users, phase 2 the gradient
  updates both ways), materialises it (one job), and unpersists the previous graph: at any time
  about two graph generations are cached, each hot for one phase and dead right after.
- a final phase caches the graph with each user's squared training error; the result graph and
  its rebuilt EdgeRDD are read by the result jobs (RMSE, biases, counts).
The vertex attributes are dense arrays (rank 8, two per vertex), so vertex and edge partitions
(which replicate them) are large for their number of records.

Checksum: counts and the exact rating sum, plus the global mean, the training RMSE and every
vertex's bias rounded to 6 significant digits. SVDPlusPlus draws its initial factors from the
JVM-global unseeded `scala.util.Random` (a TODO in Spark); the Java side seeds those draws for the
calling thread only (result["init"] == "seeded"). Self-check: the RMSE is finite and below the
ratings' standard deviation (better than predicting the mean); at small scales (`verify`, default
scale <= 0.25) the mean and rating count equal those of the collected rating list.
"""
from __future__ import annotations

import math

import numpy as np

from workloads import graphx

extra_jars = graphx.extra_jars


def run(spark, *, scale: float = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, iterations: int = 5, verify: bool | None = None) -> dict:
    """GraphX SVD++ on 30k*scale users rating 1.5k*scale items (log-normal activity, power-law
    item popularity)."""
    if graphx.level_name(storage_level) != "MEMORY_ONLY":
        raise ValueError(f"graphx_svdpp: SVDPlusPlus caches its graphs at MEMORY_ONLY; "
                         f"storage level {storage_level} is not supported")
    out, verify = graphx.run_method(spark, "svdpp", scale=scale, seed=seed,
                                    storage_level=storage_level, partitions=partitions,
                                    iterations=iterations, verify=verify)
    res = out["result"]
    if not (math.isfinite(res["rmse"]) and 0 <= res["rmse"] < res["rating_std"]):
        raise AssertionError(f"graphx_svdpp: training RMSE {res['rmse']} is not below the "
                             f"ratings' standard deviation {res['rating_std']}")
    if res["init"] != "seeded":
        raise AssertionError("graphx_svdpp: could not seed SVDPlusPlus's initial factors")
    if verify:
        ratings = np.asarray(out["edge_list"], dtype=np.float64)
        if len(ratings) != res["ratings"] or int(ratings[:, 2].sum()) != res["rating_sum"]:
            raise AssertionError("graphx_svdpp: rating count/sum differ from the collected ratings")
        if abs(ratings[:, 2].mean() - res["mean"]) > 1e-5 * res["mean"]:
            raise AssertionError(f"graphx_svdpp: mean {res['mean']} != {ratings[:, 2].mean()}")
        if not (np.all(ratings[:, 0] % 2 == 0) and np.all(ratings[:, 1] % 2 == 1)):
            raise AssertionError("graphx_svdpp: ratings must go from users (even) to items (odd)")
        res["verified"] = True
    return {"checksum": out["checksum"], "result": res}


if __name__ == "__main__":
    graphx.main("graphx_svdpp", run)
