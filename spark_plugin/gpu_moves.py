"""GPU placement, the brain's half: which cached blocks move to which GPU executor, and what it
saved.

With stage-level scheduling a GPU stage runs only on GPU executors, but its cached input was
usually computed, and cached, by CPU stages on CPU executors: every GPU task then reads it over
the network (and waits for locality first). While a GPU stage is planned and not finished, each
of its pending reads whose block sits in memory only on executors without GPUs becomes a move to
the GPU executor with the fewest bytes moved to it so far, at most `budget_bytes` per stage. The
moves travel with the table (wire.encode_moves); the target executor checks its own room and asks
the holder to replicate the block (jvm_shim Placement). A move is done when a block event shows
the copy on its target; from then on the holders' copies go first on eviction there. Moves of an
RDD no longer cached, of blocks cached nowhere, to an executor that left, or whose copy was
evicted from its target are dropped (a GPU stage still reading the block plans it again).

Stats (`stats()["placement"]`): moves and their bytes, and for the reads of GPU-stage tasks how
many were local, how many crossed the network (a copy on another executor), and the bytes the
moves saved (local reads of moved blocks by tasks on the move's target: without the move each
would have been fetched from a CPU executor).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from . import wire
from .placement import _id_key, gpus_of

Block = tuple[int, int]


@dataclass
class Move:
    block: Block
    target: str
    nbytes: int
    stage: int
    done: bool = False


class GpuPlacement:
    """Moves for the planned GPU stages; `update` recomputes them from the brain's state."""

    def __init__(self, budget_bytes: int, enabled: bool = True):
        self.budget = budget_bytes
        self.enabled = enabled  # False: count GPU-stage reads only (spark.lrc.gpu.placement off)
        self.moves: dict[Block, Move] = {}
        self.pending: dict[int, int] = {}  # planned, unfinished GPU stage -> its job
        self.spent: dict[int, int] = defaultdict(int)  # stage -> bytes of the moves it made
        self._sent: str | None = None
        self.moved = 0  # moves seen done (each counted once)
        self.bytes_moved = 0
        self.reads = self.local = self.remote = 0
        self.bytes_saved = self.bytes_remote = 0
        self._stage_reads: dict[int, list[int]] = {}  # GPU stage -> [reads, local reads]

    # ---- the brain's events ------------------------------------------------------------------
    def job_started(self, job: int, stages: Iterable[Any]) -> None:
        for st in stages:
            if getattr(st, "gpus", 0) > 0:
                self.pending[st.id] = job

    def stage_completed(self, stage: int) -> None:
        self.pending.pop(stage, None)

    def job_ended(self, job: int) -> None:
        for s in [s for s, j in self.pending.items() if j == job]:
            del self.pending[s]

    def task_read(self, executor: str, is_gpu_stage: bool, stage: int, reads: Iterable[Block],
                  hits: set[Block], puts: set[Block], locations: Mapping[Block, set],
                  sizes: Mapping[Block, int]) -> None:
        """Count a GPU-stage task's cached reads: local, remote, and bytes the moves saved."""
        if not is_gpu_stage:
            return
        per = self._stage_reads.setdefault(stage, [0, 0])
        for b in reads:
            self.reads += 1
            per[0] += 1
            if b in hits:
                self.local += 1
                per[1] += 1
                m = self.moves.get(b)
                if m is not None and m.done and m.target == executor:
                    self.bytes_saved += sizes.get(b, 0)
            elif b not in puts and locations.get(b):
                self.remote += 1
                self.bytes_remote += sizes.get(b, 0)

    # ---- the moves ---------------------------------------------------------------------------
    def update(self, planner: Any, executors: Mapping[str, Mapping[str, Any]]) -> str | None:
        """Recompute the moves; their wire text if it changed since the last call, else None."""
        if not self.enabled or (not self.moves and not self.pending):
            return None
        gpus = set(gpus_of(executors))
        locations, sizes = planner.locations, planner.refs.costs.size
        for b, m in list(self.moves.items()):
            where = locations.get(b) or set()
            rdd = planner.dag.rdds.get(b[0])
            lost = m.done and m.target not in where  # the copy was evicted there
            if not where or rdd is None or not rdd.cached or m.target not in gpus or lost:
                del self.moves[b]  # (planned again while a GPU stage still reads it)
                continue
            if not m.done and m.target in where:
                m.done = True
                self.moved += 1
                self.bytes_moved += m.nbytes
        load: dict[str, int] = defaultdict(int)
        for m in self.moves.values():
            load[m.target] += m.nbytes
        for s in sorted(self.pending):
            if gpus:
                self._plan_stage(planner, s, gpus, locations, sizes, load)
        text = wire.encode_moves((m.block, m.target, m.nbytes, m.done)
                                 for m in sorted(self.moves.values(), key=lambda m: m.block))
        if text == self._sent:
            return None
        self._sent = text
        return text

    def _plan_stage(self, planner: Any, s: int, gpus: set[str], locations: Mapping[Block, set],
                    sizes: Mapping[Block, int], load: dict[str, int]) -> None:
        stage = planner.dag.stages.get(s)
        if stage is None:
            return
        for p in stage.partitions if stage.partitions is not None else range(stage.num_tasks):
            try:
                reads = planner.task_reads(s, p)
            except Exception:
                continue
            for b in reads:
                where = locations.get(b)
                size = sizes.get(b, 0)
                if b in self.moves or not where or where & gpus or size <= 0:
                    continue
                if self.spent[s] + size > self.budget:
                    return
                target = min(gpus, key=lambda g: (load[g], _id_key(g)))
                self.moves[b] = Move(b, target, size, s)
                self.spent[s] += size
                load[target] += size

    def withdrawal(self) -> str | None:
        """The moves text that withdraws every move sent (None: none was sent)."""
        return "" if self._sent else None

    def unsent(self) -> None:
        """The last text did not reach the driver's table: send it again with the next publish."""
        self._sent = None

    def stats(self) -> dict[str, Any]:
        served = sorted(s for s, (n, local) in self._stage_reads.items() if n and local == n)
        return {
            "moves": len(self.moves), "moved": self.moved, "bytes_moved": self.bytes_moved,
            "gpu_stage_reads": self.reads, "gpu_stage_local_reads": self.local,
            "gpu_stage_remote_reads": self.remote, "gpu_stage_remote_bytes": self.bytes_remote,
            "bytes_saved": self.bytes_saved, "gpu_stages_served_locally": served,
            "moved_blocks": {f"rdd_{m.block[0]}_{m.block[1]}": m.target
                             for m in self.moves.values() if m.done},
        }
