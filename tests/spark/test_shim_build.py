"""The shim jar builds from source with javac against pyspark's jars (no Spark session)."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

import jvm_shim
from spark_plugin.config import KEYS

shim_build = importlib.import_module("jvm_shim.build")

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.spark

CLASSES = {"org/sparklrc/LrcPlugin.class", "org/sparklrc/LrcBridge.class",
           "org/sparklrc/PriorityEntries.class", "org/sparklrc/LrcListener.class",
           "org/sparklrc/bench/EvictionBench.class"}


def test_jar_builds_from_source_concurrently_and_is_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LRC_CACHE", str(tmp_path))
    results, errors = [], []

    def go():
        try:
            results.append(shim_build.build(force=True))
        except Exception as e:  # noqa: BLE001 - surfaced below
            errors.append(e)

    threads = [threading.Thread(target=go) for _ in range(2)]  # two builders at the same time
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(results)) == 1
    jar = results[0]
    assert jar.parent == tmp_path and jar.name.startswith("spark-lrc-shim-4.")
    assert CLASSES <= set(zipfile.ZipFile(jar).namelist())
    assert not any(n.endswith(".java") for n in zipfile.ZipFile(jar).namelist())
    defaults = zipfile.ZipFile(jar).read(shim_build.DEFAULTS_RESOURCE).decode().splitlines()
    assert "spark.lrc.tableWaitMs=1000" in defaults  # from spark_plugin/config.py, the one registry
    assert len(defaults) == sum(1 for k in KEYS if k.default is not None)
    assert [p.name for p in tmp_path.iterdir()] == [jar.name]  # no temp leftovers
    mtime = jar.stat().st_mtime_ns
    assert jvm_shim.jar_path(build=False) == jar  # cached by source hash + Spark version
    assert jar.stat().st_mtime_ns == mtime


def test_cli_jar_prints_existing_path():
    out = subprocess.run([sys.executable, "-m", "jvm_shim", "jar"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert Path(out).is_file() and out.endswith(".jar")


def test_missing_javac_gives_clear_message(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path), SPARK_LRC_CACHE=str(tmp_path / "cache"))
    env.pop("JAVA_HOME", None)
    res = subprocess.run([sys.executable, "-m", "jvm_shim", "build"], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 1
    assert "javac not found: install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless)" \
        in res.stderr


def test_compilation_errors_are_shown(tmp_path, monkeypatch):
    src = tmp_path / "java" / "org" / "sparklrc"
    src.mkdir(parents=True)
    (src / "Broken.java").write_text("package org.sparklrc; class Broken { int x = ; }\n")
    monkeypatch.setattr(shim_build, "JAVA_ROOT", tmp_path / "java")
    monkeypatch.setenv("SPARK_LRC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(jvm_shim.ShimBuildError, match=r"javac failed(.|\n)*Broken\.java"):
        shim_build.build()


def test_bench_replies_sends_an_executor_only_the_changed_partitions():
    """`python -m jvm_shim bench-replies`: per version, 4 of the RDD's partitions change; the
    reply to an executor one version behind carries those, not the whole array (sizes only: the
    bench's timings are not asserted), and both executors end with the same table (checked by
    the bench itself)."""
    out = subprocess.run([sys.executable, "-m", "jvm_shim", "bench-replies", "400"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    row = [r for r in out.splitlines() if r.startswith("| 400 |")]
    assert len(row) == 1, out
    changes, whole = map(int, row[0].split("|")[2].split("/"))
    assert 0 < changes * 20 < whole, out
