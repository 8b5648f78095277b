"""TPC-H-like decision support: six simplified tables generated at run time, a query mix (Q1, Q3,
Q5, Q6, Q10, Q14) repeated for `rounds` rounds over the cached tables.

Caching pattern (base tables `df.persist(level)`, default MEMORY_AND_DISK as `df.cache()` gives,
so a wrong eviction costs a disk read; `storage_level=` changes it):
- `lineitem` (fact table with a random comment column, the biggest), cached, read by Q1, Q6 and
  Q14 every round: hot.
- `orders` (with a comment column), cached, read once to build `lineitem_orders`, then dead until
  the order count at the end: the longest reuse distance.
- `lineitem_orders` (lineitem joined with orders, narrow columns), cached through
  `CACHE TABLE ... OPTIONS ('storageLevel' 'MEMORY_ONLY')`: read by Q3, Q5 and Q10 every round;
  evicted, it is recomputed from the join (no disk copy) - MEMORY_ONLY next to MEMORY_AND_DISK.
- `customer`, `supplier`, `nation`, `part` (small dimensions), cached, read by the joins of
  every round.

Every column is a pure function of (seed, key) via `xxhash64`; money is integer cents and
discount/tax integer percents, so every sum is an exact integer independent of partitioning.
Self-check: `lineitem_orders` holds every line and every order, and Q1 and Q6 recomputed with the
DataFrame API over freshly generated, uncached tables (another partition count, so Spark cannot
substitute the cache) match exactly.
"""
from __future__ import annotations

from workloads import common

ORDERS_PER_SCALE = 15_000
CUSTOMERS_PER_SCALE = 1_500
PARTS_PER_SCALE = 2_000
SUPPLIERS_PER_SCALE = 100
NATIONS = 25  # in 5 regions: n_regionkey = n_nationkey % 5
MAX_LINES = 7  # lines per order: 1..7
DAYS = 2406  # order dates 1992-01-01 .. 1998-08-02
SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY")
TYPES = ("ECONOMY", "LARGE", "MEDIUM", "PROMO", "SMALL", "STANDARD")



def _pick(F, values, index):
    return F.element_at(F.array(*[F.lit(v) for v in values]), (index + 1).cast("int"))


def _day(F, days):
    return F.date_add(F.lit("1992-01-01").cast("date"), days.cast("int"))


def tables(spark, seed: int, scale: int, parts: int) -> dict:
    """The six tables as (uncached) DataFrames over `parts` partitions."""
    from pyspark.sql import functions as F

    def rng(n, p=parts):
        return spark.range(0, n, numPartitions=p)

    n_orders = ORDERS_PER_SCALE * scale
    n_cust, n_parts = CUSTOMERS_PER_SCALE * scale, PARTS_PER_SCALE * scale
    n_supp = SUPPLIERS_PER_SCALE * scale
    small = max(1, parts // 4)

    def comment(table):
        return F.sha2(F.concat_ws(":", F.lit(seed), F.lit(table), F.col("id")), 512)

    def order_day(key):  # the same in orders and lineitem
        return common.hash_col(F, seed, 10, DAYS, key)

    lineitem = (rng(n_orders * MAX_LINES)
                .withColumn("l_orderkey", F.expr(f"id div {MAX_LINES}"))
                .where(F.col("id") % MAX_LINES <= common.hash_col(F, seed, 11, MAX_LINES, "l_orderkey"))
                .withColumn("l_shipdate",
                            _day(F, order_day("l_orderkey") + 1 + common.hash_col(F, seed, 12, 121)))
                .select("l_orderkey",
                        (F.col("id") % MAX_LINES + 1).alias("l_linenumber"),
                        common.hash_col(F, seed, 13, n_parts).alias("l_partkey"),
                        common.hash_col(F, seed, 14, n_supp).alias("l_suppkey"),
                        (common.hash_col(F, seed, 15, 50) + 1).alias("l_quantity"),
                        (common.hash_col(F, seed, 16, 9_000_000) + 90_000).alias("l_extendedprice"),
                        common.hash_col(F, seed, 17, 11).alias("l_discount"),
                        common.hash_col(F, seed, 18, 9).alias("l_tax"),
                        F.when(F.col("l_shipdate") > F.lit("1995-06-17").cast("date"), "N")
                        .otherwise(_pick(F, ("A", "R"), common.hash_col(F, seed, 19, 2))).alias("l_returnflag"),
                        F.when(F.col("l_shipdate") > F.lit("1995-06-17").cast("date"), "O")
                        .otherwise("F").alias("l_linestatus"),
                        "l_shipdate",
                        comment("l").alias("l_comment")))
    orders = (rng(n_orders)
              .select(F.col("id").alias("o_orderkey"),
                      common.hash_col(F, seed, 20, n_cust).alias("o_custkey"),
                      _day(F, order_day("id")).alias("o_orderdate"),
                      (common.hash_col(F, seed, 21, 5) + 1).alias("o_orderpriority"),
                      F.lit(0).alias("o_shippriority"),
                      comment("o").alias("o_comment")))
    customer = rng(n_cust, small).select(
        F.col("id").alias("c_custkey"),
        F.format_string("Customer#%09d", F.col("id")).alias("c_name"),
        common.hash_col(F, seed, 30, NATIONS).alias("c_nationkey"),
        _pick(F, SEGMENTS, common.hash_col(F, seed, 31, len(SEGMENTS))).alias("c_mktsegment"),
        (common.hash_col(F, seed, 32, 1_099_999) - 99_999).alias("c_acctbal"))
    supplier = rng(n_supp, 1).select(F.col("id").alias("s_suppkey"),
                                     common.hash_col(F, seed, 40, NATIONS).alias("s_nationkey"))
    part = rng(n_parts, small).select(
        F.col("id").alias("p_partkey"),
        F.concat_ws(" ", _pick(F, TYPES, common.hash_col(F, seed, 50, len(TYPES))), F.lit("BRASS"))
        .alias("p_type"))
    nation = rng(NATIONS, 1).select(F.col("id").alias("n_nationkey"),
                                    F.format_string("NATION-%02d", F.col("id")).alias("n_name"),
                                    (F.col("id") % 5).alias("n_regionkey"))
    return {"lineitem": lineitem, "orders": orders, "customer": customer,
            "supplier": supplier, "part": part, "nation": nation}


REVENUE = "l_extendedprice * (100 - l_discount)"  # in 1/100 cents
QUERIES = {
    "q1": f"""
        SELECT l_returnflag, l_linestatus, SUM(l_quantity) AS sum_qty,
               SUM(l_extendedprice) AS sum_base_price, SUM({REVENUE}) AS sum_disc_price,
               SUM({REVENUE} * (100 + l_tax)) AS sum_charge, COUNT(*) AS count_order
        FROM lineitem WHERE l_shipdate <= DATE '1998-09-02'
        GROUP BY l_returnflag, l_linestatus""",
    "q3": f"""
        SELECT o_orderkey, SUM({REVENUE}) AS revenue, o_orderdate, o_shippriority
        FROM customer JOIN lineitem_orders ON c_custkey = o_custkey
        WHERE c_mktsegment = 'BUILDING' AND o_orderdate < DATE '1995-03-15'
          AND l_shipdate > DATE '1995-03-15'
        GROUP BY o_orderkey, o_orderdate, o_shippriority
        ORDER BY revenue DESC, o_orderdate, o_orderkey LIMIT 10""",
    "q5": f"""
        SELECT n_name, SUM({REVENUE}) AS revenue
        FROM customer, lineitem_orders, supplier, nation
        WHERE c_custkey = o_custkey AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey
          AND s_nationkey = n_nationkey AND n_regionkey = 2
          AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'
        GROUP BY n_name""",
    "q6": """
        SELECT SUM(l_extendedprice * l_discount) AS revenue FROM lineitem
        WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'
          AND l_discount BETWEEN 5 AND 7 AND l_quantity < 24""",
    "q10": f"""
        SELECT c_custkey, c_name, SUM({REVENUE}) AS revenue, c_acctbal, n_name
        FROM customer, lineitem_orders, nation
        WHERE c_custkey = o_custkey AND c_nationkey = n_nationkey AND l_returnflag = 'R'
          AND o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1994-01-01'
        GROUP BY c_custkey, c_name, c_acctbal, n_name
        ORDER BY revenue DESC, c_custkey LIMIT 20""",
    "q14": f"""
        SELECT SUM(CASE WHEN p_type LIKE 'PROMO%' THEN {REVENUE} ELSE 0 END) AS promo,
               SUM({REVENUE}) AS total
        FROM lineitem JOIN part ON l_partkey = p_partkey
        WHERE l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'""",
}
LINEITEM_ORDERS = """
    CACHE TABLE lineitem_orders OPTIONS ('storageLevel' 'MEMORY_ONLY') AS
    SELECT o_orderkey, o_custkey, o_orderdate, o_shippriority, l_suppkey, l_extendedprice,
           l_discount, l_returnflag, l_shipdate
    FROM lineitem JOIN orders ON l_orderkey = o_orderkey"""


def reference(t: dict) -> list:
    """Q1 and Q6 with the DataFrame API (no SQL text, no cached table), as `answers` rows."""
    from pyspark.sql import functions as F

    li = t["lineitem"]
    rev = F.col("l_extendedprice") * (100 - F.col("l_discount"))
    q1 = (li.where(F.col("l_shipdate") <= F.lit("1998-09-02").cast("date"))
          .groupBy("l_returnflag", "l_linestatus")
          .agg(F.sum("l_quantity"), F.sum("l_extendedprice"), F.sum(rev),
               F.sum(rev * (100 + F.col("l_tax"))), F.count(F.lit(1))))
    q6 = li.where((F.col("l_shipdate") >= F.lit("1994-01-01").cast("date"))
                  & (F.col("l_shipdate") < F.lit("1995-01-01").cast("date"))
                  & F.col("l_discount").between(5, 7) & (F.col("l_quantity") < 24)) \
        .agg(F.sum(F.col("l_extendedprice") * F.col("l_discount")))
    return [sorted(tuple(r) for r in q.collect()) for q in (q1, q6)]


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, rounds: int = 3, verify: bool = True) -> dict:
    """TPC-H-like Q1/Q3/Q5/Q6/Q10/Q14 over ~60k*scale lineitems, 15k*scale orders."""
    level = common.storage_level(storage_level, default="MEMORY_AND_DISK")
    parts = partitions or common.default_partitions(spark, scale)
    with common.shuffle_partitions(spark, parts):  # as users tune it
        return _run(spark, seed, scale, parts, level, rounds, verify)


def _run(spark, seed: int, scale: int, parts: int, level, rounds: int, verify: bool) -> dict:
    t = {name: df.persist(level) for name, df in tables(spark, seed, scale, parts).items()}
    for name, df in t.items():
        df.createOrReplaceTempView(name)
    spark.sql(LINEITEM_ORDERS)  # eager: materialises lineitem, orders and the join
    rows = {"lineitem": t["lineitem"].count(),
            "lineitem_orders": spark.table("lineitem_orders").count()}

    answers = [(name, rnd, sorted(tuple(r) for r in spark.sql(q).collect()))
               for rnd in range(rounds) for name, q in QUERIES.items()]

    # self-check: the join lost no line and no order (every order has a line; this re-reads the
    # cached `orders` last), and Q1/Q6 agree with an uncached DataFrame-API path
    rows["orders"] = t["orders"].count()
    joined_orders = spark.table("lineitem_orders").select("o_orderkey").distinct().count()
    if rows["lineitem_orders"] != rows["lineitem"] or joined_orders != rows["orders"]:
        raise AssertionError(f"tpch: lineitem_orders has {rows['lineitem_orders']} rows of "
                             f"{joined_orders} orders; lineitem {rows['lineitem']}, "
                             f"orders {rows['orders']}")
    if verify:
        fresh = tables(spark, seed, scale, parts + 1)
        got = [v for name, rnd, v in answers[:len(QUERIES)] if name in ("q1", "q6")]
        want = reference(fresh)
        if got != want:
            raise AssertionError(f"tpch: Q1/Q6 differ from the uncached reference: {got} != {want}")
    checksum = common.local_checksum((name, rnd, tuple(v)) for name, rnd, v in answers)
    first = dict((name, v) for name, rnd, v in answers if rnd == 0)
    result = dict(rows, queries=len(answers), level=str(level), q6_revenue=first["q6"][0][0],
                  q5=first["q5"])
    if verify:
        result["verified"] = True
    spark.catalog.dropTempView("lineitem_orders")  # uncaches it too
    for df in t.values():
        df.unpersist()
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("tpch", run)
