"""Experiment: the replay with each cached RDD's rebuild cost as the live brain estimates it
(Planner.task_finished: the whole duration of each task of the stage that built it first, a
running mean of warm tasks) instead of the trace's (the duration shared among the RDDs the task
computed, the median of the later half of each executor's warm tasks): the replay's misses
with each price, next to the run's.

    T=/tmp/s49/live/zip/traces
    PYTHONPATH=. python results/fidelity/costs-session50/explore/replay_live_prices.py $T/zip-f0.7-crd-r0,$T/zip-f0.7-crd-r1 /tmp/s49/live/zip/results.json
"""
import json, sys, statistics
import pyarrow.parquet as pq
import lrc.sim as S, lrc.cost as C
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes, admit_of, storage_fraction
from workloads.bench.variants import variant_conf

def live_costs(path, ct):
    builder, durs, cold = {}, {}, C.ColdStarts(lambda e: 1)
    for row in pq.read_table(path).to_pylist():
        if row['kind'] != 'task': continue
        c = cold.task_ended(row['executor'])
        for b in row['creates']:
            builder.setdefault(b['rdd'], row['stage_id'])
        for r, s in builder.items():
            if s == row['stage_id']:
                durs.setdefault(r, []).append((row['duration_s'], c))
    out = {}
    for r, v in durs.items():
        warm = [d for d, c in v if not c]
        out[r] = statistics.mean(warm or [d for d, _ in v])
    return out

res = json.load(open(sys.argv[2])); conf = res['cluster'].get('conf')
for base in sys.argv[1].split(','):
    name = base.rsplit('/', 1)[1]
    run = [r for r in res['runs'] if r.get('trace', '').endswith(name + '.parquet')][0]
    ws, _, ct = working_set_bytes(base + '.parquet')
    lc = live_costs(base + '.parquet', ct)
    f = run['storage_bytes_per_executor'] * 2 / ws
    pol = run['policy']; out = []
    for mode in ('trace', 'live'):
        if mode == 'live':
            class LC(C.ArrayCosts):
                def __init__(self, cost, sizes, disk, bw=C.DISK_BYTES_PER_S):
                    cost = [lc.get(ct.rdd_of[i], cost[i]) for i in range(len(cost))]
                    super().__init__(cost, sizes, disk, bw)
            S.ArrayCosts = LC
        else:
            S.ArrayCosts = C.ArrayCosts
        r = simulate(ct, variant_conf(pol)[0], f, executors=2, cores=1, refs=run['refs'],
                     storage_fraction=storage_fraction(conf), admit=admit_of(conf, pol))
        out.append(r.reads - r.hits)
    print(name, 'live misses', run['misses'], 'replay misses (trace costs, live costs)', out,
          {r: round(v, 3) for r, v in sorted(lc.items())})
