"""Per run of an overhead directory: job time, table versions, hit ratio, misses, plugin CPU.

python3 results/overhead/session43/runs.py results/overhead/session43/lru-crd/results.json
"""
import json
import sys

for r in json.load(open(sys.argv[1]))["runs"]:
    s = r.get("stats") or {}
    cpu = (s.get("plugin_cpu_s") or {}).get("total")
    print(f"repeat {r['repeat']} {r['plugin']:>13}: {r['jct_s']:6.2f} s", *(
        [f"versions {s['table_version']:5d}  hits {s['hit_ratio']:.3f}  misses {s['misses']:4d}"
         f"  plugin CPU {cpu:.2f} s"] if s else []))
