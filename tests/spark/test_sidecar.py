"""A brain for every driver: a Java application and a spark-sql session (no Python in the
driver) run through spark-lrc-submit on separate executor JVMs get the brain as a sidecar
process of the driver JVM; their evictions follow the policy (the doctor's dead-vs-hot scenario),
their results equal plain Spark's, the stats file is written, and the sidecar never outlives the
driver. Which blocks were evicted is read from Spark's own event log (block updates)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from jvm_shim.build import app_jar
from jvm_shim.testing import PRESSURE_CONF
from lrc.eventlog_files import eventlog_files, lines
from spark_plugin.report import load_stats

pytestmark = pytest.mark.spark
SUBMIT = str(Path(sys.executable).with_name("spark-lrc-submit"))
MASTER = "local-cluster[2,1,1024]"
CONF = {**PRESSURE_CONF, "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
        "spark.locality.wait": "3s", "spark.eventLog.enabled": "true",
        "spark.eventLog.logBlockUpdates.enabled": "true",
        # One job per query (adaptive execution would run the shuffle stage as a job of its own,
        # before the job that reads `hot` is known) and few shuffle tasks.
        "spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "2"}
SQL = """
CACHE TABLE hot OPTIONS ('storageLevel' 'MEMORY_ONLY') AS
  SELECT id, rand(1) a, rand(2) b, rand(3) c FROM range(0, 102400, 1, 8);
CACHE TABLE dead OPTIONS ('storageLevel' 'MEMORY_ONLY') AS
  SELECT id, rand(4) a, rand(5) b, rand(6) c FROM range(0, 102400, 1, 8);
CACHE LAZY TABLE fresh OPTIONS ('storageLevel' 'MEMORY_ONLY') AS
  SELECT id, rand(7) a, rand(8) b, rand(9) c, rand(10) d FROM range(0, 102400, 1, 4);
SELECT k, sum(s) FROM (
  SELECT id % 3 AS k, sum(CAST(a * 1e6 AS BIGINT)) AS s FROM fresh GROUP BY id % 3
  UNION ALL SELECT id % 5 AS k, CAST(a * 1e6 AS BIGINT) AS s FROM hot) GROUP BY k;
"""


def java_app() -> Path:
    return app_jar(ROOT / "tests" / "spark" / "java", "dead-vs-hot")


def command(args: list[str], tmp: Path, name: str, policy: str | None,
            master: str = MASTER) -> tuple[list[str], Path]:
    """spark-lrc-submit (`policy`) or plain spark-submit (None); -> (command, event log dir)."""
    events = tmp / f"events-{name}"
    events.mkdir()
    confs = [a for k, v in {**CONF, "spark.eventLog.dir": f"file:{events}"}.items()
             for a in ("--conf", f"{k}={v}")]
    if policy is None:
        from spark_plugin.submit import spark_submit

        sql = "--sql" in args
        args = [a for a in args if a != "--sql"]
        cmd = [spark_submit(), *(["--class", "org.apache.spark.sql.hive.thriftserver."
                                  "SparkSQLCLIDriver"] if sql else []), "--master", master,
               *confs, *args]
    else:
        cmd = [SUBMIT, "--master", master, *confs, "--policy", policy, "--lrc-conf",
               f"statsPath={tmp / f'stats-{name}.json'}", "--lrc-conf", "tableWaitMs=10000", *args]
    return cmd, events


def run(args: list[str], tmp: Path, name: str, policy: str | None,
        master: str = MASTER) -> tuple[str, Path]:
    """Runs `command(...)` to its end; -> (stdout, event log dir)."""
    cmd, events = command(args, tmp, name, policy, master)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout, events


def last_job_evictions(events: Path) -> list[tuple[str, str, bool]]:
    """(executor, RDD name, whether a `dead` block was still in that executor's memory) for each
    block dropped from memory during the application's last job, in the order the executor
    reported them."""
    names: dict[int, str] = {}
    in_memory: set[tuple[str, int, str]] = set()
    out: list[tuple[str, str, bool]] = []
    for _, _, raw, _ in lines(eventlog_files(next(events.iterdir())), print):
        e = json.loads(raw)
        if e["Event"] == "SparkListenerJobStart":
            out = []
            for stage in e.get("Stage Infos", []):
                for rdd in stage.get("RDD Info", []):
                    names[rdd["RDD ID"]] = rdd["Name"]
        elif e["Event"] == "SparkListenerBlockUpdated":
            info = e["Block Updated Info"]
            block, executor = info["Block ID"], info["Block Manager ID"]["Executor ID"]
            if not block.startswith("rdd_"):
                continue
            rdd = int(block.split("_")[1])
            key = (executor, rdd, block)
            if info["Storage Level"]["Use Memory"]:
                in_memory.add(key)
            elif key in in_memory:
                in_memory.discard(key)
                dead_left = any(x == executor and "dead" in names.get(r, "")
                                for x, r, _ in in_memory)
                out.append((executor, names.get(rdd, str(rdd)), dead_left))
    return out


def hot_evicted_while_dead_cached(evictions: list[tuple[str, str, bool]]) -> int:
    return sum(1 for _, name, dead_left in evictions if "hot" in name and dead_left)


def assert_dead_before_hot(tmp: Path, args: list[str], name: str) -> dict:
    """lrc vs plain Spark on the same scenario: same result; under lrc no executor evicts a block
    of `hot` (read again later in the job) while it still holds one of `dead` (never read again);
    plain Spark's LRU does (it evicts the oldest, hot's). Returns lrc's stats."""
    lrc_out, lrc_events = run(args, tmp, f"{name}-lrc", "lrc")
    plain_out, plain_events = run(args, tmp, f"{name}-plain", None)
    result = [line for line in lrc_out.splitlines() if line.strip()]
    assert result and sorted(result) == sorted(l for l in plain_out.splitlines() if l.strip())
    lrc, plain = last_job_evictions(lrc_events), last_job_evictions(plain_events)
    assert any("dead" in n for _, n, _ in lrc), lrc  # the scenario presses memory
    assert hot_evicted_while_dead_cached(lrc) == 0, lrc
    assert hot_evicted_while_dead_cached(plain) > 0, plain
    stats = json.loads((tmp / f"stats-{name}-lrc.json").read_text())
    assert stats["policy"] == "lrc" and stats["degraded"] is None and stats["hits"] > 0
    assert stats["whole_replies"] is True  # the sidecar's gateway sets TCP_NODELAY (NoDelay)
    assert len([e for e, v in stats["executors"].items() if v["installed"]]) == 2
    summary = load_stats(next(lrc_events.iterdir()))  # also in Spark's event log
    assert (summary["hits"], summary["evictions"]) == (stats["hits"], stats["evictions"])
    return stats


def sidecars() -> list[int]:
    """Pids of running sidecar brains."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"spark_plugin.sidecar" in (proc / "cmdline").read_bytes():
                out.append(int(proc.name))
        except OSError:
            continue
    return out


def test_a_java_application_gets_the_brain_as_a_sidecar_and_evicts_by_the_policy(tmp_path):
    before = set(sidecars())
    assert_dead_before_hot(tmp_path, ["--class", "DeadVsHot", str(java_app()), "8", "400", "800"],
                           "java")
    assert set(sidecars()) <= before  # gone with its application


def test_a_spark_sql_session_with_cache_table_gets_the_brain_and_evicts_by_the_policy(tmp_path):
    (tmp_path / "dvh.sql").write_text(SQL)
    assert_dead_before_hot(tmp_path, ["--sql", "-f", str(tmp_path / "dvh.sql")], "sql")


def test_the_sidecar_dies_with_a_killed_driver_and_its_gateway_wants_the_secret(tmp_path):
    before = set(sidecars())
    driver = subprocess.Popen(
        [SUBMIT, "--master", "local[1]", "--conf", "spark.ui.enabled=false", "--class",
         "DeadVsHot", str(java_app()), "2", "1", "1", "600"],  # holds its context for 600 s
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.time() + 180
        while not (new := set(sidecars()) - before):
            assert driver.poll() is None and time.time() < deadline, "no sidecar started"
            time.sleep(0.2)
        (pid,) = new
        env = dict(kv.split(b"=", 1) for kv in
                   Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in kv)
        port = int(env[b"SPARK_LRC_GATEWAY_PORT"])
        from py4j.java_gateway import GatewayParameters, JavaGateway

        intruder = JavaGateway(gateway_parameters=GatewayParameters(
            port=port, auth_token="not-the-secret", auto_field=False))
        with pytest.raises(Exception):
            intruder.entry_point.sparkConf()
        intruder.close()
        for addr in {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None,
                                                         socket.AF_INET)} - {"127.0.0.1"}:
            with pytest.raises(OSError):  # loopback only
                socket.create_connection((addr, port), timeout=5).close()
        os.kill(driver.pid, signal.SIGKILL)  # spark-lrc-submit execs into the driver JVM
        driver.wait(timeout=30)
        deadline = time.time() + 30
        while pid in sidecars():
            assert time.time() < deadline, "the sidecar outlived its killed driver"
            time.sleep(0.2)
    finally:
        if driver.poll() is None:
            driver.kill()


def test_a_sidecar_killed_while_the_application_runs_leaves_lru_and_right_results(tmp_path):
    """SIGKILL the sidecar brain once DeadVsHot cached hot and dead (tables were published):
    the driver clears the table at once (the process's exit, not a timeout), warns once on
    stderr, and the rest of the application runs under Spark's LRU with plain Spark's result."""
    args = ["--class", "DeadVsHot", str(java_app()), "8", "400", "800"]
    before = set(sidecars())
    cmd, _ = command([*args, "3"], tmp_path, "killed", "lrc", "local[1]")
    driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=tmp_path)
    err: list[str] = []
    try:
        for line in driver.stderr:  # the sidecar attached before the context was built
            err.append(line)
            if line.startswith("DeadVsHot: holding"):
                break
        (pid,) = set(sidecars()) - before
        os.kill(pid, signal.SIGKILL)
        out, rest = driver.communicate(timeout=300)
    finally:
        if driver.poll() is None:
            driver.kill()
    err.append(rest)
    assert driver.returncode == 0, "".join(err)[-4000:]
    plain, _ = run(args, tmp_path, "plain", None, "local[1]")
    assert out.split() and out.split() == plain.split(), (out, plain)
    said = [l for l in "".join(err).splitlines() if "the sidecar brain exited with code" in l]
    assert len(said) == 1 and "executors evict in Spark's LRU order from now on" in said[0], err
    assert pid not in sidecars()


def test_the_thrift_server_gets_the_brain_and_writes_its_stats_when_stopped(tmp_path):
    """HiveThriftServer2 (what start-thriftserver.sh runs) with the brain as a sidecar: a JDBC
    client caches a table and reads it; SIGTERM stops the server, and its stats are written."""
    from pyspark import __file__ as pyspark_init

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before, stats = set(sidecars()), tmp_path / "stats.json"
    server = subprocess.Popen(
        [SUBMIT, "--master", "local[2]", "--conf", "spark.ui.enabled=false", "--conf",
         f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}", "--lrc-conf", f"statsPath={stats}",
         "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "spark-internal",
         "--hiveconf", f"hive.server2.thrift.port={port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.time() + 240
        while True:
            assert server.poll() is None and time.time() < deadline, "the server did not start"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        beeline = Path(pyspark_init).parent / "bin" / "beeline"
        out = subprocess.run(
            [str(beeline), "-u", f"jdbc:hive2://127.0.0.1:{port}", "--silent=true", "-e",
             "CACHE TABLE t AS SELECT id, id * 2 AS x FROM range(100000); "
             "SELECT sum(x) FROM t; SELECT count(*) FROM t;"],
            capture_output=True, text=True, timeout=240, cwd=tmp_path)
        assert "9999900000" in out.stdout and "100000" in out.stdout, out.stdout + out.stderr
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
        result = json.loads(stats.read_text())
        assert result["policy"] == "crd" and result["hits"] > 0 and result["degraded"] is None
        assert set(sidecars()) <= before
    finally:
        if server.poll() is None:
            server.kill()


@pytest.mark.parametrize("python", ["/nonexistent/python3", "/usr/bin/python3"])
def test_a_sidecar_that_cannot_start_is_one_warning_and_lru(tmp_path, python):
    """No such interpreter, or one that cannot import spark_plugin's dependencies: the application
    runs to the same result under Spark's LRU, with one warning naming the interpreter."""
    if not Path(python).exists() and python != "/nonexistent/python3":
        pytest.skip(f"{python} is not on this machine")
    out = subprocess.run(
        [SUBMIT, "--master", "local[1]", "--conf", "spark.ui.enabled=false", "--lrc-conf",
         f"python={python}", "--class", "DeadVsHot", str(java_app()), "4", "10", "10"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("result {") and len(out.stdout.splitlines()) == 1, out.stdout
    warnings = [line for line in out.stderr.splitlines() if "sidecar brain did not start" in line]
    assert len(warnings) == 1 and python in warnings[0], out.stderr[-3000:]
    assert "Spark's LRU stays in effect" in warnings[0]
