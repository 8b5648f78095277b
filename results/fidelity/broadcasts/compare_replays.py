"""Two replay_runs.py outputs of the same runs side by side: mean |live - replay| in points per
workload, and the median live - replay of issue 10's cells (pagerank, cc, zip x lrc, lerc, crd
at F = 0.5). `python compare_replays.py main.jsonl rule.jsonl`"""
import json
import statistics
import sys


def load(path):
    return [json.loads(line) for line in open(path)]


a_runs, b_runs = load(sys.argv[1]), load(sys.argv[2])
by, cells = {}, {}
for a, b in zip(a_runs, b_runs, strict=True):
    assert (a["w"], a["p"], a["f"], a["live"]) == (b["w"], b["p"], b["f"], b["live"])
    by.setdefault(a["w"], []).append((abs(a["live"] - a["replay"]), abs(b["live"] - b["replay"])))
    if a["f"] == 0.5 and a["w"] in ("pagerank", "cc", "zip") and a["p"] in ("lrc", "lerc", "crd"):
        cells.setdefault((a["w"], a["p"]), []).append(
            (100 * (a["live"] - a["replay"]), 100 * (b["live"] - b["replay"])))
every = [x for v in by.values() for x in v]
print("all %d runs: %.2f -> %.2f" % (len(every), 100 * statistics.mean(x for x, _ in every),
                                     100 * statistics.mean(y for _, y in every)))
for w, v in by.items():
    print(w, len(v), "%.2f -> %.2f" % (100 * statistics.mean(x for x, _ in v),
                                       100 * statistics.mean(y for _, y in v)))
for k, v in sorted(cells.items()):
    print(k, len(v), "median %.1f -> %.1f" % (statistics.median(x for x, _ in v),
                                              statistics.median(y for _, y in v)))
