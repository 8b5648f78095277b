"""What the live brain charges a miss of a block it has not measured yet (lrc.cost.MissCosts)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrc.cost import UNKNOWN, ColdStarts, MissCosts, WarmCost, warm_cost
from lrc.dag import AppDAG, Dependency, Job, RDD, Stage
from lrc.derive import build_trace
from lrc.trace import Event, Trace
from lrc.policies import get_policy
from lrc.refcount import RefState


def test_with_nothing_measured_every_block_costs_the_same():
    costs = MissCosts()
    costs.sized((1, 0), 100)
    assert costs.density((1, 0)) == costs.density((2, 0)) == UNKNOWN


def test_an_unmeasured_block_costs_the_median_of_the_measured_rdds():
    costs = MissCosts()
    for rdd, seconds, sizes in ((1, 1.0, (100, 300)), (2, 4.0, (100,)), (3, 9.0, (100,))):
        for p, nbytes in enumerate(sizes):
            costs.sized((rdd, p), nbytes)
        costs.task_time(rdd, seconds)
    # per RDD: rebuild time over its mean block size: 1/200, 4/100, 9/100
    assert costs.density((1, 0)) == pytest.approx(1.0 / 100)
    assert costs.density((9, 0)) == pytest.approx(4.0 / 100)  # no rebuild time yet
    assert costs.density((1, 5)) == pytest.approx(4.0 / 100)  # no size yet
    costs.task_time(2, 0.0)  # a running mean: rdd 2 now 2 s, the median with it
    assert costs.density((9, 0)) == pytest.approx(2.0 / 100)
    costs.forget(3, [(3, 0)])
    assert costs.density((9, 0)) == pytest.approx((1.0 / 200 + 2.0 / 100) / 2)
    assert costs.rebuild_s(3) is None and (3, 0) not in costs.size


def test_crd_ranks_an_unmeasured_block_by_its_distance_not_over_every_measured_one():
    """Live, a new RDD is ranked from its job's start, before the first task end that gives its
    rebuild time. A block of it read three stages on must not outrank a measured block of the
    same cost read next (a fixed large unknown density kept it over that block)."""
    refs = RefState(track_order=True)
    for rdd, seconds in ((1, 2.0), (2, 2.0), (3, 2.0)):
        refs.costs.sized((rdd, 0), 1000)
        refs.costs.task_time(rdd, seconds)
    refs.next_ref.update({(1, 0): 1, (2, 0): 3, (7, 0): 3})
    refs.costs.sized((7, 0), 1000)  # stored, its rebuild time not in yet
    priority = get_policy("crd").bind(refs)
    assert priority((7, 0)) == pytest.approx(priority((2, 0)))
    assert priority((7, 0)) < priority((1, 0))


def test_an_executors_first_task_per_slot_ran_cold():
    starts = ColdStarts({"a": 2}.get)
    assert [starts.task_ended("a") for _ in range(3)] == [True, True, False]
    assert [starts.task_ended("b") for _ in range(2)] == [True, False]  # cores unknown: 1 slot
    assert starts.task_ended(None) is False


def test_a_cold_task_time_stands_in_only_until_a_warm_one_comes():
    """An executor's first task pays its start-up (2-4 s against 0.2-0.4 s in every benchmark's
    event log); a rebuild later runs warm, so the warm time is the rebuild estimate."""
    costs = MissCosts()
    costs.task_time(1, 4.0, cold=True, executor="a")
    assert costs.rebuild_s(1) == 4.0  # nothing better known yet
    costs.task_time(1, 3.0, cold=True, executor="b")
    assert costs.rebuild_s(1) == pytest.approx(3.5)
    costs.task_time(1, 0.4, executor="a")
    assert costs.rebuild_s(1) == pytest.approx(0.4)  # the first warm time replaces them
    costs.task_time(1, 5.0, cold=True, executor="c")
    costs.task_time(1, 0.2, executor="b")
    assert costs.rebuild_s(1) == pytest.approx(0.3)  # warm ones only: a's 0.4, b's 0.2


def test_a_rebuild_repeats_the_work_of_its_narrow_lineage():
    """A miss of a block rebuilds it from shuffle outputs: what its RDD and every RDD it
    depends on through narrow dependencies computed (`AppDAG.lineage_cost`, the trace's)."""
    lineage = {1: (1,), 2: (2, 1), 3: (3, 2, 1)}
    costs = MissCosts(price=WarmCost, lineage=lineage.__getitem__)
    costs.task_time(1, 0.5)
    costs.task_time(2, 0.25)
    assert (costs.rebuild_s(1), costs.rebuild_s(2), costs.rebuild_s(3)) == (0.5, 0.75, None)
    costs.task_time(3, 1.0)
    assert costs.rebuild_s(3) == pytest.approx(1.75)
    costs.task_time(1, 0.1)  # the later half of rdd 1's tasks: 0.1 now, and for 2 and 3
    assert (costs.rebuild_s(2), costs.rebuild_s(3)) == pytest.approx((0.35, 1.35))


def test_an_unpersisted_rdd_is_priced_while_a_cached_rdds_lineage_holds_it():
    """A GraphX generation is built from the one before, which GraphX then unpersists: a miss
    of the newest rebuilds every generation down to the last cached one (the trace's
    `lineage_cost` walks them all). Forgetting an unpersisted RDD's price made the newest one
    cheap to lose: on SVD++ 2 of 5 runs took 4-5x longer (results/fidelity/costs-session50/)."""
    lineage = {1: (1,), 2: (2, 1), 3: (3, 2, 1)}
    costs = MissCosts(price=WarmCost, lineage=lineage.__getitem__)
    for rdd, t in ((1, 0.5), (2, 0.25), (3, 1.0)):
        costs.task_time(rdd, t)
        costs.sized((rdd, 0), 100)
    costs.forget(1, [(1, 0)])
    costs.forget(2, [(2, 0)])
    assert (costs.rebuild_s(1), costs.rebuild_s(2), costs.rebuild_s(3)) == (None, None, 1.75)
    costs.forget(3, [(3, 0)])  # none holds them now: nothing of the three is kept
    assert not costs.tasks and not costs._retired and not costs._held and not costs.size


def test_the_planner_prices_a_rebuild_as_the_trace_of_the_same_events_does():
    """The live brain's prices (`Planner.task_finished`) and the simulator's (the trace's
    `lineage_cost`) come from the same task ends: each task's duration split among the cached
    RDDs it built and its stage's final RDD, the later half of each executor's warm tasks,
    summed over the lineage (``price_shares``, the default). A running mean of whole durations
    (the rule before session 51) priced zip's shuffle-read `x` 4-6 times over the trace's, and the replay no longer
    predicted the run."""
    from lrc.planner import Planner
    d = AppDAG()
    d.add_rdd(RDD(0, 4))
    d.add_rdd(RDD(1, 4, (Dependency(0),), cached=True))            # base
    d.add_rdd(RDD(2, 4, (Dependency(1),), cached=True))            # a = base.map
    d.add_rdd(RDD(3, 4, (Dependency(2),)))                         # a's count
    d.add_rdd(RDD(4, 4, (Dependency(1),), cached=True))            # b = base.map
    d.add_rdd(RDD(5, 4, (Dependency(4),)))                         # b's count
    d.add_stage(Stage(0, 3, 4))
    d.add_stage(Stage(1, 5, 4))
    d.add_job(Job(0, (0,)))
    d.add_job(Job(1, (1,)))
    durations = {0: (3.0, 2.5, 0.9, 0.6), 1: (1.2, 0.8, 0.4, 0.2)}
    events = []
    for s in (0, 1):
        events.append(Event.job_start(s))
        events += [Event.task(s, p, executor=str(p % 2), duration_s=t)
                   for p, t in enumerate(durations[s])]
        events.append(Event.job_end(s))
    trace = build_trace(d, events, {}, {1: "MEMORY_ONLY", 2: "MEMORY_ONLY", 4: "MEMORY_ONLY"})
    # (one slot per executor, as the trace's)
    planner, starts = Planner("crd"), ColdStarts()
    for s in (0, 1):
        planner.add_job(d.jobs[s], [d.stages[s]], [r for r in d.rdds.values()
                                                   if r.id not in planner.dag.rdds])
        planner.stage_submitted(s)
        for p, t in enumerate(durations[s]):
            planner.task_finished(s, p, t, starts.task_ended(str(p % 2)), str(p % 2))
            planner.block_cached((s and 4 or 1, p), str(p % 2), 100)
        planner.stage_completed(s)
        planner.job_ended(s)
    for r in (1, 2, 4):
        assert planner.refs.costs.rebuild_s(r) == pytest.approx(trace.dag.lineage_cost((r, 0)))
    # base: a third of stage 0's warm tasks (0.9, 0.6: one each, the later half); a: two thirds
    assert planner.refs.costs.rebuild_s(1) == pytest.approx((0.9 + 0.6) / 2 / 3)
    assert planner.refs.costs.rebuild_s(2) == pytest.approx((0.9 + 0.6) / 2 * 2 / 3)
    # spark.lrc.priceShares=false: whole durations, their warm mean
    before, starts = Planner("crd", price_shares=False), ColdStarts()
    before.add_job(d.jobs[0], [d.stages[0]], list(d.rdds.values()))
    for p, t in enumerate(durations[0]):
        before.task_finished(0, p, t, starts.task_ended(str(p % 2)), str(p % 2))
    assert before.refs.costs.rebuild_s(1) == before.refs.costs.rebuild_s(2) == \
        pytest.approx((0.9 + 0.6) / 2)  # (3.0 and 2.5 ran cold)


def test_a_trace_charges_an_rdd_its_warm_tasks_time():
    """build_trace, which recorded runs and event logs both go through: an RDD computed by cold
    and warm tasks costs what its warm ones took; one computed by cold tasks only keeps theirs."""
    d = AppDAG()
    d.add_rdd(RDD(0, 4))
    d.add_rdd(RDD(1, 4, (Dependency(0),)))
    d.add_rdd(RDD(2, 2))
    d.add_stage(Stage(0, 1, 4))
    d.add_stage(Stage(1, 2, 2))
    d.add_job(Job(0, (0, 1)))
    ev = [Event.job_start(0)]
    ev += [Event.task(0, p, executor=str(p % 2), duration_s=dur)
           for p, dur in enumerate((4.0, 3.0, 0.4, 0.2))]
    ev += [Event.task(1, p, executor="x", duration_s=2.0 + p) for p in range(2)]
    # one slot per executor: the tasks of partitions 0 and 1 ran cold; two: all four did
    for cores, rdd1 in (({}, (0.4 + 0.2) / 2), ({"0": 2, "1": 2}, (3.0 + 0.4) / 2)):
        t = build_trace(d, ev, {}, {1: "MEMORY_ONLY", 2: "MEMORY_ONLY"}, cores=cores)
        assert t.dag.rdds[1].compute_cost == pytest.approx(rdd1)
        assert t.dag.rdds[2].compute_cost == pytest.approx(3.0)  # executor x's second task


def test_an_event_log_tells_cold_tasks_by_its_executors_cores(tmp_path):
    """The event log's ExecutorAdded gives each executor's task slots: with two, both of its
    first two tasks ran cold."""
    import json
    from lrc.eventlog import read_eventlog
    from lrc.eventlog_write import write_eventlog
    d = AppDAG()
    d.add_rdd(RDD(1, 4, cached=True, storage_level="MEMORY_ONLY", block_bytes=10))
    d.add_stage(Stage(0, 1, 4))
    d.add_job(Job(0, (0,)))
    ev = [Event.job_start(0)] + [Event.task(0, p, executor="7", duration_s=dur)
                                 for p, dur in enumerate((4.0, 3.0, 0.4, 0.2))] + [Event.job_end(0)]
    log = write_eventlog(Trace(d, ev), tmp_path / "app.log")
    # 1 slot: 4.0 ran cold; the later half of the warm 3.0, 0.4, 0.2 (lrc.cost.warm_cost)
    assert read_eventlog(log).trace.dag.rdds[1].compute_cost == pytest.approx(0.3)
    added = {"Event": "SparkListenerExecutorAdded", "Executor ID": "7", "Timestamp": 0,
             "Executor Info": {"Host": "h", "Total Cores": 2}}
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:2] + [json.dumps(added)] + lines[2:]) + "\n")
    assert read_eventlog(log).trace.dag.rdds[1].compute_cost == pytest.approx(0.2)  # 0.4, 0.2


def test_a_rebuild_is_priced_at_the_later_half_of_each_executors_warm_tasks():
    """JIT warm-up runs a stage's first tasks slower than its last; a rebuild comes later."""
    shares = [(1.0, True, "a"), (0.5, False, "a"), (0.4, False, "b"), (0.3, False, "a"),
              (0.1, False, "b"), (0.2, False, "a")]
    assert warm_cost(shares) == pytest.approx(0.2)  # a: 0.3, 0.2; b: 0.1 (all warm: 0.3)
    assert warm_cost([(2.0, True, "a"), (4.0, True, "b")]) == pytest.approx(3.0)  # only cold
    assert warm_cost([(0.5, False, "a")]) == pytest.approx(0.5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100, allow_nan=False), st.booleans(),
                          st.sampled_from(["0", "1", "2", None])), min_size=1, max_size=60))
def test_the_live_price_kept_as_tasks_end_is_the_traces_warm_cost(shares):
    """`WarmCost` keeps `warm_cost` as tasks end (sliding windows, a sorted list) instead of
    sorting every share again: after each task, the same value, to the bit."""
    price = WarmCost()
    for i, (t, cold, executor) in enumerate(shares):
        price.add(t, cold, executor)
        assert price.value() == warm_cost(shares[:i + 1])
