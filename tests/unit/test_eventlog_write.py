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


def rerun_trace():
    """Job 1's result stage fails its first attempt after one task; Spark reruns map partition 1
    and the result stage's three other partitions, each as a new attempt on part of its stage."""
    from lrc.synth import App, o2o, shuffle
    from lrc.trace import Event, Trace

    a = App("rerun", 0, parts=4)
    base = a.rdd(mb=1)
    a.action(base)
    a.action(a.rdd([shuffle(a.rdd([o2o(base)]))], mb=1))
    tr = a.trace()
    maps, result = tr.dag.jobs[1].stage_ids
    run = {(e.stage_id, e.partition): e for e in tr.events if e.kind == "task"}
    first = tr.events[:tr.events.index(next(e for e in tr.events
                                           if e.kind == "job_start" and e.job_id == 1)) + 1]
    events = first + [Event.stage_submitted(maps), *(run[maps, p] for p in range(4)),
                      Event.stage_completed(maps), Event.stage_submitted(result),
                      run[result, 0], Event.stage_completed(result),
                      Event.stage_submitted(maps, [1]), run[maps, 1], Event.stage_completed(maps),
                      Event.stage_submitted(result, [1, 2, 3]), *(run[result, p] for p in (1, 2, 3)),
                      Event.stage_completed(result), Event.job_end(1)]
    return Trace(tr.dag, events, name="rerun"), maps, result


def test_stage_attempts_on_part_of_their_stage_survive_the_event_log_and_plan_just_that(tmp_path):
    """A trace's rerun attempts keep their partitions through every format: json, parquet, and
    an event log (the attempt numbers and task counts the writer gives them, the partitions the
    reader finds in each attempt's tasks); a replay references just those partitions."""
    from conftest import feed_planner
    from lrc.planner import Planner
    from lrc.trace import load_trace, save_trace

    trace, maps, result = rerun_trace()
    want = [e.partitions for e in trace.events if e.kind == "stage_submitted"]
    assert want[-2:] == [(1,), (1, 2, 3)] and want[:-2] == [None] * (len(want) - 2)
    back = [load_trace(save_trace(trace, tmp_path / f"t.{x}")) for x in ("json", "parquet")]
    back.append(read_eventlog(write_eventlog(trace, tmp_path / "app.log")).trace)
    for t in back:
        assert [e.partitions for e in t.events if e.kind == "stage_submitted"] == want
        assert tasks(t) == tasks(trace)
        p = Planner("lrc", predict=False)
        for e in t.events:
            feed_planner(p, t.dag, e, executor="0")
            if e.kind == "stage_submitted" and e.partitions:
                assert sorted(p.refs.pending[e.stage_id]) == list(e.partitions)
        assert not any(p.refs.count.values()) and p.refs.negative_decrements == 0
    from lrc.sim import simulate  # (the simulator hands the partitions on too)

    for refs in ("online", "profile"):
        assert simulate(trace, "crd", 0.5, refs=refs).reads == sum(
            len(e.reads) for e in trace.events if e.kind == "task")


def test_stage_timeline_reads_every_task_and_stage_of_a_log(tmp_path):
    """lrc.eventlog_files.stage_timeline (the results/ analysis scripts' reader): one entry per
    task the log ran, on its executor, and each completed stage."""
    from lrc.eventlog_files import stage_timeline

    trace = make("ml", seed=3, parts=6)
    name, sub, comp, stages = stage_timeline(write_eventlog(trace, tmp_path / "app.log"))
    assert name is not None
    assert Counter({s: len(ts) for s, ts in stages.items()}) == \
        Counter(e.stage_id for e in trace.events if e.kind == "task")
    assert set(comp) == set(sub) >= set(stages)
    assert Counter(x for ts in stages.values() for _, _, x in ts) == \
        Counter(e.executor or "0" for e in trace.events if e.kind == "task")
