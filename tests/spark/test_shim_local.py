"""The shim against a real local-mode SparkSession (executor plugin inside the driver JVM).

One JVM for the module: first a plain-Spark session (only the shim's listener, Spark's own
MemoryStore) as the reference, then a session with the plugin."""
from __future__ import annotations

import json
import threading
import time
from operator import add

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import (PRESSURE_CONF, Events, FakeBrain, bridge, cached_order, digests,
                              evicted_blocks, expected_digests, job_done, pressure_scenario,
                              running, seeded_blocks, session, until_job_end)
from spark_plugin import wire
from spark_plugin.bridge import PIECE, JvmBridge
from spark_plugin.config import KEYS

pytestmark = pytest.mark.spark

MASTER = "local[1]"  # one task at a time: a deterministic eviction sequence
N_A, N_B = 4, 6
PRIO_A = [7, 1, 9, 3]  # policy order of A's blocks: 1, 3, 0, 2 (LRU would take 0, 1, 2, 3)
CONF = {**BASE_CONF, **PRESSURE_CONF, "spark.lrc.tableWaitMs": "5000"}


def run_pressure(spark) -> dict:
    ev = Events(spark)
    ev.clear()
    jobs_before = 0
    out = pressure_scenario(spark, N_A, N_B)
    ev.wait_for(job_done(jobs_before + 4))
    time.sleep(0.3)
    ev.drain()
    out["events"] = ev.all
    out["evicted_a"] = [int(b.rsplit("_", 1)[1])
                        for b in evicted_blocks(until_job_end(ev.all, 2), out["a"])]
    return out


@pytest.fixture(scope="module")
def plain():
    """Reference run on plain Spark (listener only: events, but Spark's own `entries` map)."""
    spark = session(MASTER, CONF, plugin=False, listener_only=True, app_name="shim-plain")
    try:
        assert not bridge(spark).active()
        out = run_pressure(spark)
    finally:
        spark.stop()
    return out


@pytest.fixture(scope="module")
def spark(plain):  # noqa: ARG001 - `plain` must run (and stop) first: one SparkContext per JVM
    s = session(MASTER, CONF, plugin=True, app_name="shim-plugin")
    yield s
    s.stop()


def test_plain_spark_evicts_in_lru_order(plain):
    assert plain["evicted_a"], "the scenario must create memory pressure"
    assert plain["evicted_a"] == list(range(len(plain["evicted_a"])))
    assert plain["digests_a"] == expected_digests(N_A, 1, 600_000)
    assert plain["digests_b"] == expected_digests(N_B, 2, 600_000)


def test_bridge_active_and_executor_plugin_installed(spark):
    b = bridge(spark)
    assert b.active()
    ev = Events(spark)
    spark.sparkContext.parallelize(range(4), 2).count()
    evs = ev.wait_for(lambda es: any(e["e"] == "executor_plugin" for e in es)
                      and any(e["e"] == "job_end" for e in es))
    plug = [e for e in evs if e["e"] == "executor_plugin"]
    assert plug == [{"e": "executor_plugin", "executor": "driver", "installed": True, "error": ""}]
    added = [e for e in evs if e["e"] == "executor_added"]
    assert added and added[0]["executor"] == "driver" and added[0]["cores"] == 1
    assert b.dropped() == 0


def test_driver_hands_every_setting_to_executors_through_the_plugin_conf(spark):
    """DriverPlugin.init returns the spark.lrc.* settings (the jar's defaults, from config.py,
    overlaid by the session's confs); Spark stores them under its plugin prefix and passes them
    to ExecutorPlugin.init, the executors' only source of settings."""
    prefix = "spark.plugins.internal.conf.org.sparklrc.LrcPlugin."
    conf = dict(spark.sparkContext.getConf().getAll())
    handed = {k.removeprefix(prefix): v for k, v in conf.items() if k.startswith(prefix)}
    session_lrc = {k: v for k, v in conf.items() if k.startswith("spark.lrc.")}
    defaults = {k.name: k.default for k in KEYS if k.default is not None}
    assert handed == defaults | session_lrc
    assert handed["spark.lrc.tableWaitMs"] == "5000" and handed["spark.lrc.bufferSize"] == "100000"


def test_an_event_longer_than_a_drain_reply_arrives_whole(spark):
    """A job over the union of many RDDs has a job_start line far longer than one drain reply
    (EventBuffer.MAX_REPLY_CHARS, kept short for py4j's sake): it comes in pieces, joined."""
    sc = spark.sparkContext
    ev = Events(spark)
    ev.clear()
    rdd = sc.union([sc.parallelize([i], 1) for i in range(150)])
    assert rdd.take(1) == [0]  # one task; the job start still lists all 150 RDDs
    evs = ev.wait_for(job_done(1))
    start = next(e for e in evs if e["e"] == "job_start")
    assert len(json.dumps(start)) > 3 * 7000
    assert len(start["stages"][0]["rdds"]) > 150


def test_the_brains_thread_drains_a_long_job_start_in_one_prompt_reply(spark):
    """`whole_replies` sets TCP_NODELAY on the calling thread's own py4j connection (PySpark's
    gateway pins one per Python thread), and that thread's drains return a job start of 20k+
    characters in one reply, without the 40 ms that Nagle's algorithm and Python's delayed ACK
    add to a reply longer than py4j's 8 KiB buffer. Other threads' connections are untouched."""
    sc = spark.sparkContext
    bus = sc._jsc.sc().listenerBus()
    jb = JvmBridge.for_context(sc)
    socket = lambda: sc._gateway.java_gateway_server.getCallbackClient(  # noqa: E731
        ).getPerThreadConnection().getSocket().getTcpNoDelay()
    out: dict = {"took": []}

    def brain_thread():
        out["before"] = socket()
        out["whole"] = jb.whole_replies()
        out["after"] = socket()
        for _ in range(3):
            Events(spark).clear()
            assert sc.union([sc.parallelize([i], 1) for i in range(150)]).take(1) == [0]
            bus.waitUntilEmpty()
            t0 = time.perf_counter()
            out["raw"] = bridge(spark).drainWait(100_000, 0, 0, True)
            out["took"].append(time.perf_counter() - t0)

    t = threading.Thread(target=brain_thread)
    t.start()
    t.join(timeout=120)
    assert out["before"] is False and out["whole"] is True and out["after"] is True
    assert socket() is False  # this (the test's) thread's connection: untouched
    lines = out["raw"].split("\n")
    assert not any(line.startswith(PIECE) for line in lines)
    start = next(json.loads(line) for line in lines if '"e":"job_start"' in line)
    assert len(json.dumps(start)) > 3 * 7000 and len(start["stages"][0]["rdds"]) > 150
    assert min(out["took"]) < 0.035, out["took"]  # with Nagle's hold: 40+ ms every time


def test_a_lingering_drain_holds_events_for_a_batch_but_not_a_job_start(spark):
    """`drainWait(max, wait, linger)`: events wait in the buffer until the oldest has waited
    `linger` (or `wait` ends), so the brain takes them in fewer py4j round trips; a job start
    ends the wait at once (executors wait for its plan)."""
    sc, b = spark.sparkContext, bridge(spark)
    bus = sc._jsc.sc().listenerBus()
    a = sc.parallelize(range(4), 2).cache()
    a.count()
    bus.waitUntilEmpty()
    Events(spark).clear()
    a.unpersist(blocking=True)  # an unpersist and block removals: no job start
    bus.waitUntilEmpty()
    t0 = time.monotonic()
    held = b.drainWait(10_000, 1_500, 60_000, False)
    waited = time.monotonic() - t0
    assert '"e":"unpersist"' in held
    assert waited >= 1.4, waited  # buffered events did not end the wait: linger, then `wait`
    a.cache().count()  # cached again, then unpersisted: a lingering batch is buffered again
    bus.waitUntilEmpty()
    Events(spark).clear()
    a.unpersist(blocking=True)
    bus.waitUntilEmpty()
    out: list = []
    drainer = threading.Thread(target=lambda: out.append((b.drainWait(10_000, 60_000, 60_000, False),
                                                          time.monotonic())))
    drainer.start()
    time.sleep(0.2)  # the drain is lingering on the unpersist's events (60 s)
    t0 = time.monotonic()
    assert sc.parallelize(range(2), 1).count() == 2  # its job start ends the wait
    drainer.join(timeout=30)
    assert out, "a job start did not end a lingering drain"
    text, returned = out[0]
    assert '"e":"unpersist"' in text and '"e":"job_start"' in text
    assert returned - t0 < 30

def test_events_carry_dag_deps_tasks_blocks_and_cache_activity(spark):
    sc = spark.sparkContext
    ev = Events(spark)
    ev.clear()
    y = sc.parallelize(range(40), 4).map(lambda i: (i % 5, i)).reduceByKey(add, 2).cache()
    z = y.union(sc.parallelize([(9, 9)], 1))  # UnionRDD: range dependencies
    w = z.coalesce(2)  # CoalescedRDD: explicit partition map
    assert sorted(w.collect()) == sorted(w.collect())  # 2 jobs: puts, then hits
    evs = ev.wait_for(job_done(2))
    ev.wait_for(lambda es: sum(1 for e in es if e["e"] == "task_cache") >= 5)
    evs = ev.all

    starts = [e for e in evs if e["e"] == "job_start"]
    assert len(starts) == 2
    rdds = {r["id"]: r for st in starts[0]["stages"] for r in st["rdds"]}
    yj = rdds[y.id()]
    assert yj["cached"] is True and yj["level"] == "MEMORY_ONLY_SER" and yj["parts"] == 2
    kinds = {d["kind"] for r in rdds.values() for d in r.get("deps", [])}
    assert {"one_to_one", "range", "explicit", "shuffle"} <= kinds
    assert all("deps" in r for r in rdds.values())
    for r in rdds.values():
        assert sorted(d["parent"] for d in r["deps"]) == sorted(r["parents"])
    ranges = [d for r in rdds.values() for d in r["deps"] if d["kind"] == "range"]
    assert sorted((d["out_start"], d["length"]) for d in ranges) == [(0, 2), (2, 1)]
    explicit = [d for r in rdds.values() for d in r["deps"] if d["kind"] == "explicit"]
    assert len(explicit) == 1 and len(explicit[0]["map"]) == 2
    assert sorted(p for ps in explicit[0]["map"] for p in ps) == [0, 1, 2]
    result_stage = [st for st in starts[0]["stages"] if st["shuffle"] == -1][0]
    map_stage = [st for st in starts[0]["stages"] if st["shuffle"] >= 0][0]
    assert result_stage["parents"] == [map_stage["stage"]] and result_stage["tasks"] == 2
    assert map_stage["tasks"] == 4
    assert sorted(starts[0]["stage_ids"]) == sorted(st["stage"] for st in starts[0]["stages"])

    ends = [e for e in evs if e["e"] == "task_end" and e["stage"] == result_stage["stage"]]
    assert sorted(e["partition"] for e in ends) == [0, 1]
    assert all(e["success"] and e["executor"] == "driver" for e in ends)
    assert {e["stage"] for e in evs if e["e"] == "stage_submitted"} >= {result_stage["stage"]}

    y_blocks = {f"rdd_{y.id()}_{p}" for p in range(2)}
    assert set(cached_order(evs, y.id())) == y_blocks
    caches = [e for e in evs if e["e"] == "task_cache"]
    puts = {b for e in caches for b in e["puts"]}
    hits = {b for e in caches for b in e["hits"]}
    assert y_blocks <= puts
    assert y_blocks <= hits  # second job read the cached blocks
    second = [e for e in caches if e["stage"] not in (map_stage["stage"], result_stage["stage"])]
    assert second and all(not e["puts"] for e in second)
    assert all(e["table_version"] == 0 for e in caches)
    y.unpersist(blocking=True)


def test_a_job_start_names_what_earlier_ones_described_by_id_only(spark):
    """The second count of a shuffled RDD skips the map stage the first ran; Spark lists it
    again (under a new stage id once the first job's stages are cleaned up) and the job start
    describes none of its RDDs again: they go by id (Described)."""
    sc = spark.sparkContext
    ev = Events(spark)
    ev.clear()
    x = sc.parallelize(range(40), 4).map(lambda i: (i % 5, i)).reduceByKey(add, 2)
    assert x.count() == x.count() == 5
    first, second = [e for e in ev.wait_for(job_done(2)) if e["e"] == "job_start"]
    assert sorted(first["stage_ids"]) == sorted(st["stage"] for st in first["stages"])
    assert all(st["rdd_ids"] == [r["id"] for r in st["rdds"]] for st in first["stages"])
    map_stage = next(st for st in first["stages"] if st["shuffle"] >= 0)
    again = [st for st in second["stages"] if st["shuffle"] == map_stage["shuffle"]]
    assert len(second["stage_ids"]) == 2
    if map_stage["stage"] in second["stage_ids"]:  # the same stage: named by id
        assert again == []
    else:
        assert len(again) == 1 and again[0]["rdd_ids"] == map_stage["rdd_ids"]
        assert again[0]["rdds"] == []


def test_a_result_stage_on_chosen_partitions_names_them_at_its_job_start(spark):
    """A take scans partitions job by job: [0], then [1..4], then [5..7]. Each job start names
    the partitions its result stage computes when they are not 0..n-1, and they are those its
    tasks then run (the brain plans them: `events.job_from_event`)."""
    from spark_plugin import wire
    from spark_plugin.events import job_from_event

    sc = spark.sparkContext
    ev = Events(spark)
    ev.clear()
    assert sc.parallelize(range(8), 8).filter(lambda x: x >= 6).take(1) == [6]
    evs = ev.wait_for(job_done(3))
    scans = []
    for start in (e for e in evs if e["e"] == "job_start"):
        _, stages, _ = job_from_event(wire.decode_event(json.dumps(start)))
        (result,) = stages
        ran = sorted(e["partition"] for e in evs
                     if e["e"] == "task_end" and e["stage"] == result.id)
        assert list(result.task_partitions()) == ran
        scans.append(ran)
    assert scans == [[0], [1, 2, 3, 4], [5, 6, 7]]


def test_a_job_start_describes_an_rdd_again_only_when_its_description_changed(spark):
    """The listener compares each RDD's description field by field with what it sent (no JSON
    written for an unchanged one): persisted or renamed since, the RDD is described again with
    its new level or name; its unchanged parents go by id; an RDD new on top of lineage walked
    before carries its dependencies."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    ev = Events(spark)
    ev.clear()
    p = sc.parallelize(range(40), 4).map(lambda i: (i % 5, i)).partitionBy(2)
    assert p.count() == 40
    p.persist(StorageLevel.MEMORY_ONLY)
    assert p.count() == 40
    p.setName("renamed")
    q = p.map(lambda kv: kv[1])
    assert q.count() == 40
    starts = [e for e in ev.wait_for(job_done(3)) if e["e"] == "job_start"]
    d1, d2, d3 = ({r["id"]: r for st in e["stages"] for r in st["rdds"]} for e in starts)
    pid = p.id()
    assert not d1[pid]["cached"] and d1[pid]["level"] == "NONE"
    assert d2[pid]["cached"] and d2[pid]["level"].startswith("MEMORY_ONLY")  # PySpark: _SER
    assert d3[pid]["name"] == "renamed"
    assert d1[pid]["parents"] and not set(d1[pid]["parents"]) & set(d2), "parents go by id"
    new = [r for r in d3.values() if r["id"] not in d1 and r["id"] not in d2]
    assert new and all(r.get("deps") for r in new), "new RDDs carry their deps"
    p.unpersist(blocking=True)


def test_describe_stages_walks_live_lineage(spark):
    sc = spark.sparkContext
    ev = Events(spark)
    ev.clear()
    slow = sc.parallelize(range(8), 2).map(lambda i: (time.sleep(0.5), i)[1])
    r = slow.union(sc.parallelize(range(3), 1)).coalesce(2)
    with running(r.count):
        evs = ev.wait_for(lambda es: any(e["e"] == "job_start" for e in es))
        stage_ids = [s["stage"] for s in [e for e in evs if e["e"] == "job_start"][0]["stages"]]
        text = bridge(spark).describeStages(",".join(map(str, stage_ids)))
    assert text, "stages of a running job must be describable"
    doc = json.loads(text)
    assert [s["stage"] for s in doc["stages"]] == stage_ids
    kinds = {d["kind"] for s in doc["stages"] for rr in s["rdds"] for d in rr["deps"]}
    assert {"range", "explicit", "one_to_one"} <= kinds
    assert bridge(spark).describeStages("999999") == ""


def test_without_table_eviction_sequence_equals_plain_spark(spark, plain):
    out = run_pressure(spark)
    assert out["evicted_a"] == plain["evicted_a"]
    caches = [e for e in out["events"] if e["e"] == "task_cache"]
    from_tasks = [int(b.rsplit("_", 1)[1]) for e in caches for b in e["evicted"]
                  if b.startswith(f"rdd_{out['a']}_")]
    assert from_tasks == out["evicted_a"]


def test_results_identical_with_and_without_plugin(spark, plain):
    out = run_pressure(spark)
    assert out["digests_a"] == plain["digests_a"] == expected_digests(N_A, 1, 600_000)
    assert out["digests_b"] == plain["digests_b"]
    sc = spark.sparkContext
    got = sorted(sc.parallelize(range(1000), 4).map(lambda x: (x % 7, x)).reduceByKey(add).collect())
    assert got == sorted({k: sum(x for x in range(1000) if x % 7 == k) for k in range(7)}.items())


def test_published_table_decides_eviction_order(spark, plain):
    holder = {}

    def plan(job_start):
        if "a" not in holder:
            return None
        stages = wire.encode_stages(s["stage"] for s in job_start["stages"])
        return wire.encode_arrays({holder["a"]: PRIO_A}), stages

    with FakeBrain(spark, plan) as brain:  # the brain's collector sees every event
        out = pressure_scenario(spark, N_A, N_B, before_b=lambda a: holder.setdefault("a", a.id()))
        time.sleep(0.5)
    out["events"] = brain.events.all
    out["evicted_a"] = [int(b.rsplit("_", 1)[1])
                        for b in evicted_blocks(until_job_end(out["events"], 2), out["a"])]
    expected = sorted(range(N_A), key=lambda p: PRIO_A[p])
    n = len(out["evicted_a"])
    assert n >= 2, "the scenario must evict at least two blocks"
    assert out["evicted_a"] == expected[:n]
    assert out["evicted_a"] != plain["evicted_a"][:n]  # LRU would have evicted others
    forced = [e for e in out["events"] if e["e"] == "table_in_force"]
    version = brain.published[0][0]
    assert forced[0]["version"] >= version and forced[0]["executor"] == "driver"
    assert forced[0]["waited_ms"] < 5000  # released by the publish, not by the timeout
    caches = [e for e in out["events"] if e["e"] == "task_cache" and e["evicted"]]
    assert caches and all(e["table_version"] >= version for e in caches)



BROADCAST = (None, "broadcast_0_piece0")


def test_priority_entries_order_matches_reference(spark):
    """PriorityEntries' eviction view equals a reference sort by (priority, access order), through
    incremental re-keys, full rebuilds, removals and accesses (driven through py4j)."""
    import random

    from pyspark import SparkContext

    jvm, gw = spark.sparkContext._jvm, SparkContext._gateway
    m = jvm.org.sparklrc.PriorityEntries()
    rnd = random.Random(7)
    blocks = [(r, p) for r in range(10) for p in range(10)]
    access: dict[tuple[int, int], int] = {}
    table: dict[int, list[float]] = {}
    clock = [0]

    def touch(b):
        clock[0] += 1
        access[b] = clock[0]

    def jid(b):
        return jvm.org.apache.spark.storage.RDDBlockId(b[0], b[1])

    for b in blocks:
        m.put(jid(b), None)
        touch(b)
    m.put(jvm.org.apache.spark.storage.BroadcastBlockId(0, "piece0"), None)
    touch(BROADCAST)

    def apply(version, changes):
        jmap = jvm.java.util.HashMap()
        for rdd, arr in changes.items():
            ja = gw.new_array(jvm.double, len(arr))
            for i, x in enumerate(arr):
                ja[i] = float(x)
            jmap.put(rdd, ja)
            if arr:
                table[rdd] = arr
            else:
                table.pop(rdd, None)
        m.applyTable(version, False, jmap, jvm.java.util.ArrayList())

    def expected():  # a non-RDD block is unranked: priority 0, like an RDD the table omits
        def prio(b):
            arr = table.get(b[0])
            return arr[b[1]] if arr and b[1] < len(arr) else 0.0
        return [b[1] if b[0] is None else f"rdd_{b[0]}_{b[1]}"
                for b in sorted(access, key=lambda b: (prio(b), access[b]))]

    def actual():
        it, out = m.entrySet().iterator(), []
        while it.hasNext():
            out.append(it.next().getKey().name())
        return out

    assert actual() == [f"rdd_{r}_{p}" for r, p in blocks] + [BROADCAST[1]]  # Spark's LRU
    apply(1, {3: [rnd.randint(-5, 5) for _ in range(10)]})  # 10 of 101 blocks: incremental
    assert actual() == expected()
    order = actual()  # the broadcast, unranked, goes before every block ranked above 0
    assert all(order.index(BROADCAST[1]) < order.index(f"rdd_3_{p}")
               for p, x in enumerate(table[3]) if x > 0)
    apply(2, {r: [rnd.randint(-5, 5) for _ in range(8)] for r in range(5)})  # large: rebuild
    assert actual() == expected()
    apply(3, {3: []})  # removal: back to priority 0
    for b in rnd.sample(blocks, 15):  # accesses move blocks behind their equal-priority peers
        m.put(jid(b), None)
        touch(b)
    for b in rnd.sample(blocks, 10):
        m.remove(jid(b))
        access.pop(b)
    assert actual() == expected()
    assert m.version() == 3 and m.size() == len(access)


def test_priority_entries_match_a_reference_model(spark):
    """PriorityEntries keeps its own storage behind the LinkedHashMap type: random puts, gets,
    removes, table deltas and resets, demotions, clears and eviction walks agree with a reference
    model in every return value, the size, the walk order, the keys, values and priorities
    (org.sparklrc.bench.MapModelCheck; it throws on the first mismatch)."""
    assert spark.sparkContext._jvm.org.sparklrc.bench.MapModelCheck.run(100) == "ok"


def test_flat_event_lines_are_what_jacksons_tree_model_writes(spark):
    """The flat events (task ends, cache reports, block updates, ...) are written without
    Jackson's tree model (JsonLine): for random strings (quotes, control characters, surrogate
    pairs, null), doubles from random bits (NaN as null), longs, booleans and nested arrays, each
    line equals Jackson's own output character for character (org.sparklrc.JsonLineCheck)."""
    assert spark.sparkContext._jvm.org.sparklrc.JsonLineCheck.run(50) == "ok"


def test_a_placement_copy_evicts_only_blocks_ranked_below_it(spark):
    """A GPU placement copy's put into Spark's MemoryStore, larger than the free storage: as an
    expected copy ranked below everything cached it fails and evicts nothing (the room it was
    promised went to a task's insert meanwhile); the same put as any other block succeeds by
    evicting, as Spark's put does; an expected copy ranked above the cached blocks evicts them."""
    sc, b = spark.sparkContext, bridge(spark)
    probe = sc._jvm.org.sparklrc.bench.CopyGuardProbe
    a = seeded_blocks(sc, 3, seed=11, nbytes=600_000)
    a.count()
    copy = 999_990  # the moved block's RDD: part 0 ranked below everything, part 1 above
    version = int(b.tableVersion()) + 1  # a first in eviction order (unlisted blocks rank 0)
    b.publish(version, wire.encode_arrays({a.id(): [-5, -5, -5], copy: [-10, 20]}), "")
    deadline = time.time() + 20
    while probe.version() < version and time.time() < deadline:
        time.sleep(0.05)
    try:
        assert probe.version() >= version
        assert probe.cached(a.id(), 3) == 3
        assert not probe.put(copy, 0, 300_000, True)  # no room below it: refused
        assert probe.cached(a.id(), 3) == 3  # ... and nothing evicted
        assert probe.put(copy, 0, -100_000, True)  # room without evicting: stored
        assert probe.put(copy, 0, 300_000, False)  # not a copy: Spark evicts for it
        left = probe.cached(a.id(), 3)
        assert left < 3
        assert probe.put(copy, 1, 300_000, True)  # a copy ranked above a may evict a
        assert probe.cached(a.id(), 3) < left
    finally:
        b.publish(int(b.tableVersion()) + 1, wire.encode_arrays({a.id(): [], copy: []}), "")
        a.unpersist()


def test_push_brings_a_mid_stage_table_to_running_executor(spark):
    """A version published while a stage runs reaches the executor by push (its parked request
    is answered by the publish) without any new stage; tasks report the version they ran under,
    and the executor reports when it applied it."""
    sc = spark.sparkContext
    b = bridge(spark)
    ev = Events(spark)
    ev.clear()
    slow = sc.parallelize(range(5), 5).map(lambda i: (time.sleep(0.6), i)[1])
    with running(slow.count):
        ev.wait_for(lambda es: any(e["e"] == "task_end" for e in es))
        version = int(b.tableVersion()) + 1
        b.publish(version, "999999=1,2,3", "")
    ev.wait_for(job_done(1))
    evs = ev.wait_for(lambda es: sum(1 for e in es if e["e"] == "task_cache") >= 5)
    versions = [e["table_version"] for e in sorted(ev.of("task_cache"), key=lambda e: e["task"])]
    assert versions[0] < version and versions[-1] == version, versions
    stage = ev.of("task_cache")[0]["stage"]
    forced = [e for e in evs if e["e"] == "table_in_force" and e["stage"] == stage]
    assert len(forced) <= 1  # at most once per (executor, stage)
    applied = [e for e in evs if e["e"] == "table_applied" and e["version"] == version]
    assert [e["executor"] for e in applied] == ["driver"]
    assert 0 <= applied[0]["lag_ms"] < 1000  # a push, not the 2 s hold answer


def test_a_broadcast_is_unranked_and_goes_before_blocks_the_table_keeps(spark):
    """Spark stores every broadcast it ships in the same MemoryStore (MEMORY_AND_DISK: evicting
    one writes it to disk). The table does not rank them: they take priority 0, like an RDD it
    does not list - so a table of zeros (lru) keeps Spark's own order, and a broadcast no task
    reads any more does not hold storage the DAG needs. Here a broadcast newer than A's block
    goes first when C needs room, because the table ranks A above 0; C's size is set from the
    storage measured free, so that it needs the broadcast's room and A's would not do."""
    sc, b = spark.sparkContext, bridge(spark)
    jvm, probe = sc._jvm, sc._jvm.org.sparklrc.bench.CopyGuardProbe

    def free() -> int:
        return int(probe.storageFree())

    a = seeded_blocks(sc, 1, seed=21, nbytes=600_000)
    a.count()
    version = int(b.tableVersion()) + 1
    b.publish(version, wire.encode_arrays({a.id(): [5]}), "")
    deadline = time.time() + 20
    while probe.version() < version and time.time() < deadline:
        time.sleep(0.05)
    before = free()
    value = sc._gateway.new_array(jvm.byte, 2_000_000)
    jvm.java.util.Random(5).nextBytes(value)  # incompressible: its piece is as large
    bc = sc._jsc.broadcast(value)
    blocks = [f"broadcast_{bc.id()}", f"broadcast_{bc.id()}_piece0"]
    room, held = free(), before - free()
    c = seeded_blocks(sc, 1, seed=22, nbytes=room + held // 4)  # > free; 1.5x < free + held
    try:
        assert probe.version() >= version
        assert all(probe.inMemory(x) for x in blocks), "the broadcast must start in memory"
        assert held >= room, f"the broadcast must hold more than is free ({held}, {room})"
        assert probe.cached(a.id(), 1) == 1
        c.count()  # needs room: the broadcast (rank 0) goes before A (rank 5)
        assert probe.cached(c.id(), 1) == 1, "C must be stored"
        assert not all(probe.inMemory(x) for x in blocks), "the broadcast must have been evicted"
        assert probe.cached(a.id(), 1) == 1  # with broadcasts ranked +infinity, A went instead
    finally:
        bc.destroy()
        a.unpersist(blocking=True)
        c.unpersist(blocking=True)
        b.publish(int(b.tableVersion()) + 1, wire.encode_arrays({a.id(): []}), "")


def test_with_admission_a_store_never_evicts_a_block_ranked_above_it(spark):
    """spark.lrc.admit: a store may evict only blocks ranked at or below the block it stores;
    short of room it fails and evicts nothing. A's block ranks 5, a filler F ranks 9 and leaves
    little storage free, the stored blocks rank 2 and need half of A's room. With admission a
    direct put and a task's store both fail (Spark computes the block without caching it: the
    job's result is right) and A stays; without admission the same task's store evicts A."""
    sc, b = spark.sparkContext, bridge(spark)
    probe = sc._jvm.org.sparklrc.bench.CopyGuardProbe
    a = seeded_blocks(sc, 1, seed=31, nbytes=1_500_000)
    a.count()
    fill = max(0, int(probe.storageFree()) - 400_000)  # in 200 KB blocks: each unrolls in room
    f = seeded_blocks(sc, max(1, fill // 200_000), seed=34, nbytes=200_000)
    stored_rdd = a.id() + 100_000  # a block no RDD of this session has: the direct put
    rdds, version = [a, f], int(b.tableVersion())

    def publish(ranks: dict) -> None:
        nonlocal version
        version += 1
        b.publish(version, wire.encode_arrays(ranks), "")
        deadline = time.time() + 20
        while probe.version() < version and time.time() < deadline:
            time.sleep(0.05)
        assert probe.version() >= version

    try:
        nf = f.getNumPartitions()
        publish({a.id(): [5], f.id(): [9] * nf, stored_rdd: [2]})
        f.count()
        assert probe.cached(a.id(), 1) == 1 and probe.cached(f.id(), nf) == nf
        half_a = int(probe.memSize(a.id(), 0)) // 2
        probe.setAdmit(True)
        over = int(probe.storageUsed()) - half_a  # the put must evict all but half of A
        assert not probe.put(stored_rdd, 0, over, False), "the store must fail"
        assert probe.cached(a.id(), 1) == 1, "admission must keep A"
        nbytes = int(probe.storageFree()) + half_a  # with 1.5x to unroll: below free + A
        d, d2 = (seeded_blocks(sc, 1, seed=seed, nbytes=nbytes) for seed in (32, 33))
        rdds += [d, d2]
        publish({d.id(): [2], d2.id(): [2]})
        assert digests(d) == expected_digests(1, 32, nbytes)
        assert probe.cached(d.id(), 1) == 0 and probe.cached(a.id(), 1) == 1
        probe.setAdmit(False)
        assert digests(d2) == expected_digests(1, 33, nbytes)
        assert probe.cached(d2.id(), 1) == 1, "without admission the store evicts A"
        assert probe.cached(a.id(), 1) == 0 and probe.cached(f.id(), nf) == nf
    finally:
        probe.setAdmit(False)
        for r in rdds:
            r.unpersist(blocking=True)
        b.publish(int(b.tableVersion()) + 1,
                  wire.encode_arrays({r: [] for r in [*(x.id() for x in rdds), stored_rdd]}), "")


def test_an_executors_table_applied_report_does_not_wake_a_waiting_drain(spark):
    """`table_applied` (metrics only: it carries its own lag) goes with the brain's next drain:
    it neither ends a drain's wait nor starts its linger, or each version would cost the brain a
    drain per executor report. When the wait ends it is there."""
    sc, b = spark.sparkContext, bridge(spark)
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    Events(spark).clear()
    version = int(b.tableVersion()) + 1
    b.publish(version, "", "")  # the executor applies it and says so with its next ask
    t0 = time.monotonic()
    text = b.drainWait(10_000, 3_000, 0, False)
    waited = time.monotonic() - t0
    applied = [json.loads(line) for line in text.split("\n") if '"e":"table_applied"' in line]
    assert [e["version"] for e in applied] == [version], text
    assert waited >= 2.9, waited
