"""Where plan-speed's time goes, one part at a time: the brain's and planner's methods on the
path of a 1,000-stage job start, each wrapped in a timer (which adds about 1 ms in all); median
over 7 fresh brains, ms. Not the goal's measure (that is `python -m spark_plugin plan-speed`).

    PYTHONPATH=. python results/fidelity/plan-speed-session43/parts.py crd
"""
import functools
import statistics
import sys
import time

import lrc.dag
import lrc.planner
import lrc.refcount
import spark_plugin.brain
from spark_plugin import plan_speed
from spark_plugin.config import LrcSettings
from spark_plugin.scale import CountingBridge

spent: dict[str, float] = {}


def timed(owner, name: str) -> None:
    f = getattr(owner, name)

    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
    setattr(owner, name, g)


Brain, Planner = spark_plugin.brain.Brain, lrc.planner.Planner
for owner, name in [(Brain, "_resolve"), (spark_plugin.brain, "job_from_event"),
                    (Planner, "add_job"), (Planner, "_plan_stage"), (Planner, "_shaped_walks"),
                    (Planner, "_predict"), (lrc.refcount.RefState, "add_tasks"),
                    (lrc.dag.AppDAG, "narrow_shape"), (Brain, "_publish")]:
    timed(owner, name)
line, rows = plan_speed.chain_job(1000, 10), []
for _ in range(7):
    spent.clear()
    bridge = CountingBridge()
    brain = Brain(bridge, LrcSettings.from_conf(policy=sys.argv[1] if len(sys.argv) > 1 else "crd"))
    bridge.pending.append(line)
    brain.step(force=True)
    rows.append(dict(spent))
for name in rows[0]:
    print(f"{name:16s} {statistics.median(r[name] for r in rows) * 1e3:6.1f} ms")
