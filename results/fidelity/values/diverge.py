"""First divergence between a live run's evictions (its stats' recent_evictions) and its replay's, per
executor. `python diverge.py BENCH_DIR TAG POLICY` (TAG: pagerank-f0.5-lrc-r1; session 31)."""
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import lrc.evict as ev
from lrc.trace import load_trace
from lrc.compiled import CompiledTrace
from lrc.sim import simulate

d, tag, policy = sys.argv[1], sys.argv[2], sys.argv[3]
res = json.load(open(f'{d}/results.json'))
run = [r for r in res['runs'] if r.get('stages_file', '').endswith(f'{tag}.stages.json')][0]
stats = json.load(open(f'{d}/traces/{tag}.stats.json'))
live = [(e['executor'], e['stage'], e['block'], e['for']) for e in stats['recent_evictions']]
print('live evictions', stats['evictions'], 'listed', len(live), 'hit', run['hit_ratio'])
ct = CompiledTrace(load_trace(f'{d}/traces/{tag}.parquet'))
caches, cur, sim = [], [None], []
oinit = ev.EvictionIndex.__init__
def init(self, *a, **k):
    oinit(self, *a, **k); caches.append(self)
ev.EvictionIndex.__init__ = init
oins = ev.EvictionIndex.insert
def ins(self, b, prio, stamp, pinned=()):
    r = oins(self, b, prio, stamp, pinned)
    for v in r:
        sim.append((str(caches.index(self)), cur[0], 'rdd_%d_%d' % ct.blocks[v], 'rdd_%d_%d' % ct.blocks[b]))
    return r
ev.EvictionIndex.insert = ins
osh = ev.EvictionIndex.shrink
def sh(self, cap, pinned=()):
    r = osh(self, cap, pinned)
    for v in r:
        sim.append((str(caches.index(self)), cur[0], 'rdd_%d_%d' % ct.blocks[v], 'EXEC'))
    return r
ev.EvictionIndex.shrink = sh
class Ev(list):
    def __iter__(self):
        for e in list.__iter__(self):
            if e[0] == 2: cur[0] = e[1]
            yield e
ct.events = Ev(ct.events)
from workloads.bench.replay import storage_fraction, admit_of
conf = res['cluster']['conf']
f = run['storage_bytes_per_executor'] * 2 / ct.working_set_bytes
r = simulate(ct, policy, f, executors=2, cores=1, refs=res['settings']['refs'],
             storage_fraction=storage_fraction(conf), admit=admit_of(conf, run['policy'], res['settings'].get('admit_default')))
print('replay hit', r.hit_ratio, 'evictions', r.evictions)
for x in ('0', '1'):
    L = [e for e in live if e[0] == x]; S = [e for e in sim if e[0] == x]
    i = 0
    while i < min(len(L), len(S)) and L[i] == S[i]: i += 1
    print('executor', x, 'live', len(L), 'sim', len(S), 'agree for', i)
    for k in range(max(0, i - 3), min(i + 6, max(len(L), len(S)))):
        print('   ', k, L[k] if k < len(L) else '-', '|', S[k] if k < len(S) else '-')
