"""Helpers shared by every workload: deterministic data generation, order-independent checksums,
storage levels and the command-line entry point.

Determinism rules (the benchmark compares checksums across policies, cache sizes, partitionings
and recomputations):
- every *value* that reaches a result is a pure function of (seed, stream, record index), computed
  with a vectorised splitmix64 hash, never of the partition layout;
- random payloads (which only give cached blocks a real size: PySpark stores MEMORY_ONLY data
  serialized, so zero bytes would compress to nothing) come from a per-partition RNG seeded by
  (seed, stream, first index) and never enter a checksum;
- checksums are sums modulo 2**64 of per-record hashes (order-independent); floats are rounded
  before hashing, integer math is used where float summation order would matter.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

import numpy as np

MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


# --------------------------------------------------------------------------- hashing / data

def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, vectorised over a uint64 array (wrapping arithmetic)."""
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def hash_ints(seed: int, stream: int, idx: np.ndarray) -> np.ndarray:
    """A uint64 per index, a pure function of (seed, stream, index)."""
    key = mix64(np.uint64((seed * 1_000_003 + stream) & MASK64))
    return mix64(np.asarray(idx, dtype=np.uint64) ^ key)


def uniform(seed: int, stream: int, idx: np.ndarray) -> np.ndarray:
    """Floats in [0, 1), one per index (53 random bits)."""
    return (hash_ints(seed, stream, idx) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def randint(seed: int, stream: int, idx: np.ndarray, high: int) -> np.ndarray:
    """Integers in [0, high), one per index."""
    return (hash_ints(seed, stream, idx) % np.uint64(high)).astype(np.int64)


def powerlaw(seed: int, stream: int, idx: np.ndarray, n: int, alpha: float = 2.5) -> np.ndarray:
    """Integers in [0, n) with a heavy head: vertex ids for power-law in-degrees."""
    u = uniform(seed, stream, idx)
    return np.minimum((n * u**alpha).astype(np.int64), n - 1)


def payloads(seed: int, stream: int, start: int, count: int, nbytes: int) -> list[bytes]:
    """`count` random byte strings of `nbytes` each (incompressible, sized cache blocks)."""
    if nbytes <= 0 or count <= 0:
        return [b""] * max(count, 0)
    buf = np.random.default_rng([seed & MASK64, stream, start]).bytes(count * nbytes)
    return [buf[i * nbytes:(i + 1) * nbytes] for i in range(count)]


def index_chunks(it: Iterable[int]) -> Iterator[np.ndarray]:
    """Turn a partition of `sc.range` into one int64 array (empty partitions yield nothing)."""
    arr = np.fromiter(it, dtype=np.int64)
    if arr.size:
        yield arr


def generate(sc, n: int, partitions: int, make: Callable[[np.ndarray], Iterable[Any]]):
    """An RDD of `make(indices)` records over indices 0..n-1, split into `partitions`."""
    def gen(it):
        for idx in index_chunks(it):
            yield from make(idx)
    return sc.range(0, n, numSlices=partitions).mapPartitions(gen)


def edge_arrays(seed: int, idx: np.ndarray, n_vertices: int, alpha: float = 2.5):
    """Edges number `idx` of a power-law graph: uniform sources, power-law destinations."""
    return randint(seed, 1, idx, n_vertices), powerlaw(seed, 2, idx, n_vertices, alpha)


def edge_rdd(sc, n_vertices: int, n_edges: int, seed: int, partitions: int, alpha: float = 2.5):
    """RDD of (src, dst) int pairs; `edge_arrays` over all edges gives the same edges locally."""
    def make(idx):
        src, dst = edge_arrays(seed, idx, n_vertices, alpha)
        return zip(src.tolist(), dst.tolist())
    return generate(sc, n_edges, partitions, make)


def prepare(blob: bytes, prep: int) -> bytes:
    """`prep` rounds of SHA-256 over the payload, folded into its first 8 bytes (size unchanged).

    Stands in for what makes real cached data expensive to rebuild - parsing, decoding,
    feature extraction - with a cost the benchmark can set: ~`prep` x len(blob) bytes hashed.
    Never enters a checksum (payloads do not)."""
    if prep <= 0 or not blob:
        return blob
    tag = b""
    for _ in range(prep):
        tag = hashlib.sha256(tag + blob).digest()
    return tag[:8] + blob[8:]


def with_payload(seed: int, stream: int, nbytes: int, prep: int = 0):
    """`mapPartitionsWithIndex` function turning (k, v) into (k, (v, <nbytes random bytes>)),
    each payload through `prepare(.., prep)`."""
    def attach(pidx, it):
        recs = list(it)
        blobs = payloads(seed, stream, pidx, len(recs), nbytes)
        return ((k, (v, prepare(b, prep))) for (k, v), b in zip(recs, blobs))
    return attach


# --------------------------------------------------------------------------- checksums

def canonical(x: Any, digits: int = 6) -> Any:
    """Plain Python values with floats rounded to `digits` significant figures."""
    if isinstance(x, (float, np.floating)):
        return float(f"{float(x):.{digits}g}") + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (tuple, list)):
        return tuple(canonical(v, digits) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((canonical(k, digits), canonical(v, digits)) for k, v in x.items()))
    if isinstance(x, np.ndarray):
        return canonical(x.tolist(), digits)
    return x


def record_hash(x: Any, digits: int = 6) -> int:
    data = repr(canonical(x, digits)).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _partial(it: Iterable[Any], digits: int) -> Iterator[tuple[int, int]]:
    n = s = 0
    for rec in it:
        n += 1
        s = (s + record_hash(rec, digits)) & MASK64
    yield n, s


def fmt_checksum(count: int, total: int) -> str:
    return f"{count}:{total & MASK64:016x}"


def local_checksum(records: Iterable[Any], digits: int = 6) -> str:
    """Order-independent checksum of records held on the driver."""
    ((n, s),) = _partial(records, digits)
    return fmt_checksum(n, s)


def rdd_checksum(rdd, digits: int = 6) -> str:
    """Order-independent checksum of an RDD's records (one job; nothing collected but 2 ints)."""
    n, s = rdd.mapPartitions(lambda it: _partial(it, digits)).fold(
        (0, 0), lambda a, b: (a[0] + b[0], (a[1] + b[1]) & MASK64))
    return fmt_checksum(n, s)


def combine_checksums(*parts: str) -> str:
    return local_checksum(parts)


def check_against(name: str, checksum: str, reference: Iterable[Any], what: str,
                  result: dict) -> None:
    """The self-check of a workload whose driver-side reference yields the same records: marks
    `result` verified, or raises AssertionError."""
    want = local_checksum(reference)
    if want != checksum:
        raise AssertionError(f"{name}: checksum {checksum} != {what} {want}")
    result["verified"] = True


# --------------------------------------------------------------------------- storage levels

def storage_level(name: str | None, default: str = "MEMORY_ONLY"):
    """`StorageLevel` by name (`MEMORY_ONLY`, `MEMORY_AND_DISK`, `DISK_ONLY`, ...)."""
    from pyspark import StorageLevel

    key = (name or default).upper()
    level = getattr(StorageLevel, key, None)
    if not isinstance(level, StorageLevel):
        valid = sorted(k for k, v in vars(StorageLevel).items() if isinstance(v, StorageLevel))
        raise ValueError(f"unknown storage level {name!r}; valid: {', '.join(valid)}")
    return level


def persist(rdd, level, name: str):
    """Name and persist an RDD (the name shows up in the UI, the listener and the traces)."""
    return rdd.setName(name).persist(level)


def default_partitions(spark, scale: int, per_scale: int = 4) -> int:
    return max(2, per_scale * scale)


@contextmanager
def shuffle_partitions(spark, parts: int) -> Iterator[None]:
    """`spark.sql.shuffle.partitions` set to `parts` for the block, restored after it."""
    key = "spark.sql.shuffle.partitions"
    saved = spark.conf.get(key)
    spark.conf.set(key, str(parts))
    try:
        yield
    finally:
        spark.conf.set(key, saved)


def hash_col(F, seed: int, stream: int, modulo: int, col: str = "id"):
    """A DataFrame int column in [0, modulo): a pure function of (seed, stream, `col`), the same
    whatever the partitioning (`F` is pyspark.sql.functions)."""
    return F.pmod(F.xxhash64(F.lit(seed), F.lit(stream), F.col(col)), F.lit(modulo))


# --------------------------------------------------------------------------- command line

def main(name: str, run: Callable[..., dict], argv: list[str] | None = None) -> dict:
    """`spark-submit workloads/<name>.py --scale 2` / `python -m workloads.<name>`."""
    ap = argparse.ArgumentParser(prog=f"workloads.{name}", description=(run.__doc__ or "").strip())
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--storage-level", default=None)
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--master", default=None, help="only when not set by spark-submit")
    args = ap.parse_args(argv)

    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(f"spark-lrc-{name}")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    t0 = time.perf_counter()
    try:
        res = run(spark, scale=args.scale, seed=args.seed, storage_level=args.storage_level,
                  partitions=args.partitions)
    finally:
        elapsed = time.perf_counter() - t0
    print(f"{name} scale={args.scale} seed={args.seed} seconds={elapsed:.2f}")
    print(json.dumps(res.get("result"), default=str, sort_keys=True))
    print(f"checksum={res['checksum']}")
    spark.stop()
    return res

