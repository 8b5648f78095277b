#!/usr/bin/env bash
# The what-if of each workload's calibration event log at the live matrix's fractions and storage
# bytes, set beside the live medians of results/latest/online:
#   results/whatif/online/session36/scripts/whatif_all.sh EVROOT OUT
# EVROOT/ev-W holds workload W's event logs (the first is the plugin-off calibration run).
set -euo pipefail
EV=$1; OUT=$2; mkdir -p "$OUT"
for w in sql ml cc zip tpch pagerank; do
  L=$(ls -d "$EV/ev-$w"/* | head -1)
  B=$(python - "$w" <<'PY'
import json, statistics, sys
runs = json.load(open("results/latest/online/results.json"))["runs"]
print(",".join(f"{int(statistics.median(v))}b" for f in (0.3, 0.5, 0.7)
               if (v := [r["storage_bytes_per_executor"] for r in runs if r.get("workload") == sys.argv[1]
                         and r.get("cache_fraction") == f and r.get("storage_bytes_per_executor")])))
PY
)
  python -m lrc whatif "$L" --cache-sizes "0.3,0.5,0.7,$B" --policies lru,lrc,lerc,mrd,crd --refs online \
    --out "$OUT/$w" > "$OUT/$w.log" 2>&1
  python results/whatif/live_vs_whatif.py results/latest/online "$OUT/$w" --workload "$w" > "$OUT/$w.table.md"
done
