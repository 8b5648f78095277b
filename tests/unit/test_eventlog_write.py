"""lrc.eventlog_write: a trace written as a Spark event log reads back (lrc.eventlog) with the
same tasks, the same block reads and creates task by task, and measured block sizes; and the
what-if speed harness runs end to end on a small log."""
from __future__ import annotations

from collections import Counter

import pytest

from lrc.eventlog import read_eventlog
from lrc.eventlog_write import write_eventlog
from lrc.synth import make
from lrc.whatif_speed import measure, report, synthetic_trace


def tasks(trace):
    return [(e.stage_id, e.partition, e.executor or "0", Counter(e.reads), Counter(e.creates))
            for e in trace.events if e.kind == "task"]


# zip: an event log does not carry ZippedPartitionsRDD's partition mapping; the reader then
# applies Spark's rule for unknown narrow dependencies, as it does for a real log.
@pytest.mark.parametrize("workload", ["pagerank", "cc", "ml", "svdpp", "gpu_train"])
@pytest.mark.parametrize("block_updates", [True, False])
def test_a_written_event_log_reads_back_task_by_task(tmp_path, workload, block_updates):
    trace = make(workload, seed=3, parts=6)
    el = read_eventlog(write_eventlog(trace, tmp_path / "app.log", block_updates))
    assert el.complete and all(not block_updates and "no block size known" in w  # never read
                               for w in el.warnings), el.warnings
    assert tasks(el.trace) == tasks(trace)
    # stage-level scheduling: each stage's GPUs per task, through its resource profile
    assert {s.id: s.gpus for s in el.trace.dag.stages.values()} == \
        {s.id: s.gpus for s in trace.dag.stages.values()}
    cached = {r.id for r in trace.dag.rdds.values() if r.cached}
    assert set(el.size_source) == cached
    assert (set(el.size_source.values()) == {"measured"}) == block_updates
    if block_updates:
        for e in trace.events:
            for b in e.creates:
                assert el.trace.dag.rdds[b[0]].size(b[1]) == max(1, trace.dag.rdds[b[0]].size(b[1]))


def test_the_speed_harness_sizes_the_log_and_reports_each_phase():
    assert sum(1 for e in synthetic_trace(500).events if e.kind == "task") >= 500
    m = measure(300, profile=False)
    assert m["tasks"] >= 300 and m["runs"] == 25
    text = report(m, "python -m lrc whatif-speed --tasks 300")
    for phase in ("parse", "compile", "replay", "bound", "total"):
        assert phase in text
    assert m["cpu_s"] == pytest.approx(m["cpu_main_s"] + m["cpu_workers_s"])
    # cProfile sees one process: a profiled run replays in it, with the same numbers
    p = measure(300, profile=True)
    assert p["timings"]["workers"] == 1 and p["cpu_workers_s"] == pytest.approx(0, abs=0.05)
    assert "Where the time goes" in report(p, "python -m lrc whatif-speed --tasks 300")
