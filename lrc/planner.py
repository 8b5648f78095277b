"""Planner: the live-facing facade. DAG events in, block priorities out.

The Spark plugin (and the simulator) feed it jobs, stage/task progress and block placement; it
keeps the reference state and asks the policy for priorities. Usage::

    p = Planner("lrc")
    p.add_job(Job(0, [0, 1]), [Stage(0, 2, 4), Stage(1, 3, 4, parent_ids=[0])], rdds)
    p.stage_submitted(0); p.task_finished(0, 2); p.block_cached((2, 0), "1", 1024)
    p.take_changes()  # -> blocks whose priority changed; p.priority(b) / p.table() for values
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace

from lrc.blockids import BlockIds, IdView
from lrc.dag import AppDAG, Block, Job, RDD, Stage
from lrc.policies import Policy, get_policy
from lrc.refcount import RefState


class _Either:
    """Membership in either of two containers (without copying them)."""

    def __init__(self, a, b) -> None:
        self.a, self.b = a, b

    def __contains__(self, x) -> bool:
        return x in self.a or x in self.b


class Planner:
    """Reference counts for one application, online job by job or preloaded from a profile.

    ``profile``: a Trace of an earlier run of the same (recurring) application: every task's
    reads are registered up front; ``add_job`` then adds only what the profile did not foresee.
    ``simulated=True`` allows policies that need the future (``min``); the simulator fills it.
    ``block_ids``: key blocks by these dense int ids instead of ``(rdd, partition)`` tuples
    (the simulator's lists are indexed by them); every block passed in or handed out is then its
    id. The planner keeps its own copies of the RDDs and stages it is given: it never changes
    its callers' objects (a trace replays the same way twice).
    """

    def __init__(self, policy: str | Policy = "lrc", profile=None, peer_mode: str = "task",
                 simulated: bool = False, block_ids: BlockIds | None = None) -> None:
        self.policy = get_policy(policy)
        if self.policy.needs_future and not simulated:
            raise ValueError(f"policy {self.policy.name!r} needs the future access sequence: "
                             "simulator only (python -m lrc simulate)")
        self.refs = RefState(peer_mode if self.policy.needs_peers else None,
                             track_order=self.policy.needs_order)
        self.block_ids = block_ids
        self.dag = AppDAG()
        self.completed: set[int] = set()
        self.planned: set[int] = set()
        self.materialized: set[Hashable] = set()
        self.locations: dict[Hashable, set] = {}
        self._prio = self.policy.bind(self.refs)
        self._seq = 0
        if profile is not None:
            self.preload(profile.dag, ((e.stage_id, e.partition, self._keys(e.reads))
                                       for e in profile.events if e.kind == "task"))

    @property
    def cache_aware(self) -> bool:
        """Priorities depend on which blocks are cached (peer groups): only then does a block
        that stops being cached anywhere need ``set_cached(block, False)`` for the numbers."""
        return self.refs.peers is not None

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _keys(self, blocks: Sequence[Block]) -> Sequence[Hashable]:
        ids = self.block_ids
        return blocks if ids is None else [ids.id(b) for b in blocks]

    def _of_rdd(self, keys: Iterable[Hashable], rdd_id: int) -> list[Hashable]:
        if self.block_ids is None:
            return [b for b in keys if b[0] == rdd_id]
        rdd_of = self.block_ids.rdd_of
        return [b for b in keys if rdd_of[b] == rdd_id]

    def preload(self, dag: AppDAG, tasks: Iterable[tuple[int, int, Sequence[Hashable]]]) -> None:
        """Register a whole run up front (a profile): the DAG, and every task as
        ``(stage_id, partition, reads)`` in run order; a stage's position is its first task's."""
        for r in dag.rdds.values():
            self.dag.add_rdd(replace(r))
        for s in dag.stages.values():
            self.dag.add_stage(replace(s))
        seqs: dict[int, int] = {}
        add = self.refs.add_task
        for sid, part, reads in tasks:
            seq = seqs.get(sid) or seqs.setdefault(sid, self._next_seq())
            add(sid, part, reads, seq)
        self.planned.update(seqs)

    # ---- DAG events ------------------------------------------------------------------------
    def add_job(self, job: Job, stages: list[Stage], rdds: list[RDD]) -> None:
        """Merge the job's RDDs/stages and add references of the stages that will run
        (a stage that already completed is predicted skipped: its shuffle output exists)."""
        for r in rdds:
            self.dag.add_rdd(replace(r))
        for s in stages:
            self.dag.add_stage(replace(s, job_id=job.id if s.job_id is None else s.job_id))
        self.dag.add_job(job)
        created: set[Block] = set()
        lazy: list[tuple[int, int]] = []
        for s in _parents_first([self.dag.stages[s.id] for s in stages]):
            if s.id not in self.completed:
                self._plan_stage(s, created, lazy)

    def _plan_stage(self, stage: Stage, created: set[Block], lazy: list | None = None) -> None:
        """Add the references of the stage's tasks. A task already registered (by a profile)
        adds none; its DAG walk matters only for what it creates, which a later stage of the
        same job may read, so with ``lazy`` it waits there until such a stage needs it."""
        seq = self._next_seq()
        mat = _Either(self.materialized if self.block_ids is None
                      else IdView(self.block_ids, self.materialized), created)
        pending = self.refs.pending.get(stage.id)
        for p in stage.task_partitions():
            if lazy is not None and pending is not None and p in pending:
                lazy.append((stage.id, p))
                continue
            if lazy:
                for sid, q in lazy:
                    created.update(self.dag.task_reads(sid, q, mat)[1])
                lazy.clear()
            reads, creates = self.dag.task_reads(stage.id, p, mat)
            self.refs.add_task(stage.id, p, self._keys(reads), seq)
            created.update(creates)
        self.planned.add(stage.id)

    def stage_submitted(self, stage_id: int) -> None:
        """A stage really runs; plan it now if no job start announced it."""
        if stage_id not in self.planned and stage_id in self.dag.stages:
            self._plan_stage(self.dag.stages[stage_id], set())

    def stage_completed(self, stage_id: int) -> None:
        self.completed.add(stage_id)
        self.refs.drop_stage(stage_id)

    def job_ended(self, job_id: int) -> None:
        """Drop references of the job's stages that never ran."""
        job = self.dag.jobs.get(job_id)
        for s in job.stage_ids if job else ():
            self.refs.drop_stage(s)

    def task_finished(self, stage_id: int, partition: int) -> None:
        self.refs.finish_task(stage_id, partition)

    def set_cached(self, block: Hashable, cached: bool) -> None:
        """``block`` is now cached on some executor (True) or on none (False). The simulator
        calls this directly (a block lives on one executor there); live, the two below do."""
        if cached:
            self.materialized.add(block)
        peers = self.refs.peers
        if peers is not None:
            peers.set_cached(block, cached)

    def block_cached(self, block: Hashable, executor, nbytes: int = 0) -> None:
        where = self.locations.setdefault(block, set())
        if not where:
            self.set_cached(block, True)
        where.add(executor)

    def block_removed(self, block: Hashable, executor) -> None:
        where = self.locations.get(block)
        if where:
            where.discard(executor)
            if not where:
                self.set_cached(block, False)

    def rdd_unpersisted(self, rdd_id: int) -> None:
        """The RDD is no longer cached: its blocks are gone and later DAG walks go through it
        (only the planner's own copy of the RDD is marked)."""
        for b in self._of_rdd(self.locations, rdd_id):
            for ex in list(self.locations[b]):
                self.block_removed(b, ex)
            del self.locations[b]
        self.materialized.difference_update(self._of_rdd(self.materialized, rdd_id))
        if rdd_id in self.dag.rdds:
            self.dag.rdds[rdd_id].cached = False

    # ---- priorities out --------------------------------------------------------------------
    def priority(self, block: Hashable) -> float:
        return float(self._prio(block))

    def table(self) -> dict[Hashable, float]:
        """Priority of every known RDD block (referenced or cached)."""
        known = set(self.refs.count) | set(self.locations)
        return {b: self.priority(b) for b in known}

    def take_changes(self) -> set[Hashable]:
        """Blocks whose priority may have changed since the last call (empty for constant
        policies such as lru)."""
        changes = self.refs.take_changes()
        return set() if self.policy.constant else changes

    def task_reads(self, stage_id: int, partition: int) -> list[Hashable]:
        """Expected cached reads of a task (for hit accounting)."""
        return list(self.refs.pending_reads(stage_id, partition))

    def planned_stages(self) -> set[int]:
        return set(self.planned)


def _parents_first(stages: list[Stage]) -> list[Stage]:
    """Topological order by parent stage ids (ties by id)."""
    by_id = {s.id: s for s in stages}
    out, done = [], set()

    def visit(s: Stage) -> None:
        if s.id in done:
            return
        done.add(s.id)
        for pid in sorted(s.parent_ids):
            if pid in by_id:
                visit(by_id[pid])
        out.append(s)

    for s in sorted(stages, key=lambda s: s.id):
        visit(s)
    return out
