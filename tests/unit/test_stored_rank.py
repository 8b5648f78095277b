"""crd ranks a block that is in no executor's memory as it will be once stored
(`Policy.bind_stored`): the task that stores it again is the running stage's task that reads
it, and that read is served whether the store succeeds or not. A block whose last read is that
task's is worth nothing once stored, so under admission its store can evict only blocks that
are worth nothing too.

Found on live ml at F = 0.7 (session 53): the split job re-stored `parsed` partitions, ranked by
the read being served, and evicted partitions of `train`, which every iteration reads (there the
predictor expects `parsed` to be read again, so this rule does not fire). Live on GraphX
PageRank at F = 0.3 it made crd 1.29-1.43x faster (results/admission/store-rank-session53/).
"""
from __future__ import annotations

import math

from lrc.dag import RDD, Dependency, Job, Stage
from lrc.planner import Planner

PARTS = 2


def planner_after_a_build(store_rank: bool = True) -> Planner:
    """Job 0 builds cached RDD 0 on executor "0"; job 1 (stage 1) reads it and is running."""
    p = Planner("crd", predict=False, admit=True, store_rank=store_rank)
    base = RDD(0, PARTS, cached=True)
    p.add_job(Job(0, [0]), [Stage(0, 0, PARTS)], [base])
    p.stage_submitted(0)
    for q in range(PARTS):
        p.block_cached((0, q), "0", 100)
        p.task_finished(0, q, 1.0)
    p.stage_completed(0)
    p.job_ended(0)
    p.add_job(Job(1, [1]), [Stage(1, 1, PARTS)], [base, RDD(1, PARTS, (Dependency(0),))])
    p.stage_submitted(1)
    return p


def test_a_block_whose_last_read_is_the_storing_tasks_ranks_last_until_stored():
    p = planner_after_a_build()
    resident = p.priority((0, 1))
    assert resident > -math.inf  # in memory: the running stage's read ranks it
    p.take_changes()
    p.block_removed((0, 1), "0")
    assert (0, 1) in p.take_changes()  # the brain publishes the new rank
    assert p.priority((0, 1)) == -math.inf  # its store may evict only what is worth nothing
    assert p.priority((0, 0)) == resident  # still in memory: unchanged
    p.block_cached((0, 1), "1", 100)
    assert p.priority((0, 1)) == resident
    p.task_finished(1, 1, 1.0)
    assert p.priority((0, 1)) == -math.inf  # its read is served: nothing left either way


def test_spark_lrc_store_rank_false_ranks_it_by_the_read_it_serves():
    p = planner_after_a_build(store_rank=False)  # (spark.lrc.storeRank=false: the rule before)
    resident = p.priority((0, 1))
    p.block_removed((0, 1), "0")
    assert p.priority((0, 1)) == resident > -math.inf


def test_a_block_read_again_later_keeps_its_rank_when_stored_again():
    p = planner_after_a_build()
    resident = p.priority((0, 1))
    # a later job (stage 2) reads RDD 0 as well
    p.add_job(Job(2, [2]), [Stage(2, 2, PARTS)], [RDD(0, PARTS, cached=True),
                                                  RDD(2, PARTS, (Dependency(0),))])
    p.take_changes()
    p.block_removed((0, 1), "0")
    assert p.priority((0, 1)) == resident > -math.inf
    assert (0, 1) not in p.take_changes()  # same rank: nothing to republish


def test_lrc_and_mrd_rank_a_block_out_of_memory_as_in_memory():
    """They stay as their papers define them (lerc's effective counts do depend on what is
    cached: its peers')."""
    for policy in ("lrc", "mrd"):
        p = Planner(policy, predict=False)
        p.add_job(Job(0, [0]), [Stage(0, 1, PARTS)],
                  [RDD(0, PARTS, cached=True), RDD(1, PARTS, (Dependency(0),))])
        p.materialized.update({(0, 0), (0, 1)})
        p.add_job(Job(1, [1]), [Stage(1, 2, PARTS)],
                  [RDD(0, PARTS, cached=True), RDD(2, PARTS, (Dependency(0),))])
        p.stage_submitted(0)
        before = p.priority((0, 1))
        p.block_cached((0, 1), "0", 100)
        assert p.priority((0, 1)) == before, policy


def test_the_rank_of_a_store_is_republished_when_its_reads_come_down_to_one_or_grow():
    """crd's table is sent by changes (`RefState.changed`); a block's store rank moves when it
    is left with one read, or gets a second, even where its next read stays where it was."""
    from lrc.policies.crd import CRD
    from lrc.refcount import RefState

    refs = RefState(track_order=True)
    refs.count_changes = False  # as the planner sets it for crd
    stored = CRD().bind_stored(refs)
    b = (0, 0)
    refs.add_task(1, 0, [b], 1)
    refs.add_task(1, 1, [b], 1)  # two tasks of stage 1 read it
    refs.advance(1)
    assert stored(b) > -math.inf
    refs.take_changes()
    refs.finish_task(1, 0)
    assert b in refs.take_changes() and stored(b) == -math.inf
    refs.add_task(2, 0, [b], 2)  # a later stage reads it too
    assert b in refs.take_changes() and stored(b) > -math.inf
    refs.finish_task(2, 0)  # (that stage's task ends first: one read left again)
    assert b in refs.take_changes() and stored(b) == -math.inf
