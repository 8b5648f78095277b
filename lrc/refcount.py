"""Per-block reference state: how many not-yet-run tasks will read each cached block.

References are registered per task ``(stage_id, partition)`` with the blocks it will read and the
stage's sequence number (its position in the planned execution order). They come from a profile
(a trace of an earlier run: the whole application up front) or job by job as jobs are submitted
(a new job's references are added to what remains). A task's references drop when it finishes,
or when its stage is dropped (skipped, or its job ended without running it).
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable

from lrc.cost import MissCosts
from lrc.peers import Counts, PeerGroups

INF = float("inf")


class _Never(dict):
    """No future access known: position inf."""

    def __missing__(self, key: Hashable) -> float:
        return INF


class RefState:
    """Reference counts, plus effective counts (``peer_mode`` "task"/"stage") and next-reference
    positions (``track_order``) when the policy needs them. ``changed`` collects blocks whose
    counts moved (when ``count_changes`` is False - the policy does not read counts - only those
    whose next reference moved or that may be left with one read, `CRD.bind_stored`), for
    incremental priority updates: ``take_changes`` hands the set over; a consumer that applies
    them at once (the simulator) may clear it in place."""

    def __init__(self, peer_mode: str | None = None, track_order: bool = False) -> None:
        if peer_mode not in (None, "task", "stage"):
            raise ValueError(f"peer_mode must be 'task' or 'stage', not {peer_mode!r}")
        self.count: Counts = Counts()
        self.pending: dict[int, dict[int, tuple]] = {}  # stage -> partition -> reads
        # stage -> partitions whose task ran, until the stage completes: a second job that
        # announces a stage already running (two jobs share it) registers only the rest
        self.ran: dict[int, set[int]] = {}
        self.stage_seq: dict[int, int] = {}
        self.changed: set = set()
        self.peer_mode = peer_mode
        self.peers = PeerGroups(self.changed) if peer_mode else None
        self.track_order = track_order
        self.count_changes = True
        self.next_seqs: dict[Hashable, dict[int, int]] = {}  # block -> stage seq -> references
        self.next_ref: dict[Hashable, float] = {}
        # what a miss in the stage planned at a sequence number costs, relative to a CPU stage:
        # only weighted (GPU) stages are listed, every other stage weighs 1.0
        self.seq_weight: dict[int, float] = {}
        # future knowledge (position of each block's next access): only a simulator fills it
        self.next_access: dict[Hashable, float] | list[float] = _Never()
        self.relative = False  # set by the planner for policies whose priority depends on now
        self.now = 0  # stage sequence number of the newest stage running (distances count from it)
        self.costs = MissCosts()  # what a miss of each block costs (cost-aware policies)
        # decrements that took a count below zero: a reference dropped twice (a bug), counted
        # rather than hidden (the count is left as it went, so a recount disagrees too)
        self.negative_decrements = 0

    def advance(self, seq: int) -> None:
        """A stage planned at ``seq`` runs: distances to next references shrink; for a policy
        ranking by distance from now (``relative``), every block with a future reference
        changes."""
        if seq > self.now:
            self.now = seq
            if self.relative:
                self.changed.update(self.next_ref)

    # ---- registering and dropping references ------------------------------------------------
    def add_task(self, stage_id: int, partition: int, reads: Iterable[Hashable], seq: int) -> bool:
        """Register the reads of a task that has not run; False if it was already known (or
        has run)."""
        return self.add_tasks(stage_id, ((partition, reads),), seq) == 1

    def add_tasks(self, stage_id: int, tasks: Iterable[tuple[int, Iterable[Hashable]]],
                  seq: int, distinct: bool = False) -> int:
        """`add_task` for each ``(partition, reads)`` of one stage, in one call (planning a job
        registers thousands of tasks); returns how many were new. ``distinct``: no task's reads
        name a block twice (a DAG walk's), so they are not deduplicated."""
        ran = self.ran.get(stage_id) or ()
        pending = self.pending.get(stage_id)
        if pending is not None:
            seq = self.stage_seq[stage_id]
        count, changed, peers = self.count, self.changed, self.peers
        by_task = peers is not None and self.peer_mode == "task"
        order, counted = self.track_order, self.count_changes
        next_seqs, next_ref = self.next_seqs, self.next_ref
        added = 0
        for partition, reads in tasks:
            if partition in ran:
                continue
            if pending is None:  # (created by the first task registered: none may be new)
                pending = self.pending[stage_id] = {}
                seq = self.stage_seq.setdefault(stage_id, seq)
            elif partition in pending:
                continue
            if distinct:
                if type(reads) is not tuple:
                    reads = tuple(reads)
            elif type(reads) is not tuple or len(reads) > 1:
                reads = tuple(dict.fromkeys(reads))
            pending[partition] = reads
            added += 1
            for b in reads:
                count[b] = count.get(b, 0) + 1
            if order:
                for b in reads:
                    seqs = next_seqs.get(b)
                    if seqs is None:
                        seqs = next_seqs[b] = {}
                    c = seqs.get(seq, 0)
                    seqs[seq] = c + 1
                    if seq < next_ref.get(b, INF):
                        next_ref[b] = seq
                        if not counted:  # (a policy not reading counts: only a moved next read)
                            changed.add(b)
                    elif not counted and len(seqs) + c <= 2:  # it may have had one read left
                        changed.add(b)  # (crd's rank of a store, CRD.bind_stored)
            if counted or not order:
                changed.update(reads)
            if peers is not None:
                gid = (stage_id, partition) if by_task else stage_id
                for b in reads:
                    peers.add(gid, b)
        return added

    def finish_task(self, stage_id: int, partition: int) -> None:
        """The task ran (or will never run): its references are gone."""
        ran = self.ran.get(stage_id)
        if ran is None:
            ran = self.ran[stage_id] = set()
        ran.add(partition)
        tasks = self.pending.get(stage_id)
        reads = tasks.pop(partition, None) if tasks else None
        if reads is None:
            return
        count = self.count
        if self.track_order:
            seq = self.stage_seq[stage_id]
            next_seqs, next_ref = self.next_seqs, self.next_ref
            moved = []
            for b in reads:
                c = count[b] = count[b] - 1
                if c < 0:
                    self.negative_decrements += 1
                seqs = next_seqs[b]
                left = seqs[seq] - 1
                if left:
                    seqs[seq] = left
                    if left == 1 and len(seqs) == 1:  # one read left (CRD.bind_stored)
                        moved.append(b)
                else:
                    del seqs[seq]
                    if not seqs:  # no future reference: MRD's get(b, INF)
                        del next_seqs[b], next_ref[b]
                        moved.append(b)
                    elif next_ref[b] == seq:
                        next_ref[b] = min(seqs)
                        moved.append(b)
                    elif len(seqs) == 1:  # one stage's reads left (CRD.bind_stored)
                        moved.append(b)
            self.changed.update(reads if self.count_changes else moved)
        else:
            for b in reads:
                c = count[b] = count[b] - 1
                if c < 0:
                    self.negative_decrements += 1
            self.changed.update(reads)
        if self.peers is not None:
            gid = stage_id if self.peer_mode == "stage" else (stage_id, partition)
            for b in reads:
                self.peers.remove(gid, b)

    def drop_stage(self, stage_id: int) -> None:
        """Drop references of every task of the stage that has not finished: no job needs the
        stage any more (Spark forgets it; a later job gets a new stage id)."""
        for p in list(self.pending.get(stage_id, ())):
            self.finish_task(stage_id, p)
        self.ran.pop(stage_id, None)

    def forget_stage(self, stage_id: int) -> None:
        """Drop the stage's references and every trace of it (a predicted stage replaced)."""
        self.drop_stage(stage_id)
        self.pending.pop(stage_id, None)
        seq = self.stage_seq.pop(stage_id, None)
        # (a rerun shares the running stage's place, `Planner.stage_submitted`: its weight stays)
        if seq in self.seq_weight and seq not in self.stage_seq.values():
            del self.seq_weight[seq]

    # ---- queries -----------------------------------------------------------------------------
    def refs(self, block: Hashable) -> int:
        return self.count.get(block, 0)

    def effective(self, block: Hashable) -> int:
        if self.peers is None:
            raise ValueError("effective counts need RefState(peer_mode='task' or 'stage')")
        return self.peers.effective.get(block, 0)

    def pending_reads(self, stage_id: int, partition: int) -> tuple:
        return self.pending.get(stage_id, {}).get(partition, ())

    def take_changes(self) -> set:
        out = self.changed  # swap, not copy: the caller owns the returned set
        self.changed = set()
        if self.peers is not None:
            self.peers.changed = self.changed
        return out
