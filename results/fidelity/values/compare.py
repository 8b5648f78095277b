"""Per cell (workload, policy): live hit ratio and the replay of each run's own trace, with the
executors' value counts (with.jsonl) and without them (without.jsonl), as medians over the
repeats and the median of the per-run differences, in points. `python compare.py`."""
import json
import statistics as st
from pathlib import Path

here = Path(__file__).parent
rows = {name: [json.loads(x) for x in (here / f"{name}.jsonl").read_text().splitlines()]
        for name in ("with", "without")}
cells: dict[tuple, dict] = {}
for name, runs in rows.items():
    for r in runs:
        c = cells.setdefault((r["w"], r["p"], r["f"]), {"live": [], "with": [], "without": []})
        if name == "with":
            c["live"].append(r["live"])
        c[name].append(r["replay"])
print("| workload | policy | F | runs | live (median) | replay with counts | diff | "
      "replay without | diff |")
print("|---|---|---|---|---|---|---|---|---|")
means = {"with": [], "without": []}
for (w, p, f), c in cells.items():
    out = [w, p, str(f), str(len(c["live"])), f"{100 * st.median(c['live']):.1f}"]
    for name in ("with", "without"):
        d = [100 * (a - b) for a, b in zip(c["live"], c[name])]
        means[name] += [abs(x) for x in d]
        out += [f"{100 * st.median(c[name]):.1f}", f"{st.median(d):+.1f}"]
    print("| " + " | ".join(out) + " |")
print()
for name, v in means.items():
    print(f"mean |live - replay| over {len(v)} runs, {name} counts: {sum(v) / len(v):.2f} points")
