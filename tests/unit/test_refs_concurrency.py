"""Reference counts when jobs overlap (issue 14, concurrency; found by
tests/spark/test_concurrency.py): two jobs that share a running shuffle-map stage, one of them
ending (cancelled) while the stage runs, and decrements below zero counted, not hidden."""
from __future__ import annotations

from lrc.dag import RDD, Dependency, Job, Stage
from lrc.planner import Planner
from lrc.refcount import RefState

PARTS = 4


def shared_map_stage() -> tuple[list[RDD], Stage, Stage, Stage]:
    """rdd 0 cached (4 partitions) -> rdd 1 -> shuffle -> rdd 2 (2 partitions): one map stage
    (0) for two jobs with result stages 1 and 2 over rdd 2."""
    rdds = [RDD(0, PARTS, cached=True),
            RDD(1, PARTS, deps=(Dependency(0, "one_to_one"),)),
            RDD(2, 2, deps=(Dependency(1, "shuffle"),))]
    return rdds, Stage(0, 1, PARTS), Stage(1, 2, 2, parent_ids=[0]), Stage(2, 2, 2, parent_ids=[0])


def started(p: Planner) -> tuple[Stage, Stage, Stage]:
    """Rdd 0 is cached everywhere; job 0 (stages 0, 1) runs and its map task 0 finished."""
    rdds, smap, r1, r2 = shared_map_stage()
    for q in range(PARTS):
        p.block_cached((0, q), "1", 100)
    p.add_job(Job(0, (0, 1)), [smap, r1], rdds)
    p.stage_submitted(0)
    p.task_finished(0, 0)
    return smap, r1, r2


def counts(p: Planner) -> dict:
    return {b: c for b, c in p.refs.count.items() if c}


def test_a_second_job_on_a_running_stage_does_not_register_its_finished_tasks_again():
    p = Planner("lrc", predict=False)
    smap, _, r2 = started(p)
    assert counts(p) == {(0, 1): 1, (0, 2): 1, (0, 3): 1}
    p.add_job(Job(1, (0, 2)), [smap, r2], shared_map_stage()[0])  # joins the running stage
    assert counts(p) == {(0, 1): 1, (0, 2): 1, (0, 3): 1}, "map task 0 ran: no reference again"
    assert set(p.refs.pending[0]) == {1, 2, 3}
    for q in (1, 2, 3):
        p.task_finished(0, q)
    assert counts(p) == {} and p.refs.negative_decrements == 0


def test_a_job_ending_while_another_shares_its_running_stage_keeps_the_stage_references():
    p = Planner("lrc", predict=False)
    smap, _, r2 = started(p)
    p.add_job(Job(1, (0, 2)), [smap, r2], shared_map_stage()[0])
    p.job_ended(0)  # cancelled: Spark goes on running stage 0 for job 1
    assert counts(p) == {(0, 1): 1, (0, 2): 1, (0, 3): 1}
    assert not p.refs.pending.get(1), "job 0's own result stage is dropped"
    p.task_finished(0, 1)
    p.job_ended(1)  # cancelled too: nothing needs stage 0 any more
    assert counts(p) == {} and not p.refs.pending.get(0)
    assert 0 not in p.refs.ran, "what ran of a forgotten stage is not kept"


def test_a_stage_that_completes_forgets_which_of_its_tasks_ran():
    p = Planner("lrc", predict=False)
    started(p)
    for q in (1, 2, 3):
        p.task_finished(0, q)
    p.stage_completed(0)
    assert 0 not in p.refs.ran and counts(p) == {}


def test_a_decrement_below_zero_is_counted_and_left_visible():
    r = RefState()
    r.add_task(0, 0, [(0, 0), (0, 1)], 1)
    r.count[(0, 0)] = 0  # as if the reference had been dropped already, elsewhere
    r.finish_task(0, 0)
    assert r.negative_decrements == 1 and r.count[(0, 0)] == -1 and r.count[(0, 1)] == 0
    ordered = RefState(track_order=True)
    ordered.add_task(0, 0, [(0, 0)], 1)
    ordered.count[(0, 0)] = 0
    ordered.finish_task(0, 0)
    assert ordered.negative_decrements == 1
