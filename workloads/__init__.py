"""Benchmark applications for spark-lrc, the mini-cluster launcher and (later) the bench runner.

Every workload module has `run(spark, *, scale=1, seed=42, storage_level=None, partitions=None)`
returning `{"checksum": str, "result": dict}` and runs as a script
(`spark-submit workloads/pagerank.py --scale 2`, `python -m workloads.pagerank`).
"""
from __future__ import annotations

from importlib import import_module
from types import ModuleType

NAMES = ("pagerank", "cc", "ml", "svdpp", "zip", "sql", "mllib", "tpch",
         "graphx_pagerank", "graphx_cc", "graphx_svdpp")

WORKLOADS: dict[str, ModuleType] = {name: import_module(f"workloads.{name}") for name in NAMES}


def get(name: str) -> ModuleType:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; valid: {', '.join(NAMES)}") from None
