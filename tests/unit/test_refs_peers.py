from hypothesis import given, settings, strategies as st

from conftest import feed_planner
from lrc.dag import RDD, Dependency, Job, Stage
from lrc.peers import PeerGroups
from lrc.planner import Planner
from lrc.synth import App, o2o, shuffle


@st.composite
def random_apps(draw):
    """Random lineages: each RDD has 1-2 earlier parents (narrow or shuffle), some cached."""
    a = App("rand", draw(st.integers(0, 99)), parts=3)
    ids = [a.rdd()]
    for _ in range(draw(st.integers(1, 8))):
        parents = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2, unique=True))
        deps = [draw(st.sampled_from([o2o, shuffle]))(p) for p in parents]
        ids.append(a.rdd(deps, mb=1 if draw(st.booleans()) else None))
    for r in draw(st.lists(st.sampled_from(ids), min_size=1, max_size=5)):
        a.action(r)
    return a.trace()


def brute_counts(events, started_jobs=None, job=None):
    """References = remaining task events (of started jobs, when online) that read the block."""
    counts = {}
    for e in events:
        if e.kind == "job_start":
            job = e.job_id
        if e.kind == "task" and (started_jobs is None or job in started_jobs):
            for b in set(e.reads):
                counts[b] = counts.get(b, 0) + 1
    return {b: n for b, n in counts.items() if n}


def replay_checking_counts(trace, profile):
    p = Planner("lrc", profile=trace if profile else None, predict=False)
    dag, started, current = trace.dag, set(), None
    for i, e in enumerate(trace.events):
        if e.kind == "job_start":
            started.add(e.job_id)
            current = e.job_id
        feed_planner(p, dag, e, executor="0")
        want = brute_counts(trace.events[i + 1:], None if profile else started, current)
        got = {b: n for b, n in p.refs.count.items() if n}
        assert got == want, f"after event {i} ({e})"


@settings(max_examples=60, deadline=None)
@given(random_apps())
def test_online_reference_counts_equal_brute_force(trace):
    replay_checking_counts(trace, profile=False)


@settings(max_examples=30, deadline=None)
@given(random_apps())
def test_profile_reference_counts_equal_brute_force(trace):
    replay_checking_counts(trace, profile=True)


def test_skipped_stages_do_not_count():
    a = App("skip", 0, parts=2)
    base = a.rdd(mb=1)
    mapped = a.rdd([shuffle(a.rdd([o2o(base)]))], mb=1)  # map stage reads base
    a.action(mapped)
    a.action(a.rdd([o2o(mapped)]))  # the map stage reading base is skipped in job 1
    tr = a.trace()
    dag, p = tr.dag, Planner("lrc")
    for b in [(0, 0), (0, 1), (2, 0), (2, 1)]:
        p.block_cached(b, "0", 1)
    p.completed.update(s for s in dag.jobs[0].stage_ids)
    job = dag.jobs[1]
    p.add_job(job, [dag.stages[s] for s in job.stage_ids], list(dag.rdds.values()))
    assert p.refs.refs((0, 0)) == 0 and p.refs.refs((2, 0)) == 1


def test_a_map_stage_listed_again_under_a_new_id_is_skipped_when_its_shuffle_was_written():
    """Spark forgets a finished job's stages; a later job that needs the same shuffle lists its
    map stage under a new stage id and skips it (the output exists): its reads never happen."""
    p = Planner("lrc")
    cached = RDD(0, 2, cached=True)
    rdds = [cached, RDD(1, 2, deps=(Dependency(0, "one_to_one"),)),
            RDD(2, 2, deps=(Dependency(1, "shuffle"),))]
    for part in range(2):
        p.block_cached((0, part), "0", 1)
    p.add_job(Job(0, (0, 1)), [Stage(0, 1, 2, shuffle=7), Stage(1, 2, 2, parent_ids=(0,))], rdds)
    assert p.refs.refs((0, 0)) == 1  # the map stage will read the cached RDD
    for stage in (0, 1):
        p.stage_submitted(stage)
        for part in range(2):
            p.task_finished(stage, part)
        p.stage_completed(stage)
    p.job_ended(0)
    again = [Stage(2, 1, 2, shuffle=7), Stage(3, 2, 2, parent_ids=(2,))]
    p.add_job(Job(1, (2, 3)), again, [])
    assert p.refs.refs((0, 0)) == 0 and 2 not in p.planned
    other = [Stage(4, 1, 2, shuffle=8), Stage(5, 2, 2, parent_ids=(4,))]  # another shuffle
    p.add_job(Job(2, (4, 5)), other, [])
    assert p.refs.refs((0, 0)) == 1
    p.stage_submitted(2)  # should Spark run it after all (its output lost): planned then
    assert p.refs.refs((0, 0)) == 2


def two_stage_job(planner: Planner, parts: int = 4, gpus: float = 0.0) -> None:
    """Job 0: map stage 0 (shuffle 7) reads cached RDD 0, result stage 1 reads cached RDD 3."""
    rdds = [RDD(0, parts, cached=True), RDD(1, parts, deps=(Dependency(0, "one_to_one"),)),
            RDD(2, parts, deps=(Dependency(1, "shuffle"),)),
            RDD(3, parts, cached=True), RDD(4, parts, deps=(Dependency(2, "one_to_one"),
                                                           Dependency(3, "one_to_one")))]
    for r in (0, 3):
        for part in range(parts):
            planner.block_cached((r, part), "0", 1)
    planner.add_job(Job(0, (0, 1)), [Stage(0, 1, parts, shuffle=7),
                                     Stage(1, 4, parts, parent_ids=(0,), gpus=gpus)], rdds)


def run(planner: Planner, stage: int, parts, failed: bool = False, submitted=None) -> None:
    planner.stage_submitted(stage, submitted)
    for part in parts:
        planner.task_finished(stage, part)
    planner.stage_completed(stage, failed)


def test_a_stage_rerun_after_a_failed_attempt_references_the_partitions_it_runs_again():
    """A fetch failure ends the result stage's attempt (its references drop) and Spark reruns
    the lost map outputs and the unfinished result partitions: each attempt that runs again
    references just what it computes, at the running stage's place in the order."""
    p = Planner("crd", predict=False)
    two_stage_job(p)
    run(p, 0, range(4))
    run(p, 1, [0], failed=True)  # partitions 1-3 fetch from a lost executor
    assert not any(p.refs.count.values())
    p.stage_submitted(0, (2, 3))  # the lost executor held map outputs 2 and 3
    assert sorted(p.refs.pending[0]) == [2, 3] and p.refs.stage_seq[0] == p.refs.now
    assert [p.refs.refs((0, q)) for q in range(4)] == [0, 0, 1, 1]
    for q in (2, 3):
        p.task_finished(0, q)
    p.stage_completed(0)
    p.stage_submitted(1, (1, 2, 3))
    assert [p.refs.refs((3, q)) for q in range(4)] == [0, 1, 1, 1]
    for q in (1, 2, 3):
        p.task_finished(1, q)
    p.stage_completed(1)
    p.job_ended(0)
    assert not any(p.refs.count.values()) and p.refs.negative_decrements == 0


def test_a_rerun_placed_beside_a_running_gpu_stage_leaves_that_stage_its_weight():
    """A rerun shares the running stage's place in the order; when it ends, the weight of the
    GPU stage still at that place stays."""
    p = Planner("crd", predict=False, gpu_cost_weight=1.0)
    two_stage_job(p, gpus=1.0)
    run(p, 0, range(4))
    p.stage_submitted(1)
    weight = p.refs.seq_weight[p.refs.stage_seq[1]]
    assert weight == 2.0
    run(p, 0, (2, 3), submitted=(2, 3))  # (another job's rerun of the map stage)
    assert p.refs.seq_weight.get(p.refs.stage_seq[1]) == weight


def test_a_finished_task_spark_resubmits_references_its_reads_again_until_it_reruns():
    p = Planner("lrc", predict=False)
    two_stage_job(p)
    p.stage_submitted(0)
    for q in range(4):
        p.task_finished(0, q)
    for _ in range(2):  # (once, however often it is told)
        p.task_resubmitted(0, 2)
        assert [p.refs.refs((0, q)) for q in range(4)] == [0, 0, 1, 0]
    p.task_finished(0, 2)
    p.stage_completed(0)
    p.task_resubmitted(0, 1)  # (too late: the attempt ended, a rerun of the stage plans it)
    assert [p.refs.refs((0, q)) for q in range(4)] == [0] * 4
    assert p.refs.negative_decrements == 0


def test_a_rerun_whose_partitions_are_not_known_references_the_whole_stage():
    """A trace does not say which partitions an attempt reruns: a replay plans them all, and
    its task ends and completion drop them."""
    p = Planner("lrc", predict=False)
    two_stage_job(p)
    run(p, 0, range(4))
    run(p, 1, [0, 1], failed=True)
    p.stage_submitted(1)
    assert [p.refs.refs((3, q)) for q in range(4)] == [1, 1, 1, 1]
    run(p, 1, (2, 3))
    assert not any(p.refs.count.values())


def test_an_attempt_that_computes_part_of_its_stage_holds_only_those_references():
    """A shuffle partly lost with an executor since another job wrote it: the later job's map
    stage (listed under a new id, predicted skipped) runs only the missing partitions; a stage
    the job start planned whole drops the partitions its attempt does not compute."""
    p = Planner("lrc", predict=False)
    two_stage_job(p)
    run(p, 0, range(4))
    run(p, 1, range(4))
    p.job_ended(0)
    p.add_job(Job(1, (2, 3)), [Stage(2, 1, 4, shuffle=7), Stage(3, 4, 4, parent_ids=(2,))], [])
    assert 2 not in p.planned and [p.refs.refs((3, q)) for q in range(4)] == [1, 1, 1, 1]
    p.stage_submitted(2, (1,))
    assert [p.refs.refs((0, q)) for q in range(4)] == [0, 1, 0, 0]
    p.task_finished(2, 1)
    p.stage_completed(2)
    p.stage_submitted(3, (0, 3))  # (a result stage's attempt on part of its partitions)
    assert [p.refs.refs((3, q)) for q in range(4)] == [1, 0, 0, 1]
    assert sorted(p.refs.pending[3]) == [0, 3]
    p.add_job(Job(2, (4,)), [Stage(4, 4, 2, partitions=(0, 1))], [])  # (a take's first guess)
    seq = p.refs.stage_seq[4]
    p.stage_submitted(4, (1, 2))  # (what the attempt runs wins over what was planned)
    assert sorted(p.refs.pending[4]) == [1, 2] and p.refs.stage_seq[4] == seq


@st.composite
def peer_ops(draw):
    blocks = list(range(6))
    return draw(st.lists(st.one_of(
        st.tuples(st.just("add"), st.integers(0, 3), st.sampled_from(blocks), st.integers(1, 2)),
        st.tuples(st.just("remove"), st.integers(0, 3), st.sampled_from(blocks), st.integers(1, 2)),
        st.tuples(st.just("cache"), st.sampled_from(blocks), st.booleans())), max_size=40))


@settings(max_examples=150, deadline=None)
@given(peer_ops())
def test_effective_counts_equal_recomputation_from_scratch(ops):
    pg, refs = PeerGroups(set()), {}
    for op in ops:
        if op[0] == "add":
            pg.add(op[1], op[2], op[3])
            refs.setdefault(op[1], {})[op[2]] = refs.get(op[1], {}).get(op[2], 0) + op[3]
        elif op[0] == "remove":
            have = refs.get(op[1], {}).get(op[2], 0)
            n = min(have, op[3])
            if n:
                pg.remove(op[1], op[2], n)
                refs[op[1]][op[2]] = have - n
                if not refs[op[1]][op[2]]:
                    del refs[op[1]][op[2]]
        else:
            pg.set_cached(op[1], op[2])
        want = {}
        for members in refs.values():
            if all(b in pg.cached for b in members):
                for b, n in members.items():
                    want[b] = want.get(b, 0) + n
        assert {b: n for b, n in pg.effective.items() if n} == {b: n for b, n in want.items() if n}


def test_a_lost_executor_takes_its_blocks_with_it():
    """Spark sends no block update for the blocks of a lost executor: `executor_removed` is the
    planner's only news that they are gone (a block also held elsewhere stays cached)."""
    p = Planner("lerc")
    p.block_cached((0, 0), "1", 10)
    p.block_cached((0, 1), "1", 10)
    p.block_cached((0, 1), "2", 10)
    p.block_cached((1, 0), "2", 10)
    p.executor_removed("1")
    assert {b for b, where in p.locations.items() if where} == {(0, 1), (1, 0)}
    assert all("1" not in where for where in p.locations.values())
    p.executor_removed("3")  # unknown: nothing changes
    assert p.locations[(0, 1)] == {"2"}
