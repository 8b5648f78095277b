"""Spark MLlib (pyspark.ml) as a user runs it: KMeans on a cached feature DataFrame, then
LogisticRegression tuned by a 3-fold CrossValidator.

Caching pattern (`storage_level`, default MEMORY_AND_DISK as `df.cache()`, applies to the
DataFrames the application caches itself):
- `points` (KMeans features), cached, read by every KMeans iteration (hot: KMeans persists no copy
  of a cached input, only small cost RDDs of its k-means|| initialisation), then dead but never
  unpersisted (a common habit).
- `train` (80% of the labelled rows), cached, read to build the folds at the start of the
  cross-validation and again by the final fit of the best model: long reuse distance.
- `test` (20%), cached and counted at the start, read only by the final evaluation; `train` and
  `test` are unpersisted at the end.
- the folds: CrossValidator caches each fold's training and validation DataFrames itself
  (`pyspark.ml.util._cache_spark_dataset`, MEMORY_AND_DISK_DESER), reads them once per grid point,
  and unpersists them before the next fold; each LogisticRegression fit copies its training
  DataFrame into "training blocks" (MEMORY_AND_DISK), read by every L-BFGS iteration (hot) and
  unpersisted when the fit ends.
  Folds come from a hashed `foldCol`, not from `rand(seed)`, so they do not depend on partitioning.

Floating point sums depend on partitioning, so results are made robust rather than exact: the
KMeans clusters are far apart (the optimum is the per-cluster mean whatever the initialisation),
centers are sorted and everything is rounded to DIGITS significant digits; the CV metric is
accuracy (counts, exact). Self-check: the centers equal the per-cluster means computed by a plain
aggregation over an uncached copy, the KMeans cost is at most the cost of the generating centers,
and on labels from a known separator the tuned model's test accuracy is above ACCURACY_FLOOR and
its coefficients point the separator's way.
"""
from __future__ import annotations

import numpy as np

from workloads import common

POINTS_PER_SCALE = 20_000
DIMS, K = 8, 6
ROWS_PER_SCALE = 20_000
LR_DIMS = 6
FLIP_PERCENT = 5  # label noise: the best possible accuracy is ~0.95
ACCURACY_FLOOR = 0.9
DIGITS = 6



def true_centers(seed: int) -> np.ndarray:
    """K centers, each 100 away along its own axis plus a seeded offset < 20: far apart."""
    offset = common.randint(seed, 30, np.arange(K * DIMS), 20).reshape(K, DIMS)
    return 100.0 * np.eye(K, DIMS) + offset


def _coord(F, centers: np.ndarray, j: int, cluster):
    """Coordinate j of the center of `cluster` (an int column), as a column."""
    return F.element_at(F.array(*[F.lit(float(c)) for c in centers[:, j]]), cluster + 1)


def points(spark, seed: int, scale: int, parts: int):
    """(id, cluster, f0..f7): cluster center + uniform noise in [-8, 8), exact in binary."""
    from pyspark.sql import functions as F

    centers = true_centers(seed)
    cluster = common.hash_col(F, seed, 1, K).cast("int")
    cols = [(_coord(F, centers, j, cluster) + common.hash_col(F, seed, 100 + j, 1 << 20) / (1 << 16) - 8)
            .alias(f"f{j}") for j in range(DIMS)]
    return spark.range(0, POINTS_PER_SCALE * scale, numPartitions=parts).select(
        "id", cluster.alias("cluster"), *cols)


def separator(seed: int) -> tuple[np.ndarray, float]:
    """The true linear separator: weights in +-{1..4}, intercept 0.25."""
    idx = np.arange(LR_DIMS)
    sign = 2 * common.randint(seed, 41, idx, 2) - 1
    return ((common.randint(seed, 40, idx, 4) + 1) * sign).astype(float), 0.25


def labelled(spark, seed: int, scale: int, parts: int):
    """x0..x5 uniform in [-1, 1), label = the separator's side (FLIP_PERCENT% flipped), fold."""
    from pyspark.sql import functions as F

    w, b = separator(seed)
    xs = [(common.hash_col(F, seed, 200 + j, 1 << 20) / (1 << 19) - 1).alias(f"x{j}") for j in range(LR_DIMS)]
    df = spark.range(0, ROWS_PER_SCALE * scale, numPartitions=parts).select("id", *xs)
    margin = sum((F.lit(float(w[j])) * F.col(f"x{j}") for j in range(LR_DIMS)), F.lit(b))
    flip = common.hash_col(F, seed, 300, 100) < FLIP_PERCENT
    return df.select("*", ((margin > 0) != flip).cast("double").alias("label"),
                     common.hash_col(F, seed, 301, 3).cast("int").alias("fold"),
                     (common.hash_col(F, seed, 302, 5) == 0).alias("is_test"))


def assemble(df, prefix: str, dims: int):
    from pyspark.ml.feature import VectorAssembler

    return VectorAssembler(inputCols=[f"{prefix}{j}" for j in range(dims)],
                           outputCol="features").transform(df)


def kmeans(spark, seed: int, scale: int, parts: int, level, iterations: int, verify: bool):
    from pyspark.ml.clustering import KMeans
    from pyspark.sql import functions as F

    data = assemble(points(spark, seed, scale, parts), "f", DIMS).persist(level)
    model = KMeans(k=K, seed=seed, maxIter=iterations, tol=0.0).fit(data)
    order = sorted(range(K), key=lambda c: tuple(model.clusterCenters()[c]))
    centers = np.array([model.clusterCenters()[c] for c in order])
    sizes = [model.summary.clusterSizes[c] for c in order]
    cost = model.summary.trainingCost
    if verify:  # per-cluster means and cost of the generating centers, from an uncached copy
        true = true_centers(seed)
        fresh = points(spark, seed, scale, parts + 1)
        sq = sum((F.col(f"f{j}") - _coord(F, true, j, F.col("cluster"))) ** 2 for j in range(DIMS))
        rows = fresh.groupBy("cluster").agg(*[F.avg(f"f{j}") for j in range(DIMS)],
                                            F.sum(sq)).collect()
        means = np.array(sorted(tuple(r[1:DIMS + 1]) for r in rows))
        true_cost = sum(r[DIMS + 1] for r in rows)
        if not np.allclose(centers, means, rtol=1e-9, atol=1e-9) or cost > true_cost * (1 + 1e-9):
            raise AssertionError(f"mllib: KMeans centers are not the cluster means or its cost "
                                 f"{cost} exceeds the generating centers' {true_cost}")
    return {"centers": centers, "sizes": sizes, "cost": cost}, model.summary.numIter


def tuned_logistic_regression(spark, seed: int, scale: int, parts: int, level,
                              reg_params, verify: bool):
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder
    from pyspark.sql import functions as F

    data = assemble(labelled(spark, seed, scale, parts), "x", LR_DIMS)
    train = data.where(~F.col("is_test")).persist(level)
    test = data.where(F.col("is_test")).persist(level)
    n_test = test.count()

    lr = LogisticRegression()
    accuracy = MulticlassClassificationEvaluator(metricName="accuracy")
    cv = CrossValidator(estimator=lr, evaluator=accuracy, numFolds=3, foldCol="fold",
                        parallelism=1,
                        estimatorParamMaps=ParamGridBuilder().addGrid(lr.regParam, list(reg_params))
                        .build())
    model = cv.fit(train)
    best = model.bestModel
    correct = best.transform(test).where(F.col("prediction") == F.col("label")).count()
    train.unpersist()
    test.unpersist()
    w = separator(seed)[0]
    coef = best.coefficients.toArray()
    cosine = float(coef @ w / np.linalg.norm(coef) / np.linalg.norm(w))
    if verify and (correct < ACCURACY_FLOOR * n_test or cosine < 0.99):
        raise AssertionError(f"mllib: test accuracy {correct}/{n_test} below {ACCURACY_FLOOR} or "
                             f"coefficients off the true separator (cosine {cosine:.4f})")
    return {"reg_param": best.getRegParam(), "cv_accuracy": list(model.avgMetrics),
            "coefficients": coef, "intercept": best.intercept,
            "test_rows": n_test, "test_correct": correct}


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, iterations: int = 20,
        reg_params: tuple = (0.01, 0.1), verify: bool = True) -> dict:
    """KMeans (k=6) over 20k*scale points; LogisticRegression tuned by 3-fold CV on 16k*scale."""
    level = common.storage_level(storage_level, default="MEMORY_AND_DISK")
    parts = partitions or common.default_partitions(spark, scale)
    km, km_iterations = kmeans(spark, seed, scale, parts, level, iterations, verify)
    lr = tuned_logistic_regression(spark, seed, scale, parts, level, reg_params, verify)
    checksum = common.local_checksum(sorted({**km, **lr}.items()), DIGITS)
    # the iteration count depends on the initialisation, hence on partitioning: not in the checksum
    result = {name: common.canonical(v, DIGITS) for name, v in {**km, **lr}.items()}
    result["kmeans_iterations"] = km_iterations
    if verify:
        result["verified"] = True
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("mllib", run)
