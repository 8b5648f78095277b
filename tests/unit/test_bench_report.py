"""The benchmark runner package from a hand-made results.json: medians, per-repeat speedups, goals
evaluated from their table, the machine the results record, and a checksum mismatch that fails the
run and says so loudly; a Bench built whole from Settings and a Target. No Spark."""
from __future__ import annotations

import json
import os

import pytest

from workloads import overhead
from workloads.bench import cli, goals, machine, report, stats
from workloads.bench.__main__ import main
from workloads.bench.merge import merge
from workloads.bench.report import render
from workloads.bench.replay import bound_hit_ratio
from workloads.bench.runner import CALIB_FRACTION, Bench, memory_fraction, schedule
from workloads.bench.settings import Settings
from workloads.bench.target import Target


def _run(w, p, f, rep, jct, hit=0.5, checksum="ok"):
    status = "ok" if checksum == "ok" else "checksum mismatch"
    return {"workload": w, "policy": p, "cache_fraction": f, "repeat": rep, "jct_s": jct,
            "hit_ratio": hit, "effective_hit_ratio": hit / 2, "checksum": checksum,
            "reference_checksum": "ok", "status": status, "checksum_ok": status == "ok",
            "ok": True, "evictions": 3, "misses": 2, "plan_latency_ms": {"median": 5.0, "p99": 9.0},
            "evictions_per_rdd": {"7": 3}}


def _results(runs, sim=()):
    return {"command": "python -m workloads.bench --workloads pagerank,zip --repeat 3",
            "settings": {"workloads": ["pagerank", "zip"], "policies": ["lru", "lrc", "lerc"],
                         "cache_fractions": [0.5], "repeat": 3, "refs": "online"},
            "calibration": {"pagerank": {"checksum": "ok", "jct_unlimited_s": 8.0,
                                         "working_set_bytes": 10 << 20, "cached_blocks": 40,
                                         "usable_heap_bytes": 500 << 20,
                                         "memory_fraction": {"0.5": 0.005}}},
            "runs": list(runs), "sim": list(sim), "machine": {"cpus": 2}, "cluster": {}}


LRU = [20.0, 30.0, 10.0]
LRC = [10.0, 10.0, 10.0]   # per-repeat ratios 2.0, 3.0, 1.0 -> median 2.0
LERC = [25.0, 30.0, 8.0]   # ratios 0.8, 1.0, 1.25 -> median 1.0


@pytest.fixture
def res():
    runs = []
    for rep in range(3):
        runs += [_run("pagerank", "lru", 0.5, rep, LRU[rep], hit=0.4),
                 _run("pagerank", "lrc", 0.5, rep, LRC[rep], hit=0.7 + rep / 100),
                 _run("pagerank", "lerc", 0.5, rep, LERC[rep], hit=0.6)]
    sim = [{"workload": "pagerank", "cache_fraction": 0.5, "policy": "min", "hit_ratio": 0.75,
            "effective_hit_ratio": 0.7, "est_runtime": 10.0},
           {"workload": "pagerank", "cache_fraction": 0.5, "policy": "lru", "hit_ratio": 0.5,
            "effective_hit_ratio": 0.4, "est_runtime": 15.0}]
    return _results(runs, sim)


def test_medians_and_speedups(res):
    runs = res["runs"]
    assert stats.median_jct(runs, "pagerank", "lru", 0.5) == 20.0
    assert stats.median_jct(runs, "pagerank", "lrc", 0.5) == 10.0
    s = stats.speedup(runs, "pagerank", "lrc", 0.5)
    assert s == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}
    s = stats.speedup(runs, "pagerank", "lerc", 0.5)
    assert s["median"] == pytest.approx(1.0) and s["min"] == pytest.approx(0.8)
    assert s["max"] == pytest.approx(1.25)
    assert stats.median_of(runs, "hit_ratio", "pagerank", "lrc", 0.5) == pytest.approx(0.71)
    assert stats.speedup(runs, "zip", "lrc", 0.5) is None


def test_goals_from_medians(res):
    lrc = next(x for x in goals.evaluate(res) if x["goal"].startswith("LRC median"))
    assert lrc["met"] and "2.00x" in lrc["value"]
    never = next(x for x in goals.evaluate(res) if "never" in x["goal"])
    assert never["met"]  # worst median 1.0x
    hit = next(x for x in goals.evaluate(res) if "hit ratio" in x["goal"])
    assert not hit["met"] and "15.0 points" in hit["value"]  # lerc 0.60 vs min 0.75


def test_report_tables(res, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(res))
    render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert res["command"] in md
    assert "**2.00x** [1.00-3.00]" in md  # lrc speedup
    assert "**1.00x** [0.80-1.25]" in md  # lerc speedup
    assert "| pagerank | 0.5 | 20.00 | 10.00 | 25.00 | 8.00 |" in md  # median times + unlimited
    assert "1.50x" in md  # simulated lru/min runtime bound
    assert "75.0%" in md  # min hit ratio next to the measured ones
    assert "FAILED" not in md and "checksum equal to the plugin-off reference" in md
    assert (tmp_path / "time_vs_fraction.png").stat().st_size > 1000
    assert (tmp_path / "hit_ratio_vs_fraction.png").stat().st_size > 1000


def test_report_sums_the_foreseen_reads_over_the_repeats(res, tmp_path):
    """The part of the plans in force before their jobs started (`stats()["foreseen"]`), summed
    over a cell's repeats; a policy without predictions (or older results) shows "-"."""
    for r in res["runs"]:
        if r["policy"] == "lrc":
            r["foreseen"] = {"jobs": 14, "predicted_jobs": 12, "reads": 84 - r["repeat"],
                             "foreseen": 60}
    (tmp_path / "results.json").write_text(json.dumps(res))
    md = (tmp_path / "report.md").read_text() if render(tmp_path) else ""
    rows = {line.split(" | ")[2]: line for line in md.splitlines()
            if line.startswith("| pagerank | 0.5 |") and " / " in line}
    assert "| 180/249 (72%) |" in rows["lrc"]
    assert "| 5.0 / 9.0 | - |" in rows["lru"] and "| - |" in rows["lerc"]


def test_checksum_mismatch_fails_the_run_and_the_report_says_so(res, tmp_path):
    bad = _run("pagerank", "lrc", 0.5, 3, 1.0, checksum="deadbeef")
    res["runs"].append(bad)
    (tmp_path / "results.json").write_text(json.dumps(res))
    render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "**FAILED: 1 of 10 runs failed**" in md
    assert "`deadbeef`" in md and "checksum mismatch" in md
    # the failed run's 1 s job time is excluded from medians and speedups
    assert stats.median_jct(res["runs"], "pagerank", "lrc", 0.5) == 10.0


def test_run_record_marks_checksum_mismatch(monkeypatch, tmp_path):
    """Bench.run_one marks a run whose checksum differs from the plugin-off reference as failed."""
    args = cli.parser().parse_args(["--workloads", "zip", "--policies", "lru,lrc",
                                      "--cache-fraction", "0.5", "--repeat", "1",
                                      "--out", str(tmp_path)])
    b = Bench(cli.settings(args), Target("spark://x:1", 2, conf={}, env={}, info={}), [])
    cal = {"checksum": "ref", "working_set_bytes": 100, "memory_fraction": {"0.5": 0.01},
           "trace": str(tmp_path / "t.parquet")}
    outs = iter([{"ok": True, "checksum": "other", "jct_s": 1.0, "storage_bytes_per_executor": 25,
                  "stats": {"hit_ratio": 0.5}},
                 {"ok": True, "checksum": "ref", "jct_s": 1.0, "storage_bytes_per_executor": 25},
                 {"ok": False, "error": "boom"}])
    monkeypatch.setattr(b, "child", lambda spec: next(outs))
    r1 = b.run_one("zip", 0.5, 0, "lrc", cal)
    r2 = b.run_one("zip", 0.5, 0, "lru", cal)
    r3 = b.run_one("zip", 0.5, 0, "lru", cal)
    assert (r1["status"], r1["checksum_ok"]) == ("checksum mismatch", False)
    assert (r2["status"], r2["checksum_ok"]) == ("ok", True)
    assert r2["storage_cap_error"] == pytest.approx(0.0)  # 0.5 * 100 / 2 executors = 25
    assert r3["status"] == "error"


def test_memory_fraction_and_cli_parsing():
    assert memory_fraction(0.5, 400 << 20, 2, 500 << 20) == pytest.approx(0.2)
    assert memory_fraction(5.0, 400 << 20, 2, 500 << 20) == 1.0
    assert cli.parse_scales("pagerank=2,cc=1") == {"pagerank": 2, "cc": 1}
    assert cli.parse_kwargs(["pagerank.iterations=5,zip.rounds=3", "cc.verify=false"]) == {
        "pagerank": {"iterations": 5}, "zip": {"rounds": 3}, "cc": {"verify": False}}
    a = cli.parser().parse_args(["--render", "x"])
    assert a.render == "x"


def test_merge_replaces_the_rerun_workloads_and_keeps_both_commands(res, tmp_path):
    base, rerun = tmp_path / "base", tmp_path / "rerun"
    base.mkdir()
    rerun.mkdir()
    res["runs"].append(_run("zip", "lru", 0.5, 0, 99.0))
    (base / "results.json").write_text(json.dumps(res))
    new = _results([_run("pagerank", p, 0.5, 0, t) for p, t in (("lru", 30.0), ("lrc", 10.0))])
    new["command"] = "python -m workloads.bench --workloads pagerank --repeat 1"
    new["settings"].update(workloads=["pagerank"], working_set="peak bytes",
                           kwargs={"pagerank": {"prep": 9}})
    new["calibration"]["pagerank"]["jct_unlimited_s"] = 7.0
    (rerun / "results.json").write_text(json.dumps(new))
    merge(base, rerun)
    out = json.loads((base / "results.json").read_text())
    assert sorted((r["workload"], r["policy"]) for r in out["runs"]) == [
        ("pagerank", "lrc"), ("pagerank", "lru"), ("zip", "lru")]  # old pagerank runs gone
    assert out["calibration"]["pagerank"]["jct_unlimited_s"] == 7.0
    assert out["settings"]["kwargs"]["pagerank"] == {"prep": 9}
    assert "for pagerank: peak bytes" in out["settings"]["working_set"]
    md = (base / "report.md").read_text()
    assert res["command"] in md and new["command"] in md
    assert "**3.00x**" in md  # the re-run's speedup, not the old one
    merge(base, rerun)  # the same re-run again: its earlier merge line is superseded
    cmds = json.loads((base / "results.json").read_text())["command"].splitlines()
    assert cmds[0] == res["command"] and len(cmds) == 2 and cmds[1].startswith(new["command"])


def test_goals_are_evaluated_from_their_table(res):
    assert all(g["check"] in goals.CHECKS for g in goals.GOALS)
    strict = {**next(g for g in goals.GOALS if g["check"] == "best_speedup"), "at_least": 2.5}
    [row] = goals.evaluate(res, (strict,))
    assert row["goal"] == "LRC median speedup over LRU >= 2.5x on pagerank or cc (best fraction)"
    assert not row["met"] and row["gap"] == "0.50x short"  # lrc's median is 2.00x
    [row] = goals.evaluate(res, ({"check": "hit_gap_to_min", "at_most": 0.2},))
    assert row["met"] and "within 20 points" in row["goal"]  # the gap is 15 points
    for rep, (lru, lrc, lerc) in enumerate([(30.0, 20.0, 15.0)] * 3):
        res["runs"] += [_run("zip", "lru", 0.5, rep, lru), _run("zip", "lrc", 0.5, rep, lrc),
                        _run("zip", "lerc", 0.5, rep, lerc)]
    zip_goal = {"check": "beats_rival", "policy": "lerc", "workload": "zip", "rival": "lrc",
                "at_least": 1.3}
    [row] = goals.evaluate(res, (zip_goal,))
    assert row["met"] and row["value"] == "2.00x at F=0.5 (LRC 1.50x)"
    [row] = goals.evaluate(res, ({**zip_goal, "policy": "lrc", "rival": "lerc", "at_least": 2.5},))
    assert row["goal"] == "LRC >= 2.5x over LRU on zip and faster than LERC"
    assert not row["met"] and row["gap"] == "1.00x short; not faster than LERC"
    [row] = goals.evaluate(res, ({"check": "max_slowdown", "at_most": 0.1},))
    assert row["goal"] == "LRC/LERC never > 10% slower than LRU (median)" and row["met"]
    assert row["value"] == "worst 1.00x (pagerank lerc F=0.5): +0% time"
    assert goals.evaluate({"settings": {}}, goals.GOALS) == []  # nothing to judge, no rows


def test_bench_is_whole_after_construction(tmp_path):
    s = Settings(out=tmp_path, workloads=["zip"], policies=["lru", "lrc"], fractions=[0.5], repeat=1)
    t = Target("spark://x:1", 2, conf={"spark.k": "v"}, env={}, info={"master": "spark://x:1"})
    b = Bench(s, t, ["--workloads", "zip"])
    spec = b.spec("zip", "lrc", 0.25, "tag")
    assert (spec["master"], spec["executors"], spec["seed"]) == ("spark://x:1", 2, 42)
    assert spec["conf"] == {"spark.k": "v", "spark.memory.fraction": "0.25"}
    assert spec["trace_path"] == str(tmp_path / "traces" / "tag.parquet")
    r = b.results
    assert r["command"] == "python -m workloads.bench --workloads zip" and r["cluster"] == t.info
    assert r["settings"]["cache_fractions"] == [0.5] and r["settings"]["scales"] == {"zip": 1}
    assert r["machine"]["cpus"] == os.cpu_count() and r["machine"]["memory_bytes"] > 0
    admit = b.spec("zip", "crd", 0.25, "tag", extra={"spark.lrc.admit": "true"})
    assert admit["conf"] == {"spark.k": "v", "spark.lrc.admit": "true",
                             "spark.memory.fraction": "0.25"}
    Settings(out=tmp_path, workloads=["zip"], fractions=[0.5],
             policies=["lru", "crd+admit", "crd+noadmit", "crd+throttle", "plain"])
    for bad in ({"policies": ["fifo"]}, {"policies": ["crd+shim"]}, {"policies": ["fifo+admit"]},
                {"fractions": [0.0]}, {"repeat": 0},
                {"scales": {"cc": 2}}, {"refs": "later"}):
        with pytest.raises(SystemExit):
            Settings(**{"out": tmp_path, "workloads": ["zip"], "policies": ["lru"],
                        "fractions": [0.5], **bad})


def test_report_describes_the_machine_results_json_records(res, tmp_path):
    res["machine"] = {"cpus": 64, "memory_bytes": 32 << 30, "load_avg": [3.5, 2.0, 1.0],
                      "load_avg_end": [1.25, 1.0, 1.0]}
    (tmp_path / "results.json").write_text(json.dumps(res))
    assert main(["--render", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert ("Machine: 64 CPUs, 32.0 GiB memory, load average 3.50 at the start, 1.25 at the end "
            "(1 min):") in md
    assert machine.describe({"cpus": 2}) == "2 CPUs (memory and load not recorded)"


def test_overhead_report_reads_its_goal_and_machine(monkeypatch):
    runs = [{"repeat": i, "plugin": name, "jct_s": t, "checksum": "c",
             "stats": {"plan_latency_ms": {"median": 4.0, "p99": 8.0, "count": 2},
                       "brain_cpu_s": 0.3} if name == "lrc" else None}
            for i in range(2) for name, t in (("off", 10.0), ("lrc", 10.5), ("off-b", 10.0))]
    res = {**overhead.summarize(runs), "workload": "pagerank", "scale": 1, "workers": 2,
           "machine": {"cpus": 8, "memory_bytes": 16 << 30}}
    md = overhead.report(res, "python -m workloads.overhead")
    assert "**1.050 [1.050-1.050]** | missed (> 1.02) |" in md
    assert "Machine: 8 CPUs, 16.0 GiB memory;" in md
    monkeypatch.setitem(goals.OVERHEAD, "at_most", 0.06)
    assert "| met (< 1.06) |" in overhead.report(res, "python -m workloads.overhead")


def test_overhead_interval_is_a_bootstrap_over_repeats():
    iv = stats.paired_ratio_interval([1.00, 1.02, 1.04, 0.99, 1.05, 1.01])
    assert iv["low"] < iv["geomean"] < iv["high"] and iv["n"] == 6
    assert 0.99 <= iv["low"] and iv["high"] <= 1.05  # within the sample's range
    assert iv == stats.paired_ratio_interval([1.00, 1.02, 1.04, 0.99, 1.05, 1.01])  # seeded
    wide = stats.paired_ratio_interval([0.90, 1.10, 0.95, 1.08, 1.00, 1.02])
    assert wide["high"] - wide["low"] > iv["high"] - iv["low"]  # more spread, wider interval
    assert overhead._verdict(iv, 1.06) == "met (< 1.06)"
    assert overhead._verdict(iv, 1.02).startswith("not resolved")
    assert overhead._verdict(iv, 0.98) == "missed (> 0.98)"
    assert stats.paired_ratio_interval([1.0]) is None


def test_overhead_compares_each_variant_with_the_off_runs_of_its_repeat():
    times = {"off": (10.0, 20.0), "lru": (11.0, 21.0), "lru+sidecar": (10.0, 22.0), "off-b": (10.0, 20.0)}
    runs = [{"repeat": i, "plugin": name, "jct_s": t[i], "checksum": "c", "stats": None}
            for i in range(2) for name, t in times.items()]
    res = overhead.summarize(runs)
    assert list(res["variants"]) == ["lru", "lru+sidecar"]
    assert res["variants"]["lru"]["pair_ratios"] == [1.1, 1.05]
    assert res["variants"]["lru+sidecar"]["pair_ratios"] == [1.0, 1.1]
    assert overhead.variant_conf("lru+sidecar") == ("lru", {"spark.lrc.sidecar": "true"})
    assert overhead.variant_conf("lrc") == ("lrc", {})
    assert overhead.variant_conf("lru+shim") == ("lru", {"spark.lrc.brain": "false"})
    with pytest.raises(SystemExit, match="unknown variant"):
        overhead.variant_conf("lru+gpu")
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        overhead.main(["--conf", "spark.memory.fraction"])
    with pytest.raises(SystemExit, match="W.arg=value"):
        overhead.main(["--workload", "cc", "--kw", "cc.prep"])
    with pytest.raises(SystemExit, match="names zip, not the --workload 'cc'"):
        overhead.main(["--workload", "cc", "--kw", "zip.rounds=4"])
    md = overhead.report({**res, "workload": "mllib", "scale": 8, "workers": 2,
                          "conf": {"spark.memory.fraction": "0.02"}}, "cmd")
    assert "(lru, lru+sidecar; `spark.memory.fraction=0.02`)" in md
    assert "| lru+sidecar | 16.00 s | **1.049 [1.000-1.100]** | not resolved (spans 1.02) | 1.050 |" in md


def test_overhead_reports_cpu_seconds_per_process():
    cpu = {"off": (1.0, 10.0, 40.0), "lru": (3.0, 12.0, 41.0), "off-b": (1.2, 10.0, 40.0)}
    runs = [{"repeat": i, "plugin": name, "jct_s": 10.0, "checksum": "c", "stats": None,
             "process_cpu": {"python_s": py + i, "driver_jvm_s": jvm, "driver_gc_s": 0.5,
                             "driver_jit_s": 2.0, "executors_s": ex, "executor_jvms": 2}}
            for i in range(3) for name, (py, jvm, ex) in cpu.items()]
    res = {**overhead.summarize(runs), "workload": "mllib", "scale": 8, "workers": 2}
    assert res["process_cpu"]["lru"] == {"python_s": 4.0, "driver_jvm_s": 12.0, "driver_gc_s": 0.5,
                                         "driver_jit_s": 2.0, "executors_s": 41.0, "total_s": 57.0}
    md = overhead.report(res, "cmd")
    assert "| lru | 4.0 | 12.0 | 0.5 | 2.0 | 41.0 | 57.0 |" in md
    assert "| off | 2.0 | 10.0 | 0.5 | 2.0 | 40.0 | 52.0 |" in md
    # runs without the measure (older results) report no table
    for r in runs:
        r["process_cpu"] = None
    assert "CPU seconds per run" not in overhead.report(
        {**overhead.summarize(runs), "workload": "mllib", "scale": 8, "workers": 2}, "cmd")


def test_process_cpu_reads_the_process_tree_from_proc():
    import os
    import subprocess
    import sys

    from workloads.bench import proc_cpu

    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n" \
           "print('x', flush=True)\ninput()"
    child = subprocess.Popen([sys.executable, "-c", busy], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "x\n"  # it has used its 0.3 s and is still alive
        procs = proc_cpu._processes()
        assert procs[child.pid][0] == os.getpid()
        mine = proc_cpu._tree_cpu([os.getpid()], procs)
        assert proc_cpu._tree_cpu([os.getpid()], procs, {child.pid}) <= mine - 0.25
        assert 0.25 <= proc_cpu._tree_cpu([child.pid], procs) < 5
    finally:
        child.communicate("")
    assert proc_cpu.executor_pids("app-that-does-not-run") == []


# ---------------------------------------------------------------- unlimited memory, bound
def _unl(w, rep, jct, checksum="ok"):
    r = _run(w, "unlimited", None, rep, jct, checksum=checksum)
    for k in ("hit_ratio", "effective_hit_ratio", "evictions", "misses", "plan_latency_ms"):
        r.pop(k)
    return r


def test_schedule_interleaves_the_unlimited_cell():
    order = schedule(["lru", "lrc", "lerc"], [0.3, 0.5, 0.7], 3)
    assert len(order) == 3 * 3 * 3 + 3
    unl = [(i, x) for i, x in enumerate(order) if x[2] == "unlimited"]
    assert [x for _, x in unl] == [(None, 0, "unlimited"), (None, 1, "unlimited"),
                                   (None, 2, "unlimited")]
    # one per fraction block, at a different place in each, spread over the whole workload
    assert [i for i, _ in unl] == [0, 10 + 1, 20 + 2]
    assert [x[2] for x in order if x[:2] == (0.3, 1)] == ["lrc", "lerc", "lru"]  # rotation kept
    one = schedule(["lru", "lrc"], [0.5], 2)
    assert one == [(None, 0, "unlimited"), (0.5, 0, "lru"), (0.5, 0, "lrc"),
                   (0.5, 1, "lrc"), (None, 1, "unlimited"), (0.5, 1, "lru")]
    assert all(p != "unlimited" for _, _, p in schedule(["lru"], [0.5], 3, unlimited=False))


def test_ratio_interval_and_the_noise_rule():
    iv = stats.ratio_interval([20.0, 30.0, 10.0], [8.0, 9.0, 7.0])
    assert iv["median"] == pytest.approx(2.5) and iv["low"] == pytest.approx(10 / 9)
    assert iv["high"] == pytest.approx(30 / 7) and iv["n"] == (3, 3)
    assert stats.claim_holds(iv)
    assert not stats.claim_holds(stats.ratio_interval([10.3, 10.4], [10.0, 10.1]))  # < 5%
    assert not stats.claim_holds(stats.ratio_interval([12.0, 20.0], [11.0, 13.0]))  # overlap
    assert stats.ratio_interval([], [1.0]) is None and not stats.claim_holds(None)


def test_share_closed_and_hit_distance_to_the_bound(res, tmp_path):
    res["runs"] += [_unl("pagerank", rep, t) for rep, t in enumerate([8.0, 9.0, 7.0])]
    res["runs"].append(_unl("pagerank", 3, 1.0, checksum="bad"))  # failed: excluded, reported
    res["calibration"]["pagerank"]["jct_unlimited_s"] = 50.0  # superseded by the cell
    for row in res["sim"]:
        row["bound_hit_ratio"] = 0.9
    runs, cal = res["runs"], res["calibration"]["pagerank"]
    assert stats.unlimited_times(runs, cal, "pagerank") == ([8.0, 9.0, 7.0], "runs")
    c = stats.closed_share(runs, cal, "pagerank", "lrc", 0.5)
    assert c["resolved"] and c["share"] == pytest.approx((20 - 10) / (20 - 8))
    assert stats.closed_share(runs, cal, "pagerank", "lerc", 0.5)["share"] == pytest.approx(-5 / 12)
    assert stats.hit_distance_to_bound(runs, res["sim"], "pagerank", "lrc", 0.5) == pytest.approx(0.19)
    (tmp_path / "results.json").write_text(json.dumps(res))
    render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "| pagerank | 0.5 | 20.00 | 10.00 | 25.00 | 8.00 |" in md  # the cell's median, not 50
    assert "pagerank: median of 3 interleaved runs [7.00-9.00]" in md
    assert ("| pagerank | 0.5 | 2.50x [1.11-4.29] | +0.83 | -0.42 | 90.0% | +50.0% | +19.0% | "
            "+30.0% |") in md
    assert "No simulator row carries" not in md
    assert "**FAILED: 1 of 13 runs failed**" in md and "| pagerank | unlimited | 3 | unlimited |" in md
    assert "(T_lru - T_policy) / (T_lru - T_unlimited)" in md  # the method, in the header


def test_share_is_not_claimed_within_the_noise(res, tmp_path):
    res["runs"] += [_unl("pagerank", rep, t) for rep, t in enumerate([19.0, 21.0, 20.0])]
    assert stats.closed_share(res["runs"], None, "pagerank", "lrc", 0.5)["share"] is None
    (tmp_path / "results.json").write_text(json.dumps(res))
    render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "| pagerank | 0.5 | 1.00x [0.48-1.58] (noise) | - | - | - |" in md


def test_old_results_use_the_calibration_run_and_say_so(res, tmp_path):
    """A results.json from before the repeated cell: the calibration's one run, labelled."""
    (tmp_path / "results.json").write_text(json.dumps(res))
    assert main(["--render", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert stats.unlimited_times(res["runs"], res["calibration"]["pagerank"], "pagerank") == (
        [8.0], "calibration")
    assert "pagerank: the calibration's single plugin-off run (no repeated" in md
    assert "| pagerank | 0.5 | 2.50x [1.25-3.75] (1 unlimited run) | +0.83 | -0.42 | - |" in md
    assert "No simulator row carries `bound_hit_ratio`" in md
    assert "Spark task metrics" not in md  # none recorded then


def test_unlimited_run_record_and_spark_metrics(monkeypatch, tmp_path):
    s = Settings(out=tmp_path, workloads=["zip"], policies=["lru"], fractions=[0.5], repeat=1)
    b = Bench(s, Target("spark://x:1", 2, conf={}, env={}, info={}), [])
    assert b.results["settings"]["unlimited_repeats"] == 1
    assert not cli.settings(cli.parser().parse_args(["--no-unlimited"])).unlimited
    metrics = {"totals": {"executor_run_time_ms": 4000, "jvm_gc_time_ms": 500,
                          "memory_bytes_spilled": 2 << 20, "disk_bytes_spilled": 1 << 20,
                          "shuffle_write_bytes": 3 << 20, "tasks": 12, "executor_cpu_time_ms": 3000.0},
               "executors": {"0": {"gc_time_ms": 250, "duration_ms": 2000, "tasks": 6}},
               "stages": [{"stage": 0, "attempt": 0, "executor_run_time_ms": 4000}]}
    specs = []

    def child(spec):
        specs.append(spec)
        return {"ok": True, "checksum": "ref", "jct_s": 2.0, "storage_bytes_per_executor": 9,
                "spark_metrics": metrics}
    monkeypatch.setattr(b, "child", child)
    cal = {"checksum": "ref", "working_set_bytes": 100, "memory_fraction": {"0.5": 0.01},
           "trace": str(tmp_path / "t.parquet")}
    r = b.run_unlimited("zip", 1, cal)
    assert specs[0]["policy"] is None and "trace_path" not in specs[0]  # plugin off
    assert specs[0]["conf"]["spark.memory.fraction"] == f"{CALIB_FRACTION:.6g}"
    assert (r["policy"], r["cache_fraction"], r["repeat"], r["status"]) == ("unlimited", None, 1, "ok")
    assert r["spark_metrics"]["jvm_gc_time_ms"] == 500 and r["spark_metrics"]["executors"]["0"]
    assert json.loads(open(r["stages_file"]).read()) == metrics["stages"]
    p = b.run_one("zip", 0.5, 0, "lru", cal)
    assert p["spark_metrics"]["tasks"] == 12 and p["stages_file"].endswith("zip-f0.5-lru-r0.stages.json")
    res = _results([{**p, "jct_s": 3.0}, r])
    res["settings"].update(workloads=["zip"], policies=["lru"])
    (tmp_path / "results.json").write_text(json.dumps(res, default=str))
    render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "## Spark task metrics" in md
    assert "| zip | unlimited | unlimited | 2.00 | 4.00 | 3.00 | 0.50 | 2.0 / 1.0 | 3.0 | 12 |" in md
    assert "| zip | 0.5 | lru | 3.00 | 4.00 |" in md


def test_bound_hook(monkeypatch):
    import sys
    import types

    class Result:
        hit_ratio = 0.8
    fake = types.ModuleType("lrc.bound")
    fake.hit_bound = lambda ct, f, executors: Result()
    monkeypatch.setitem(sys.modules, "lrc.bound", fake)
    assert bound_hit_ratio(None, 0.5, 2) == 0.8
    fake.hit_bound = lambda ct, f, executors: 0.25
    assert bound_hit_ratio(None, 0.5, 2) == 0.25
    monkeypatch.setitem(sys.modules, "lrc.bound", None)  # absent: no field, no error
    assert bound_hit_ratio(None, 0.5, 2) is None


def test_live_against_the_replay_of_the_same_run(res, tmp_path):
    """Per run: live hit ratio minus the replay of its own trace, in points."""
    lrc = stats.select(res["runs"], "pagerank", "lrc", 0.5)
    for r, replay in zip(lrc, (0.75, 0.71, 0.90)):  # live 0.70, 0.71, 0.72
        r["replay_hit_ratio"] = replay
    d = stats.fidelity(res["runs"], "pagerank", "lrc", 0.5)
    assert d["n"] == 3 and d["lo"] == pytest.approx(-18.0) and d["hi"] == pytest.approx(0.0)
    assert d["diff"] == pytest.approx(-5.0) and d["replay"] == pytest.approx(0.75)
    assert stats.fidelity(res["runs"], "pagerank", "lru", 0.5) is None  # nothing replayed
    (tmp_path / "results.json").write_text(json.dumps(res))
    render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "| pagerank | 0.5 | lrc | 71.0% | 75.0% | -5.0 [-18.0, +0.0] | 3 |" in md


def test_merge_of_other_cache_fractions_keeps_the_runs_at_the_fractions_it_does_not_rerun(res, tmp_path):
    base, extra = tmp_path / "base", tmp_path / "extra"
    base.mkdir()
    extra.mkdir()
    res["command"] = "python -m workloads.bench --workloads pagerank --cache-fraction 0.5 --repeat 3"
    res["settings"]["workloads"] = ["pagerank"]
    (base / "results.json").write_text(json.dumps(res))
    new = _results([_run("pagerank", p, f, 0, t) for f in (0.3, 0.7) for p, t in (("lru", 30.0), ("lrc", 10.0))])
    new["command"] = "python -m workloads.bench --workloads pagerank --policies lru,lrc --cache-fraction 0.3,0.7"
    new["settings"].update(workloads=["pagerank"], policies=["lru", "lrc"], cache_fractions=[0.3, 0.7])
    new["calibration"]["pagerank"]["memory_fraction"] = {"0.3": 0.003, "0.7": 0.007}
    (extra / "results.json").write_text(json.dumps(new))
    merge(base, extra)
    out = json.loads((base / "results.json").read_text())
    assert sorted({(r["cache_fraction"], r["policy"]) for r in out["runs"]}) == [
        (0.3, "lrc"), (0.3, "lru"), (0.5, "lerc"), (0.5, "lrc"), (0.5, "lru"), (0.7, "lrc"), (0.7, "lru")]
    assert out["settings"]["cache_fractions"] == [0.3, 0.5, 0.7]
    assert out["settings"]["policies"] == ["lru", "lrc", "lerc"]
    assert out["calibration"]["pagerank"]["memory_fraction"] == {"0.5": 0.005, "0.3": 0.003, "0.7": 0.007}
    assert out["command"].splitlines()[0] == res["command"]  # still contributes the 0.5 runs
    assert len([r for r in out["sim"] if r["cache_fraction"] == 0.5]) == 2


def test_a_failed_run_shows_its_innermost_cause_and_starved_execution_memory(res, tmp_path):
    """Recorded from a real run (mllib at F=0.5 on a 6 MB working set): the error's first line
    names only the py4j call; the report shows Spark's task failure and says why it happened."""
    err = ("Py4JJavaError: An error occurred while calling o725.fit.\n"
           ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage "
           "16.0 failed 4 times, most recent failure: Lost task 0.3 in stage 16.0 (TID 65) "
           "(127.0.0.1 executor 1): org.apache.spark.memory.SparkOutOfMemoryError: "
           "[UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire 262144 bytes of memory, got 10711. "
           "SQLSTATE: 53200\n\tat org.apache.spark.errors.SparkCoreErrors$.outOfMemoryError("
           "SparkCoreErrors.scala:428)\n")
    assert report.error_summary(err) == ("SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY] Unable "
                                         "to acquire 262144 bytes of memory, got 10711. SQLSTATE: "
                                         "53200")
    assert report.error_summary("TimeoutError: run exceeded 900 s") == \
        "TimeoutError: run exceeded 900 s"
    assert report.error_summary("killed") == "killed" and report.error_summary(None) == ""
    bad = _run("pagerank", "lrc", 0.5, 3, 1.0)
    bad.update(ok=False, status="error", error=err, checksum=None)
    res["runs"].append(bad)
    (tmp_path / "results.json").write_text(json.dumps(res))
    render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY]" in md
    assert "Execution memory ran out in pagerank" in md


def test_report_rows_only_at_the_fractions_a_workload_ran(res):
    """Merged parts at other fractions (zip at 0.3 only): no empty pagerank row at 0.3, no zip row
    at 0.5, in every per-cell table."""
    res["runs"] += [_run("zip", p, 0.3, 0, t) for p, t in (("lru", 30.0), ("lrc", 10.0))]
    res["settings"]["cache_fractions"] = [0.3, 0.5]
    assert stats.fractions_run(res["runs"], "pagerank", [0.3, 0.5]) == [0.5]
    md = report.report_markdown(res)
    assert "| pagerank | 0.5 |" in md and "| zip | 0.3 |" in md
    assert "| pagerank | 0.3 |" not in md and "| zip | 0.5 |" not in md


def test_resim_replays_the_recorded_traces_again(res, tmp_path):
    """--resim DIR W: the simulator rows and each run's replay_* fields of W come from replaying
    the recorded traces now (stale numbers replaced), with the runs' storage fraction and unroll
    threshold, other workloads stay; a trace that is gone is an error naming it."""
    from lrc.synth import make
    from lrc.trace import save_trace
    from workloads.bench.replay import calibration_rows, own_run, resim, working_set_bytes

    trace = str(tmp_path / "pagerank.parquet")
    save_trace(make("pagerank", parts=4, iters=2), trace)
    room = working_set_bytes(trace)[0] // 3  # per executor: 2/3 of the working set in all
    res["calibration"]["pagerank"]["trace"] = trace
    res["cluster"] = {"executors": 2, "cores": 1, "conf": {"spark.memory.storageFraction": "0.1",
                                                           "spark.storage.unrollMemoryThreshold": "1048576"}}
    for r in res["runs"]:
        r.update(trace=trace, storage_bytes_per_executor=room, replay_hit_ratio=0.0)
    res["sim"] += [{"workload": "zip", "cache_fraction": 0.5, "policy": "lru", "hit_ratio": 0.1}]
    for r in res["sim"]:
        r["hit_ratio"] = 0.0 if r["workload"] == "pagerank" else r["hit_ratio"]
    (tmp_path / "results.json").write_text(json.dumps(res))
    resim(tmp_path, "pagerank")
    got = json.loads((tmp_path / "results.json").read_text())
    assert [r for r in got["sim"] if r["workload"] == "pagerank"] == calibration_rows(
        "pagerank", trace, [0.5], ["lru"], "online", 2, 1, 1 << 20)
    assert [r for r in got["sim"] if r["workload"] == "zip"] == [res["sim"][-1]]
    for r in got["runs"]:
        want = own_run(trace, r["policy"], room, 2, 1, "online", 0.1, 1 << 20)
        assert r["replay_hit_ratio"] == want["replay_hit_ratio"] > 0, r
    assert got["command"].endswith(f"--resim {tmp_path} pagerank   # replays again")
    os.remove(trace)
    with pytest.raises(SystemExit, match="pagerank.parquet"):
        resim(tmp_path, "pagerank")


def test_replays_follow_the_runs_admission_setting(tmp_path):
    """A run with spark.lrc.admit=true is replayed with the simulator's admission (and only
    then): the live-vs-replay comparison must compare the same rule. A `crd+admit` cell is crd
    with admission in the simulator's rows too, beside crd without it."""
    from lrc.sim import simulate
    from lrc.synth import make
    from lrc.trace import save_trace
    from workloads.bench.replay import admit_of, calibration_rows, working_set_bytes

    trace = str(tmp_path / "ml.parquet")
    save_trace(make("ml", parts=4, iters=3), trace)
    rows = {r["policy"]: r for r in calibration_rows("ml", trace, [0.5], ["crd", "crd+admit"],
                                                     "online", 2, 1,
                                                     conf={"spark.lrc.admit": "false"})}
    ct = working_set_bytes(trace)[2]
    for pol, admit in (("crd", False), ("crd+admit", True)):
        want = simulate(ct, "crd", 0.5, executors=2, cores=1, refs="online", admit=admit)
        assert rows[pol]["evictions"] == want.evictions, pol
        assert rows[pol]["hit_ratio"] == want.hit_ratio, pol
    assert rows["crd"]["hit_ratio"] != rows["crd+admit"]["hit_ratio"]  # the rule is in effect

    assert admit_of({"spark.lrc.admit": "true"}, "lrc") and admit_of({"spark.lrc.admit": " TRUE "}, "mrd")
    assert not admit_of({"spark.lrc.admit": "false"}, "lrc") and not admit_of({}, "lrc")
    assert not admit_of({"spark.lrc.admit": "true"}, "lru")  # every block ranks the same
    # auto, the default: crd admits, the papers' policies do not; results recorded before the
    # default was auto replay with their own ("false")
    assert admit_of(None, "crd") and admit_of({"spark.lrc.admit": "auto"}, "crd")
    assert not admit_of(None, "crd", "false") and not admit_of({"spark.lrc.admit": "false"}, "crd")
    assert admit_of({"spark.lrc.admit": "false"}, "lerc+admit")
    assert not admit_of(None, "crd+noadmit")  # the variant that measures what admission costs


def test_overhead_reports_the_plugins_own_cpu_by_part_and_its_share():
    own = {"listener": 0.2, "executor_events": 0.1, "table_requests": 0.05, "brain_calls": 0.6,
           "table_hold": 0.01, "task_hooks": 0.3, "table_watch": 0.04, "brain": 1.0}
    runs = [{"repeat": i, "plugin": name, "jct_s": 10.0, "checksum": "c",
             "stats": ({"plan_latency_ms": {"median": 4.0, "p99": 8.0, "count": 2},
                        "plugin_cpu_s": {**own, "brain": 1.0 + i, "total": 2.3 + i}}
                       if name == "lru" else None),
             "process_cpu": {"python_s": 2.0, "driver_jvm_s": 20.0, "executors_s": 78.0 + i}}
            for i in range(3) for name in ("off", "lru", "off-b")]
    v = overhead.summarize(runs)["variants"]["lru"]["plugin_cpu"]
    assert v["brain"] == 2.0 and v["total"] == 3.3 and v["listener"] == 0.2
    assert v["share"] == pytest.approx(3.3 / 101.0)  # the median run's share
    md = overhead.report({**overhead.summarize(runs), "workload": "mllib", "scale": 2,
                          "workers": 2}, "cmd")
    assert ("| lru | 0.20 | 0.10 | 0.05 | 0.60 | 0.01 | 0.30 | 0.04 | 2.00 | 3.30 | 3.3% |"
            in md)
