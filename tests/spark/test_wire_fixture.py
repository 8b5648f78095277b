"""The wire against real Spark: what the JVM emits is what tests/fixtures/events.jsonl holds, and
a table encoded by spark_plugin.wire is what the JVM's TableCodec decodes.

One small application on two executor JVMs (`local-cluster[2,1,1024]`): a table published per job
(Python-encoded), cached RDDs under memory pressure (evictions by priority), a shuffle, unpersist,
an executor killed, the context stopped. Together that makes every event type the shim emits.
`LRC_UPDATE_FIXTURE=1` rewrites the committed fixture from this run; without it the committed
fixture must have the same field names per event type as this run's events.
"""
from __future__ import annotations

import json
import math
import os
import time
from operator import add
from pathlib import Path

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import PRESSURE_CONF, FakeBrain, bridge, job_done, seeded_blocks, session
from spark_plugin import wire

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "events.jsonl"
CONF = {**BASE_CONF, **PRESSURE_CONF, "spark.lrc.tableWaitMs": "5000",
        "spark.executor.memory": "512m", "spark.lrc.countValues": "true"}
MAP_FIELDS = {"resources"}  # keyed by data (resource names), not by field names


def priority(part: int) -> float:
    """What the test's table gives partition `part` of every cached RDD."""
    return part + 0.25


def plan(job_start: dict) -> tuple[str, str]:
    cached = {r["id"]: r["parts"] for s in job_start["stages"] for r in s["rdds"] if r["cached"]}
    arrays = {rdd: [priority(p) for p in range(parts)] for rdd, parts in sorted(cached.items())}
    return wire.encode_arrays(arrays), wire.encode_stages(s["stage"] for s in job_start["stages"])


def field_paths(obj: dict, prefix: str = "") -> set[str]:
    """Field names of an event, nested ones as `stages[].rdds[].id`."""
    out = set()
    for k, v in obj.items():
        path = f"{prefix}{k}"
        out.add(path)
        if isinstance(v, dict) and k not in MAP_FIELDS:
            out |= field_paths(v, path + ".")
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, dict):
                    out |= field_paths(x, path + "[].")
    return out


def paths_by_type(events: list[dict]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for e in events:
        out.setdefault(e["e"], set()).update(field_paths(e))
    return out


def covering(events: list[dict]) -> list[dict]:
    """The first events that, together, show every field path of every type."""
    seen: dict[str, set[str]] = {}
    out = []
    for e in events:
        new = field_paths(e) - seen.setdefault(e["e"], set())
        if new:
            seen[e["e"]] |= new
            out.append(e)
    return out


@pytest.fixture(scope="module")
def run():
    spark = session("local-cluster[2,1,1024]", CONF, plugin=True, app_name="wire-fixture")
    b = bridge(spark)
    sc = spark.sparkContext
    try:
        with FakeBrain(spark, plan, keep_buffered=True) as brain:  # executor_added included
            ev = brain.events
            deadline = time.time() + 60
            while len({e["executor"] for e in ev.of("executor_plugin")}) < 2 \
                    and time.time() < deadline:
                sc.parallelize(range(4), 4).count()  # executors register lazily
                time.sleep(0.2)
            a = seeded_blocks(sc, 8, 1, 600_000)
            a.count()
            c = seeded_blocks(sc, 12, 2, 600_000)
            c.count()  # memory pressure: c's puts evict a's blocks, by the table's priorities
            assert sorted(a.map(len).map(lambda n: (n % 3, 1)).reduceByKey(add).collect()) \
                == [(0, 8)]
            a.unpersist(blocking=True)
            c.unpersist(blocking=True)
            ev.wait_for(lambda es: sum(1 for e in es if e["e"] == "unpersist") >= 2)
            # a JVM RDD cached deserialized: 2 partitions of 500 values each
            counted = sc._jsc.sc().range(0, 1000, 1, 2).persist(
                sc._jvm.org.apache.spark.storage.StorageLevel.MEMORY_ONLY())
            assert counted.count() == 1000
            counted_id = counted.id()
            counted.unpersist(True)
            # the same, serialized (MEMORY_ONLY_SER): counted by reading the block back
            counted_ser = sc._jsc.sc().range(0, 1000, 1, 2).persist(
                sc._jvm.org.apache.spark.storage.StorageLevel.MEMORY_ONLY_SER())
            assert counted_ser.count() == 1000
            counted_ser_id = counted_ser.id()
            counted_ser.unpersist(True)
            full = wire.encode_arrays({3: [0.1, 1e-7, 12345678.5, -2, math.inf, -math.inf], 4: []})
            decoded = sc._jvm.org.sparklrc.TableCodec.parseArrays(
                full + ";" + wire.encode_updates({3: {1: -math.inf, 7: 2.5}, 5: {2: 1.5}}))
            decoded = {int(k): list(decoded.get(k)) for k in decoded.keySet()}
        assert sc._jsc.sc().killExecutor("1")
        ev.wait_for(lambda es: any(e["e"] == "executor_removed" for e in es), timeout=60)
        java_types = str(b.eventTypes()).split(",")
    finally:
        spark.stop()
    ev.drain()  # the driver JVM (and its static buffer) outlives the context: app_end
    assert job_done(1)(ev.all)
    return {"events": ev.all, "java_types": java_types, "decoded": decoded,
            "counted": counted_id, "counted_ser": counted_ser_id}


def test_every_event_type_appears_and_python_knows_exactly_those(run):
    assert set(run["java_types"]) == set(wire.EVENT_TYPES)
    assert {e["e"] for e in run["events"]} == set(run["java_types"])


def test_committed_fixture_has_the_field_names_the_jvm_emits(run):
    current = paths_by_type(run["events"])
    if os.environ.get("LRC_UPDATE_FIXTURE") == "1":
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n"
                                   for e in covering(run["events"])))
    committed = paths_by_type([json.loads(line) for line in FIXTURE.read_text().splitlines()])
    assert committed == current, "re-run with LRC_UPDATE_FIXTURE=1 and update spark_plugin/wire.py"


def test_every_emitted_event_decodes(run):
    for e in run["events"]:
        wire.decode_event(json.dumps(e))


def test_priorities_encoded_in_python_reach_the_executors_eviction_order(run):
    caches = [wire.decode_event(json.dumps(e)) for e in run["events"] if e["e"] == "task_cache"]
    by_priority = [x for c in caches for x in c.evictions if x.order == "priority"]
    assert by_priority, "the scenario must evict while a table is in force"
    for x in by_priority:
        assert x.priority == priority(int(x.block.rsplit("_", 1)[1])), x
    assert {e["executor"] for e in run["events"] if e["e"] == "table_in_force"} == {"0", "1"}


def test_executors_count_the_values_of_the_blocks_they_store(run):
    """A deserialized block's count is its array's length; a serialized one's (spark.lrc.
    countValues=true) is read back after the task: a JVM RDD's 500 longs, and a PySpark block's
    pickled batches - one each, a single 600 KB record per partition."""
    counts: dict[int, set[int]] = {}
    for e in run["events"]:
        if e["e"] == "task_cache":
            for name, n in zip(e["puts"], e["put_elements"], strict=True):
                counts.setdefault(int(name.split("_")[1]), set()).add(n)
    assert counts.pop(run["counted"]) == {500}
    assert counts.pop(run["counted_ser"]) == {500}
    assert counts and set().union(*counts.values()) == {1}


def test_table_codec_decodes_what_wire_encodes(run):
    # partial items change a copy: listed partitions set, the array grown with zeros if needed
    assert run["decoded"] == {3: [0.1, -math.inf, 12345678.5, -2.0, math.inf, -math.inf, 0.0, 2.5],
                              4: [], 5: [0.0, 0.0, 1.5]}
