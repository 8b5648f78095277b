"""The live brain prices a rebuild as the trace of the same run does (real Spark, separate
executor JVMs with one core each).

crd ranks a block by its rebuild time per byte. The brain learns it from task ends
(`Planner.task_finished`, `lrc.cost.MissCosts`); the simulator replays a run with the cost its
trace derives from the same events (`lrc.derive`, `AppDAG.lineage_cost`). When the two differed
(a running mean of whole task durations live), the replay of a zip run predicted evictions its
executors did not make: 28-30 misses replayed against 45-56 live at F = 0.7
(results/fidelity/costs-session50/). Now (spark.lrc.priceShares, the default) both take
each task's share of its duration (split among the cached RDDs it built and its stage's final
RDD), priced at the later half of each executor's warm tasks (an executor's first task pays its
start-up) and summed over the block's narrow lineage, unpersisted RDDs of it included.
"""
from __future__ import annotations

import pytest

from spark_plugin.doctor import settle
from spark_plugin.doctor import start_session as start
from spark_plugin.session import active_brain

pytestmark = [pytest.mark.spark, pytest.mark.cluster]
PARTS = 6


def test_the_brain_prices_a_rebuild_as_the_trace_of_the_same_run_does(tmp_path):
    spark = start("local-cluster[2,1,1024]", "crd", {
        "spark.lrc.tracePath": str(tmp_path / "trace.parquet"),  # the brain's view of each task
        "spark.locality.wait": "0s"})
    sc = spark.sparkContext
    try:
        base = sc.parallelize(range(PARTS * 100), PARTS).map(lambda x: x * 2).cache()
        a = base.map(lambda x: x + 1).cache()
        assert a.count() == PARTS * 100  # one stage builds `base` and `a`: a third each
        b = base.map(lambda x: x - 1).cache()
        assert b.count() == PARTS * 100  # reads `base`, builds `b`: half
        settle(expected_tasks=2 * PARTS)
        brain = active_brain()
        brain.sync()
        costs = brain.planner.refs.costs
        before = {r.id(): costs.rebuild_s(r.id()) for r in (base, a, b)}
        # the lineage is in it: `a` and `b` repeat `base`'s work
        assert before[a.id()] > before[base.id()] > 0 and before[b.id()] > before[base.id()]
        # unpersisted, `base` is still work a rebuild of `a` or `b` repeats (GraphX unpersists
        # the generation a cached one was built from)
        base.unpersist()
        assert a.map(lambda x: -x).count() == PARTS * 100  # a job after the unpersist
        settle(expected_tasks=3 * PARTS)
        brain.sync()
        tasks = [e for e in brain.recorder.events if e.kind == "task"]
        assert len(tasks) == 3 * PARTS and {e.executor for e in tasks} <= {"0", "1"}, tasks
        trace = brain.recorder.build()
        live = {r.id(): costs.rebuild_s(r.id()) for r in (a, b)}
        replayed = {r: trace.dag.lineage_cost((r, 0)) for r in live}
        assert live == pytest.approx(replayed, rel=1e-9, abs=1e-12)
        assert live == pytest.approx({r: before[r] for r in live}, rel=1e-9)
        assert costs.rebuild_s(base.id()) is None  # no longer cached: no block of its to price
    finally:
        spark.stop()
