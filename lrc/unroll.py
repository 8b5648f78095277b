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
steps. A trace knows a block's element count when the executor that stored it counted its values:
a deserialized level's stored array (free), a serialized level's values read back after the task
(``spark.lrc.countValues``, on when a trace is recorded; the shim's ValueCount); the steps then
follow Spark's checks with the values taken as equal in size. A serialized block without a count
(a run recorded without counting, an event log: it has no counts at all) is taken as values of
64 KiB (``SERIALIZED_VALUE_BYTES``: PySpark's pickled batches grow to about that; a DataFrame's
cached batches are few and large, and both end near 1x the block). Measured on 132 live runs of
six workloads (pagerank, cc, zip, ml, sql, tpch; results/whatif/online/README.md), the replay of
each run's own trace is then 3.9 points from the live hit ratio on average, against 12.0 with the
one-element rule it replaces for them; the count is what that rule cannot know: a 709 KiB PySpark
block of ~18 doubling batches reaches Spark's 17th-value check and reserves ~1.4x (1.2-1.6x in
Spark's executor log), where 64 KiB values (12) end at 1.0x (results/fidelity/values/). A
deserialized block without a count (an event log's GraphX partition) keeps the one-element rule:
the threshold, then 1.5x the block (the threshold alone for a block below it).
"""
from __future__ import annotations

import re

SPARK_UNROLL_THRESHOLD = 1 << 20  # spark.storage.unrollMemoryThreshold's default
GROWTH = 1.5  # MemoryStore's memoryGrowthFactor
CHECK_PERIOD = 16  # MemoryStore's memoryCheckPeriod: the estimate is checked after elements 1, 17, ...
SERIALIZED_VALUE_BYTES = 1 << 16  # a serialized block's values when not counted (see above)


def reserve_steps(size: int, threshold: int, elements: int | None = None,
                  serialized: bool = False) -> tuple[int, ...]:
    """The storage memory Spark holds, step by step, while it stores a block of ``size`` bytes
    and ``elements`` values (None: not known, taken as one, or for a ``serialized`` block as
    values of ``SERIALIZED_VALUE_BYTES``): each step must be free (evicting for it) before the
    next; the last is the most. At a check after ``j`` values whose estimate ``j * size /
    elements`` has reached the reservation, the reservation becomes 1.5x the estimate; at the
    end it is at least ``size``."""
    if elements is None and serialized:
        elements = -(-size // SERIALIZED_VALUE_BYTES)
    n = elements if elements and elements > 1 else 1
    per = size / n
    steps, held, j = [threshold], threshold, 1
    while j <= n:
        est = j * per
        if est >= held:
            held = int(GROWTH * est)
            steps.append(held)
        # on to the check before the first whose estimate can reach what is held (one short, so
        # rounding never skips it): O(log) iterations however many values
        reach = held / per if per > 0 else n + 1
        j += CHECK_PERIOD * max(1, int((reach - j) // CHECK_PERIOD))
    if size > held:
        steps.append(size)
    return tuple(steps)


def reserve_bytes(size: int, threshold: int, elements: int | None = None) -> int:
    """Bytes that must be free in storage memory to store a block of ``size`` bytes."""
    return reserve_steps(size, threshold, elements)[-1]


def threshold_of(conf: dict | None) -> int:
    """spark.storage.unrollMemoryThreshold in ``conf`` (bytes, a whole number: Spark reads it as a
    long and rejects ``1m``), Spark's default when unset; a malformed value raises ValueError
    naming it."""
    text = str((conf or {}).get("spark.storage.unrollMemoryThreshold", SPARK_UNROLL_THRESHOLD))
    if not re.fullmatch(r"\s*[0-9]+\s*", text) or int(text) <= 0:
        raise ValueError(f"spark.storage.unrollMemoryThreshold {text!r}: expected a positive "
                         "whole number of bytes (65536)"[:200])
    return int(text)
