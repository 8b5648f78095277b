"""The standalone mini-cluster: master + 2 workers start, a SparkSession runs a workload on them
with the same checksum as local mode, and no daemon survives the `with` (also on exceptions)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import workloads
from conftest import BASE_CONF
from workloads.cluster import MiniCluster

pytestmark = pytest.mark.cluster


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purposes
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _session(master: str, conf: dict):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master(master).appName("test-minicluster")
    for k, v in {**BASE_CONF, **conf}.items():
        b = b.config(k, v)
    return b.getOrCreate()


def test_workload_on_minicluster_matches_local_and_leaves_nothing(tmp_path):
    kw = {"rounds": 2}
    with MiniCluster(workers=2, worker_memory="1g", worker_cores=1, base_dir=tmp_path) as mc:
        pids = mc.pids
        assert len(pids) == 3 and all(_alive(p) for p in pids)
        assert mc.master_url.startswith("spark://127.0.0.1:")
        alive = [w for w in mc.status()["workers"] if w["state"] == "ALIVE"]
        assert len(alive) == 2 and all(w["memory"] == 1024 for w in alive)
        spark = _session(mc.master_url, mc.spark_conf())
        try:
            executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
            deadline = time.monotonic() + 60
            while executors < 2 and time.monotonic() < deadline:
                time.sleep(0.5)
                executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
            assert executors == 2, "expected one executor per worker"
            remote = workloads.get("zip").run(spark, **kw)
        finally:
            spark.stop()
    assert not any(_alive(p) for p in pids), "daemons left after exit"

    local = _session("local[2]", {})
    try:
        assert workloads.get("zip").run(local, **kw)["checksum"] == remote["checksum"]
    finally:
        local.stop()


def test_exception_inside_with_still_tears_down(tmp_path):
    pids = []
    with pytest.raises(RuntimeError, match="boom"):
        with MiniCluster(workers=2, worker_memory="512m", base_dir=tmp_path) as mc:
            pids = mc.pids
            raise RuntimeError("boom")
    assert len(pids) == 3
    assert not any(_alive(p) for p in pids)


def test_cli_up_stops_everything_on_sigterm(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "workloads.cluster", "up", "--workers", "2",
                             "--worker-memory", "512m"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("master: spark://"):
                break
        assert any(l.startswith("master: spark://") for l in lines), "".join(lines)
        logs = lines[-1].split("logs: ")[1].strip()
        pids = _daemon_pids(logs)
        assert len(pids) == 3
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not any(_alive(p) for p in pids), "daemons left after SIGTERM"


def _daemon_pids(base_dir: str) -> list[int]:
    """Spark daemons (found in /proc, not from the launcher's own bookkeeping) run in base_dir."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().decode(errors="replace")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if "org.apache.spark.deploy." in cmd and cwd == base_dir:
            found.append(int(entry))
    return found
