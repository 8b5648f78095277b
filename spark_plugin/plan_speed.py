"""How long the brain takes to plan one big job: issue 10's "1,000 stages planned in <= 50 ms".

`python -m spark_plugin plan-speed [--stages 1000 --parts 10 --repeat 7]` builds the shim's
job_start line of a synthetic job of ``stages`` stages and feeds it through the code the live
brain runs (`Brain.step` with a bridge that only counts what it is sent: `wire.decode_event`,
`events.StageMemory`, `job_from_event`, `lrc.Planner.add_job`, the publish of the plan), timing
the whole and the brain's own measures of its parts; pure Python, no Spark. Then the job's
stages complete and a second job names all of them again (skipped, by id only, as the listener
sends them) plus two new stages: its planning time shows the work per job follows its new
stages, not the stages it lists.

The shape: a chain; stage k reads stage k-1's shuffle output (stage 0 the cached base RDD),
zips it with the cached base RDD (narrow: a read of a base block per task), maps it, and every
fourth stage caches its result, which stage k+1 zips in too. Each stage has ``parts`` tasks.
Times are wall clock, median (and max) over ``repeat`` fresh brains.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from .config import LrcSettings

T0 = 1_700_000_000_000


def _rdd(rid: int, parts: int, deps: list[tuple[int, str]], cached: bool = False,
         name: str = "") -> dict[str, Any]:
    return {"id": rid, "name": name or f"r{rid}", "callsite": f"site{rid % 7}", "parts": parts,
            "level": "MEMORY_ONLY" if cached else "NONE", "cached": cached,
            "parents": [p for p, _ in deps],
            "deps": [{"parent": p, "kind": k, "in_start": 0, "out_start": 0, "length": 0,
                      "map": []} for p, k in deps]}


def _stage(k: int, parts: int, result: bool = False) -> dict[str, Any]:
    """Stage k of the chain: RDD ids 1 + 4k .. 4 + 4k (RDD 0 is the cached base)."""
    s, z, m, base = 1 + 4 * k, 2 + 4 * k, 3 + 4 * k, 0
    first = [(base, "one_to_one")] if k == 0 else [(3 + 4 * (k - 1), "shuffle")]
    zipped = [(s, "one_to_one"), (base, "one_to_one")]
    if k > 0 and (k - 1) % 4 == 0:  # stage k-1 cached its result: zip it in
        zipped.append((3 + 4 * (k - 1), "one_to_one"))
    rdds = [_rdd(m, parts, [(z, "one_to_one")], cached=k % 4 == 0, name=f"m_{k}"),
            _rdd(z, parts, zipped), _rdd(s, parts, first), _rdd(base, parts, [], cached=True,
                                                                  name="base")]
    if k > 0 and (k - 1) % 4 == 0:
        rdds.append(_rdd(3 + 4 * (k - 1), parts, [], cached=True, name=f"m_{k - 1}"))
    return {"stage": k, "attempt": 0, "rdd": m, "tasks": parts,
            "parents": [] if k == 0 else [k - 1], "shuffle": -1 if result else k,
            "rdd_ids": [r["id"] for r in rdds], "rdds": rdds}


def by_reference(described: list[dict]) -> list[dict]:
    """The stages as the listener sends them: an RDD described by an earlier stage of the
    same job start goes by id only."""
    seen: set[int] = set()
    out = []
    for st in described:
        rdds = [r for r in st["rdds"] if r["id"] not in seen]
        seen.update(r["id"] for r in st["rdds"])
        out.append({**st, "rdds": rdds})
    return out


def job_start(job: int, stage_ids: list[int], described: list[dict]) -> str:
    return json.dumps({"e": "job_start", "job": job, "time": T0 + job, "received": T0 + job,
                       "sent": T0 + job, "stage_ids": stage_ids,
                       "stages": described})


def chain_job(stages: int, parts: int) -> str:
    """Job 0: ``stages`` stages, all described (the first job start of each)."""
    return job_start(0, list(range(stages)), by_reference(
        [_stage(k, parts, result=k == stages - 1) for k in range(stages)]))


def completion(stages: int) -> list[str]:
    """Every stage of job 0 ran (no tasks reported: the plan is what is measured), then it ended."""
    out = []
    for k in range(stages):
        out.append(json.dumps({"e": "stage_submitted", "stage": k, "attempt": 0, "tasks": 1,
                               "time": T0}))
        out.append(json.dumps({"e": "stage_completed", "stage": k, "attempt": 0,
                               "failed": False, "time": T0}))
    out.append(json.dumps({"e": "job_end", "job": 0, "time": T0, "success": True}))
    return out


def next_job(stages: int, parts: int, by_ref: bool = True) -> str:
    """Job 1: names job 0's stages (skipped now) and adds two new ones after them. By reference
    as the listener sends it, or with every stage described (as before issue 10)."""
    new = [_stage(stages, parts), _stage(stages + 1, parts, result=True)]
    if not by_ref:  # as before issue 10: every stage and RDD described
        old = [_stage(k, parts, result=k == stages - 1) for k in range(stages)]
        return job_start(1, list(range(stages + 2)), old + new)
    known = {r["id"] for k in range(stages) for r in _stage(k, parts)["rdds"]}
    return job_start(1, list(range(stages + 2)),
                     [{**st, "rdds": [r for r in st["rdds"] if r["id"] not in known]}
                      for st in new])


def measure(stages: int, parts: int, policy: str = "lrc") -> dict[str, float]:
    """One fresh brain: milliseconds per part for the big job, and for the job after it.

    The job start goes through `Brain.step` as the live brain applies it (the collector paused,
    `gcpause`); ``decode_ms`` times `wire.decode_event` on the same line beside it, so that
    ``planning_ms`` = (step start -> the table handed to the bridge) - decode: resolve, build,
    add_job and publish (issue 10's goal). ``step_ms`` is the whole step, decode included and
    the collection the pause deferred, which runs after the table is out."""
    from . import wire
    from .brain import Brain
    from .gcpause import gc_paused
    from .scale import CountingBridge

    bridge = CountingBridge()
    brain = Brain(bridge, LrcSettings.from_conf(policy=policy))
    line = chain_job(stages, parts)
    out: dict[str, float] = {"job_start_chars": len(line)}
    with gc_paused():
        t0 = time.perf_counter()
        wire.decode_event(line)
        decode = time.perf_counter() - t0
    bridge.pending.append(line)
    t0 = time.perf_counter()
    brain.step(force=True)
    step = time.perf_counter() - t0
    assert bridge.publishes == 1 and not brain.degraded
    m, sent = brain.metrics, bridge.published_at - t0
    out.update(decode_ms=decode * 1e3, add_job_ms=m.add_job_ms[-1], publish_ms=m.publish_ms[-1],
               planning_ms=(sent - decode) * 1e3, step_ms=step * 1e3)
    bridge.pending.extend(completion(stages))
    while bridge.pending:
        brain.step(force=True)
    line = next_job(stages, parts)
    bridge.pending.append(line)
    t5 = time.perf_counter()
    brain.step(force=True)  # the whole path: drain, decode, resolve, plan, publish
    out.update(next_job_ms=(time.perf_counter() - t5) * 1e3, next_job_chars=len(line),
               next_job_chars_described=len(next_job(stages, parts, by_ref=False)))
    return out


def run(stages: int, parts: int, repeat: int, policy: str = "lrc") -> dict[str, Any]:
    rows = [measure(stages, parts, policy) for _ in range(repeat)]
    summary: dict[str, Any] = {"stages": stages, "parts": parts, "tasks": stages * parts,
                               "policy": policy, "repeat": repeat}
    for key in rows[0]:
        xs = [r[key] for r in rows]
        summary[key] = {"median": round(statistics.median(xs), 2), "max": round(max(xs), 2)}
    return summary


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m spark_plugin plan-speed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stages", type=int, default=1000)
    ap.add_argument("--parts", type=int, default=10, help="tasks per stage")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--policy", default="lrc")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.stages, args.parts, args.repeat, args.policy), indent=1))
    return 0
