"""Iterative KMeans (Lloyd) over cached feature RDDs, integer arithmetic throughout.

Caching pattern:
- `parsed` (id -> (features, raw-row payload)), cached because both splits are built from it; read
  by the two split jobs at the start, dead afterwards but never unpersisted (a common habit).
- `train` (80% of points, features + payload), cached, read by the one job of EVERY iteration:
  the hot working set.
- `test` (20%), cached and materialised at the start (a size sanity check), then read only by the
  final evaluation: the longest reuse distance in the application.
- One aggregation job per iteration (per-cluster integer sums and counts, then new centers on the
  driver), until the centers stop moving or `iterations` is reached.

Features are small integers and centers are rounded to the integer grid, so every distance and sum
is exact: results do not depend on partitioning or summation order.
"""
from __future__ import annotations

import numpy as np

from workloads import common

POINTS_PER_SCALE = 20_000
DIMS = 16
K = 8
ROW_BYTES = 256


def features(seed: int, idx: np.ndarray) -> np.ndarray:
    """(len(idx), DIMS) int64 points around K true centers; a pure function of (seed, idx)."""
    true = common.randint(seed, 30, np.arange(K * DIMS), 1000).reshape(K, DIMS)
    cluster = common.randint(seed, 31, idx, K)
    noise = common.randint(seed, 32, (idx[:, None] * DIMS + np.arange(DIMS)).ravel(), 301)
    return true[cluster] + noise.reshape(len(idx), DIMS) - 150


def assign(points: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest center (lowest index on ties) and squared distance, exact in int64."""
    d = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    best = d.argmin(axis=1)
    return best, d[np.arange(len(points)), best]


def _stats(centers: np.ndarray):
    def part(it):
        rows = [f for _, (f, _blob) in it]
        sums = np.zeros((len(centers), DIMS), dtype=np.int64)
        counts = np.zeros(len(centers), dtype=np.int64)
        cost = 0
        if rows:
            pts = np.stack(rows)
            best, dist = assign(pts, centers)
            np.add.at(sums, best, pts)
            counts = np.bincount(best, minlength=len(centers)).astype(np.int64)
            cost = int(dist.sum())
        yield sums, counts, cost
    return part


def _labels(centers: np.ndarray):
    def part(it):
        rows = list(it)
        if rows:
            best, _ = assign(np.stack([f for _, (f, _blob) in rows]), centers)
            yield from zip((k for k, _ in rows), best.tolist())
    return part


def _merge(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


def update(centers: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """New centers: rounded means (half up); an empty cluster keeps its center."""
    new = centers.copy()
    nz = counts > 0
    new[nz] = (2 * sums[nz] + counts[nz, None]) // (2 * counts[nz, None])
    return new


def initial_centers(seed: int) -> np.ndarray:
    """The first K training points (ids not divisible by 5), as a user's `takeSample` stand-in."""
    ids = np.array([i for i in range(5 * K) if i % 5][:K], dtype=np.int64)
    return features(seed, ids)


def reference(n: int, seed: int, iterations: int) -> tuple[np.ndarray, int]:
    idx = np.arange(n, dtype=np.int64)
    pts = features(seed, idx)
    train, test = pts[idx % 5 != 0], pts[idx % 5 == 0]
    centers = initial_centers(seed)
    for _ in range(iterations):
        best, _ = assign(train, centers)
        sums = np.zeros_like(centers)
        np.add.at(sums, best, train)
        new = update(centers, sums, np.bincount(best, minlength=K))
        if np.array_equal(new, centers):
            break
        centers = new
    return centers, int(assign(test, centers)[1].sum())


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, iterations: int = 15, verify: bool | None = None) -> dict:
    """KMeans (k=8, 16 integer features) over 20k*scale points, train/test split 80/20."""
    sc = spark.sparkContext
    level = common.storage_level(storage_level)
    parts = partitions or common.default_partitions(spark, scale)
    n = POINTS_PER_SCALE * scale

    def make(idx):
        blobs = common.payloads(seed, 33, int(idx[0]), len(idx), ROW_BYTES)
        return zip(idx.tolist(), zip(features(seed, idx), blobs))

    parsed = common.persist(common.generate(sc, n, parts, make), level, "parsed")
    train = common.persist(parsed.filter(lambda kv: kv[0] % 5 != 0), level, "train")
    test = common.persist(parsed.filter(lambda kv: kv[0] % 5 == 0), level, "test")
    sizes = (train.count(), test.count())

    centers = initial_centers(seed)
    costs = []
    for _ in range(iterations):
        sums, counts, cost = train.mapPartitions(_stats(centers)).reduce(_merge)
        costs.append(cost)
        new = update(centers, sums, counts)
        if np.array_equal(new, centers):
            break
        centers = new
    if any(b > a for a, b in zip(costs, costs[1:])):
        raise AssertionError(f"ml: KMeans cost increased between iterations: {costs}")

    test_cost = test.mapPartitions(_stats(centers)).map(lambda s: s[2]).sum()
    labelled = test.mapPartitions(_labels(centers))
    checksum = common.combine_checksums(common.local_checksum(centers.tolist()),
                                        str(test_cost), common.rdd_checksum(labelled))
    result = {"points": n, "train": sizes[0], "test": sizes[1], "iterations": len(costs),
              "train_cost": costs[-1], "test_cost": test_cost}

    if verify is None:
        verify = scale == 1
    if verify:
        ref_centers, ref_cost = reference(n, seed, iterations)
        if not np.array_equal(ref_centers, centers) or ref_cost != test_cost:
            raise AssertionError(f"ml: centers/test cost differ from the numpy reference "
                                 f"({test_cost} != {ref_cost})")
        result["verified"] = True
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("ml", run)
