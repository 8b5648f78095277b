"""Execution memory's claims on cached blocks, as Spark's unified memory manager makes them.

Execution (a task's sorts, hash aggregations and joins) and storage share one region per
executor (``M``, what the executors' storage memory reports). A task that needs execution memory
takes free memory first and then evicts cached blocks - in the MemoryStore's eviction order,
for no block, skipping blocks that running tasks read - until storage is down to
``spark.memory.storageFraction`` x M. It gives the memory back when it ends; cached blocks come
back only when tasks cache them again. The replay models one claim per task: Spark's task
metric ``peakOnHeapExecutionMemory`` (Spark 4: the task's peak allocation from the pool; not
``peakExecutionMemory``, which adds operator-reported sizes such as broadcast relations that
never come from the pool), held after the task's cached reads and released at its end.

A claim depends on the memory it was made in: Spark's sorters and aggregation maps allocate in
pages of ``spark.buffer.pageSize``, by default derived from the executor's execution region
(``page_bytes``), and a SQL task's claim is mostly one page. A log of a run with ample memory
(32 MiB pages) would claim all of a small cache; so a trace that knows the memory its claims
were made in (``Trace.executor_memory``, from an event log's block manager) has them rescaled
to the simulated memory by the ratio of the two page sizes (``claim_scale``). A trace recorded
live carries its executors' memory as well (their block managers', `spark_plugin.recorder`);
replayed at the memory it ran with, its claims stay as they were.
"""
from __future__ import annotations

from statistics import median

SPARK_STORAGE_FRACTION = 0.5  # Spark's default spark.memory.storageFraction
_MIN_PAGE, _MAX_PAGE = 1 << 20, 64 << 20
_SAFETY = 16  # MemoryManager.defaultPageSizeBytes's safety factor


def resolve_storage_fraction(trace, given: float | None = None) -> float:
    """``given``, else the trace's ``storage_fraction``, else Spark's default; checked."""
    sf = given if given is not None else trace.storage_fraction
    sf = SPARK_STORAGE_FRACTION if sf is None else sf
    if not 0 <= sf < 1:
        raise ValueError(f"storage_fraction must be in [0, 1), not {sf!r}")
    return sf


def storage_fraction_of(conf: dict | None) -> float | None:
    """spark.memory.storageFraction in ``conf`` (None when unset); a malformed value raises
    ValueError naming it."""
    v = (conf or {}).get("spark.memory.storageFraction")
    if v is None:
        return None
    try:
        sf = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"spark.memory.storageFraction {v!r} is not a number"[:200]) from None
    if not 0 <= sf < 1:
        raise ValueError(f"spark.memory.storageFraction {v!r} is not in [0, 1)"[:200])
    return sf


def executor_memory(by_executor: dict[str, int]) -> int:
    """The memory a run's execution claims were made in: the median of its executors' unified
    memory (in local mode the driver is the executor); 0 when none is known."""
    mem = [m for x, m in by_executor.items() if x != "driver" and m > 0] or \
        [m for m in by_executor.values() if m > 0]
    return int(median(mem)) if mem else 0


def page_bytes(memory: int, storage_fraction: float, cores: int) -> int:
    """Spark's default page size for an executor whose unified region is ``memory`` bytes: the
    execution region per core over 16, rounded up to a power of 2, within [1 MiB, 64 MiB]."""
    size = max(1, int(memory * (1 - storage_fraction)) // max(1, cores) // _SAFETY)
    return min(_MAX_PAGE, max(_MIN_PAGE, 1 << (size - 1).bit_length()))


def claim_scale(recorded_memory: int, memory: int, storage_fraction: float, cores: int) -> float:
    """Factor for a claim made with ``recorded_memory`` bytes of unified memory, replayed with
    ``memory``: the ratio of Spark's page sizes at the two (1.0 when the first is unknown, 0)."""
    if recorded_memory <= 0:
        return 1.0
    return (page_bytes(memory, storage_fraction, cores)
            / page_bytes(recorded_memory, storage_fraction, cores))


def storage_limit(memory: int, claim: int, storage_fraction: float) -> int:
    """What cached blocks may hold while a task claims ``claim`` bytes of execution memory: the
    rest of the region, but never less than the protected storage share."""
    return max(int(memory * storage_fraction), memory - claim)
