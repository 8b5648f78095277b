"""Predicted references (lrc.predict via the Planner), online, without a profile."""
from __future__ import annotations

from lrc.planner import Planner
from lrc.synth import App, o2o, shuffle


def iterative(iters: int, tail: bool = False) -> App:
    """pagerank-shaped: `links` read by every iteration, one new `ranks` generation per
    iteration (created at one call site), optionally a different job after the loop."""
    a = App("it", 0, parts=4)
    links = a.rdd([shuffle(a.rdd())], mb=1, name="links")
    ranks = a.rdd([o2o(links)], mb=1, name="ranks0", site="ranks init")
    a.action(ranks)
    for i in range(iters):
        ranks = a.rdd([o2o(links), o2o(ranks)], mb=1, name=f"ranks{i + 1}")
        a.action(ranks)
    if tail:
        a.action(a.rdd([o2o(ranks)], name="report"))
    return a


def run_jobs(a: App, jobs: int, lost: tuple[str, ...] = (), **planner) -> Planner:
    """Feed the planner the first `jobs` jobs of the app's trace, each run to its end; the
    blocks named in `lost` ("name_partition") are never stored."""
    tr = a.trace()
    p = Planner("mrd", **planner)
    seen: set[int] = set()
    for e in tr.events:
        if e.kind == "job_start":
            if e.job_id >= jobs:
                break
            job = tr.dag.jobs[e.job_id]
            rdds = [r for r in tr.dag.lineage_rdds(tr.dag.stages[s].rdd_id for s in job.stage_ids)
                    if r.id not in seen]
            seen.update(r.id for r in rdds)
            p.add_job(job, [tr.dag.stages[s] for s in job.stage_ids], rdds)
        elif e.kind == "stage_submitted":
            p.stage_submitted(e.stage_id)
        elif e.kind == "task":
            for b in e.creates:
                if f"{tr.dag.rdds[b[0]].name}_{b[1]}" not in lost:
                    p.block_cached(b, "0", 1)
            p.task_finished(e.stage_id, e.partition)
        elif e.kind == "stage_completed":
            p.stage_completed(e.stage_id)
        elif e.kind == "job_end":
            p.job_ended(e.job_id)
    return p


def refs_of(p: Planner, name: str) -> list[int]:
    rid = next(r.id for r in p.dag.rdds.values() if r.name == name)
    return [p.refs.refs((rid, q)) for q in range(4)]


def test_after_two_iterations_the_next_ones_inputs_carry_predicted_references():
    a = iterative(iters=5)
    # jobs: 0 builds ranks0, 1..5 are iterations; after job 2 (two iterations) has run:
    p = run_jobs(a, jobs=3)
    assert p.predicted, "the repeated job shape must predict the next iteration"
    assert refs_of(p, "links") == [1, 1, 1, 1]  # every iteration reads links
    assert refs_of(p, "ranks2") == [1, 1, 1, 1]  # the newest generation inherits the reads
    assert refs_of(p, "ranks1") == [0, 0, 0, 0]  # superseded: dead
    assert refs_of(p, "ranks0") == [0, 0, 0, 0]


def test_each_real_job_replaces_the_predictions_instead_of_adding_to_them():
    for jobs in range(3, 6):
        p = run_jobs(iterative(iters=6), jobs=jobs)
        assert refs_of(p, "links") == [1, 1, 1, 1], jobs
        assert len(p.predicted) == 1
        assert [s for s in p.refs.pending if s < 0] == p.predicted, "replaced ones are forgotten"


def test_blind_mode_predicts_nothing():
    assert Planner("mrd", predict=False).predictor is None
    assert Planner("lru").predictor is None  # constant priorities: nothing to predict for


def test_one_job_is_not_a_pattern_but_what_it_caches_will_be_read():
    p = run_jobs(iterative(iters=5), jobs=2)  # the init job and one iteration: nothing repeats
    assert p.predictor.cycle() == []
    # the application cached ranks1 and nothing has read it yet: one read per block is assumed
    assert refs_of(p, "ranks1") == [1, 1, 1, 1]
    assert refs_of(p, "links") == [0, 0, 0, 0] and refs_of(p, "ranks0") == [0, 0, 0, 0]


def kmeans(iters: int) -> App:
    """ml-shaped: `train` cached by the first job, read by every iteration's job, which caches
    nothing (`workloads/ml.py`)."""
    a = App("kmeans", 0, parts=4)
    train = a.rdd([o2o(a.rdd([shuffle(a.rdd())], mb=1, name="parsed"))], mb=1, name="train")
    a.action(train)
    for i in range(iters):
        a.action(a.rdd([shuffle(a.rdd([o2o(train)]))], parts=1, name=f"step{i}"))
    return a


def test_a_cached_input_keeps_a_read_until_the_loop_repeats():
    """The first iteration's job is no pattern yet, so nothing is predicted after it: `train`,
    read by it and by every later iteration, ranked with the dead (`parsed`) for a whole
    iteration. A job that caches nothing new and read an earlier job's cached data leaves it
    one read per block (simulated ml's trace at F = 0.5: 0.778 -> 0.833 hit ratio under crd
    with admission; a profile gives 0.861). Once the loop repeats, the prediction replaces it."""
    p = run_jobs(kmeans(iters=4), jobs=2)  # the job caching train, the first iteration
    assert p.predictor.cycle() == []
    assert refs_of(p, "train") == [1, 1, 1, 1] and refs_of(p, "parsed") == [0, 0, 0, 0]
    # spark.lrc.predictReuse=false: the rule before
    assert refs_of(run_jobs(kmeans(iters=4), jobs=2, predict_reuse=False), "train") == [0, 0, 0, 0]
    p = run_jobs(kmeans(iters=4), jobs=3)  # the second iteration: predicted, not kept on top
    assert refs_of(p, "train") == [1, 1, 1, 1] and len(p.predicted) == 1


def test_a_loop_that_ends_leaves_only_its_state_referenced():
    """After the loop, a job never seen before predicts no job; what stays referenced is the
    newest generation of the recurring dataset, one read per block: the state a job after the
    loop reads (GraphX SVD++'s last job read the newest vertex generation, which the brain had
    ranked dead: 7 of the 9 misses of it in 20 live runs, each a rebuild of 12 unpersisted
    generations). Without a predicted job reading it, it had no reference at all."""
    a = iterative(iters=3, tail=True)
    p = run_jobs(a, jobs=5)  # init, 3 iterations, then the different report job
    assert len(p.predicted) == 1, "one tail of single reads, no predicted job"
    assert refs_of(p, "ranks3") == [1, 1, 1, 1]  # the newest generation
    assert refs_of(p, "ranks2") == [0, 0, 0, 0] and refs_of(p, "links") == [0, 0, 0, 0]
    assert sum(p.refs.count.values()) == 4
    assert [s for s in p.refs.pending if s < 0] == p.predicted, "replaced ones are forgotten"


def test_in_the_loop_the_newest_generation_is_read_by_the_predicted_iteration_alone():
    p = run_jobs(iterative(iters=5), jobs=4)
    assert refs_of(p, "ranks3") == [1, 1, 1, 1] and len(p.predicted) == 1  # no tail on top


def test_a_prediction_that_keeps_failing_decays():
    # a job shape A is followed by B once, then by other jobs: A's predictions stop
    a = App("flip", 0, parts=2)
    base = a.rdd([shuffle(a.rdd())], mb=1, name="base")
    sites = ["A", "B", "A", "C", "A", "D", "A"]
    for i, s in enumerate(sites):
        a.action(a.rdd([o2o(base)], name=f"{s}{i}", site=s))
    p = run_jobs(a, jobs=len(sites), predict_recurring=False, predict_reuse=False)
    assert any(kind[0].startswith("A ") and n >= 2 for kind, n in p.predictor.fails.items())
    assert not p.predicted
    # the recurring tail still predicts A, the one kind that recurs: base keeps A's one read
    p = run_jobs(a, jobs=len(sites))
    assert refs_of(p, "base")[:2] == [1, 1] and len(p.predicted) == 1


def pairs(rounds: int) -> App:
    """zip-shaped: one helper (one call site) zips x with y, then y with z, every round."""
    a = App("pairs", 0, parts=4)
    base = a.rdd([shuffle(a.rdd())], mb=1, name="base")
    x, y, z = (a.rdd([o2o(base)], mb=1, name=name) for name in "xyz")
    for r in (x, y, z):
        a.action(r)
    for i in range(rounds):
        a.action(a.rdd([o2o(x), o2o(y)], site="zip helper"))
        a.action(a.rdd([o2o(y), o2o(z)], site="zip helper"))
    return a


def test_one_helper_on_different_data_is_told_apart_by_what_it_reads():
    """Jobs of one helper share their result's call site; what they read tells them apart.
    After zip(x, y) the next job is zip(y, z), as after the last zip(x, y): z carries its
    read. Matched by call site alone, zip(x, y) was predicted to follow the last zip(y, z)
    again, and z had none."""
    a = pairs(rounds=3)
    p = run_jobs(a, jobs=6)  # the 3 materialising jobs, zip(x,y), zip(y,z), zip(x,y)
    assert refs_of(p, "z") == [1, 1, 1, 1]
    assert refs_of(p, "y") == [2, 2, 2, 2] and refs_of(p, "x") == [1, 1, 1, 1]
    # spark.lrc.predictKinds=false: the rule before (by call site alone)
    assert refs_of(run_jobs(a, jobs=6, predict_kinds=False, predict_reuse=False), "z") == [0] * 4


def interleaved(rounds: int) -> App:
    """zip-shaped with loops of two periods: zip(a, b) and zip(b, c) every round, a join of x
    and y every other round (`workloads/zip.py`)."""
    a = App("interleaved", 0, parts=4)
    base = a.rdd([shuffle(a.rdd())], mb=1, name="base")
    cached = {n: a.rdd([o2o(base)], mb=1, name=n) for n in "abcxy"}
    for r in cached.values():
        a.action(r)
    for i in range(rounds):
        for left, right in ("ab", "bc") + (("xy",) if i % 2 else ()):
            a.action(a.rdd([o2o(cached[left]), o2o(cached[right])],
                           site="join helper" if left == "x" else "zip helper"))
    return a


def test_interleaved_loops_keep_what_the_recurring_jobs_read_referenced():
    """Which job follows zip(b, c) changes from round to round (zip(a, b) or the join), so its
    predictions fail twice and stop: after the last round's zip(b, c) the rule before predicted
    nothing, and a, read by every round, ranked with the dead blocks. The recurring tail
    predicts one more job reading what the recurring jobs among the last 8 read: a and c once,
    b twice (both zips read it); x and y, read by one join so far, get nothing from it."""
    a = interleaved(rounds=4)  # jobs: 5 materialising, then ab bc | ab bc xy | ab bc | ab bc xy
    p = run_jobs(a, jobs=5 + 9, predict_recurring=False, predict_reuse=False)  # to the last zip(b, c)
    assert not p.predicted and refs_of(p, "a") == [0, 0, 0, 0]
    p = run_jobs(a, jobs=5 + 9, predict_reuse=False)
    assert refs_of(p, "a") == refs_of(p, "c") == [1, 1, 1, 1] and refs_of(p, "b") == [2, 2, 2, 2]
    assert refs_of(p, "x") == refs_of(p, "y") == [0, 0, 0, 0]
    # what the application used lately (spark.lrc.predictReuse): the join read x and y 3 jobs
    # ago; base only fed the cached datasets
    p = run_jobs(a, jobs=5 + 9)
    assert refs_of(p, "x") == refs_of(p, "y") == [1, 1, 1, 1] and refs_of(p, "base") == [0] * 4


def test_what_the_application_used_lately_keeps_a_read_until_it_goes_unused():
    """An application caches what it reuses: a cached dataset read by a job that caches nothing
    new, or cached and not read since, keeps one read per block where no predicted job reads it
    (zip's x and y between joins; tpch's tables between the queries that read them). What only
    fed another cached dataset is not a use (base), and a dataset unused for 8 jobs decays."""
    a = App("phases", 0, parts=4)
    base = a.rdd([shuffle(a.rdd())], mb=1, name="base")
    x, y = (a.rdd([o2o(base)], mb=1, name=n) for n in "xy")
    for r in (x, y):
        a.action(r)
    a.action(a.rdd([o2o(x)], site="uses x"))
    for i in range(8):
        a.action(a.rdd([o2o(y)], site=f"query {i}"))  # all different: nothing is predicted
    p = run_jobs(a, jobs=2)
    assert refs_of(p, "x") == refs_of(p, "y") == [1] * 4, "cached, not read yet"
    assert refs_of(p, "base") == [0] * 4, "it only fed x and y"
    p = run_jobs(a, jobs=3 + 7)
    assert refs_of(p, "x") == [1] * 4 and not p.predictor.cycle()
    p = run_jobs(a, jobs=3 + 8)  # the 8th job since x was read
    assert refs_of(p, "x") == [0] * 4 and refs_of(p, "y") == [1] * 4
    assert refs_of(run_jobs(a, jobs=3, predict_reuse=False), "x") == [0] * 4  # the rule before


def test_a_kind_that_failed_predicts_again_once_it_is_right():
    a = App("flip", 0, parts=2)
    base = a.rdd([shuffle(a.rdd())], mb=1, name="base")
    sites = ["A", "B", "A", "C", "A", "D", "A", "D", "A"]
    for i, s in enumerate(sites):
        a.action(a.rdd([o2o(base)], name=f"{s}{i}", site=s))
    rule = {"predict_recurring": False, "predict_reuse": False}  # the cycle alone
    p = run_jobs(a, jobs=len(sites) - 2, **rule)  # A is switched off
    assert not p.predicted
    p = run_jobs(a, jobs=len(sites), **rule)  # A after D was right: on again
    assert p.predicted


def test_a_missing_block_is_predicted_read_itself_not_through_its_inputs():
    """The next iteration looks up the cached block it reads; a task that finds it missing
    recomputes and stores it again. So the prediction names the block even while it is missing,
    and never its inputs: references on a dead input would keep it cached, and leave the block
    unranked, which admission would then refuse every time it is stored (synthetic ml)."""
    a = App("ml-like", 0, parts=4)
    data = a.rdd([shuffle(a.rdd())], mb=4, name="data")
    norms = a.rdd([o2o(data)], mb=1, name="norms")
    zipped = a.rdd([o2o(data), o2o(norms)], mb=4, name="zipped")
    a.action(zipped)
    for i in range(4):
        a.action(a.rdd([shuffle(a.rdd([o2o(zipped)]))], parts=1, name=f"step{i}"))
    p = run_jobs(a, jobs=4, lost=("zipped_2",))  # job 0 builds, jobs 1-3 iterate
    assert p.predicted
    assert refs_of(p, "zipped") == [1, 1, 1, 1]  # partition 2 too, though it is not stored
    assert refs_of(p, "data") == [0, 0, 0, 0] and refs_of(p, "norms") == [0, 0, 0, 0]


def test_a_job_counts_how_much_of_its_plan_the_predictions_had_before_it_started():
    """`Planner.foreseen`: from the third iteration on, every cached block an iteration reads
    held a predicted reference when its job started; the first job started with none."""
    after = [run_jobs(iterative(iters=6), jobs=jobs).foreseen for jobs in (1, 3, 6)]
    assert after[0] == {"jobs": 1, "predicted_jobs": 0, "reads": 0, "foreseen": 0}
    assert after[1]["foreseen"] < after[1]["reads"]  # (the first iteration: half foreseen)
    assert after[2]["predicted_jobs"] - after[1]["predicted_jobs"] == 3
    assert after[2]["reads"] - after[1]["reads"] == after[2]["foreseen"] - after[1]["foreseen"] == 24
    assert Planner("mrd", predict=False).foreseen["jobs"] == 0
