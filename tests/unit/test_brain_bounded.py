"""A long application's driver state is bounded by what is live, not by its age (issue 14, scale).

Synthetic jobs in the shim's wire format (`spark_plugin.scale.job_lines`: each job caches an RDD,
reads the previous job's, shuffles, and unpersists the one two jobs back) go through the brain's
own event path (decode, handlers, planner, publishes). Every structure the brain keeps must be the
same size after 2,000 jobs as after 500. The bridge only records what the brain sends: what the
executors do with the table is tested against real executors in tests/spark.
"""
from __future__ import annotations

import pytest

import lrc.planner
import spark_plugin.brain
import spark_plugin.events
import spark_plugin.metrics
from spark_plugin.config import LrcSettings
from spark_plugin.brain import Brain
from spark_plugin.scale import CountingBridge, feed, job_lines, structure_sizes


@pytest.mark.parametrize("policy", ["lrc", "crd"])  # crd: predictions and their state too
def test_brain_state_stays_flat_over_2000_jobs(monkeypatch, policy):
    # small caps, so that 500 jobs (1,000 stages) already fill them
    monkeypatch.setattr(lrc.planner, "RECENT_COMPLETED", 200)
    monkeypatch.setattr(spark_plugin.brain, "PUBLISHED_STAGES", 200)
    monkeypatch.setattr(spark_plugin.metrics, "RECENT_SAMPLES", 200)
    monkeypatch.setattr(spark_plugin.metrics, "PER_RDD", 200)
    monkeypatch.setattr(spark_plugin.events, "STAGE_MEMORY", 400)
    monkeypatch.setattr(spark_plugin.events, "RDD_MEMORY", 800)
    bridge = CountingBridge()
    bridge.record = True
    brain = Brain(bridge, LrcSettings.from_conf(policy=policy))
    sizes = {}
    for j in range(2000):
        feed(brain, bridge, job_lines(j, parts=2))
        if j + 1 in (500, 2000):
            sizes[j + 1] = structure_sizes(brain)
    grown = {k: (sizes[500][k], v) for k, v in sizes[2000].items()
             if v > sizes[500][k]}
    assert not grown, f"grows with the number of jobs (size at 500 jobs, at 2000): {grown}"
    s = sizes[2000]
    assert s["dag.jobs"] == 0 and s["dag.stages"] == 0
    assert s["refs.pending"] == len(brain.planner.predicted)  # only predicted stages (crd)
    assert s["dag.rdds"] <= 3  # the base RDD and the two cached RDDs still persisted
    assert s["brain.published_rdds"] <= 3 and s["planner.completed"] <= 200
    assert s["brain.stage_memory"] <= 400 and s["brain.stage_memory_rdds"] <= 800
    # the unpersisted RDDs left the executors' table: each one was published as removed
    removed = {int(item.split("=")[0]) for _, arrays, _ in bridge.sent
               for item in arrays.split(";") if item.endswith("=")}
    unpersisted = {1 + 10 * j + 2 for j in range(1998)}
    assert unpersisted <= removed


def test_recorded_trace_keeps_every_job_the_planner_forgot(tmp_path):
    bridge = CountingBridge()
    brain = Brain(bridge, LrcSettings.from_conf(policy="lrc", trace_path=str(tmp_path / "t.json")))
    for j in range(20):
        feed(brain, bridge, job_lines(j, parts=2))
    assert len(brain.planner.dag.jobs) == 0
    trace = brain.recorder.build()
    assert len(trace.dag.jobs) == 20 and len(trace.dag.rdds) == 10 * 20  # base + 9 + 19 x 10
    assert sum(1 for e in trace.events if e.kind == "task") == 20 * 2 * 2
