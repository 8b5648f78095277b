"""DataFrame / SQL reporting over cached tables (a star schema: orders, customers, products).

Caching pattern (`df.cache()` is MEMORY_AND_DISK; `storage_level="MEMORY_ONLY"` gives the
MEMORY_ONLY variant through `df.persist(level)`):
- `customers` and `products` (small dimensions), cached, read by the join that builds `enriched`
  and again by the last report: long reuse distance.
- `orders` (fact table with a random note column), cached, read by the `enriched` join and by the
  self-check at the end; dead in between.
- `enriched` (orders joined with both dimensions), cached, read by every report query (hot).
- `big_spenders` (a per-customer aggregate), cached, read by two queries, then unpersisted.
- Each query is one or more jobs (aggregation + shuffle + collect); reports are run `rounds` times,
  as a dashboard refresh would.

All columns are pure functions of (seed, row id) via `xxhash64`, money is integer cents, so every
result is exact and independent of partitioning.
"""
from __future__ import annotations

from workloads import common

ORDERS_PER_SCALE = 50_000
CUSTOMERS_PER_SCALE = 5_000
PRODUCTS = 500



def _note(F, seed: int, stream: int, chunks: int):
    """A random hex string of 128*chunks characters (incompressible enough to size the cache)."""
    parts = [F.sha2(F.concat_ws(":", F.lit(seed), F.lit(stream + i), F.col("id")), 512)
             for i in range(chunks)]
    return F.concat(*parts)


def tables(spark, seed: int, scale: int, partitions: int):
    from pyspark.sql import functions as F

    orders = (spark.range(0, ORDERS_PER_SCALE * scale, numPartitions=partitions)
              .select(F.col("id").alias("order_id"),
                      common.hash_col(F, seed, 1, CUSTOMERS_PER_SCALE * scale).alias("cust_id"),
                      common.hash_col(F, seed, 2, PRODUCTS).alias("product_id"),
                      (common.hash_col(F, seed, 3, 9) + 1).alias("qty"),
                      common.hash_col(F, seed, 4, 24).alias("month"),
                      _note(F, seed, 100, 1).alias("note")))
    customers = (spark.range(0, CUSTOMERS_PER_SCALE * scale, numPartitions=partitions)
                 .select(F.col("id").alias("cust_id"),
                         F.concat(F.lit("region-"), common.hash_col(F, seed, 5, 7)).alias("region"),
                         common.hash_col(F, seed, 6, 4).alias("segment"),
                         _note(F, seed, 200, 2).alias("profile")))
    products = (spark.range(0, PRODUCTS, numPartitions=max(1, partitions // 4))
                .select(F.col("id").alias("product_id"),
                        F.concat(F.lit("cat-"), common.hash_col(F, seed, 7, 12)).alias("category"),
                        (common.hash_col(F, seed, 8, 9900) + 100).alias("price_cents")))
    return orders, customers, products


REPORTS = {
    "revenue_by_region": """
        SELECT region, SUM(qty * price_cents) AS revenue, COUNT(*) AS orders
        FROM enriched GROUP BY region""",
    "top_categories": """
        SELECT category, SUM(qty) AS units FROM enriched GROUP BY category
        ORDER BY units DESC, category LIMIT 5""",
    "monthly_segment": """
        SELECT month, segment, SUM(qty * price_cents) AS revenue
        FROM enriched GROUP BY month, segment""",
}


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, rounds: int = 3) -> dict:
    """Star-schema reports over 50k*scale orders, 5k*scale customers, 500 products."""
    from pyspark.sql import functions as F

    level = common.storage_level(storage_level, default="MEMORY_AND_DISK")
    parts = partitions or common.default_partitions(spark, scale)
    with common.shuffle_partitions(spark, parts):  # as users tune it
        return _run(spark, seed, scale, parts, level, rounds)


def _run(spark, seed: int, scale: int, parts: int, level, rounds: int) -> dict:
    from pyspark.sql import functions as F

    orders, customers, products = tables(spark, seed, scale, parts)
    orders, customers, products = (df.persist(level) for df in (orders, customers, products))
    enriched = (orders.join(customers, "cust_id").join(F.broadcast(products), "product_id")
                .select("order_id", "cust_id", "region", "segment", "category", "month", "qty",
                        "price_cents", "note")
                .persist(level))
    enriched.createOrReplaceTempView("enriched")
    rows = {"enriched": enriched.count()}

    answers = []
    for rnd in range(rounds):
        for name, query in REPORTS.items():
            answers.append((name, rnd, [tuple(r) for r in spark.sql(query).collect()]))
        if rnd == 0:
            big = (enriched.groupBy("cust_id")
                   .agg(F.sum(F.col("qty") * F.col("price_cents")).alias("spent"))
                   .where(F.col("spent") > 50_000).persist(level))
            big.createOrReplaceTempView("big_spenders")
            answers.append(("big_count", rnd, big.count()))
            answers.append(("big_regions", rnd, [tuple(r) for r in spark.sql("""
                SELECT c.region, COUNT(*) AS n, SUM(b.spent) AS spent
                FROM big_spenders b JOIN enriched c ON b.cust_id = c.cust_id
                GROUP BY c.region""").collect()]))
            big.unpersist()

    # the last report goes back to the dimension tables (long reuse distance)
    answers.append(("idle_customers", rounds, [tuple(r) for r in customers
                    .join(enriched.select("cust_id").distinct(), "cust_id", "left_anti")
                    .groupBy("segment").count().collect()]))

    # self-check: the cached join lost nor duplicated any order, and revenue adds up
    revenue = sum(r[1] for r in answers[0][2])
    direct = (orders.join(products, "product_id")
              .agg(F.sum(F.col("qty") * F.col("price_cents"))).first()[0])
    if rows["enriched"] != orders.count() or revenue != direct:
        raise AssertionError(f"sql: enriched has {rows['enriched']} rows / revenue {revenue}, "
                             f"orders give {direct}")
    checksum = common.local_checksum(
        (name, rnd, tuple(sorted(v)) if isinstance(v, list) else v) for name, rnd, v in answers)
    result = dict(rows, queries=len(answers), revenue=revenue,
                  level=str(level), top_categories=answers[1][2])
    for df in (enriched, orders, customers, products):
        df.unpersist()
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("sql", run)
