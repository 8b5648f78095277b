"""Planner: the live-facing facade. DAG events in, block priorities out.

The Spark plugin (and the simulator) feed it jobs, stage/task progress and block placement; it
keeps the reference state and asks the policy for priorities. Usage::

    p = Planner("lrc")
    p.add_job(Job(0, [0, 1]), [Stage(0, 2, 4), Stage(1, 3, 4, parent_ids=[0])], rdds)
    p.stage_submitted(0); p.task_finished(0, 2); p.block_cached((2, 0), "1", 1024)
    p.take_changes()  # -> blocks whose priority changed; p.priority(b) / p.table() for values
"""
from __future__ import annotations

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
    """

    def __init__(self, policy: str | Policy = "lrc", profile=None, peer_mode: str = "task",
                 simulated: bool = False) -> None:
        self.policy = get_policy(policy)
        if self.policy.needs_future and not simulated:
            raise ValueError(f"policy {self.policy.name!r} needs the future access sequence: "
                             "simulator only (python -m lrc simulate)")
        self.refs = RefState(peer_mode if self.policy.needs_peers else None,
                             track_order=self.policy.needs_order)
        self.dag = AppDAG()
        self.completed: set[int] = set()
        self.planned: set[int] = set()
        self.materialized: set[Block] = set()
        self.locations: dict[Block, set] = {}
        self._seq = 0
        if profile is not None:
            self._load_profile(profile)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _load_profile(self, trace) -> None:
        for r in trace.dag.rdds.values():
            self.dag.add_rdd(r)
        for s in trace.dag.stages.values():
            self.dag.add_stage(s)
        seqs: dict[int, int] = {}
        for ev in trace.events:
            if ev.kind == "task":
                seq = seqs.get(ev.stage_id) or seqs.setdefault(ev.stage_id, self._next_seq())
                self.refs.add_task(ev.stage_id, ev.partition, ev.reads, seq)
        self.planned.update(seqs)

    # ---- DAG events ------------------------------------------------------------------------
    def add_job(self, job: Job, stages: list[Stage], rdds: list[RDD]) -> None:
        """Merge the job's RDDs/stages and add references of the stages that will run
        (a stage that already completed is predicted skipped: its shuffle output exists)."""
        for r in rdds:
            self.dag.add_rdd(r)
        for s in stages:
            s.job_id = job.id if s.job_id is None else s.job_id
            self.dag.add_stage(s)
        self.dag.add_job(job)
        created: set[Block] = set()
        for s in _parents_first(stages):
            if s.id not in self.completed:
                self._plan_stage(s, created)

    def _plan_stage(self, stage: Stage, created: set[Block]) -> None:
        seq = self._next_seq()
        mat = _Either(self.materialized, created)
        for p in stage.task_partitions():
            reads, creates = self.dag.task_reads(stage.id, p, mat)
            self.refs.add_task(stage.id, p, reads, seq)
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

    def block_cached(self, block: Block, executor, nbytes: int = 0) -> None:
        where = self.locations.setdefault(block, set())
        if not where:
            self.refs.set_cached(block, True)
        where.add(executor)
        self.materialized.add(block)

    def block_removed(self, block: Block, executor) -> None:
        where = self.locations.get(block)
        if where:
            where.discard(executor)
            if not where:
                self.refs.set_cached(block, False)

    def rdd_unpersisted(self, rdd_id: int) -> None:
        for b in [b for b in self.locations if b[0] == rdd_id]:
            for ex in list(self.locations[b]):
                self.block_removed(b, ex)
            del self.locations[b]
        self.materialized = {b for b in self.materialized if b[0] != rdd_id}
        if rdd_id in self.dag.rdds:
            self.dag.rdds[rdd_id].cached = False

    # ---- priorities out --------------------------------------------------------------------
    def priority(self, block: Block) -> float:
        return self.policy.priority(self.refs, block)

    def table(self) -> dict[Block, float]:
        """Priority of every known RDD block (referenced or cached)."""
        known = set(self.refs.count) | set(self.locations)
        return {b: self.priority(b) for b in known}

    def take_changes(self) -> set[Block]:
        """Blocks whose priority may have changed since the last call (empty for constant
        policies such as lru)."""
        changes = self.refs.take_changes()
        return set() if self.policy.constant else changes

    def task_reads(self, stage_id: int, partition: int) -> list[Block]:
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
