"""Shared by the GraphX workloads (graphx_pagerank, graphx_cc, graphx_svdpp): the Java application
`org.sparklrc.workloads.GraphxWorkloads` (workloads/java/, compiled with javac against pyspark's
jars into a cached jar by `jvm_shim.build.app_jar`; nothing binary is committed), called through
py4j. Each of its methods builds a seeded power-law graph (`GraphGenerators.logNormalGraph`), runs
the GraphX library algorithm and returns JSON: {"checksum": ..., "result": {...}} (plus, when asked,
the edge list and the per-vertex values for the driver-side self-checks).

The jar must be on the driver's class path, which Spark reads only when the driver JVM starts: each
GraphX workload module has `extra_jars()`, which the benchmark child (workloads/bench/child.py)
appends to `spark.jars`; `main` below does the same for `python -m workloads.graphx_pagerank`. Under
`spark-submit`, pass `--jars $(python -m workloads.graphx jar)`. The Java application also runs on
its own: `spark-submit --class org.sparklrc.workloads.GraphxWorkloads $(python -m workloads.graphx
jar) graphx-pagerank --scale 1` prints the same JSON.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

JAVA_DIR = Path(__file__).resolve().parent / "java"
JAR_NAME = "spark-lrc-workloads"
CLASS = "org.sparklrc.workloads.GraphxWorkloads"


def jar() -> Path:
    """The workloads jar for the installed pyspark (compiled on first use, then cached)."""
    from jvm_shim.build import app_jar

    return app_jar(JAVA_DIR, JAR_NAME)


def extra_jars() -> list[str]:
    """Jars a session running a GraphX workload needs on `spark.jars` (driver and executors)."""
    return [str(jar())]


def with_jars(conf: dict[str, str], jars: list[str]) -> dict[str, str]:
    """`conf` with `jars` appended to its `spark.jars` (no duplicates)."""
    have = [j for j in str(conf.get("spark.jars") or "").split(",") if j.strip()]
    return {**conf, "spark.jars": ",".join(have + [j for j in jars if j not in have])}


def java_class(spark):
    """The GraphxWorkloads class in the driver JVM, or a RuntimeError saying how to load it."""
    from py4j.java_gateway import JavaClass

    cls = spark.sparkContext._jvm
    for part in CLASS.split("."):
        cls = getattr(cls, part)
    if not isinstance(cls, JavaClass):
        raise RuntimeError(
            f"{CLASS} is not on the driver's class path: start the session with spark.jars="
            f"{jar()} (Spark reads spark.jars only when the driver JVM starts; the benchmark and "
            f"`python -m workloads.graphx_*` do this themselves; spark-submit needs --jars)")
    return cls


def call(spark, method: str, *args: Any) -> dict:
    """GraphxWorkloads.<method>(sc, *args), its JSON parsed."""
    fn = getattr(java_class(spark), method)
    return json.loads(fn(spark.sparkContext._jsc.sc(), *args))


def level_name(storage_level: str | None) -> str:
    """The storage level's name, checked here so that an unknown one fails like in the other
    workloads (ValueError listing the valid names)."""
    from workloads import common

    common.storage_level(storage_level)  # raises ValueError for unknown names
    return (storage_level or "MEMORY_ONLY").upper()


def check_top_level(out: dict) -> dict:
    if not isinstance(out.get("checksum"), str) or not isinstance(out.get("result"), dict):
        raise AssertionError(f"GraphxWorkloads returned no checksum/result: {sorted(out)}")
    return out


def run_method(spark, method: str, *, scale: float, seed: int, storage_level: str | None,
               partitions: int | None, iterations: int,
               verify: bool | None) -> tuple[dict, bool]:
    """GraphxWorkloads.<method> called as every GraphX workload calls it: its checked output, and
    whether the self-check data was asked for (default: at small scales)."""
    level = level_name(storage_level)
    parts = partitions or max(2, round(4 * scale))
    if verify is None:
        verify = scale <= 0.25
    return check_top_level(call(spark, method, float(scale), int(seed), int(iterations),
                                int(parts), level, bool(verify))), verify


def main(name: str, run: Callable[..., dict], argv: list[str] | None = None) -> dict:
    """`python -m workloads.<name>` (common.main, with the workloads jar on the driver's class path
    when this process starts the JVM)."""
    from pyspark import SparkContext

    from workloads import common

    if SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        args = os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--jars {jar()} {args}"
    return common.main(name, run, argv)


if __name__ == "__main__":
    if sys.argv[1:] == ["jar"]:
        print(jar())
    else:
        print("usage: python -m workloads.graphx jar   (builds and prints the workloads jar)",
              file=sys.stderr)
        sys.exit(2)
