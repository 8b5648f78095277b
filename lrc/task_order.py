"""The order a replayed stage runs its tasks in: the trace's, or the one Spark's scheduler gives.

A trace recorded with ample memory ran every stage in partition order, each executor on the
partitions it had cached; under pressure Spark runs first the tasks whose blocks an executor
still holds, so a replay of that trace at a smaller cache read its cached partitions late and
lost hits that live runs keep (ml's LRU at F = 0.3: 0.03 replayed in the logged order, 0.39
live; results/fidelity/task-order-session37/).

When a stage is submitted, Spark's `TaskSetManager` files each task under the executors of its
preferred locations (`DAGScheduler.getPreferredLocs`: the executors holding the partition's
cached block, in memory or on disk; for a block cached nowhere, those of its nearest cached
ancestor through narrow dependencies), and an executor with a free slot takes the
lowest-index task filed under it first (`PROCESS_LOCAL`). The lists are built once per stage:
a block evicted while the stage runs still draws its task to the executor that held it.
Left out: delay scheduling's idle wait (an executor with no task of its own waits up to
`spark.locality.wait` while others have theirs; the replay keeps the logged executor of each
slot and gives it the first pending task), and host-level preferences (shuffle outputs, input
files)."""
from __future__ import annotations

from typing import Sequence

# the trace's order, or the one Spark's scheduler would pick (``spark_next``)
TASK_ORDERS = ("logged", "spark")


def check_task_order(task_order: str) -> str:
    """``task_order`` if it names one of ``TASK_ORDERS``; ValueError naming them otherwise."""
    if task_order not in TASK_ORDERS:
        raise ValueError(f"task_order must be one of {', '.join(TASK_ORDERS)}, not {task_order!r}")
    return task_order


def block_places(b: int, where: Sequence[int], disk_at: Sequence[int],
                 inputs: Sequence[Sequence[int]]) -> set[int]:
    """The executors Spark prefers for a task reading block ``b``: where it is cached (memory,
    ``where``, or disk, ``disk_at``; -1: nowhere), else the places of its first cached input
    that has any, searched depth first like `getPreferredLocs` (each block visited once)."""
    seen: set[int] = set()

    def search(x: int) -> set[int]:
        seen.add(x)
        out = {e for e in (where[x], disk_at[x]) if e >= 0}
        if out:
            return out
        for i in inputs[x]:
            if i not in seen:
                out = search(i)
                if out:
                    return out
        return out

    return search(b)


def stage_places(tasks: Sequence[tuple], where: Sequence[int], disk_at: Sequence[int],
                 inputs: Sequence[Sequence[int]]) -> dict[int, set[int]]:
    """Each pending task's (compiled task event's) preferred executors, by partition, from what
    is cached now: the union over the cached blocks it reads (taken when the stage starts)."""
    out: dict[int, set[int]] = {}
    for t in tasks:
        places: set[int] = set()
        for b in t[4]:
            places |= block_places(b, where, disk_at, inputs)
        out[t[2]] = places
    return out


def spark_next(tasks: list, ex: int, places: dict[int, set[int]]) -> tuple:
    """The task Spark's scheduler gives executor ``ex`` next from a stage's pending ``tasks``
    (compiled task events in their logged order; the one taken is removed): the first filed
    under ``ex`` in ``places`` (``stage_places``), else the first pending one. It runs on
    ``ex``."""
    for i, t in enumerate(tasks):
        if ex in places.get(t[2], ()):
            t = tasks.pop(i)
            return t[:3] + (ex,) + t[4:]
    t = tasks.pop(0)
    return t[:3] + (ex,) + t[4:]
