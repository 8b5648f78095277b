"""A block whose store failed is looked up again by the next task that needs it (Planner.tried).

Spark's getOrElseUpdate looks a cached RDD's block up before computing it; when an earlier store
failed (admission refused it, or it did not fit) that lookup is a miss the hit accounting must
count. The plan's references stay as for a block never computed (through it, to its inputs),
except under admission, where they name neither (`Planner._task_walk`).
A block on disk (`Planner.on_disk`) is not computed again: Spark reads it back.
"""
from __future__ import annotations

from lrc.dag import RDD, Dependency, Job, Stage
from lrc.planner import Planner

PARTS = 2


def planner_with_cached_rdd(policy: str = "lrc", admit: bool = False) -> Planner:
    """RDD 1 (cached) is computed from RDD 0 (cached too); jobs add readers of RDD 1."""
    p = Planner(policy, admit=admit)
    p.add_job(Job(0, [0]), [Stage(0, 1, PARTS)],
              [RDD(0, PARTS, cached=True), RDD(1, PARTS, (Dependency(0),), cached=True)])
    return p


def run_job(p: Planner, job: int, stored: set, failed: bool = False) -> None:
    """Job ``job`` (stage ``job``) reads RDD 1 through a new RDD; ``stored``: blocks its tasks
    cache (the others' stores fail)."""
    if job > 0:
        p.add_job(Job(job, [job]), [Stage(job, 10 + job, PARTS)],
                  [RDD(10 + job, PARTS, (Dependency(1),))])
    p.stage_submitted(job)
    for q in range(PARTS):
        for b in p.dag.task_reads(job, q, p.materialized)[1]:
            if b in stored:
                p.block_cached(b, "0", 1)
        p.task_finished(job, q)
    p.stage_completed(job, failed=failed)
    p.job_ended(job)


def test_a_block_whose_store_failed_is_a_read_of_the_next_task_that_needs_it():
    p = planner_with_cached_rdd()
    run_job(p, 0, stored={(0, 0), (0, 1), (1, 0)})  # (1, 1)'s store fails
    assert p.tried == {(1, 1)}
    p.add_job(Job(1, [1]), [Stage(1, 11, PARTS)], [RDD(11, PARTS, (Dependency(1),))])
    assert p.task_reads(1, 0) == [(1, 0)]
    assert sorted(p.task_reads(1, 1)) == [(0, 1), (1, 1)]  # looked up, then computed from (0, 1)
    # the plan's references are those of a block to compute: its input's, not its own
    assert p.refs.refs((1, 1)) == 0 and p.refs.refs((0, 1)) == 1
    p.task_finished(1, 1)
    assert p.task_reads(1, 1) == []  # a finished task holds nothing


def test_under_admission_a_failed_store_is_not_locked_in_by_references_on_its_inputs():
    """Executors that refuse stores by rank (spark.lrc.admit): the task that computes a refused
    block again references neither it nor its input. A reference on the input would rank that
    input above the block, and its store would be refused again, every time."""
    p = planner_with_cached_rdd("lrc", admit=True)
    run_job(p, 0, stored={(0, 0), (0, 1), (1, 0)})  # (1, 1)'s store fails
    p.add_job(Job(1, [1]), [Stage(1, 11, PARTS)], [RDD(11, PARTS, (Dependency(1),))])
    assert p.task_reads(1, 0) == [(1, 0)]  # the stored block: as without admission
    assert p.task_reads(1, 1) == [(1, 1)]  # looked up (a miss), computed again from (0, 1)
    assert p.refs.refs((1, 1)) == 0 and p.refs.refs((0, 1)) == 0
    run_job(p, 1, stored={(1, 1)})
    assert p.tried == set()  # stored this time: read through its references again
    p.add_job(Job(2, [2]), [Stage(2, 12, PARTS)], [RDD(12, PARTS, (Dependency(1),))])
    assert p.refs.refs((1, 1)) == 1 and p.refs.refs((0, 1)) == 0


def test_a_block_stored_at_last_is_no_longer_tried_and_is_read_through_its_references():
    p = planner_with_cached_rdd()
    run_job(p, 0, stored={(0, 0), (0, 1), (1, 0)})
    run_job(p, 1, stored={(1, 1)})
    assert p.tried == set()
    p.add_job(Job(2, [2]), [Stage(2, 12, PARTS)], [RDD(12, PARTS, (Dependency(1),))])
    assert p.task_reads(2, 1) == [(1, 1)] and p.refs.refs((1, 1)) == 1


def test_a_failed_stage_marks_nothing_tried_and_an_unpersisted_rdd_leaves_none():
    p = planner_with_cached_rdd()
    run_job(p, 0, stored=set(), failed=True)
    assert p.tried == set()
    run_job(p, 1, stored=set())
    assert p.tried == {(0, 0), (0, 1), (1, 0), (1, 1)}
    p.rdd_unpersisted(1)
    assert p.tried == {(0, 0), (0, 1)}
    assert not p.failed_stores.lookups and not p.failed_stores.creates  # nothing left of the ended jobs' stages


def test_a_block_on_disk_is_read_back_not_computed_from_its_inputs():
    """MEMORY_AND_DISK: a store that fails in memory writes the block to disk (``on_disk``);
    Spark reads it from there, so the next task reads it and not its input."""
    p = planner_with_cached_rdd()
    run_job(p, 0, stored={(0, 0), (0, 1), (1, 0)})
    p.on_disk((1, 1))
    assert p.tried == set() and (1, 1) in p.materialized and not p.locations.get((1, 1))
    p.add_job(Job(1, [1]), [Stage(1, 11, PARTS)], [RDD(11, PARTS, (Dependency(1),))])
    assert p.task_reads(1, 1) == [(1, 1)]
    assert p.refs.refs((1, 1)) == 1 and p.refs.refs((0, 1)) == 0


def test_the_simulator_plans_with_the_admission_it_replays():
    """Synthetic ml at F = 0.7: crd with admission lost 10 hit points to lrc there, because each
    refused partition of the iterations' input was planned through a dead input that outranked
    it (0.851 against 0.952). Planned as a refusal, the partition gets back in."""
    from lrc import synth
    from lrc.compiled import CompiledTrace
    from lrc.sim import simulate

    ct = CompiledTrace(synth.make("ml"))
    crd = simulate(ct, "crd", 0.7, refs="online", admit=True)
    assert crd.hit_ratio >= simulate(ct, "lrc", 0.7, refs="online").hit_ratio
