"""GPU-aware placement hints: which executors a task over a cached RDD partition should run on.

A GPU stage that reads cached blocks runs fastest where the block is already in memory AND a GPU
is free: it neither recomputes nor fetches the block, and it does not wait for a GPU elsewhere.
Spark's scheduler knows block locality (it prefers the executor holding a cached copy), but not
which of the cached copies sits on an executor with GPUs, and it does not look at GPUs when it
ranks locations. The brain already knows both, from the shim's events: `executor_added` carries
each executor's resources (`{"gpu": ["0", "1"]}`) and `block` events say which executor holds
which block in memory. These hints put the two together, for inspection and for users' own
scheduling: choose executors for a GPU job, order the locations of a custom RDD's
`getPreferredLocations`, or check after the fact that tasks ran where hinted. spark-lrc itself
acts through GPU placement (`spark_plugin.gpu_moves`, `spark.lrc.gpu.placement`): it copies a GPU
stage's cached inputs into a GPU executor; `stats()["placement"]` reports what was moved, the
bytes that would have crossed the network, and the GPU stages served locally.

    from spark_plugin import placement_hints, gpu_executors
    hints = placement_hints(rdd.id())   # {partition: ["1", "0"]}, best executor first
    gpu_executors()                     # {"1": ["0", "1"]}
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from .config import LrcConfigError

GPU = "gpu"


def _brain(brain: Any = None) -> Any:
    if brain is not None:
        return brain
    from .session import active_brain

    brain = active_brain()
    if brain is None:
        raise LrcConfigError("spark-lrc is not attached to any running SparkContext")
    return brain


def gpus_of(executors: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Executor id -> its GPU addresses, for the executors that have any."""
    out = {}
    for ex, info in executors.items():
        addresses = list(((info or {}).get("resources") or {}).get(GPU) or ())
        if addresses:
            out[str(ex)] = addresses
    return dict(sorted(out.items(), key=lambda kv: _id_key(kv[0])))


def _id_key(ex: str) -> tuple[int, int, str]:
    return (0, int(ex), "") if ex.isdigit() else (1, 0, ex)


def rank_executors(holders: Iterable[str], executors: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Live executors best first: holders of the block in memory, then more GPUs, then by id.

    `executors` are the live ones (the brain drops an executor on `executor_removed`); a holder
    that is not among them was removed and never appears, whatever the block events last said.
    """
    held = {str(h) for h in holders}
    gpus = gpus_of(executors)
    return sorted((str(ex) for ex in executors),
                  key=lambda ex: (ex not in held, -len(gpus.get(ex, ())), _id_key(ex)))


def hints_from(partitions: int, locations: Mapping[tuple[int, int], Iterable[str]], rdd_id: int,
               executors: Mapping[str, Mapping[str, Any]]) -> dict[int, list[str]]:
    """`rank_executors` for each partition `0..partitions-1` of `rdd_id` (no Spark needed)."""
    return {p: rank_executors(locations.get((rdd_id, p), ()), executors) for p in range(partitions)}


def placement_hints(rdd_id: Any, brain: Any = None) -> dict[int, list[str]]:
    """For each partition of the RDD (an id or a pyspark RDD), the executors to prefer, best
    first: those holding the partition's block in memory, then among equals those with GPUs
    (more first), then the rest; removed executors never appear. Partitions are the RDD's as
    the brain saw them in a job; for an RDD it never saw, those with a block somewhere."""
    brain = _brain(brain)
    rdd_id = int(rdd_id.id()) if hasattr(rdd_id, "id") and callable(rdd_id.id) else int(rdd_id)
    with brain._lock:  # the brain's thread applies events under this lock
        executors = {ex: dict(info) for ex, info in brain.executors.items()}
        locations = {b: set(w) for b, w in brain.planner.locations.items() if b[0] == rdd_id}
        rdd = brain.planner.dag.rdds.get(rdd_id)
    parts = rdd.num_partitions if rdd is not None else 1 + max((p for _, p in locations), default=-1)
    return hints_from(parts, locations, rdd_id, executors)


def gpu_executors(brain: Any = None) -> dict[str, list[str]]:
    """Live executor id -> the GPU addresses Spark assigned it (`executor_added` resources)."""
    brain = _brain(brain)
    with brain._lock:
        return gpus_of(dict(brain.executors))
