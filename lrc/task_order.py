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

from collections import defaultdict, deque
from typing import Sequence

from lrc.policies import get_policy

# the trace's order, or the one Spark's scheduler would pick (``StageQueue``)
TASK_ORDERS = ("logged", "spark")


def check_task_order(task_order: str) -> str:
    """``task_order`` if it names one of ``TASK_ORDERS``; ValueError naming them otherwise."""
    if task_order not in TASK_ORDERS:
        raise ValueError(f"task_order must be one of {', '.join(TASK_ORDERS)}, not {task_order!r}")
    return task_order


def order_for(policy: str, task_order: str) -> str:
    """The order ``policy`` replays in when ``task_order`` is asked: the logged one for a policy
    that needs the future (min), whose positions follow the logged order."""
    return "logged" if get_policy(policy).needs_future else task_order


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


class StageQueue:
    """A stage's pending tasks (compiled task events in their logged order) filed as Spark files
    them: under each executor of their places (``stage_places``), and all of them. ``next``
    gives executor ``ex`` the first task filed under it, else the first pending one, to run on
    ``ex``; a task taken through one list is skipped in the others when reached (as
    `TaskSetManager.dequeueTaskFromList` does), so each pick costs O(1) amortized."""

    def __init__(self, tasks: Sequence[tuple], places: dict[int, set[int]]) -> None:
        self.tasks = tasks
        self.taken = bytearray(len(tasks))
        self.head = 0  # every task before it is taken
        self.filed: dict[int, deque[int]] = defaultdict(deque)
        for i, t in enumerate(tasks):
            for e in places.get(t[2], ()):
                self.filed[e].append(i)

    def next(self, ex: int) -> tuple:
        taken, filed = self.taken, self.filed.get(ex)
        while filed:
            i = filed.popleft()
            if not taken[i]:
                return self._take(i, ex)
        while taken[self.head]:
            self.head += 1
        return self._take(self.head, ex)

    def _take(self, i: int, ex: int) -> tuple:
        self.taken[i] = 1
        t = self.tasks[i]
        return t[:3] + (ex,) + t[4:]
