"""Replay ml's plugin-off calibration trace under LRU at F = 0.3 as recorded, and with the task
order (and executors) within each stage taken from a live LRU run under pressure:

    python task_order.py CALIB.parquet PRESSURE.parquet
"""
import dataclasses
import sys

from lrc.sim import CompiledTrace, simulate
from lrc.trace import load_trace

cal, pressure = load_trace(sys.argv[1]), load_trace(sys.argv[2])
order = [(e.stage_id, e.partition, e.executor) for e in pressure.events if e.kind == "task"]
task = {(e.stage_id, e.partition): e for e in cal.events if e.kind == "task"}


def reordered(executors: bool):
    it = iter(order)
    out = []
    for e in cal.events:
        if e.kind == "task":
            s, p, x = next(it)
            e = task[(s, p)]
            out.append(dataclasses.replace(e, executor=x) if executors else e)
        else:
            out.append(e)
    return dataclasses.replace(cal, events=out)


for name, t in (("as recorded", cal), ("pressure run's order", reordered(False)),
                ("pressure run's order and executors", reordered(True)), ("pressure run's own trace", pressure)):
    r = simulate(CompiledTrace(t), "lru", 0.3, executors=2, cores=1, refs="online")
    print(f"{name}: hit ratio {r.hit_ratio:.3f}, {r.evictions} evictions")
