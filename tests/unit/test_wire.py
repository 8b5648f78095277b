"""spark_plugin.wire against the committed JVM output (tests/fixtures/events.jsonl, regenerated
and checked against real Spark by tests/spark/test_wire_fixture.py); no JVM here."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lrc.dag import Dependency
from spark_plugin import wire

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "events.jsonl"
LINES = FIXTURE.read_text().splitlines()


def len_json(event: dict) -> int:
    return len(json.dumps(event))


def line_of(kind: str) -> dict:
    """The fixture's richest event of that kind (the one with the most characters)."""
    return max((json.loads(line) for line in LINES if json.loads(line)["e"] == kind), key=len_json)


def test_fixture_holds_every_event_type_and_each_line_decodes_with_all_fields():
    records = [wire.decode_event(line) for line in LINES]
    assert {type(r) for r in records} == set(wire.EVENT_TYPES.values())
    rdds = [r for j in records if isinstance(j, wire.JobStart) for s in j.stages for r in s.rdds]
    assert any(r.deps for r in rdds), "the optional deps must be covered too"
    evictions = [x for c in records if isinstance(c, wire.TaskCache) for x in c.evictions]
    assert evictions and all(isinstance(x, wire.Eviction) for x in evictions)


def test_decoded_values_keep_their_types():
    ev = wire.decode_event(json.dumps(line_of("task_cache") | {"evictions": [
        {"block": "rdd_3_0", "order": "priority", "priority": 1, "for": None}]}))
    assert ev.evictions == (wire.Eviction("rdd_3_0", "priority", 1.0, None),)
    assert isinstance(ev.hits, tuple) and isinstance(ev.table_version, int)


@pytest.mark.parametrize("change, words", [
    (lambda e: e.update(hit=e.pop("hits")), ["task_cache", "'hits' is missing"]),
    (lambda e: e.update(extra=1), ["task_cache", "unexpected", "extra"]),
    (lambda e: e.update(stage="7"), ["task_cache.stage", "expected int", "'7'"]),
    (lambda e: e.update(table_version=True), ["task_cache.table_version", "expected int"]),
    (lambda e: e["evictions"][0].pop("for"), ["task_cache.evictions[0]", "'for' is missing"]),
    (lambda e: e.update(e="task_cached"), ["unknown event type 'task_cached'", "task_cache"]),
])
def test_a_field_renamed_on_one_side_is_an_error_naming_it(change, words):
    ev = line_of("task_cache")
    change(ev)
    with pytest.raises(wire.WireError) as e:
        wire.decode_event(json.dumps(ev))
    for w in words:
        assert w in str(e.value)


def test_nested_job_start_fields_are_checked_too():
    ev = line_of("job_start")
    del ev["stages"][0]["rdds"][0]["parts"]
    with pytest.raises(wire.WireError, match=r"job_start.stages\[0\].rdds\[0\]: field 'parts'"):
        wire.decode_event(json.dumps(ev))


def first_dep(ev: dict) -> tuple[int, int, dict]:
    """(stage index, rdd index, the dependency) of the job start's first described dep."""
    for i, st in enumerate(ev["stages"]):
        for j, r in enumerate(st["rdds"]):
            if r.get("deps"):
                return i, j, r["deps"][0]
    raise AssertionError("the fixture's job start has no deps")


def test_a_dependency_decodes_into_the_planners_type_with_every_field_required():
    ev = line_of("job_start")
    i, j, dep = first_dep(ev)
    d = wire.decode_event(json.dumps(ev)).stages[i].rdds[j].deps[0]
    assert isinstance(d, Dependency)
    assert (d.parent, d.kind, d.length) == (dep["parent"], dep["kind"], dep["length"])
    where = rf"job_start.stages\[{i}\].rdds\[{j}\].deps\[0\]"
    for change, words in ((lambda x: x.pop("map"), "field 'map' is missing"),
                          (lambda x: x.pop("in_start"), "field 'in_start' is missing"),
                          (lambda x: x.update(map=None), "map: expected list, got None"),
                          (lambda x: x.update(mapping=[]), "unexpected field.* mapping"),
                          (lambda x: x.update(kind="narrow"), "kind 'narrow' is not one of"),
                          (lambda x: x.update(kind="explicit", map=[[0], ["a"]]),
                           r"map\[1\]\[0\]: expected int")):
        bad = json.loads(json.dumps(ev))
        change(bad["stages"][i]["rdds"][j]["deps"][0])
        with pytest.raises(wire.WireError, match=where + ".*" + words):
            wire.decode_event(json.dumps(bad))


@pytest.mark.parametrize("line", ["not json", "[1, 2]", "{}"])
def test_malformed_lines_are_wire_errors(line):
    with pytest.raises(wire.WireError):
        wire.decode_event(line)


def test_table_encoding():
    arrays = {7: [3.0, 0.5, math.inf, -math.inf, 0.1, 1e-7], 9: []}
    text = wire.encode_arrays(arrays)
    assert text == "7=3,0.5,Infinity,-Infinity,0.1,1e-07;9="
    assert [float(x) for x in text.split(";")[0][2:].split(",")] == arrays[7]  # exact round trip
    assert wire.encode_stages({5, 2, 11}) == "2,5,11"
    assert wire.encode_arrays({}) == "" and wire.encode_stages(()) == ""


def test_drain_joins_a_line_the_jvm_returned_in_pieces():
    """EventBuffer returns a line longer than a reply as PIECE-marked parts, one per drain."""
    from spark_plugin.bridge import PIECE, drain_lines

    line = '{"e":"app_end","time":1}' + " " * 20
    replies = iter(["a\n" + "b", PIECE + line[:10], PIECE + line[10:25], line[25:] + "\nc", ""])
    calls = []

    def drain(n, wait_ms):
        calls.append(wait_ms)
        return next(replies)

    assert drain_lines(drain, 10) == ["a", "b"]
    assert drain_lines(drain, 10, 50) == [line, "c"]
    assert calls == [0, 50, 0, 0], "only the first call of a drain waits"


def test_a_stage_bound_to_gpus_carries_them_into_the_planners_stage():
    """`gpus` is written only for a stage whose resource profile gives its tasks GPUs: absent it
    is a CPU stage; present, the brain's Stage has it (crd weighs its references)."""
    from spark_plugin.events import job_from_event

    ev = line_of("job_start")
    cpu = wire.decode_event(json.dumps(ev))
    assert all(s.gpus == 0.0 for s in cpu.stages)
    ev["stages"][0]["gpus"] = 0.5
    _, stages, _ = job_from_event(wire.decode_event(json.dumps(ev)))
    assert [s.gpus for s in stages] == [0.5] + [0.0] * (len(stages) - 1)
    ev["stages"][0]["gpus"] = "one"
    with pytest.raises(wire.WireError, match=r"job_start.stages\[0\].gpus"):
        wire.decode_event(json.dumps(ev))


def test_a_result_stage_on_chosen_partitions_carries_them_into_the_planners_stage():
    """`parts` is written only for a result stage whose partitions are not 0..tasks-1."""
    from spark_plugin.events import job_from_event

    ev = line_of("job_start")
    _, stages, _ = job_from_event(wire.decode_event(json.dumps(ev)))
    assert all(s.parts is None for s in wire.decode_event(json.dumps(ev)).stages)
    ev["stages"][0]["parts"] = [5, 2]
    _, chosen, _ = job_from_event(wire.decode_event(json.dumps(ev)))
    assert chosen[0].partitions == (5, 2) and chosen[1:] == stages[1:]


def test_a_stage_attempt_on_part_of_its_partitions_names_them():
    """`parts` is written only for an attempt that computes part of its stage (a rerun, or a
    shuffle partly lost): absent, all of them."""
    ev = line_of("stage_submitted")
    assert wire.decode_event(json.dumps(ev)).parts is None
    ev["parts"] = [1, 3]
    assert wire.decode_event(json.dumps(ev)).parts == (1, 3)
    ev["parts"] = [1, "3"]
    with pytest.raises(wire.WireError, match=r"stage_submitted.parts"):
        wire.decode_event(json.dumps(ev))


def test_a_task_end_that_resubmits_a_finished_task_says_so():
    """`resubmitted` is written only on Spark's notice that a finished map task runs again."""
    ev = line_of("task_end")
    assert wire.decode_event(json.dumps(ev)).resubmitted is False
    ev.update(success=False, resubmitted=True)
    assert wire.decode_event(json.dumps(ev)).resubmitted is True
    ev["resubmitted"] = 1
    with pytest.raises(wire.WireError, match=r"task_end.resubmitted"):
        wire.decode_event(json.dumps(ev))


def test_an_rdd_listed_by_several_stages_keeps_its_first_description_with_deps():
    """A job lists every ancestor stage, and GraphX's stages share hundreds of RDDs: each RDD is
    built from the first description the lineage walk reached (with `deps`), else from the first
    one (its parents inside the stage taken as narrow dependencies of unknown mapping)."""
    from spark_plugin.events import job_from_event

    def rdd(deps):
        r = {"id": 5, "name": "r", "callsite": "", "parts": 2, "level": "NONE", "cached": False,
             "parents": [4]}
        return r if deps is None else {**r, "deps": deps}

    def dep(kind):
        return {"parent": 4, "kind": kind, "in_start": 0, "out_start": 0, "length": 0, "map": []}

    def stage(sid, r5):
        return {"stage": sid, "attempt": 0, "rdd": 5, "tasks": 2, "parents": [], "shuffle": sid,
                "rdd_ids": [4, 5], "rdds": [
                    {"id": 4, "name": "", "callsite": "", "parts": 2, "level": "NONE",
                     "cached": False, "parents": []}, r5]}

    for order, kind in (([None, [dep("one_to_one")], [dep("shuffle")]], "one_to_one"),
                        ([[dep("shuffle")], [dep("one_to_one")]], "shuffle"),
                        ([None, None], "unknown")):
        ev = {"e": "job_start", "job": 0, "time": 0, "received": 0, "sent": 0,
              "stage_ids": list(range(len(order))),
              "stages": [stage(i, rdd(d)) for i, d in enumerate(order)]}
        _, _, rdds = job_from_event(wire.decode_event(json.dumps(ev)))
        assert [r.id for r in rdds] == [4, 5]
        assert [d.kind for d in rdds[1].deps] == [kind], order


def test_bridge_members_are_looked_up_once_each():
    """py4j answers `JavaClass.name` with a reflection round trip per access: the bridge resolves
    each member once and calls it from then on."""
    from spark_plugin.bridge import Members

    class Handle:
        lookups: list[str] = []

        def __getattr__(self, name):
            Handle.lookups.append(name)
            return lambda *args: (name, args)

    m = Members(Handle())
    assert [m.drainWait(1, 2), m.drainWait(3, 4), m.publish(5)] == [
        ("drainWait", (1, 2)), ("drainWait", (3, 4)), ("publish", (5,))]
    assert Handle.lookups == ["drainWait", "publish"]
    with pytest.raises(AttributeError):
        m.__wrapped__  # noqa: B018 - dunder names are not members
    assert Handle.lookups == ["drainWait", "publish"]
