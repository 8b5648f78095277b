"""One DAG walk per pattern of materialized blocks (`AppDAG.narrow_shape`) plans exactly what
a walk per task plans: same references, same replay, on every synthetic workload."""
from __future__ import annotations

import pytest

from lrc import synth
from lrc.dag import AppDAG, Dependency, RDD
from lrc.sim import simulate


@pytest.mark.parametrize("workload", sorted(synth.WORKLOADS))
@pytest.mark.parametrize("policy,refs,admit", [
    ("lrc", "online", False), ("lerc", "online", False), ("mrd", "online", False),
    ("lrc", "profile", False), ("crd", "online", False),
    ("crd", "online", True)])  # (admission: the refused blocks' patterns too)
def test_shared_walks_replay_as_walks_per_task(workload, policy, refs, admit, monkeypatch):
    trace = synth.make(workload, seed=3, parts=6)
    fast = simulate(trace, policy, 0.4, refs=refs, log_evictions=True, admit=admit).to_dict()
    monkeypatch.setattr(AppDAG, "narrow_shape", lambda self, rdd_id: None)
    slow = simulate(trace, policy, 0.4, refs=refs, log_evictions=True, admit=admit).to_dict()
    assert fast == slow


def test_narrow_shape_only_for_one_to_one_lineage_of_equal_partitions():
    dag = AppDAG()
    dag.add_rdd(RDD(0, 4, cached=True))
    dag.add_rdd(RDD(1, 4, (Dependency(0),)))
    dag.add_rdd(RDD(2, 4, (Dependency(1), Dependency(0, "shuffle")), cached=True))
    dag.add_rdd(RDD(3, 2, (Dependency(2, "range", 0, 0, 2),)))
    dag.add_rdd(RDD(4, 8, (Dependency(0, "unknown"),)))
    assert dag.narrow_shape(2) == (2, 0)
    assert dag.narrow_shape(3) is None and dag.narrow_shape(4) is None


def test_add_job_copies_what_the_caller_keeps_and_keeps_what_it_hands_over():
    """A later job start's merge (`AppDAG.add_rdd` keeps known deps and sizes on the new
    object) must not reach objects a caller still holds (a simulator's profile DAG); the
    brain's `fresh` objects are kept as they are (no copy per RDD and stage)."""
    from lrc.dag import Job, Stage
    from lrc.planner import Planner

    for fresh in (False, True):
        p = Planner("lrc")
        first = [RDD(0, 2, cached=True, block_bytes=7), RDD(1, 2, (Dependency(0),))]
        p.add_job(Job(0, (0,)), [Stage(0, 1, 2)], first, fresh)
        again = [RDD(0, 2, cached=True), RDD(1, 2, (Dependency(0, "unknown"),))]
        stages = [Stage(1, 1, 2, job_id=1)]
        p.add_job(Job(1, (1,)), stages, again, fresh)
        assert p.dag.rdds[0].block_bytes == 7 and p.dag.rdds[1].deps == (Dependency(0),)
        assert (p.dag.rdds[0] is again[0], p.dag.stages[1] is stages[0]) == (fresh, fresh)
        if not fresh:  # the caller's objects: as it made them
            assert again[0].block_bytes is None and again[1].deps == (Dependency(0, "unknown"),)


@pytest.mark.parametrize("shaped", [True, False])
def test_a_refused_store_is_a_pattern_of_its_own(shaped, monkeypatch):
    """Under admission a block whose store failed is not read through (`Planner._task_walk`):
    partitions 2 (refused) and 3 (never computed) of a stage are both unmaterialized, and only
    the refused column tells their walks apart."""
    from lrc.dag import Job, Stage
    from lrc.planner import Planner

    if not shaped:
        monkeypatch.setattr(AppDAG, "narrow_shape", lambda self, rdd_id: None)
    p = Planner("crd", admit=True)
    rdds = [RDD(0, 4, cached=True), RDD(1, 4, (Dependency(0),), cached=True),
            RDD(2, 4, (Dependency(1),))]
    p.add_job(Job(0, (0,)), [Stage(0, 1, 3, partitions=(0, 1, 2))], rdds)
    for q in range(4):
        p.block_cached((0, q), "1", 10)
    p.block_cached((1, 0), "1", 10)
    p.block_cached((1, 1), "1", 10)
    p.stage_completed(0)  # (1, 2) was computed and not stored: refused
    p.add_job(Job(1, (1,)), [Stage(1, 2, 4)], rdds)
    assert p.refs.pending[1] == {0: ((1, 0),), 1: ((1, 1),), 2: (), 3: ((0, 3),)}


@pytest.mark.parametrize("shaped", [True, False])
def test_tasks_of_interleaved_patterns_are_registered_in_the_stages_order(shaped, monkeypatch):
    """Partitions 0 and 2 of the cached RDD are in memory, 1 and 3 are not: two walk patterns,
    interleaved. The tasks are registered in partition order either way (what a walk per task
    does; a prediction numbers a stage's tasks in that order)."""
    from lrc.dag import Job, Stage
    from lrc.planner import Planner

    if not shaped:
        monkeypatch.setattr(AppDAG, "narrow_shape", lambda self, rdd_id: None)
    p = Planner("lrc")
    rdds = [RDD(0, 4), RDD(1, 4, (Dependency(0),), cached=True), RDD(2, 4, (Dependency(1),))]
    p.add_job(Job(0, (0,)), [Stage(0, 1, 4)], rdds)
    p.block_cached((1, 0), "1", 10)
    p.block_cached((1, 2), "1", 10)
    p.stage_completed(0)
    p.add_job(Job(1, (1,)), [Stage(1, 2, 4)], rdds)
    assert list(p.refs.pending[1].items()) == [(0, ((1, 0),)), (1, ()), (2, ((1, 2),)), (3, ())]
