"""Same-run replay of recorded tpch traces, with and without the run's own execution claims
(taken from the run's event log, joined by stage and partition)."""
import json, glob, sys, collections, statistics
from pathlib import Path
from lrc.eventlog_files import lines, eventlog_files
from lrc.trace import load_trace
from lrc.sim import simulate
from lrc.compiled import CompiledTrace

bench, logs, frac = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
apps = []  # (app id, name, fraction, claims)
for d in sorted(glob.glob(logs + '/*')):
    name, mf, claims = None, None, {}
    for _, _, ln, _ in lines(eventlog_files(d), print):
        e = json.loads(ln)
        k = e['Event']
        if k == 'SparkListenerApplicationStart':
            name = e['App Name']
        elif k == 'SparkListenerEnvironmentUpdate':
            mf = e['Spark Properties'].get('spark.memory.fraction')
        elif k == 'SparkListenerTaskEnd' and e['Task End Reason']['Reason'] == 'Success':
            claims[(e['Stage ID'], e['Task Info']['Partition ID'])] = \
                (e.get('Task Metrics') or {}).get('Peak On Heap Execution Memory', 0)
    apps.append((d, name, mf, claims))
runs = json.loads((bench / 'results.json').read_text())['runs']
want = [r for r in runs if r.get('cache_fraction') == frac and r['policy'] not in ('plain', 'unlimited')
        and r.get('trace')]
fr = {r['spark_memory_fraction'] for r in want}
by_policy = collections.defaultdict(list)
for d, name, mf, claims in apps:
    if mf is not None and any(abs(float(mf) - x) < 1e-6 for x in fr) and name:
        by_policy[name.split('-')[-1]].append(claims)
out = []
for r in sorted(want, key=lambda r: (r['policy'], r['repeat'])):
    logs_p = by_policy.get(r['policy'], [])
    if r['repeat'] >= len(logs_p):
        continue
    claims = logs_p[r['repeat']]
    tpath = bench / 'traces' / Path(r['trace']).name
    tr = load_trace(tpath)
    ct0 = CompiledTrace(tr)
    ws = ct0.working_set_bytes
    f = r['storage_bytes_per_executor'] * 2 / ws
    base = simulate(ct0, r['policy'], f, executors=2, cores=1, refs='online')
    missing = 0
    for e in tr.events:
        if e.kind == 'task':
            c = claims.get((e.stage_id, e.partition))
            missing += c is None
            e.exec_bytes = c or 0
    ct = CompiledTrace(tr)
    m = simulate(ct, r['policy'], f, executors=2, cores=1, refs='online', storage_fraction=0.1)
    ev = (json.loads((bench/'traces'/(tpath.stem + '.stats.json')).read_text()).get('eviction_reasons') or {})
    none = ((ev.get('for_rdd') or {}).get('none'))
    out.append((r['policy'], r['repeat'], r['hit_ratio'], r.get('replay_hit_ratio'), base.hit_ratio, m.hit_ratio,
                r['evictions'], none, base.evictions, m.evictions, m.exec_evictions, missing))
print('| policy | rep | live hit | replay (bench) | replay now | replay + claims | live evictions (for no block) | replay evictions | + claims (for execution) |')
print('|---|---|---|---|---|---|---|---|---|')
for p, rep, live, rb, b, m, lev, none, bev, mev, mex, miss in out:
    print(f'| {p} | {rep} | {live:.3f} | {rb:.3f} | {b:.3f} | {m:.3f} | {lev} ({none}) | {bev} | {mev} ({mex}) |' + (f' missing {miss}' if miss else ''))
