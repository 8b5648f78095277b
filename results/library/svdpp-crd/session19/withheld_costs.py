"""Replays the crd run's own trace under crd with each RDD's rebuild time withheld (lrc.cost's
UNKNOWN density) until a task of its building stage has finished, as the live brain learns it.
Needs the run's trace: `python withheld_costs.py /tmp/svd19` (the bench's --out directory).
A probe (it patches lrc.sim's names), not part of the package. It prints how often the replay
asked for a density while the cost was withheld: once per RDD, before any of its blocks is ranked
against others, so the replay cannot show the live window in which a block is ranked before the
brain has its cost."""
import collections
import json
import sys

import lrc.sim as sim
from lrc.cost import UNKNOWN, ArrayCosts
from workloads.bench.replay import working_set_bytes

out = sys.argv[1]
run = json.load(open(f"{out}/results.json"))["runs"][0]
ws, _, ct = working_set_bytes(run["trace"])
f = run["storage_bytes_per_executor"] * 2 / ws
state = {}


class WithheldCosts(ArrayCosts):
    def density(self, block):
        rdd = ct.block_ids.rdd_of[block]
        if state["planner"]._builder.get(rdd) not in state["finished"]:
            state["unknown"][rdd] += 1
            return UNKNOWN
        return super().density(block)


def planner(*a, _make=sim.Planner, **k):
    p = _make(*a, **k)
    state.update(planner=p, finished=set(), unknown=collections.Counter())
    finish = p.refs.finish_task

    def finished(stage, part):
        state["finished"].add(stage)
        return finish(stage, part)

    p.refs.finish_task = finished
    return p


sim.ArrayCosts, sim.Planner = WithheldCosts, planner
res = sim.simulate(ct, "crd", f, executors=2, cores=1, refs="online", storage_fraction=0.5)
print(f"crd, rebuild times withheld until measured: hit ratio {res.hit_ratio:.3f}, "
      f"misses {res.reads - res.hits}, evictions {res.evictions}")
print("priority asks with an unknown density, per RDD:", dict(sorted(state["unknown"].items())))
