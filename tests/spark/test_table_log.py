"""The driver's TableStore on a real driver JVM (through py4j, no mocks): replies hold exactly the
changes since the asker's version, the version log is compacted to what every live executor has
acknowledged, and an executor asking from below the compaction point gets a reset with the full
table."""
from __future__ import annotations

import random
import time

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import session
from spark_plugin import wire

pytestmark = pytest.mark.spark

NEVER_STALE_MS = 3_600_000


@pytest.fixture(scope="module")
def jvm():
    spark = session("local[1]", BASE_CONF, plugin=False, app_name="table-log")
    yield spark.sparkContext._jvm
    spark.stop()


class Model:
    """What the table is after each publish, and when each RDD / stage last changed."""

    def __init__(self, store):
        self.store = store
        self.version = 0
        self.arrays: dict[int, list[float]] = {}
        self.changed: dict[int, int] = {}  # rdd -> version of its last change
        self.planned: dict[int, int] = {}  # stage -> version that first planned it

    def publish(self, arrays: dict[int, list[float]], stages=()) -> None:
        self.version += 1
        self.store.publish(self.version, wire.encode_arrays(arrays), wire.encode_stages(stages))
        for rdd, ps in arrays.items():
            self.changed[rdd] = self.version
            if ps:
                self.arrays[rdd] = [float(p) for p in ps]
            else:
                self.arrays.pop(rdd, None)
        for s in stages:
            self.planned.setdefault(s, self.version)

    def delta(self, have: int) -> tuple[dict[int, list[float]], list[int]]:
        return ({r: self.arrays.get(r, []) for r, v in self.changed.items() if v > have},
                sorted(s for s, v in self.planned.items() if v > have))

    def full(self) -> tuple[dict[int, list[float]], list[int]]:
        return dict(self.arrays), sorted(self.planned)


def ask(jvm, store, executor: str, have: int) -> dict:
    text = store.answer(jvm.org.sparklrc.TableRequest(executor, have, 0))
    version, reset, brain, stages, arrays, published_us, moves_set, moves = text.split("|")
    assert int(published_us) >= 0
    assert moves_set in ("0", "1") and (moves_set == "1" or moves == "")
    parsed, partial = {}, {}
    for item in filter(None, arrays.split(";")):
        if "@" in item:
            rdd, changes = item.split("@")
            partial[int(rdd)] = {int(p): float(v) for p, v in
                                 (c.split(":") for c in changes.split(","))}
            continue
        rdd, vals = item.split("=")
        parsed[int(rdd)] = [float(x) for x in vals.split(",")] if vals else []
    items = list(filter(None, arrays.split(";")))
    assert len(parsed) + len(partial) == len(items), "an RDD listed twice"
    stage_list = [int(s) for s in stages.split(",") if s]
    assert len(stage_list) == len(set(stage_list)), "a stage listed twice"
    return {"version": int(version), "reset": reset == "1", "brain": brain == "1",
            "arrays": parsed, "partial": partial, "stages": sorted(stage_list),
            "moves": moves if moves_set == "1" else None}


def random_history(model: Model, n_versions: int, seed: int) -> None:
    rnd = random.Random(seed)
    next_stage = 0
    for _ in range(n_versions):
        changes = {}
        for rdd in rnd.sample(range(12), rnd.randint(0, 4)):
            changes[rdd] = [] if rnd.random() < 0.25 else [rnd.randint(-5, 5) for _ in range(3)]
        stages = list(range(next_stage, next_stage + rnd.randint(0, 2)))
        stages += rnd.sample(range(next_stage + 1), 1)  # sometimes an already planned stage
        next_stage += 3
        model.publish(changes, stages)


def test_reply_holds_exactly_the_changes_since_the_asked_version(jvm):
    store = jvm.org.sparklrc.TableStore(NEVER_STALE_MS)
    model = Model(store)
    ask(jvm, store, "pin", 0)  # a live executor at version 0: nothing may be compacted
    random_history(model, 40, seed=3)
    assert any(not ps for ps in model.delta(0)[0].values()), "history must remove some RDDs"
    for have in range(model.version + 1):
        r = ask(jvm, store, "probe", have)
        arrays, stages = model.delta(have)
        assert (r["version"], r["reset"], r["brain"]) == (model.version, False, False), have
        assert r["arrays"] == arrays, have
        assert r["stages"] == stages, have
    assert ask(jvm, store, "probe", model.version)["arrays"] == {}
    ahead = ask(jvm, store, "probe", model.version + 5)  # e.g. an executor of an older driver
    assert ahead["reset"] and (ahead["arrays"], ahead["stages"]) == model.full()


def test_gpu_placement_moves_reach_each_executor_below_their_version_once(jvm):
    """Moves go whole, with the version that changed them; later asks do not repeat them, a
    reset carries them, and a publish without moves (None) leaves them as they are."""
    store = jvm.org.sparklrc.TableStore(NEVER_STALE_MS)
    ask(jvm, store, "pin", 0)
    store.publish(1, "1=1,2", "0")
    assert ask(jvm, store, "e", 0)["moves"] is None  # never set
    store.publish(2, "", "", "1,0,7,100,0;1,1,7,100,1")
    store.publish(3, "1@0:5", "")  # Java null from Python: moves unchanged
    assert ask(jvm, store, "e", 1)["moves"] == "1,0,7,100,0;1,1,7,100,1"
    assert ask(jvm, store, "e", 2)["moves"] is None
    assert ask(jvm, store, "e", 9)["moves"] == "1,0,7,100,0;1,1,7,100,1"  # reset
    store.publish(4, "", "", "")
    assert ask(jvm, store, "e", 3)["moves"] == ""  # withdrawn


def test_log_is_compacted_to_the_slowest_live_executor(jvm):
    store = jvm.org.sparklrc.TableStore(NEVER_STALE_MS)
    model = Model(store)
    for ex in ("e1", "e2"):
        ask(jvm, store, ex, 0)
    random_history(model, 30, seed=5)
    logged = sum(map(len, model.delta(0)))
    assert store.logEntries() == logged
    ask(jvm, store, "e1", model.version)
    assert store.logEntries() == logged  # e2 still at 0
    ask(jvm, store, "e2", 12)
    assert store.logEntries() == sum(map(len, model.delta(12))) < logged
    for have in (12, 20):  # at or above the compaction point: deltas still exact
        r = ask(jvm, store, "e2", have)
        assert not r["reset"] and (r["arrays"], r["stages"]) == model.delta(have)
    late = ask(jvm, store, "e3", 7)  # below it: the full table, removed RDDs simply absent
    assert late["reset"] and late["version"] == model.version
    assert (late["arrays"], late["stages"]) == model.full()
    assert all(late["arrays"].values())
    ask(jvm, store, "e3", model.version)
    ask(jvm, store, "e2", model.version)
    assert store.logEntries() == 0  # tombstones of removed RDDs are gone too
    assert ask(jvm, store, "e1", model.version)["arrays"] == {}


def test_store_stays_bounded_while_executors_keep_up(jvm):
    """RDD i appears at version i and is removed at version i + 2; stage i is planned at i."""
    store = jvm.org.sparklrc.TableStore(NEVER_STALE_MS)
    model = Model(store)
    executors = ("a", "b", "c")
    for ex in executors:
        ask(jvm, store, ex, 0)
    for i in range(1, 301):
        changes = {i: [i % 7, 1]}
        if i > 2:
            changes[i - 2] = []
        model.publish(changes, [i])
        for ex in executors:
            r = ask(jvm, store, ex, model.version - 1)
            assert not r["reset"] and (r["arrays"], r["stages"]) == model.delta(model.version - 1)
        assert store.logEntries() == len(changes) + 1  # only the version not yet acknowledged
        for ex in executors:  # each executor's next ask acknowledges the version it got
            ask(jvm, store, ex, model.version)
        assert store.logEntries() == 0
    fresh = ask(jvm, store, "new", 0)
    assert fresh["reset"] and sorted(fresh["arrays"]) == [299, 300]


def test_executor_that_stops_asking_does_not_pin_the_log(jvm):
    """With a 1 ms staleness, an executor silent for 50 ms is dropped at the next publish: the log
    is compacted and its next ask gets a reset. The control store (never stale) keeps the log."""
    stale = jvm.org.sparklrc.TableStore(1)
    pinned = jvm.org.sparklrc.TableStore(NEVER_STALE_MS)
    models = {"stale": Model(stale), "pinned": Model(pinned)}
    for model in models.values():
        ask(jvm, model.store, "gone", 0)
    time.sleep(0.05)
    for model in models.values():
        random_history(model, 10, seed=9)
    assert pinned.logEntries() == sum(map(len, models["pinned"].delta(0))) > 0
    assert stale.logEntries() == 0
    back = ask(jvm, pinned, "gone", 0)
    assert not back["reset"] and (back["arrays"], back["stages"]) == models["pinned"].delta(0)
    back = ask(jvm, stale, "gone", 0)
    assert back["reset"] and (back["arrays"], back["stages"]) == models["stale"].full()


def test_an_rdd_changed_partition_by_partition_comes_as_just_those_partitions(jvm):
    """O(changes): an asker gets, of an RDD it holds at its current size, only the partitions
    changed after its version; an RDD created, resized or removed since comes whole. Applied to
    the table the asker had, every reply gives the current table."""
    store = jvm.org.sparklrc.TableStore(NEVER_STALE_MS)
    ask(jvm, store, "pin", 0)
    rnd = random.Random(11)
    tables: list[dict[int, list[float]]] = [{}]  # the table after each version
    whole_at: dict[int, int] = {}  # rdd -> version of its last whole change (creation, resize)
    part_at: dict[tuple[int, int], int] = {}  # (rdd, part) -> version of its last change
    for v in range(1, 61):
        table = {r: list(a) for r, a in tables[-1].items()}
        whole, updates = {}, {}
        for rdd in rnd.sample(range(8), rnd.randint(1, 3)):
            roll = rnd.random()
            if rdd in table and roll < 0.7:  # partition changes, at the held size
                parts = rnd.sample(range(len(table[rdd])), rnd.randint(1, 2))
                updates[rdd] = {p: float(rnd.randint(-9, 9)) for p in parts}
                for p, x in updates[rdd].items():
                    table[rdd][p] = x
                    part_at[(rdd, p)] = v
            elif rdd in table and roll < 0.8:
                whole[rdd] = []
                del table[rdd]
            else:  # created or resized
                whole[rdd] = table[rdd] = [float(rnd.randint(-9, 9)) for _ in range(rnd.randint(3, 40))]
            if rdd in whole:
                whole_at[rdd] = v
        text = ";".join(t for t in (wire.encode_arrays(whole), wire.encode_updates(updates)) if t)
        store.publish(v, text, "")
        tables.append(table)
    sent = 0
    for have in range(len(tables)):
        r = ask(jvm, store, "probe", have)
        assert not r["reset"] and r["version"] == len(tables) - 1
        got = {k: list(a) for k, a in tables[have].items()}
        for rdd, a in r["arrays"].items():
            assert whole_at[rdd] > have, (have, rdd)  # whole only when it changed whole since
            if a:
                got[rdd] = a
            else:
                got.pop(rdd, None)
        for rdd, changes in r["partial"].items():
            assert whole_at[rdd] <= have and rdd in got, (have, rdd)
            assert set(changes) == {p for (q, p), v in part_at.items() if q == rdd and v > have}
            for p, x in changes.items():
                got[rdd][p] = x
            sent += len(changes)
        assert got == tables[-1], have
    assert sent > 0, "the history must send partition changes"
