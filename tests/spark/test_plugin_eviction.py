"""The brain end to end on real Spark: the planner's counts decide what executors evict.

Each scenario runs the same job under two policies in fresh sessions and compares which RDDs
lost blocks. Storage is 4 MiB per executor (spark.testing.memory), blocks are ~500 KB of random
bytes, so the victims are forced and countable.
"""
from __future__ import annotations

import json
import time

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import PRESSURE_CONF, Events, seeded_blocks
from spark_plugin.doctor import dead_vs_hot, settle
from spark_plugin.doctor import start_session as start
from spark_plugin.session import active_brain

pytestmark = pytest.mark.spark
KB = 1024


SCENARIOS = [("local[1]", 4, 500, 500, 3),
             pytest.param("local-cluster[2,1,1024]", 8, 400, 800, 8, marks=pytest.mark.cluster)]


@pytest.mark.parametrize("master, parts, kb, fresh_kb, dead_parts", SCENARIOS)
def test_lrc_evicts_blocks_nobody_will_read_where_lru_evicts_the_hot_ones(master, parts, kb, fresh_kb,
                                                                         dead_parts):
    lru_stats, lru_victims, lru_result = dead_vs_hot(master, "lru", parts, kb, fresh_kb, dead_parts)
    lrc_stats, lrc_victims, lrc_result = dead_vs_hot(master, "lrc", parts, kb, fresh_kb, dead_parts)
    assert lru_result == lrc_result
    # Spark's order: the hot RDD, cached first, is the least recently used.
    assert lru_victims["hot"] >= 1, lru_victims
    # LRC: the dead RDD goes first and the hot one survives to be read.
    assert lrc_victims["hot"] == 0, lrc_victims
    assert lrc_victims["dead"] >= 1, lrc_victims
    assert lrc_stats["hit_ratio"] > lru_stats["hit_ratio"], (lrc_stats, lru_stats)
    assert all(e["installed"] for e in lrc_stats["executors"].values())
    assert lrc_stats["plan_latency_ms"]["count"] >= 3
    # Every eviction comes with its reason. LRU publishes no priorities: all tie at 0, so recency
    # (Spark's order) decided.
    for stats in (lru_stats, lrc_stats):
        assert sum(stats["eviction_reasons"]["order"].values()) == stats["evictions"], stats
        assert sum(stats["hits_per_rdd"].values()) == stats["hits"], stats
        assert sum(stats["misses_per_rdd"].values()) == stats["misses"], stats
    assert lru_stats["recent_evictions"], lru_stats
    assert {e["priority"] for e in lru_stats["recent_evictions"]} <= {0, None}, lru_stats
    # LRC: the table ranked dead's blocks lowest (no references left). What they made room for
    # depends on task placement: fresh's blocks, or a hot block re-cached after an uneven earlier
    # job pressed its executor - never another dead block (Spark does not evict a block of the
    # RDD being inserted).
    ids = lrc_stats["rdd_ids"]
    dead = [e for e in lrc_stats["recent_evictions"] if e["block"].startswith(f"rdd_{ids['dead']}_")]
    assert dead, lrc_stats["recent_evictions"]
    for e in dead:
        assert e["order"] == "priority" and e["priority"] == 0, e
        assert (e["for"] or "").startswith((f"rdd_{ids['fresh']}_", f"rdd_{ids['hot']}_")), e


def zip_pairs(master: str, policy: str, parts: int = 4, kb: int = 450, fresh_parts: int = 3):
    """Tasks of `x.zip(y)` read one block of each: a peer group. While `fresh` is cached (slowly,
    so tables keep up) blocks must go. LRC breaks a pair per victim (LRU order among equal
    counts: x_0, x_1, ...); LERC evicts y_i once x_i is gone (its reference is no longer
    effective) and keeps more pairs whole. Counts only the last job's evictions."""
    spark = start(master, policy)
    sc = spark.sparkContext
    try:
        x = seeded_blocks(sc, parts, seed=11, nbytes=kb * KB)
        y = seeded_blocks(sc, parts, seed=12, nbytes=kb * KB)
        x.count()
        y.count()
        before = settle(expected_tasks=2 * parts)["evictions_per_rdd"]

        def slow(b):
            time.sleep(0.6)
            return (b[0] % 3, len(b))

        fresh = seeded_blocks(sc, fresh_parts, seed=13, nbytes=kb * KB)
        shuffled = fresh.map(slow).reduceByKey(lambda a, b: a + b, 1)
        pairs = x.zip(y).map(lambda ab: (ab[0][0], ab[1][0]))
        result = sorted(shuffled.union(pairs).collect())
        stats = settle(expected_tasks=2 * parts + fresh_parts + 1 + parts)
        after = stats["evictions_per_rdd"]
        per_rdd = {name: after.get(str(r.id()), 0) - before.get(str(r.id()), 0)
                   for name, r in (("x", x), ("y", y), ("fresh", fresh))}
        return stats, per_rdd, result
    finally:
        spark.stop()


@pytest.mark.parametrize("master, parts, kb, fresh_parts", [
    ("local[1]", 4, 450, 3),
    pytest.param("local-cluster[2,1,1024]", 8, 400, 8, marks=pytest.mark.cluster)])
def test_lerc_keeps_complete_peer_groups_where_lrc_breaks_them(master, parts, kb, fresh_parts):
    lrc_stats, lrc_victims, lrc_result = zip_pairs(master, "lrc", parts, kb, fresh_parts)
    lerc_stats, lerc_victims, lerc_result = zip_pairs(master, "lerc", parts, kb, fresh_parts)
    assert lrc_result == lerc_result
    assert lrc_victims["y"] == 0 and lrc_victims["x"] >= 2, lrc_victims
    # LERC gives up the partner of an evicted block before breaking another pair.
    assert lerc_victims["y"] >= 1, lerc_victims
    assert lerc_stats["effective_hits"] > lrc_stats["effective_hits"], (lerc_stats, lrc_stats)


def eviction_sequence(lines: list[str]) -> list[tuple[str, str]]:
    import json

    evs = [json.loads(x) for x in lines]
    return [(e["executor"], e["block"]) for e in evs if e["e"] == "block" and e["level"] == "NONE"]


def test_lru_policy_evicts_exactly_what_plain_spark_evicts():
    """Plain Spark with only the shim's listener (storage untouched) vs the plugin under `lru`."""
    from jvm_shim.testing import session

    def job(sc):
        hot = seeded_blocks(sc, 4, seed=1, nbytes=500 * KB)
        dead = seeded_blocks(sc, 3, seed=2, nbytes=500 * KB)
        fresh = seeded_blocks(sc, 4, seed=3, nbytes=500 * KB)
        hot.count()
        dead.count()
        fresh.count()
        return sorted(hot.map(len).union(fresh.map(len)).collect())

    plain = session("local[1]", {**BASE_CONF, **PRESSURE_CONF}, plugin=False, listener_only=True)
    try:
        plain_result = job(plain.sparkContext)
        time.sleep(1)
        plain_lines = [json.dumps(e) for e in Events(plain).drain()]
    finally:
        plain.stop()

    spark = start("local[1]", "lru")
    seen: list[str] = []
    brain = active_brain()
    handle = brain._handle
    brain._handle = lambda line: (seen.append(line), handle(line))
    try:
        lru_result = job(spark.sparkContext)
        settle(expected_tasks=4 + 3 + 4 + 8)
    finally:
        spark.stop()
    assert lru_result == plain_result
    assert eviction_sequence(plain_lines), "the scenario must evict"
    assert eviction_sequence(seen) == eviction_sequence(plain_lines)
