# add_job alone with the collector off in both trees: python3 batching_ab.py TREE POLICY (run from /tmp so TREE is what is imported)
import sys, time, gc, statistics
sys.path.insert(0, sys.argv[1])
from spark_plugin import plan_speed, wire
from spark_plugin.brain import Brain
from spark_plugin.events import job_from_event
from spark_plugin.scale import CountingBridge
from spark_plugin.config import LrcSettings
policy = sys.argv[2]
line = plan_speed.chain_job(1000, 10)
gc.disable()
xs=[]; ys=[]
for i in range(15):
    bridge = CountingBridge(); brain = Brain(bridge, LrcSettings.from_conf(policy=policy))
    ev = wire.decode_event(line)
    t0=time.perf_counter()
    ev, described, missing = brain.stage_memory.resolve(ev)
    job, st, rdds = job_from_event(ev, described, skip=brain.planner.completed)
    t1=time.perf_counter()
    brain.planner.add_job(job, st, rdds, True)
    t2=time.perf_counter()
    xs.append((t1-t0)*1e3); ys.append((t2-t1)*1e3)
    del brain; gc.collect()
print(sys.argv[1], policy, 'build min/med', round(min(xs),1), round(statistics.median(xs),1), 'add_job min/med', round(min(ys),1), round(statistics.median(ys),1))
