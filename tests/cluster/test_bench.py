"""The benchmark runner (`python -m workloads.bench`) end to end on the standalone mini-cluster: a
tiny run (one workload; the calibration's plugin-off and lru runs, then lrc at one cache fraction,
one repeat) writes results.json with the schema, equal checksums and the machine measured while
it ran, report.md and both plots, and re-renders to the same report. (The unlimited-memory runs,
`--no-unlimited` here, are covered by tests/unit/test_bench_report.py.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workloads.bench import machine

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
RUN_KEYS = {"workload", "policy", "cache_fraction", "repeat", "jct_s", "hit_ratio",
            "effective_hit_ratio", "checksum", "evictions", "recomputed_partitions",
            "plan_latency_ms", "storage_bytes_per_executor", "trace", "status"}


def test_tiny_benchmark_on_the_minicluster(tmp_path):
    out = tmp_path / "bench"
    cmd = [sys.executable, "-m", "workloads.bench", "--workloads", "zip", "--policies", "lrc",
           "--cache-fraction", "0.5", "--repeat", "1", "--kw", "zip.rounds=2,zip.partitions=4",
           "--out", str(out), "--workers", "2", "--worker-memory", "1g",
           "--no-unlimited"]  # 30 s less: the report takes the calibration's plugin-off run
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]

    res = json.loads((out / "results.json").read_text())
    assert {"runs", "calibration", "sim", "command"} <= set(res)
    assert res["command"].startswith("python -m workloads.bench --workloads zip")
    runs = res["runs"]
    assert [r["policy"] for r in runs] == ["lrc"]  # no unlimited-memory runs
    for r in res["runs"]:  # Spark's own task metrics, totals here, per stage in a side file
        m = r["spark_metrics"]
        assert m["tasks"] > 0 and m["executor_run_time_ms"] > 0 and m["jvm_gc_time_ms"] >= 0, r
        assert len(m["executors"]) == 2 and Path(r["stages_file"]).exists()
    for r in runs:
        assert RUN_KEYS <= set(r), RUN_KEYS - set(r)
        assert r["status"] == "ok" and r["checksum"] == res["calibration"]["zip"]["checksum"]
        assert r["jct_s"] > 0 and 0 <= r["hit_ratio"] <= 1
        # the storage cap Spark applied is the one asked for (F x working set / executors)
        assert abs(r["storage_cap_error"]) < 0.05, r
        assert Path(r["trace"]).exists()
    cal = res["calibration"]["zip"]
    assert cal["working_set_bytes"] > 0 and cal["jct_unlimited_s"] > 0
    assert {s["policy"] for s in res["sim"]} == {"min", "lrc"}
    assert all("error" not in s for s in res["sim"])

    host = res["machine"]  # measured on this machine while the benchmark ran
    assert host["cpus"] == os.cpu_count() and host["memory_bytes"] > 0
    assert len(host["load_avg"]) == len(host["load_avg_end"]) == 3
    assert res["cluster"]["cores"] == 1 and res["cluster"]["executors"] == 2

    md = (out / "report.md").read_text()
    assert res["command"] in md and "FAILED" not in md
    assert "zip: the calibration's single plugin-off run (no repeated" in md and "## Spark task metrics" in md
    assert f"Machine: {machine.describe(host)}:" in md
    for png in ("time_vs_fraction.png", "hit_ratio_vs_fraction.png"):
        assert (out / png).stat().st_size > 1000
    assert (out / "traces" / ".gitignore").exists()  # traces never reach git

    # re-rendering from results.json alone gives the same report
    (out / "report.md").unlink()
    r = subprocess.run([sys.executable, "-m", "workloads.bench", "--render", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (out / "report.md").read_text() == md
