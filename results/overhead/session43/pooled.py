"""crd and the A/A control pooled over this session's two paired MLlib runs under pressure
(lru-crd/, crd-throttle/): the same statistic as workloads.overhead's report
(paired_ratio_interval over per-repeat ratios).

    python results/overhead/session43/pooled.py
"""
import json
from pathlib import Path

from workloads.bench.stats import paired_ratio_interval

here = Path(__file__).resolve().parent
runs = [json.loads((here / d / "results.json").read_text()) for d in ("lru-crd", "crd-throttle")]
for name, ratios in (("crd / off", [x for r in runs for x in r["variants"]["crd"]["pair_ratios"]]),
                     ("off-b / off (A/A)", [x for r in runs for x in r["control_ratios"]])):
    i = paired_ratio_interval(ratios)
    print(f"{name}: {i['geomean']:.3f} [{i['low']:.3f}-{i['high']:.3f}] over {i['n']} repeats")
