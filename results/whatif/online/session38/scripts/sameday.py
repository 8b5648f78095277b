"""Same-day what-if vs live: each workload's plugin-off calibration log (the first in EVROOT/ev-W)
replayed by `lrc whatif` at the live runs' median storage bytes per executor, beside the live
medians of BENCHROOT/W/results.json (lru and crd+admit). Run with PYTHONPATH at the code to test.
    python sameday.py cc,tpch EVROOT BENCHROOT [OUT]"""
import glob
import json
import math
import statistics
import sys
from collections import Counter
from pathlib import Path
from statistics import median

from lrc.eventlog import read_eventlog
from lrc.whatif import parse_sizes, run_whatif
from lrc.whatif_report import write_report
from workloads.bench.stats import unlimited_times

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # results/whatif
from live_vs_whatif import live_cells  # noqa: E402

ws_, ev, bench = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
out = Path(sys.argv[4]) if len(sys.argv) > 4 else None
gaps, ratios = [], []
for w in ws_:
    bench_json = json.load(open(f"{bench}/{w}/results.json"))
    cells = live_cells(bench_json, w)
    unl, _ = unlimited_times(bench_json["runs"], None, w)
    fr = sorted({f for f, _ in cells})
    byts = {f: int(median(cells[(f, "lru")]["bytes"])) for f in fr}
    log = sorted(glob.glob(f"{ev}/ev-{w}/*"))[0]
    el = read_eventlog(log)
    sizes = ",".join(f"{b}b" for b in byts.values())
    res = run_whatif(log, parse_sizes(sizes), ["lru", "crd"], refs="online", progress=False)
    if out is not None:
        write_report(res, out / w, f"python -m lrc whatif {log} --cache-sizes {sizes} --policies lru,crd --refs online")
    print(f"## {w}: log {Path(log).name}; size sources {dict(Counter(el.size_source.values()))}; "
          f"live unlimited median {median(unl):.1f} s of {len(unl)}; the log's span {res.unlimited_time:.1f} s")
    print("| F | policy | live hit | live JCT s [range] | what-if hit | est. s | est. / live |")
    print("|---|---|---|---|---|---|---|")
    for f in fr:
        for p in ("lru", "crd+admit"):
            c = cells[(f, p)]
            if not c["hit"]:
                continue
            lh, lt = median(c["hit"]), median(c["jct"])
            row = next(r for r in res.rows if r["policy"] == ("crd" if p == "crd+admit" else "lru")
                       and abs(r["per_executor_bytes"] - byts[f]) <= 1)
            gaps.append(abs(row["hit_ratio"] - lh)); ratios.append(row["est_runtime"] / lt)
            print(f"| {f} | {p} | {lh:.3f} | {lt:.1f} [{min(c['jct']):.1f}-{max(c['jct']):.1f}] | "
                  f"{row['hit_ratio']:.3f} | {row['est_runtime']:.1f} | {row['est_runtime'] / lt:.2f} |")
    print()
print(f"mean |what-if hit - live hit| {statistics.mean(gaps):.3f}; est. / live {min(ratios):.2f}-"
      f"{max(ratios):.2f}, mean |log| {statistics.mean(abs(math.log(x)) for x in ratios):.3f}")
