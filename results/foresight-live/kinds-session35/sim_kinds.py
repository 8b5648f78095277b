"""Replay calibration traces under every policy (online refs), the bench's own replay
(`workloads.bench.replay.calibration_rows`: F = 0.3/0.5/0.7, 2 executors x 1 core), one JSON of
{"workload F policy": [hit ratio, est. runtime s, bound hit ratio]}. Run once per code version:

    PYTHONPATH=. python results/foresight-live/kinds-session35/sim_kinds.py OUT.json TRACE...
"""
import json
import sys

from workloads.bench.replay import calibration_rows

out = {}
for tr in sys.argv[2:]:
    w = tr.rsplit('/', 1)[1].split('-calib')[0]
    rows = calibration_rows(w, tr, [0.3, 0.5, 0.7], ['lru', 'lrc', 'lerc', 'mrd', 'crd', 'crd+admit'],
                            'online', 2, 1)
    for r in rows:
        out[f"{w} {r['cache_fraction']} {r['policy']}"] = (r.get('hit_ratio'), r.get('est_runtime'),
                                                           r.get('bound_hit_ratio'))
json.dump(out, open(sys.argv[1], 'w'), indent=0)
