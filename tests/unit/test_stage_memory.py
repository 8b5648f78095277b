"""Job starts name known stages by id only (issue 10): the brain's StageMemory resolves them.

The listener's side (`Described.java`) is modelled here line for line: a stage attempt already
described is sent as an id; the memory, touched in the same order and at least as large, must
then hold every stage the listener takes as described.
"""
from __future__ import annotations

import json
import random
from collections import OrderedDict

from spark_plugin import plan_speed, wire
from spark_plugin.events import StageMemory, job_from_event
from spark_plugin.scale import new_brain


class ListenerModel:
    """Described.java and LrcListener.onJobStart: LinkedHashMaps in access order, eldest out
    past the capacity; an RDD goes by id when described before the same (its text here, its
    fields there)."""

    def __init__(self, capacity: int, rdd_capacity: int) -> None:
        self.capacity, self.rdd_capacity = capacity, rdd_capacity
        self.stages, self.rdds = OrderedDict(), OrderedDict()

    @staticmethod
    def _put(m: OrderedDict, k, v, cap: int) -> None:
        m[k] = v
        m.move_to_end(k)
        while len(m) > cap:
            m.popitem(last=False)

    def job_start(self, job: int, stages: list[tuple[int, int]], level: dict[int, str]) -> str:
        described, rdd_order, here = [], [], {}
        for sid, attempt in stages:
            if self.stages.get(sid) == attempt:
                continue
            st = _stage(sid, attempt, job)
            rdds = [_rdd(rid, level.get(rid, "NONE")) for rid in st["rdd_ids"]]
            st["rdds"] = []
            for r in rdds:
                text = json.dumps(r)
                rdd_order.append((r["id"], text))
                if here.get(r["id"], self.rdds.get(r["id"])) != text:
                    st["rdds"].append(r)
                    here[r["id"]] = text
            described.append(st)
        for sid, attempt in stages:
            self._put(self.stages, sid, attempt, self.capacity)
        for rid, text in rdd_order:
            self._put(self.rdds, rid, text, self.rdd_capacity)
        return json.dumps({"e": "job_start", "job": job, "time": 0, "received": 0, "sent": 0,
                           "stage_ids": [s for s, _ in stages], "stages": described})


def _rdd(rid: int, level: str) -> dict:
    return {"id": rid, "name": f"r{rid}", "callsite": "", "parts": 2, "level": level,
            "cached": level != "NONE", "parents": []}


def _stage(sid: int, attempt: int, tag: int) -> dict:
    """Stage sid over its own RDD and one of 7 RDDs many stages share."""
    return {"stage": sid, "attempt": attempt, "rdd": sid, "tasks": 2, "parents": [],
            "shuffle": tag, "rdd_ids": [sid, 1000 + sid % 7], "rdds": []}


def test_memory_resolves_every_stage_and_rdd_the_listener_sends_by_id():
    rng = random.Random(7)
    listener, memory = ListenerModel(16, 12), StageMemory(capacity=32, rdd_capacity=24)
    latest: dict[int, tuple[int, int]] = {}  # stage -> (attempt, job) last described
    attempts: dict[int, int] = {}
    level: dict[int, str] = {}
    by_id = rdds_by_id = 0
    for job in range(3000):
        ids = rng.sample(range(60), rng.randint(1, 25))
        for s in ids:
            if rng.random() < 0.02:
                attempts[s] = attempts.get(s, 0) + 1  # a retried stage is described again
        if rng.random() < 0.05:  # the application persists an RDD: described again
            level[rng.choice([1000 + k for k in range(7)] + ids)] = "MEMORY_ONLY"
        stages = [(s, attempts.get(s, 0)) for s in ids]
        ev = wire.decode_event(listener.job_start(job, stages, level))
        for st in ev.stages:
            latest[st.stage] = (st.attempt, job)
            rdds_by_id += len(st.rdd_ids) - len(st.rdds)
        by_id += len(ids) - len(ev.stages)
        full, resolved, missing = memory.resolve(ev)
        assert missing == []
        assert [s.stage for s in resolved] == ids
        assert all((s.attempt, s.shuffle) == latest[s.stage] for s in resolved)
        for s in full.stages:  # what the job start described, completed with the current RDDs
            assert [(r.id, r.level) for r in s.rdds] == [
                (rid, level.get(rid, "NONE")) for rid in s.rdd_ids]
    assert by_id > 10_000 and rdds_by_id > 1_000  # most stages and RDDs did go by id


def test_a_smaller_memory_names_what_it_lacks():
    listener, memory = ListenerModel(8, 8), StageMemory(capacity=2)
    for job in range(4):
        memory.resolve(wire.decode_event(listener.job_start(job, [(job, 0)], {})))
    ev = wire.decode_event(listener.job_start(9, [(0, 0), (3, 0), (5, 0)], {}))
    _, resolved, missing = memory.resolve(ev)
    assert [s.stage for s in resolved] == [3, 5] and missing == [0]


def test_a_job_naming_its_stages_by_id_is_planned_as_if_described():
    """The second job of plan-speed's chain, sent by id, and sent with every stage described:
    the same table, the same stages announced; the work follows its new stages only."""
    stages, parts = 40, 3
    published = []
    for by_reference in (True, False):
        brain, bridge = new_brain("lrc")
        bridge.record = True
        bridge.pending += [plan_speed.chain_job(stages, parts)] + plan_speed.completion(stages)
        while bridge.pending:
            brain.step(force=True)
        first = bridge.sent[0]
        assert first[2] == ",".join(map(str, range(stages)))  # every stage of the big job planned
        bridge.sent.clear()
        line = plan_speed.next_job(stages, parts, by_ref=by_reference)
        ev = wire.decode_event(line)
        assert len(ev.stages) == (2 if by_reference else stages + 2)
        ev, described, missing = brain.stage_memory.resolve(ev)
        assert not missing and len(described) == stages + 2
        job, built, _ = job_from_event(ev, described, skip=brain.planner.completed)
        if by_reference:  # skipped stages named by id are not built again
            assert [s.id for s in built] == [stages, stages + 1]
        assert job.stage_ids == tuple(range(stages + 2))
        bridge.pending.append(line)
        brain.step(force=True)
        published.append(bridge.sent)
    assert published[0] == published[1]
    (_, arrays, planned), = published[0]
    assert planned == f"{stages},{stages + 1}" and arrays  # the new stages' reads of the base


def test_plan_speed_plans_every_task_of_the_big_job():
    out = plan_speed.measure(stages=100, parts=4)
    assert out["next_job_chars"] < out["next_job_chars_described"] / 10
    brain, bridge = new_brain("lrc")
    bridge.pending.append(plan_speed.chain_job(100, 4))
    brain.step(force=True)
    refs = brain.planner.refs
    assert sum(len(t) for t in refs.pending.values()) == 400  # every task registered
    # stage 0 computes the base, the 99 stages after it read it; stage k+1 reads m_k (k % 4 == 0)
    assert all(refs.count[(0, p)] == 99 for p in range(4))
    assert all(refs.count[(3 + 4 * k, p)] == 1 for k in range(0, 99, 4) for p in range(4))
