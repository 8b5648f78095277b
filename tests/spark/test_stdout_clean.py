"""An application's stdout is its own: spark-lrc's warnings go to stderr (Spark's log), also when
the brain cannot attach. spark-submit merges a Python driver's stderr into its stdout, so a
plain Python warning would end up in the application's output (issue 14)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lrc.dag import RDD, AppDAG, Job, Stage
from lrc.trace import Event, Trace, save_trace

pytestmark = pytest.mark.spark
SUBMIT = str(Path(sys.executable).with_name("spark-lrc-submit"))
QUIET = ["--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false"]

# The profile passes spark-lrc-submit's check, then breaks before the brain loads it (the app
# overwrites it: a file replaced between submit and start); the executors are also told to fail
# installing the ordered map. The application's own logging setup must stay in force.
APP = """
import logging, sys
from pathlib import Path
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="app-log %(message)s")
Path(sys.argv[1]).write_bytes(b"garbage, not a trace any more")
from pyspark import SparkContext
sc = SparkContext(appName="stdout-clean")
rdd = sc.parallelize(range(100), 4).map(lambda x: x * 2).cache()
print("count", rdd.count())
print("sum", rdd.sum())
logging.getLogger("app").warning("done")
sc.stop()
"""


def _profile(path: Path) -> Path:
    dag = AppDAG()
    dag.add_rdd(RDD(1, 2, cached=True))
    dag.add_stage(Stage(0, 1, 2, job_id=0))
    dag.add_job(Job(0, (0,)))
    events = [Event.job_start(0), Event.stage_submitted(0),
              Event.task(0, 0, creates=[(1, 0)]), Event.task(0, 1, creates=[(1, 1)]),
              Event.stage_completed(0), Event.job_end(0)]
    return save_trace(Trace(dag, events), path)


def test_a_brain_that_cannot_attach_warns_on_stderr_and_leaves_stdout_to_the_app(tmp_path):
    profile = _profile(tmp_path / "profile.json")
    app = tmp_path / "app.py"
    app.write_text(APP)
    out = subprocess.run(
        [SUBMIT, "--master", "local[2]", *QUIET, "--lrc-conf", f"profile={profile}",
         "--lrc-conf", "forceInstallFailure=true", str(app), str(profile)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "count 100\nsum 9900\napp-log done\n", out.stdout
    assert "brain not attached, Spark's LRU stays in effect" in out.stderr
    assert str(profile) in out.stderr and "not valid JSON" in out.stderr


def test_a_profile_that_cannot_load_fails_at_submit_before_spark_starts(tmp_path):
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(os.urandom(300))
    out = subprocess.run([SUBMIT, "--master", "local[2]", "--lrc-conf", f"profile={garbage}",
                          "app.py"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"spark-lrc-submit: spark.lrc.profile: cannot load {garbage}: ")
    assert "not a readable Parquet trace" in out.stderr
