"""Per store in the chosen stages of a run's replay: the block, its priority, the executor's least cached
priorities, whether it was cached and what it evicted.

    PYTHONPATH=. python results/fidelity/costs-session50/explore/stores.py /tmp/s49/live/zip/traces/zip-f0.7-crd-r0 /tmp/s49/live/zip/results.json 2,4
"""
import json, sys
import lrc.sim as S, lrc.evict as E
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes, admit_of, storage_fraction
from workloads.bench.variants import variant_conf
base, resf, stages = sys.argv[1], sys.argv[2], {int(s) for s in sys.argv[3].split(',')}
res = json.load(open(resf)); name = base.rsplit('/', 1)[1]
run = [r for r in res['runs'] if r.get('trace', '').endswith(name + '.parquet')][0]
ws, _, ct = working_set_bytes(base + '.parquet')
f = run['storage_bytes_per_executor'] * 2 / ws
cur = {'stage': None}
orig = S._Replay.control
def control(self, kind, arg, partitions=None):
    if kind == 1: cur['stage'] = arg
    if kind == 0: print('job', arg)
    orig(self, kind, arg, partitions)
S._Replay.control = control
oi = E.EvictionIndex.insert
def insert(self, b, prio, stamp, pinned=()):
    was = self.entry[b] is not None
    low = sorted((e[0], ct.blocks[e[2]]) for e in self.entry if e is not None)[:3]
    out = oi(self, b, prio, stamp, pinned)
    if cur['stage'] in stages and not was:
        print(f"  st{cur['stage']} store {ct.blocks[b]} prio={prio:.3g} used={self.used}/{self.capacity} "
              f"ok={self.entry[b] is not None} victims={[ct.blocks[v] for v in out]} least={[(f'{p:.3g}', bl) for p, bl in low]}")
    return out
E.EvictionIndex.insert = insert
conf = res['cluster'].get('conf'); pol = run['policy']
r = simulate(ct, variant_conf(pol)[0], f, executors=2, cores=1, refs=run['refs'],
             storage_fraction=storage_fraction(conf), admit=admit_of(conf, pol))
print(r.hit_ratio)
