"""tpch23's lrc/lru runs replayed with parts of the model switched off: which term puts the
replay below live."""
import json, statistics as st, sys
from workloads.bench.replay import own_run
r = json.load(open('/tmp/tpch23/results.json'))['runs']
for pol in ['lrc', 'lru']:
    runs = [q for q in r if q['policy'] == pol]
    rows = {}
    for name, sf, un in [('full', 0.1, 65536), ('no exec claims', 0.999, 65536),
                         ('no unroll', 0.1, None), ('neither', 0.999, None)]:
        gaps = []
        for q in runs:
            d = own_run(q['trace'], pol, q['storage_bytes_per_executor'], 2, 1, 'online', sf, un)
            if 'replay_hit_ratio' not in d: print(d); break
            gaps.append(round((q['hit_ratio'] - d['replay_hit_ratio']) * 100, 1))
        print(pol, name, 'live-replay', gaps, 'median', st.median(gaps), flush=True)
