"""Every workload returns the same result with the plugin off and under each live policy,
under memory pressure (eviction and recomputation happen in sql, tpch and zip; the iterative
workloads at scale 1 fit, see UNDER)."""
from __future__ import annotations

import pytest

from conftest import BASE_CONF, policy_session
from jvm_shim.testing import restart_jvm_if_needed
from spark_plugin.config import LIVE_POLICIES
from spark_plugin.session import active_brain
from workloads import WORKLOADS

pytestmark = pytest.mark.spark

# 24 MiB of storage (and no less: mllib, sql and tpch need the execution memory).
TIGHT = {"spark.testing.memory": str(48 << 20), "spark.testing.reservedMemory": "0",
         "spark.memory.fraction": "0.5"}


# Few iterations: enough to cache, evict and re-read, fast enough to run six times.
SHORT = {"pagerank": {"iterations": 3}, "cc": {"max_iterations": 4, "verify": False},
         "ml": {"iterations": 3}, "svdpp": {"rounds": 2, "eval_every": 1}, "zip": {"rounds": 3},
         "sql": {"rounds": 1}, "mllib": {"iterations": 5, "reg_params": (0.1,)}, "tpch": {"rounds": 1}}


# Which workloads run under which live policy: every workload under two or more, every policy over
# three or four (the full cross product took five minutes of CI), and every policy over sql or tpch,
# which evict at this memory (the iterative workloads at scale 1 fit in 24 MiB; zip evicts only
# after some others left their blocks: measured, mrd over ml, svdpp, zip evicted nothing).
UNDER = {"lru": ["cc", "svdpp", "zip"], "lrc": ["ml", "pagerank", "sql"],
         "lerc": ["cc", "mllib", "tpch"], "mrd": ["ml", "svdpp", "zip", "tpch"],
         "crd": ["mllib", "pagerank", "sql", "tpch"]}


def run_all(policy: str | None, names: list[str] = sorted(SHORT)) -> tuple[dict[str, str], dict | None]:
    restart_jvm_if_needed()
    spark = policy_session(f"results-{policy}", {**BASE_CONF, **TIGHT}, policy)
    try:
        # graphx_*: test_graphx_workloads.py
        sums = {name: WORKLOADS[name].run(spark, scale=1, seed=7, **SHORT[name])["checksum"]
                for name in names}
        stats = None
        if policy is not None:  # every task's report delivered and applied: complete counts
            spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(10000)
            active_brain().sync()
            stats = active_brain().stats()
        return sums, stats
    finally:
        spark.stop()


@pytest.fixture(scope="module")
def reference() -> dict[str, str]:
    return run_all(None)[0]


def test_every_workload_runs_under_at_least_two_live_policies():
    assert sorted(UNDER) == sorted(LIVE_POLICIES)
    runs = [w for ws in UNDER.values() for w in ws]
    assert sorted(set(runs)) == sorted(SHORT) and all(runs.count(w) >= 2 for w in SHORT)


@pytest.mark.parametrize("policy", LIVE_POLICIES)
def test_workload_results_are_identical_with_and_without_the_plugin(reference, policy):
    sums, stats = run_all(policy, UNDER[policy])
    assert sums == {w: reference[w] for w in UNDER[policy]}
    assert stats["tasks"] > 0 and stats["degraded"] is None
    assert stats["plugin_cpu_s"]["task_hooks"] > 0 and stats["plugin_cpu_s"]["listener"] > 0
    assert stats["evictions"] > 0, "the memory limit must force evictions for this test to mean anything"
