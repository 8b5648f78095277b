"""Tasks that read several cached blocks at once: `zip` of sibling RDDs and co-partitioned joins.

This is where LERC's peer groups matter: a task of `a.zip(b)` needs both `a_p` and `b_p`; caching
only one of them saves nothing.

Caching pattern:
- `base` (id -> (value, payload)), cached, read only by the jobs that build `a`, `b`, `c`, `x`,
  `y` at the start; dead afterwards, never unpersisted.
- `a`, `b`, `c` (id -> (feature, payload)), narrow maps of `base`, cached. Every round runs
  `a.zip(b)` and `b.zip(c)` (peer groups {a_p, b_p} and {b_p, c_p}); every third round also
  `a.zip(c)` (peer group {a_p, c_p}, long reuse distance).
- `x`, `y` (key -> (value, payload)), hash-partitioned the same way and cached; every other round
  runs `x.join(y)` with that partitioner - a narrow join whose tasks read {x_p, y_p}.
- One job per zip or join; `rounds` rounds.
"""
from __future__ import annotations

import numpy as np

from workloads import common

RECORDS_PER_SCALE = 25_000
KEYS_PER_SCALE = 5_000
ROW_BYTES = 160
MOD = 1_000_003


def values(seed: int, stream: int, idx: np.ndarray) -> np.ndarray:
    return common.randint(seed, stream, idx, 1000)


def _pair(kv):
    (ka, (va, _ba)), (kb, (vb, _bb)) = kv
    return (0 if ka == kb else 1, va * vb)


def _sum_pairs(a, b):
    return a[0] + b[0], a[1] + b[1]


def _zip_sum(left, right, name: str) -> int:
    mismatched, total = left.zip(right).map(_pair).reduce(_sum_pairs)
    if mismatched:
        raise AssertionError(f"zip: {mismatched} misaligned records in {name}")
    return total


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, rounds: int = 6, prep: int = 0,
        verify: bool | None = None) -> dict:
    """Zip and co-partitioned join rounds over 25k*scale records and 5k*scale keys; `prep` sets
    what a partition of `a`, `b`, `c` costs to rebuild (see `common.prepare`)."""
    sc = spark.sparkContext
    level = common.storage_level(storage_level)
    parts = partitions or common.default_partitions(spark, scale)
    n, nk = RECORDS_PER_SCALE * scale, KEYS_PER_SCALE * scale

    def make(idx):
        blobs = common.payloads(seed, 50, int(idx[0]), len(idx), ROW_BYTES)
        return zip(idx.tolist(), zip(values(seed, 51, idx).tolist(), blobs))

    base = common.persist(common.generate(sc, n, parts, make), level, "base")

    def derive(stream: int, name: str):
        def f(it):
            recs = list(it)
            if recs:
                ids = np.array([k for k, _ in recs], dtype=np.int64)
                vals = values(seed, stream, ids) + np.array([v for _, (v, _b) in recs])
                blobs = (common.prepare(b, prep) for _, (_v, b) in recs)
                yield from zip(ids.tolist(), zip(vals.tolist(), blobs))
        return common.persist(base.mapPartitions(f, True), level, name)

    a, b, c = derive(52, "a"), derive(53, "b"), derive(54, "c")
    keyed = base.map(lambda kv: (kv[0] % nk, kv[1]))
    x = common.persist(keyed.filter(lambda kv: kv[1][0] % 2 == 0).partitionBy(parts), level, "x")
    y = common.persist(keyed.filter(lambda kv: kv[1][0] % 3 == 0).partitionBy(parts), level, "y")
    sizes = [r.count() for r in (a, b, c, x, y)]  # materialise everything (as users do)

    sums = []
    for rnd in range(rounds):
        sums.append(("ab", rnd, _zip_sum(a, b, "a.zip(b)")))
        sums.append(("bc", rnd, _zip_sum(b, c, "b.zip(c)")))
        if rnd % 3 == 2:
            sums.append(("ac", rnd, _zip_sum(a, c, "a.zip(c)")))
        if rnd % 2 == 1:
            joined = x.join(y, parts).map(lambda kv: (kv[1][0][0] * kv[1][1][0]) % MOD)
            sums.append(("xy", rnd, joined.sum()))

    checksum = common.local_checksum(sums)
    result = {"records": n, "keys": nk, "rounds": rounds, "sizes": sizes, "jobs": len(sums)}

    if verify is None:
        verify = scale == 1
    if verify:
        idx = np.arange(n, dtype=np.int64)
        v = values(seed, 51, idx)
        va, vb, vc = (values(seed, s, idx) + v for s in (52, 53, 54))
        key = idx % nk
        # x.join(y) pairs every x value with every y value of the same key
        pair_sum = 0
        xv: dict[int, list[int]] = {}
        for k, val in zip(key[v % 2 == 0].tolist(), v[v % 2 == 0].tolist()):
            xv.setdefault(k, []).append(val)
        for k, val in zip(key[v % 3 == 0].tolist(), v[v % 3 == 0].tolist()):
            pair_sum += sum((xval * val) % MOD for xval in xv.get(k, ()))
        want = {"ab": int((va * vb).sum()), "bc": int((vb * vc).sum()),
                "ac": int((va * vc).sum()), "xy": pair_sum}
        bad = [s for s in sums if s[2] != want[s[0]]]
        if bad:
            raise AssertionError(f"zip: {bad[:3]} differ from the numpy reference {want}")
        result["verified"] = True
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("zip", run)
