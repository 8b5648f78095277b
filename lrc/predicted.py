"""The planner's predicted references (`lrc.predict`): what the jobs an iterative application
has not submitted yet will read, registered after each real job and replaced by the next.

A mixin of `lrc.planner.Planner` (its DAG, reference state, predictor and sequence numbers): the
part of the planner that names datasets by call site and generation and turns a predicted job
shape back into blocks.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable

from lrc.dag import Block, Job
from lrc.predict import TAIL_WINDOW, dataset_name, shape_of


class PredictedRefs:
    """Needs, on the class it is mixed into: ``dag``, ``refs``, ``predictor``, ``predicted``
    (pseudo stage ids holding predicted references), ``_origin``, ``_recurring``,
    ``state_read``, ``predict_reuse``, ``_last_use``, ``_reused``, ``_jobs_noted``, ``replan_missing``,
    ``block_ids``, ``_builds``, ``failed_stores``, ``_keys`` and ``_next_seq``."""

    def _site(self, rdd_id: int) -> str:
        """A recurring dataset's identity: where the code created the RDD and which job first
        computed it (PySpark creates every cached PythonRDD at one JVM call site; the job that
        first computes it carries the Python line)."""
        return f"{self._created_at(rdd_id)} @ {self._origin.get(rdd_id, '')}"

    def _created_at(self, rdd_id: int) -> str:
        """`dataset_name` of the RDD ("?" when unknown)."""
        r = self.dag.rdds.get(rdd_id)
        return "?" if r is None else dataset_name(r.call_site, r.name)

    def _generations(self) -> dict[str, list[int]]:
        """Cached RDDs by call site, oldest generation first."""
        out: dict[str, list[int]] = {}
        for rid in sorted(self.dag.rdds):
            if self.dag.rdds[rid].cached:
                out.setdefault(self._site(rid), []).append(rid)
        return out

    def _block(self, key: Hashable) -> Block:
        return key if self.block_ids is None else self.block_ids.blocks[key]

    def _drop_predictions(self) -> set[Hashable]:
        """Drops the predicted references; returns the blocks that held one."""
        pending, held = self.refs.pending, set()
        for sid in self.predicted:
            for reads in pending.get(sid, {}).values():
                held.update(reads)
            self.refs.forget_stage(sid)
        self.predicted.clear()
        return held

    def _count_foreseen(self, job: Job, held: set[Hashable]) -> None:
        """How much of a job's plan the table in force at its start already had: the cached
        blocks its tasks read that held a predicted reference then (``foreseen``), counted over
        the jobs that started while predictions were registered."""
        f = self.foreseen
        f["jobs"] += 1
        if held:
            reads = {b for s in job.stage_ids if s >= 0
                     for task in self.refs.pending.get(s, {}).values() for b in task}
            f["predicted_jobs"] += 1
            f["reads"] += len(reads)
            f["foreseen"] += len(reads & held)

    def _stored_reads(self, stage_id: int) -> list[tuple]:
        """The reads of the stage's pending tasks as a later iteration's tasks will make them:
        every block of a cached RDD counts as stored but those the stage builds itself. A block
        missing now is recomputed by the task that needs it and stored again, so the next
        iteration reads it, not its ancestors. Predicting the reads the walk over what is
        materialized now finds would rank dead ancestors instead and leave the block unranked,
        which admission then never lets back in (synthetic ml at F = 0.7)."""
        pending = self.refs.pending[stage_id]
        builds = self._builds.get(stage_id, ())
        computed = self.failed_stores.creates.get(stage_id, ())
        if not self.replan_missing or all(self._block(k)[0] in builds for k in computed):
            return list(pending.values())  # it rebuilds nothing: its reads as planned
        stage = self.dag.stages[stage_id]
        stored = _AllBut(builds)
        shape = self.dag.narrow_shape(stage.rdd_id)
        parts = list(pending)
        if shape is not None and parts:  # one walk serves every partition (AppDAG.narrow_shape)
            rdds = [r for r, _ in self.dag.task_reads(stage_id, parts[0], stored)[0]]
            return [self._keys([(r, p) for r in rdds]) for p in parts]
        return [self._keys(self.dag.task_reads(stage_id, p, stored)[0]) for p in parts]

    def _predict(self, job: Job, before: dict[str, list[int]], known: set[int]) -> None:
        """Remember the job's shape and register the reads of the jobs predicted after it."""
        back = {rid: (site, len(ids) - 1 - i) for site, ids in before.items()
                for i, rid in enumerate(ids)}

        def key(b):
            rdd, p = self._block(b)
            g = back.get(rdd)
            return None if g is None else (g[0], g[1], p)

        seq = self.refs.stage_seq
        ran = sorted((s for s in job.stage_ids if s in self.refs.pending), key=seq.__getitem__)
        tasks = [self._stored_reads(s) for s in ran]
        weights = [self.refs.seq_weight.get(seq[s], 1.0) for s in ran]
        last = max((s for s in job.stage_ids if s in self.dag.stages), default=None)
        result = self._created_at(self.dag.stages[last].rdd_id if last is not None else -1)
        added = [r for r in self.dag.rdds if r not in known]  # the RDDs this job brought
        cached = [r for r in added if self.dag.rdds[r].cached]
        for r in added:
            self._origin[r] = result
        # a job's signature: where its result RDD was created, the same in every iteration of a
        # loop (a generic one mixes shapes up); a map-stage-only job (adaptive SQL) is its own kind
        map_job = last is not None and self.dag.stages[last].shuffle >= 0
        signature = f"{result} (map stage)" if map_job else result
        new = Counter(self._site(r) for r in cached)
        if self.predict_reuse:
            self._note_use(known, cached, tasks)
        self.predictor.observe(shape_of(signature, tasks, key, new, weights))
        now = self._generations()
        self._recurring.update(new)
        if len(self._recurring) > 1024:  # bounded: datasets no longer cached are forgotten
            self._recurring = Counter({k: n for k, n in self._recurring.items() if k in now})
        shift: Counter[str] = Counter()
        foreseen: set[int] = set()  # RDDs a predicted job reads
        for shape in self.predictor.cycle():
            for k, tasks in enumerate(shape.stages):
                order = self._next_seq()
                sid = -order  # unique, and never a Spark stage id
                for part, reads in enumerate(tasks):
                    blocks = []
                    for site, gen, p in reads:
                        ids, back_n = now.get(site, ()), gen - shift[site]
                        if 0 <= back_n < len(ids):
                            rid = ids[-1 - back_n]
                            if p < self.dag.rdds[rid].num_partitions:
                                blocks.append((rid, p))
                                foreseen.add(rid)
                    if blocks:
                        self.refs.add_task(sid, part, self._keys(blocks), order)
                w = shape.weights[k] if k < len(shape.weights) else 1.0
                if w != 1.0 and sid in self.refs.stage_seq:
                    self.refs.seq_weight[order] = w
                self.predicted.append(sid)
            shift.update(dict(shape.new_generations))
        # one read per block after them all: of a newly cached RDD that neither the job nor a
        # predicted one reads, and of the newest generation of a recurring dataset that no
        # predicted job reads (an iterative application's state, which a job after its loop
        # reads unforeseen: SVD++'s last job)
        newest = {ids[-1] for site, ids in now.items()
                  if self.state_read and self._recurring[site] > 1 and ids[-1] not in foreseen}
        # and of the cached data the application used lately that no predicted job reads
        # (`_note_use`)
        if self.predict_reuse:
            newest |= {r for r, n in self._last_use.items()
                       if self._jobs_noted - n < TAIL_WINDOW and r in known and r not in foreseen
                       and self._recurring[self._site(r)] <= 1}
        order = None
        for rid in sorted(newest.union(cached)):
            keys = self._keys([(rid, p) for p in range(self.dag.rdds[rid].num_partitions)])
            if rid not in newest and any(self.refs.count.get(k) for k in keys):
                continue
            if order is None:
                order = self._next_seq()
                self.predicted.append(-order)
            for p, k in enumerate(keys):
                self.refs.add_task(-order, rid * 0x10000 + p, (k,), order)

    def _note_use(self, known: set[int], new: list[int], tasks) -> None:
        """An application caches what it reuses. What it *used* lately keeps one read per block
        after the predicted jobs (``_predict``) where the loops' predictions cannot name it:
        loops of different periods interleave (zip's pairs, rounds and joins), queries read the
        same tables in changing order, a loop's first iteration is no pattern yet (ml's
        `train`). Used: read by a job that caches nothing ``new``, or cached and not read
        since. Not used: what only fed another cached RDD (ml's `parsed`, zip's `base`: the
        nearest cached ancestors of a newly cached RDD), unless a job read it before; the reads
        of a job that caches something new, which may be building the successor of what it
        read (PageRank's `ranks`, left to the generations' rule). Used in the last
        ``TAIL_WINDOW`` jobs (the recurring tail's window): what a finished phase of the
        application left cached decays."""
        uses, rdds = self._last_use, self.dag.rdds
        self._jobs_noted += 1
        now = self._jobs_noted
        for r in new:
            uses[r] = now
        seen: set[int] = set()
        todo = [d.parent for r in new for d in rdds[r].deps]
        reused, push = self._reused, todo.append
        while todo:  # the nearest cached ancestors of what the job caches
            q = todo.pop()
            if q in seen:
                continue
            seen.add(q)
            rdd = rdds.get(q)
            if rdd is None:
                continue
            if rdd.cached:
                if q not in reused:
                    uses.pop(q, None)
            else:
                for d in rdd.deps:
                    push(d.parent)
        if not new:
            for r in {self._block(b)[0] for stage in tasks for reads in stage for b in reads}:
                if r in known and r in rdds and rdds[r].cached:
                    uses[r] = now
                    self._reused.add(r)


class _AllBut:
    """``block in view``: the block's RDD is not one of ``rdds`` (a DAG walk's view of a cache
    holding every cached RDD but those)."""

    __slots__ = ("rdds",)

    def __init__(self, rdds) -> None:
        self.rdds = rdds

    def __contains__(self, block: Block) -> bool:
        return block[0] not in self.rdds
