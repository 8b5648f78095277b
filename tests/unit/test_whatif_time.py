"""The what-if's estimated job time (issue 12): the replay's task time plus what the logged run
spent outside its tasks, which no cache policy changes."""
from __future__ import annotations

import json

import pytest

from lrc.eventlog import read_eventlog
from lrc.eventlog_write import write_eventlog
from lrc.sim import CompiledTrace, simulate
from lrc.synth import make
from lrc.whatif import CacheSize, run_whatif
from lrc.whatif_report import write_report


def _delay_last_job_end(path, seconds: float) -> None:
    lines = path.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if '"SparkListenerJobEnd"' in line)
    ev = json.loads(lines[last])
    ev["Completion Time"] += int(seconds * 1000)
    lines[last] = json.dumps(ev)
    path.write_text("\n".join(lines) + "\n")


def test_time_outside_tasks_is_added_to_every_estimate(tmp_path):
    """One executor: the synthetic log's jobs span exactly its tasks, so nothing lies outside
    them; a last job that ends 5 s after its tasks (the driver collecting a result) adds those
    5 s to every estimate and to unlimited memory's, and the report says so."""
    log = write_eventlog(make("pagerank", seed=3, parts=4), tmp_path / "app.log")
    sizes = [CacheSize(fraction=f) for f in (0.3, 0.7)]
    base = run_whatif(log, sizes, ["lru", "crd"], executors=1, progress=False, jobs=1)
    assert base.outside_s == pytest.approx(0.0, abs=0.01)
    _delay_last_job_end(log, 5.0)
    late = run_whatif(log, sizes, ["lru", "crd"], executors=1, progress=False, jobs=1)
    assert late.log.jobs_span_s == pytest.approx(base.log.jobs_span_s + 5.0)
    assert late.outside_s == pytest.approx(base.outside_s + 5.0)
    assert late.unlimited_time == pytest.approx(base.unlimited_time + 5.0)
    ct = CompiledTrace(late.log.trace)
    for b, r in zip(base.rows, late.rows):
        assert r["est_runtime"] == pytest.approx(b["est_runtime"] + 5.0)
        sim = simulate(ct, r["policy"], r["cache_fraction"], executors=1, cores=late.cores,
                       admit=r["admit"], task_order=late.task_order)
        assert r["est_runtime"] == pytest.approx(sim.est_runtime + late.outside_s)
    report = " ".join(write_report(late, tmp_path / "out", "cmd").read_text().split())
    assert f"plus {late.outside_s:.2f} s outside tasks" in report
    assert "estimates under pressure lean high" in report  # what a rebuild is priced at


def test_a_log_without_job_times_adds_nothing(tmp_path):
    log = write_eventlog(make("zip", seed=1, parts=3), tmp_path / "app.log")
    text = "\n".join(json.dumps({k: v for k, v in json.loads(line).items()
                                 if k not in ("Submission Time", "Completion Time")})
                     for line in log.read_text().splitlines())
    log.write_text(text + "\n")
    assert read_eventlog(log).jobs_span_s is None
    res = run_whatif(log, [CacheSize(fraction=0.5)], ["lru"], executors=2, progress=False, jobs=1)
    assert res.outside_s == 0.0
    report = " ".join(write_report(res, tmp_path / "out", "cmd").read_text().split())
    assert "nothing for the time outside tasks (the log has no job times)" in report
