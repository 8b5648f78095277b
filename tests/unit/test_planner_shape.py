"""One DAG walk per pattern of materialized blocks (`AppDAG.narrow_shape`) plans exactly what
a walk per task plans: same references, same replay, on every synthetic workload."""
from __future__ import annotations

import pytest

from lrc import synth
from lrc.dag import AppDAG, Dependency, RDD
from lrc.sim import simulate


@pytest.mark.parametrize("workload", sorted(synth.WORKLOADS))
@pytest.mark.parametrize("policy,refs", [("lrc", "online"), ("lerc", "online"), ("mrd", "online"),
                                         ("lrc", "profile")])
def test_shared_walks_replay_as_walks_per_task(workload, policy, refs, monkeypatch):
    trace = synth.make(workload, seed=3, parts=6)
    fast = simulate(trace, policy, 0.4, refs=refs, log_evictions=True).to_dict()
    monkeypatch.setattr(AppDAG, "narrow_shape", lambda self, rdd_id: None)
    slow = simulate(trace, policy, 0.4, refs=refs, log_evictions=True).to_dict()
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
