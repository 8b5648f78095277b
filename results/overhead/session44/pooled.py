"""crd, crd+throttle (spark.lrc.publishMs=100) and the A/A control, MLlib scale 8 under pressure,
pooled over session 43's crd-throttle/ and this session's crd-throttle/ runs; and crd+throttle
against crd directly, run by run within each repeat. The statistic is workloads.overhead's
(`paired_ratio_interval`: bootstrap of the geometric mean of per-repeat ratios).

    PYTHONPATH=. python results/overhead/session44/pooled.py
"""
import json
from pathlib import Path

from workloads.bench.stats import paired_ratio_interval

here = Path(__file__).resolve().parent
runs = [json.loads(p.read_text()) for p in (here.parent / "session43" / "crd-throttle" / "results.json",
                                             here / "crd-throttle" / "results.json")]


def direct(r: dict) -> list[float]:
    """crd+throttle's job time over crd's, per repeat."""
    t = {(x["repeat"], x["plugin"]): x["jct_s"] for x in r["runs"]}
    return [t[(k, "crd+throttle")] / t[(k, "crd")] for k in sorted({k for k, _ in t})]


for label, sel in (("session 43", runs[:1]), ("session 44", runs[1:]), ("pooled", runs)):
    rows = (("crd / off", [x for r in sel for x in r["variants"]["crd"]["pair_ratios"]]),
            ("crd+throttle / off", [x for r in sel for x in r["variants"]["crd+throttle"]["pair_ratios"]]),
            ("crd+throttle / crd", [x for r in sel for x in direct(r)]),
            ("off-b / off (A/A)", [x for r in sel for x in r["control_ratios"]]))
    for name, ratios in rows:
        i = paired_ratio_interval(ratios)
        print(f"{label:10s} {name:20s} {i['geomean']:.3f} [{i['low']:.3f}-{i['high']:.3f}] over {i['n']} repeats")
