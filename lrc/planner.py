"""Planner: the live-facing facade. DAG events in, block priorities out.

The Spark plugin (and the simulator) feed it jobs, stage/task progress and block placement; it
keeps the reference state and asks the policy for priorities. Usage::

    p = Planner("lrc")
    p.add_job(Job(0, [0, 1]), [Stage(0, 2, 4), Stage(1, 3, 4, parent_ids=[0])], rdds)
    p.stage_submitted(0); p.task_finished(0, 2); p.block_cached((2, 0), "1", 1024)
    p.take_changes()  # -> blocks whose priority changed; p.priority(b) / p.table() for values"""
from __future__ import annotations

from collections import Counter, OrderedDict, deque
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace

from lrc.blockids import BlockIds
from lrc.cost import GPU_COST_WEIGHT, MissCosts, WarmCost
from lrc.dag import AppDAG, Block, Job, RDD, Stage, parents_first
from lrc.policies import Policy, get_policy
from lrc.predict import TAIL_WINDOW, Predictor
from lrc.predicted import PredictedRefs
from lrc.refcount import RefState
from lrc.retries import FailedStores
from lrc.stage_walks import StageWalks


RECENT_COMPLETED = 2048  # completed stages remembered (a later job skips them) once forgotten


class Planner(StageWalks, PredictedRefs):
    """Reference counts for one application, online job by job or preloaded from a profile.

    ``profile``: a Trace of an earlier run of the same (recurring) application: every task's
    reads are registered up front; ``add_job`` then adds only what the profile did not foresee.
    ``simulated=True`` allows policies that need the future (``min``); the simulator fills it.
    ``block_ids``: key blocks by these dense int ids instead of ``(rdd, partition)`` tuples
    (the simulator's lists are indexed by them); every block passed in or handed out is then its
    id. The planner copies the RDDs and stages it is given (but ``add_job(fresh=True)``'s): it
    never changes its callers' objects (a trace replays the same way twice).
    ``costs``: what misses cost (``lrc.cost``; default: estimated from the events it is given).
    ``predict``: add predicted references for the jobs an iterative application has not
    submitted yet (``lrc.predict``), replaced by each real job. Default: without a profile, for
    the policies that rank by the distance to the next read (mrd, crd); lrc and lerc stay
    LRC-Online as the papers define them (a count with more far-away reads misleads them: on a
    recorded PageRank the simulated LRC hit ratio falls from 0.71 to 0.60 with predictions).
    ``gpu_cost_weight``: a stage with ``gpus`` GPUs per task weighs 1 + gpu_cost_weight x gpus in
    the cost-aware policy (``RefState.seq_weight``; ``lrc.cost.GPU_COST_WEIGHT``); 0: no weight.
    ``state_read``: with predictions, the newest generation of a recurring dataset that no
    predicted job reads keeps one read per block (``lrc.predicted``); ``predict_kinds``: jobs
    are matched by their signature and the datasets they read (``lrc.predict``), else by the
    signature alone; ``predict_recurring``: the recurring tail after the predicted cycle (what
    the recurring jobs among the last few read, ``lrc.predict``); ``predict_reuse``: the cached
    data the application used in its last few jobs keeps one read per block where no predicted
    job reads it (``PredictedRefs._note_use``). ``admit``: executors refuse stores by rank (spark.lrc.admit).
    ``replan_missing``: a missing block of a cached RDD is planned as the block a task will
    store again (``_stored_reads``, ``_task_walk``), else through its inputs (the rule before).
    ``price_shares`` (the default): a task's duration prices each cached RDD it built by its
    share, summed over a block's narrow lineage, as a trace does (``lrc.cost``); else the whole
    duration, a running mean (the rule before session 51). ``store_rank`` (the default): a
    block in no executor's memory is ranked as a store of it would be (``Policy.bind_stored``);
    else as if it were held (the rule before session 53).
    ``bounded``: the live brain's mode: ``forget_job`` drops what only an ended job held, so the
    state of a long application is bounded by its live jobs and cached RDDs (the simulator keeps
    the whole run)."""

    def __init__(self, policy: str | Policy = "lrc", profile=None, peer_mode: str = "task",
                 simulated: bool = False, block_ids: BlockIds | None = None,
                 predict: bool | None = None, costs: MissCosts | None = None,
                 gpu_cost_weight: float = GPU_COST_WEIGHT, bounded: bool = False,
                 state_read: bool = True, predict_kinds: bool = True,
                 predict_recurring: bool = True, admit: bool = False,
                 replan_missing: bool = True, predict_reuse: bool = True,
                 store_rank: bool = True,
                 price_shares: bool = True) -> None:
        self.policy = get_policy(policy)
        if not 0 <= gpu_cost_weight < float("inf"):
            raise ValueError("gpu_cost_weight must be a finite number >= 0, "
                             f"not {gpu_cost_weight!r}")
        self.gpu_cost_weight = gpu_cost_weight
        if self.policy.needs_future and not simulated:
            raise ValueError(f"policy {self.policy.name!r} needs the future access sequence: "
                             "simulator only (python -m lrc simulate)")
        self.refs = RefState(peer_mode if self.policy.needs_peers else None,
                             track_order=self.policy.needs_order)
        self.refs.relative = self.policy.relative
        self.refs.count_changes = self.policy.uses_count
        if costs is not None:
            self.refs.costs = costs
        self.block_ids = block_ids
        self.dag = AppDAG()
        self.price_shares = price_shares
        if price_shares:
            self.refs.costs.price = WarmCost
            self.refs.costs.lineage = lambda rdd: [r.id for r in self.dag.lineage_rdds((rdd,), True)]
        self.completed: set[int] = set()
        # shuffles a completed map stage wrote: Spark skips a later map stage writing one again
        self.written: OrderedDict[int, None] = OrderedDict()
        self.planned: set[int] = set()
        self.running: set[int] = set()  # jobs started and not ended
        self.materialized: set[Hashable] = set()
        self.failed_stores = FailedStores()  # read again by the next task computing one
        self.tried = self.failed_stores.tried
        self.locations: dict[Hashable, set] = {}
        self._prio = self.policy.bind(self.refs)
        # a block in no executor's memory is ranked as it will be once stored (Policy.bind_stored)
        self._stored_rank = store_rank and type(self.policy).bind_stored is not Policy.bind_stored
        self._prio_stored = self.policy.bind_stored(self.refs) if self._stored_rank else self._prio
        self._seq = 0
        if predict is None:
            predict = profile is None and self.policy.needs_order
        self.predictor = (Predictor(kinds=predict_kinds,
                                    window=TAIL_WINDOW if predict_recurring else 0)
                          if predict and not self.policy.constant else None)
        self.predicted: list[int] = []  # pseudo stage ids holding predicted references
        # jobs planned with predictions on; of those started with some: their cached reads, and
        # how many held a predicted reference at the start (`_count_foreseen`)
        self.foreseen = {"jobs": 0, "predicted_jobs": 0, "reads": 0, "foreseen": 0}
        self._origin: dict[int, str] = {}  # RDD -> signature of the job that first had it
        self._recurring: Counter[str] = Counter()  # dataset (`_site`) -> generations cached
        self.state_read = state_read  # the newest generation keeps a read (`_predict`)
        self.predict_reuse = predict_reuse  # so does what the application used lately
        self._last_use: dict[int, int] = {}  # cached RDD -> the job (`_jobs_noted`) it was used by
        self._reused: set[int] = set()  # cached RDDs a job that caches nothing new read
        self._jobs_noted = 0
        # executors refuse a store by rank (spark.lrc.admit): a failed store is the ranking's
        # decision, and a plan must not lock it in (`_task_walk`)
        self.admit, self.replan_missing = admit, replan_missing
        self._builder: dict[int, int] = {}  # cached RDD -> the stage planned to compute it first
        self._builds: dict[int, set[int]] = {}  # stage -> cached RDDs it computes first
        self._new_planned: list[int] = []  # stages planned since the last take_planned()
        # what live jobs hold (forget_job drops the rest): stage -> jobs, job -> RDDs, RDD -> jobs
        self._stage_jobs: dict[int, set[int]] = {}
        self._job_rdds: dict[int, list[int]] = {}
        self._rdd_jobs: dict[int, int] = {}
        self._completed_order: deque[int] = deque()
        self.bounded = bounded
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
        self._new_planned.extend(seqs)
        for sid, seq in seqs.items():
            self._weigh(self.dag.stages.get(sid), seq)

    def _weigh(self, stage: Stage | None, seq: int | None) -> None:
        """A GPU stage's references weigh more (what a miss there costs: an idle GPU)."""
        if stage is not None and stage.gpus > 0 and seq is not None and self.gpu_cost_weight:
            # (bounded: an absurd GPU amount must not make a weight inf, and inf x 0 NaN)
            self.refs.seq_weight[seq] = min(1.0 + self.gpu_cost_weight * stage.gpus, 1e300)

    # ---- DAG events ------------------------------------------------------------------------
    def add_job(self, job: Job, stages: list[Stage], rdds: list[RDD], fresh: bool = False) -> None:
        """Merge the job's RDDs/stages and add references of the stages that will run
        (a stage that already completed, or that writes a shuffle a completed stage wrote, is
        predicted skipped: its shuffle output exists; should Spark run it after all, having lost
        that output with an executor, ``stage_submitted`` plans it then).
        The job replaces every predicted reference; then it predicts the jobs after it.
        ``fresh``: the caller keeps no reference to ``stages``/``rdds`` (the brain's), so the DAG
        keeps them uncopied (GraphX: a quarter of a job start's time)."""
        before = held = None
        if self.predictor is not None:
            held = self._drop_predictions()
            before = (self._generations(), set(self.dag.rdds))
        for r in rdds:
            self.dag.add_rdd(r if fresh else replace(r))
            if r.cached and r.uses_disk:
                self.refs.costs.disk.add(r.id)
        for s in stages:
            if s.job_id is None or not fresh:
                s = replace(s, job_id=job.id if s.job_id is None else s.job_id)
            self.dag.add_stage(s)
            if self.bounded:
                self._stage_jobs.setdefault(s.id, set()).add(job.id)
        if self.bounded and job.id not in self._job_rdds:
            self._job_rdds[job.id] = ids = [r.id for r in rdds]
            for r in ids:
                self._rdd_jobs[r] = self._rdd_jobs.get(r, 0) + 1
        self.dag.add_job(job)
        self.running.add(job.id)
        created: set[Block] = set()
        lazy: list[tuple[int, int]] = []
        for s in parents_first([self.dag.stages[s.id] for s in stages]):
            if s.id not in self.completed and s.shuffle not in self.written:
                self._plan_stage(s, created, lazy)
        if before is not None:
            self._count_foreseen(job, held)
            self._predict(job, *before)

    def stage_submitted(self, stage_id: int, partitions: Sequence[int] | None = None) -> None:
        """A stage attempt runs: planned now if no job start announced it, and again if an
        earlier attempt ended (a rerun after a fetch failure or a lost executor: the ended
        attempt dropped the stage's references), at the running stage's place in the order.
        ``partitions``: those the attempt computes when not all (the listener asks Spark's
        scheduler; a trace keeps them, an event log's are its tasks'): exactly those hold
        references, whatever the job start planned."""
        stage = self.dag.stages.get(stage_id)
        if stage is not None:
            rerun = stage_id in self.completed
            if partitions is not None:
                stage = replace(stage, partitions=tuple(partitions))
                runs = set(stage.partitions)
                for p in [p for p in self.refs.pending.get(stage_id, ()) if p not in runs]:
                    self.refs.finish_task(stage_id, p)
            if rerun or stage_id not in self.planned or partitions is not None:
                self._plan_stage(stage, set(), seq=self.refs.now if rerun
                                 else self.refs.stage_seq.get(stage_id))
        seq = self.refs.stage_seq.get(stage_id)
        if seq is not None:
            self.refs.advance(seq)

    def task_resubmitted(self, stage_id: int, partition: int) -> None:
        """Spark runs a finished task of a running attempt again (its map output died with an
        executor): its reads count again until the rerun ends."""
        stage, ran = self.dag.stages.get(stage_id), self.refs.ran.get(stage_id)
        if stage is not None and ran is not None and partition in ran:
            ran.discard(partition)
            self._plan_stage(replace(stage, partitions=(partition,)), set(),
                             seq=self.refs.stage_seq.get(stage_id, self.refs.now))

    def stage_completed(self, stage_id: int, failed: bool = False) -> None:
        """The stage ended (``failed``: its attempt failed or was cancelled: what its tasks
        write is not all there)."""
        if stage_id not in self.completed:
            self.completed.add(stage_id)
            if self.bounded:
                self._completed_order.append(stage_id)
        self.failed_stores.completed(stage_id, failed, self.materialized)
        stage = self.dag.stages.get(stage_id)
        if stage is not None and stage.shuffle >= 0 and not failed:
            self.written[stage.shuffle] = None
            self.written.move_to_end(stage.shuffle)
            if self.bounded and len(self.written) > RECENT_COMPLETED:
                self.written.popitem(last=False)
        self.refs.forget_stage(stage_id)

    def job_ended(self, job_id: int) -> None:
        """Drop references of the job's stages that never ran, except those of a stage a job
        still running shares: Spark goes on running it for that job (a cancelled job's shared
        shuffle-map stage, say)."""
        self.running.discard(job_id)
        job = self.dag.jobs.get(job_id)
        if job is None:
            return
        jobs = self.dag.jobs
        shared = {s for j in self.running if j in jobs for s in jobs[j].stage_ids}
        for s in job.stage_ids:
            if s not in shared:
                self.refs.drop_stage(s)
                self.failed_stores.forget_stage(s, creates=False)

    def forget_job(self, job_id: int) -> None:
        """The job ended (after ``job_ended``): drop what only it held, so that a long
        application's state is bounded by its live jobs and cached RDDs, not by its age. Its
        stages (unless a live job shares them) and RDDs (unless cached or in a live job) leave the
        DAG: a later job's start describes again every stage and RDD it contains. Completed stages
        are remembered (a later job skips them) up to the last ``RECENT_COMPLETED``.
        Only with ``bounded``; the simulator keeps the whole run."""
        if not self.bounded:
            return
        job = self.dag.jobs.pop(job_id, None)
        for s in job.stage_ids if job else ():
            jobs = self._stage_jobs.get(s)
            if jobs is not None:
                jobs.discard(job_id)
                if jobs:
                    continue
                del self._stage_jobs[s]
            self.refs.forget_stage(s)
            self.dag.stages.pop(s, None)
            self.failed_stores.forget_stage(s)
            self.planned.discard(s)
            self._builds.pop(s, None)
        for r in self._job_rdds.pop(job_id, ()):
            left = self._rdd_jobs.pop(r) - 1
            if left:
                self._rdd_jobs[r] = left
            elif r in self.dag.rdds and not self.dag.rdds[r].cached:
                self._forget_rdd(r)
        while len(self._completed_order) > RECENT_COMPLETED:
            self.completed.discard(self._completed_order.popleft())

    def _forget_rdd(self, rdd_id: int) -> None:
        self.dag.rdds.pop(rdd_id, None)
        self._origin.pop(rdd_id, None)
        self._last_use.pop(rdd_id, None)
        self._reused.discard(rdd_id)

    def task_finished(self, stage_id: int, partition: int, seconds: float | None = None,
                      cold: bool = False, executor: str | None = None) -> list[Hashable]:
        """The task ran; ``seconds``, its measured duration on ``executor``, prices the work
        of the cached RDDs the stage computed first (``lrc.cost``: each its share, the later
        half of each executor's warm tasks; ``cold``, the task paid its executor's start-up).
        Returns the blocks it left with no read to come (the simulator, which calls
        `RefState.finish_task` itself, never pays for that list)."""
        reads = self.refs.pending_reads(stage_id, partition)
        self.refs.finish_task(stage_id, partition)
        self.failed_stores.task_done(stage_id, partition)
        builds = self._builds.get(stage_id)
        if seconds is not None and builds:
            # (its share: the duration split among what it computed, as lrc.derive splits it)
            stage = self.dag.stages.get(stage_id)
            share = seconds / (len(builds) + (stage is not None and stage.rdd_id not in builds)) \
                if self.price_shares else seconds
            for rdd in builds:
                self.refs.costs.task_time(rdd, share, cold, executor)
        count = self.refs.count
        return [b for b in reads if count.get(b, 0) <= 0]

    def set_cached(self, block: Hashable, cached: bool) -> None:
        """``block`` is now cached on some executor (True) or on none (False). The simulator
        calls this directly (a block lives on one executor there); live, the two below do."""
        if cached:
            self.materialized.add(block)
            self.failed_stores.cached(block)
        if self._stored_rank and self._prio_stored(block) != self._prio(block):
            self.refs.changed.add(block)  # (`priority`: as stored while in no executor's memory)
        peers = self.refs.peers
        if peers is not None:
            peers.set_cached(block, cached)

    def on_disk(self, block: Hashable) -> None:
        """The block is on a disk, in no memory (MEMORY_AND_DISK, evicted or never fitted):
        Spark reads it back, not computing it again: later tasks read it, not its inputs."""
        self.materialized.add(block)
        self.failed_stores.cached(block)

    def cached_instead(self, block: Hashable, evicted: Iterable[Hashable]) -> None:
        """``set_cached(v, False)`` for each evicted ``v``, then ``set_cached(block, True)``, in
        one call: the simulator's insert that evicted ``evicted`` (cached nowhere now) for it."""
        peers = self.refs.peers
        if peers is not None:
            peers.recache(evicted, (block,))
        self.materialized.add(block)
        self.failed_stores.cached(block)

    def block_cached(self, block: Hashable, executor, nbytes: int = 0) -> None:
        if nbytes > 0:
            self.refs.costs.sized(block, nbytes)
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

    def executor_removed(self, executor) -> None:
        """The executor is gone, and its blocks with it. Spark's BlockManagerMaster drops them
        without a block update per block, so this is the only news of their loss."""
        for block, where in self.locations.items():
            if executor in where:
                self.block_removed(block, executor)

    def _blocks_of(self, container, rdd_id: int) -> list[Hashable]:
        """The RDD's blocks in ``container``: by its partitions when it is known (work
        proportional to the RDD, not to everything cached), else by a scan."""
        r = self.dag.rdds.get(rdd_id)
        if self.block_ids is not None or r is None or r.num_partitions > len(container):
            return self._of_rdd(container, rdd_id)
        return [b for b in ((rdd_id, p) for p in range(r.num_partitions)) if b in container]

    def rdd_unpersisted(self, rdd_id: int) -> None:
        """The RDD is no longer cached: its blocks are gone and later DAG walks go through it
        (only the planner's own copy of the RDD is marked). An RDD no live job holds leaves the
        DAG (the live brain forgets ended jobs, ``forget_job``)."""
        for b in self._blocks_of(self.locations, rdd_id):
            for ex in list(self.locations[b]):
                self.block_removed(b, ex)
            del self.locations[b]
        self.materialized.difference_update(self._blocks_of(self.materialized, rdd_id))
        self.failed_stores.gone(self._blocks_of(self.tried, rdd_id))
        costs = self.refs.costs
        costs.forget(rdd_id, self._blocks_of(costs.size, rdd_id))
        if self.bounded:
            count = self.refs.count
            for b in self._blocks_of(count, rdd_id):
                if not count[b]:  # no reference left: as good as never counted
                    del count[b]
        if rdd_id in self.dag.rdds:
            self.dag.rdds[rdd_id].cached = False
        self._origin.pop(rdd_id, None)
        self._builder.pop(rdd_id, None)
        self._last_use.pop(rdd_id, None)
        self._reused.discard(rdd_id)
        if self.bounded and rdd_id not in self._rdd_jobs:
            self._forget_rdd(rdd_id)

    # ---- priorities out --------------------------------------------------------------------
    def priority(self, block: Hashable) -> float:
        """The block's rank in the table: as stored (``Policy.bind_stored``) while no executor
        holds it in memory."""
        return float(self._prio(block) if self.locations.get(block) else self._prio_stored(block))

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
        """Expected cached reads of a task (for hit accounting): its references, and the blocks
        it computes again after their store failed (``tried``: Spark looks them up first)."""
        again = self.failed_stores.looked_up(stage_id, partition)
        return list(self.refs.pending_reads(stage_id, partition)) + list(again)

    def take_planned(self) -> list[int]:
        """Stages planned since the last call (what a publish must announce)."""
        out, self._new_planned = self._new_planned, []
        return out

