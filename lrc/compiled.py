"""A trace compiled for replay: dense block ids, flat per-block arrays, events as tuples."""
from __future__ import annotations

import numpy as np

from lrc.blockids import BlockIds
from lrc.dag import ALL, Block
from lrc.trace import Trace
from lrc.unroll import reserve_steps

KIND = {"job_start": 0, "stage_submitted": 1, "task": 2, "stage_completed": 3, "job_end": 4,
        "unpersist": 5}


class CompiledTrace:
    """A trace as integer block ids and flat arrays (shared by every policy / cache size; a
    replay only reads it)."""

    def __init__(self, trace: Trace) -> None:
        dag = trace.dag
        self.trace, self.name = trace, trace.name
        self.block_ids = BlockIds()
        self.ids, self.blocks = self.block_ids.ids, self.block_ids.blocks
        bid = self.block_ids.id
        self.events: list[tuple] = []
        access: list[int] = []
        for e in trace.events:
            k = KIND[e.kind]
            if k == 2:
                order = spark_order(dag, e.stage_id, e.partition, e.reads, e.creates)
                reads = tuple(bid(e.reads[i]) for i in order[0])
                creates = tuple(bid(e.creates[i]) for i in order[1])
                if order[2] is None:
                    access.extend(reads)
                    access.extend(creates)
                else:
                    it_r, it_c = iter(reads), iter(creates)
                    access.extend(next(it_c) if c else next(it_r) for c in order[2])
                ex = int(e.executor) if e.executor is not None and e.executor.isdigit() else -1
                self.events.append((2, e.stage_id, e.partition, ex, reads, creates, e.duration_s,
                                    e.exec_bytes or 0, order[2]))
            else:  # (a stage attempt on part of its stage: its partitions third)
                arg = {0: e.job_id, 4: e.job_id, 5: e.rdd_id}.get(k, e.stage_id)
                self.events.append((k, arg) if e.partitions is None else (k, arg, e.partitions))
        self.total_bytes = sum(self._size(b) for b in self.blocks)
        self.inputs: list[tuple[int, ...]] = []
        i = 0
        while i < len(self.blocks):  # closure: inputs of inputs get ids too
            self.inputs.append(tuple(bid(x) for x in dag.block_inputs(self.blocks[i])))
            i += 1
        self.sizes = [self._size(b) for b in self.blocks]
        self.rdd_of = self.block_ids.rdd_of
        self.working_set_bytes = self._peak_live_bytes()
        self.disk = [dag.rdds[b[0]].uses_disk if b[0] in dag.rdds else False for b in self.blocks]
        self.cost = [dag.recompute_cost(b) for b in self.blocks]
        self.lineage_cost = [dag.lineage_cost(b) for b in self.blocks]
        self.events = [ev if ev[0] != 2 or ev[6] is not None else
                       ev[:6] + (sum(self.cost[c] for c in ev[5]) + dag.task_cost(ev[1], ev[2], ALL),
                                 ev[7], ev[8])
                       for ev in self.events]
        # tasks claim execution memory from the cache (lrc.execmem); the replay models it
        self.max_claim = max((ev[7] for ev in self.events if ev[0] == 2), default=0)
        self.exec_claims = self.max_claim > 0
        self.job_rdds = {j.id: dag.lineage_rdds(dag.stages[s].rdd_id for s in j.stage_ids)
                         for j in dag.jobs.values()}
        self.access = np.asarray(access, dtype=np.int64)
        self._future = None
        self._rdd_blocks: dict[int, list[int]] | None = None
        self._steps: dict[int, list[tuple[int, ...]]] = {}  # unroll threshold -> per block

    def tasks(self):
        """Every task as ``(stage_id, partition, read ids)``, in run order (a profile)."""
        return ((ev[1], ev[2], ev[4]) for ev in self.events if ev[0] == 2)

    def rdd_blocks(self, rdd_id: int) -> list[int]:
        """Ids of the RDD's blocks."""
        if self._rdd_blocks is None:
            by: dict[int, list[int]] = {}
            for b, r in enumerate(self.rdd_of):
                by.setdefault(r, []).append(b)
            self._rdd_blocks = by
        return self._rdd_blocks.get(rdd_id, [])

    def _peak_live_bytes(self) -> int:
        """The cached working set: the most bytes cached at once with unlimited memory (a block
        lives from its first access until its RDD is unpersisted). Equal to `total_bytes` for an
        application that never unpersists; far less for one that does (GraphX-style loops)."""
        live: dict[int, set[int]] = {}  # rdd -> its cached blocks
        now = peak = 0
        for ev in self.events:
            if ev[0] == 2:
                for b in ev[4] + ev[5]:
                    blocks = live.setdefault(self.rdd_of[b], set())
                    if b not in blocks:
                        blocks.add(b)
                        now += self.sizes[b]
                peak = max(peak, now)
            elif ev[0] == 5:
                now -= sum(self.sizes[b] for b in live.pop(ev[1], ()))
        return peak

    def _size(self, b: Block) -> int:
        r = self.trace.dag.rdds.get(b[0])
        return r.size(b[1]) if r is not None else 1

    def reserve_steps(self, threshold: int) -> list[tuple[int, ...]]:
        """Per block, the steps of the storage memory Spark asks for to store it
        (``lrc.unroll``), computed once per threshold (every replay of the trace shares them)."""
        r = self._steps.get(threshold)
        if r is None:
            rdds = self.trace.dag.rdds
            r = self._steps[threshold] = [
                reserve_steps(s, threshold, rdds[b[0]].elements(b[1]), rdds[b[0]].serialized)
                if b[0] in rdds else reserve_steps(s, threshold)
                for s, b in zip(self.sizes, self.blocks)]
        return r

    def reserves(self, threshold: int) -> list[int]:
        """Per block, the most storage memory Spark asks for to store it (the last step)."""
        return [s[-1] for s in self.reserve_steps(threshold)]

    def future(self) -> tuple[np.ndarray, np.ndarray]:
        """(next access position of the block accessed at each position, first position per
        block), inf where none; O(n log n) by a stable sort on block id."""
        if self._future is None:
            acc, n = self.access, len(self.access)
            order = np.argsort(acc, kind="stable")
            nxt = np.full(n, np.inf)
            same = acc[order[1:]] == acc[order[:-1]]
            nxt[order[:-1][same]] = order[1:][same]
            first = np.full(len(self.blocks), np.inf)
            starts = np.ones(n, dtype=bool)
            starts[1:] = ~same
            first[acc[order[starts]]] = order[starts]
            self._future = (nxt, first)
        return self._future


def spark_order(dag, stage_id: int, partition: int, reads, creates
                ) -> tuple[list[int], list[int], tuple[bool, ...] | None]:
    """The order in which a Spark task touches its cached blocks. It computes its stage's RDD
    by pulling from the narrow parents in dependency order (a union reads its first parent to
    the end before its second; a zip opens its first before its second), and stores a cached
    block as soon as that partition is computed: a block is read where a depth-first walk of
    the lineage meets it, and stored after the blocks its computation reads. Returns the
    indices of ``reads`` and of ``creates`` in that order, and the interleaving (True: the
    next create) - None when every read comes before every create. Blocks the walk does not
    meet (a partial lineage) keep their order: reads first, creates last."""
    if not reads or (len(reads) == 1 and not creates):  # one order only: no walk
        return list(range(len(reads))), list(range(len(creates))), None
    want_r = {b: i for i, b in enumerate(reads)}
    want_c = {b: i for i, b in enumerate(creates)}
    seq = _walk_in_order(dag, stage_id, partition, want_r, want_c)
    met_r = {i for c, i in seq if not c}
    met_c = {i for c, i in seq if c}
    left_r = [i for i in range(len(reads)) if i not in met_r]
    left_c = [i for i in range(len(creates)) if i not in met_c]
    flags = (False,) * len(left_r) + tuple(c for c, _ in seq) + (True,) * len(left_c)
    first_create = flags.index(True) if True in flags else len(flags)
    interleaved = not all(flags[first_create:])
    return (left_r + [i for c, i in seq if not c], [i for c, i in seq if c] + left_c,
            flags if interleaved else None)


def _walk_in_order(dag, stage_id: int, partition: int, want_r: dict, want_c: dict
                   ) -> list[tuple[bool, int]]:
    """Depth-first from the task's block, dependencies in order: (is a create, index) of the
    wanted blocks met, a read where it is met (its lineage is not walked), a create after its
    lineage."""
    try:
        root = (dag.stage(stage_id).rdd_id, partition)
    except (KeyError, ValueError):
        return []
    seq: list[tuple[bool, int]] = []
    seen: set = set()
    stack: list = [(root, False)]
    while stack:
        blk, after_lineage = stack.pop()
        if after_lineage:
            seq.append((True, want_c[blk]))
            continue
        if blk in seen:
            continue
        seen.add(blk)
        if blk in want_r:
            seq.append((False, want_r[blk]))
            continue
        rdd = dag.rdds.get(blk[0])
        if rdd is None:
            continue
        if blk in want_c:
            stack.append((blk, True))
        kids = []
        for d in rdd.deps:
            parent = dag.rdds.get(d.parent)
            if parent is not None and d.kind != "shuffle":
                kids.extend((d.parent, q) for q in
                            d.parent_partitions(blk[1], rdd.num_partitions, parent.num_partitions))
        stack.extend((k, False) for k in reversed(kids))
    return seq
