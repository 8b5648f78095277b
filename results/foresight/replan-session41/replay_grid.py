"""Every synthetic workload (4 executors x 2 cores) and the given live traces (2 x 1, as the
benchmark's mini-cluster), F = 0.3/0.5/0.7, online refs, under lru, lrc, lerc, mrd, crd and crd
with admission: hit ratio and the simulator's estimated time per cell, as JSON.

    python results/foresight/replan-session41/replay_grid.py OUT.json [TRACE.parquet ...]

Run it from a tree (PYTHONPATH) to replay that tree's planner: the old and the new code side by
side, then `compare.py OLD.json NEW.json`.
"""
import json
import sys
from pathlib import Path

from lrc import synth
from lrc.sim import CompiledTrace, simulate
from lrc.trace import load_trace

VARIANTS = ("lru", "lrc", "lerc", "mrd", "crd", "crd+admit")


def main(out: str, traces: list[str]) -> None:
    sources = [(w, 4, 2, lambda w=w: synth.make(w)) for w in synth.WORKLOADS]
    sources += [(Path(t).stem, 2, 1, lambda t=t: load_trace(t)) for t in traces]
    cells = {}
    for name, executors, cores, make in sources:
        ct = CompiledTrace(make())
        for f in (0.3, 0.5, 0.7):
            for v in VARIANTS:
                policy, _, admit = v.partition("+")
                r = simulate(ct, policy, f, executors=executors, cores=cores, refs="online",
                             admit=admit == "admit")
                cells[f"{name}|{f}|{v}"] = [r.hit_ratio, r.est_runtime]
    Path(out).write_text(json.dumps(cells, indent=0))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
