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
