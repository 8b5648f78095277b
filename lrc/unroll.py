"""The storage memory Spark asks for while it stores a block, beyond the block's own size.

Spark 4's ``MemoryStore.putIterator`` (every level, deserialized or ``_SER``) reserves unroll
memory before it stores a partition: first ``spark.storage.unrollMemoryThreshold`` bytes, then,
after the first element and every 16th (``unrollMemoryCheckPeriod``), 1.5x the estimated size so
far once that reaches the reservation (``memoryGrowthFactor``). Each reservation evicts like a
store does (same-RDD rule, all or nothing); the excess is given back once the block is stored,
and when a step cannot be met the store fails (the block goes to disk or is recomputed on its
next read) while what the earlier steps evicted stays evicted.

A partition of one large element - a GraphX vertex or edge partition, a DataFrame's cached batch -
reserves 1.5x its size at its first check; one of many small elements grows towards 1x-1.5x in
steps. A trace does not know a block's element count; replays of live runs' own traces match the
one-element rule best (GraphX SVD++, TPC-H-like DataFrames, PySpark pagerank;
results/fidelity/unroll/README.md), so the simulator takes two steps: the threshold, then 1.5x
the block (the threshold alone for a block below it).
"""
from __future__ import annotations

import re

SPARK_UNROLL_THRESHOLD = 1 << 20  # spark.storage.unrollMemoryThreshold's default
GROWTH = 1.5  # MemoryStore's memoryGrowthFactor


def reserve_steps(size: int, threshold: int) -> tuple[int, ...]:
    """The storage memory Spark holds, step by step, while it stores a block of ``size`` bytes:
    each step must be free (evicting for it) before the next; the last is the most."""
    if size < threshold:
        return (threshold,)
    return threshold, max(threshold, int(GROWTH * size))


def reserve_bytes(size: int, threshold: int) -> int:
    """Bytes that must be free in storage memory to store a block of ``size`` bytes."""
    return reserve_steps(size, threshold)[-1]


def threshold_of(conf: dict | None) -> int:
    """spark.storage.unrollMemoryThreshold in ``conf`` (bytes, a whole number: Spark reads it as a
    long and rejects ``1m``), Spark's default when unset; a malformed value raises ValueError
    naming it."""
    text = str((conf or {}).get("spark.storage.unrollMemoryThreshold", SPARK_UNROLL_THRESHOLD))
    if not re.fullmatch(r"\s*[0-9]+\s*", text) or int(text) <= 0:
        raise ValueError(f"spark.storage.unrollMemoryThreshold {text!r}: expected a positive "
                         "whole number of bytes (65536)"[:200])
    return int(text)
