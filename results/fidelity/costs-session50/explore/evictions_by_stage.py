"""Live evictions (a run's stats recent_evictions) against the replay's, stage by stage, by RDD.

    PYTHONPATH=. python results/fidelity/costs-session50/explore/evictions_by_stage.py /tmp/s49/live/zip/traces/zip-f0.7-crd-r0 /tmp/s49/live/zip/results.json
"""
import json, sys
from collections import Counter, defaultdict
import lrc.sim as S
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes

base = sys.argv[1]  # e.g. /tmp/s49/live/zip/traces/zip-f0.7-crd-r0
res = json.load(open(sys.argv[2]))
name = base.rsplit('/', 1)[1]
run = [r for r in res['runs'] if r.get('trace', '').endswith(name + '.parquet')][0]
stats = json.load(open(base + '.stats.json'))
ws, _, ct = working_set_bytes(base + '.parquet')
f = run['storage_bytes_per_executor'] * 2 / ws
cur = {'stage': None}
orig = S._Replay.control
def control(self, kind, arg, partitions=None):
    if kind == 1:
        cur['stage'] = arg
        if self.log is not None:
            self.log.append(('STAGE', arg))
    orig(self, kind, arg, partitions)
S._Replay.control = control
pol = run['policy']
from workloads.bench.variants import variant_conf
from workloads.bench.replay import admit_of, storage_fraction
conf = res['cluster'].get('conf')
r = simulate(ct, variant_conf(pol)[0], f, executors=2, cores=1, refs=run['refs'],
             storage_fraction=storage_fraction(conf), admit=admit_of(conf, pol), log_evictions=True)
print('replay hit', r.hit_ratio, 'misses', r.reads - r.hits, 'live misses', run['misses'], 'replay field', run['replay_hit_ratio'])
sim = defaultdict(list); st = None
for x in r.evicted:
    if isinstance(x, tuple) and x[0] == 'STAGE':
        st = x[1]
    else:
        sim[st].append(x)
live = defaultdict(list)
for e in stats['recent_evictions']:
    live[e['stage']].append(e['block'])
def rdds(bs):
    c = Counter()
    for b in bs:
        c[str(b).split('_')[1] if str(b).startswith('rdd_') else str(b)] += 1
    return dict(sorted(c.items()))
for s in sorted(set(sim) | set(live), key=lambda v: (v is None, v)):
    print(s, 'live', rdds(live.get(s, [])), ' sim', rdds([f'rdd_{b[0]}_{b[1]}' if isinstance(b, tuple) else b for b in sim.get(s, [])]))
print('live misses per rdd', stats['misses_per_rdd'])
