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
