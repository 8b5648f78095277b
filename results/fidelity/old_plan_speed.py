# Before-issue-10 plan timing. Setup: git archive f848735 | tar -x -C /tmp/wtplan/old; write
# /tmp/wtplan/lines.json ({"job0", "done", "job1"}) from spark_plugin.plan_speed.chain_job(1000, 10),
# completion(1000), next_job(1000, 10, by_ref=False), dropping "sent" and "stage_ids" (and
# "rdd_ids" per stage) which that code rejects. Run from /tmp: python old_plan_speed.py 5
"""plan-speed's measurement on the code before issue 10's changes (f848735): same synthetic lines,
without the fields that code does not know; the second job fully described, as it was sent."""
import json, statistics, sys, time
sys.path.insert(0, "/tmp/wtplan/old")
from spark_plugin import wire
from spark_plugin.events import job_from_event
from spark_plugin.scale import new_brain

L = json.load(open("/tmp/wtplan/lines.json"))
rows = []
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 7):
    brain, bridge = new_brain("lrc")
    t0 = time.perf_counter(); ev = wire.decode_event(L["job0"]); t1 = time.perf_counter()
    job, st, rdds = job_from_event(ev); t2 = time.perf_counter()
    brain.planner.add_job(job, st, rdds); t3 = time.perf_counter()
    brain._unplanned_job_times.append(float(ev.time)); brain._dirty = True; brain._publish()
    t4 = time.perf_counter()
    bridge.pending.extend(L["done"])
    while bridge.pending:
        brain.step(force=True)
    bridge.pending.append(L["job1"]); t5 = time.perf_counter(); brain.step(force=True)
    t6 = time.perf_counter()
    rows.append(dict(decode_ms=(t1-t0)*1e3, build_ms=(t2-t1)*1e3, add_job_ms=(t3-t2)*1e3,
                     publish_ms=(t4-t3)*1e3, plan_ms=(t4-t0)*1e3, next_job_ms=(t6-t5)*1e3))
print(json.dumps({k: {"median": round(statistics.median(r[k] for r in rows), 2),
                      "max": round(max(r[k] for r in rows), 2)} for k in rows[0]}, indent=1))
