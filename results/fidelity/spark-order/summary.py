"""Median replay - live hit ratio per cell, and mean |replay - live| per workload, for
before.jsonl and after.jsonl: `python summary.py > summary.txt`."""
import json
import statistics
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
VERSIONS = ("before", "after")
cells = defaultdict(lambda: defaultdict(list))
for v in VERSIONS:
    for line in (HERE / f"{v}.jsonl").read_text().splitlines():
        r = json.loads(line)
        cells[(r["w"], r["p"], r["f"])][v].append(r["replay"] - r["live"])
print("replay - live hit ratio, median over the cell's runs (points)")
print(f"{'workload':9} {'policy':10} {'F':4}", *(f"{v:>7}" for v in VERSIONS))
errors = defaultdict(lambda: defaultdict(list))
for (w, p, f), by in sorted(cells.items()):
    print(f"{w:9} {p:10} {f:<4}", *(f"{100 * statistics.median(by[v]):+7.1f}" for v in VERSIONS))
    for v in VERSIONS:
        errors[w][v] += [abs(x) for x in by[v]]
        errors["all"][v] += [abs(x) for x in by[v]]
print("\nmean |replay - live| (points) and runs")
for w, by in errors.items():
    print(f"{w:9}", *(f"{100 * statistics.mean(by[v]):7.1f}" for v in VERSIONS), len(by["after"]))
