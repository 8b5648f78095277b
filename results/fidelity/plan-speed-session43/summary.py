"""Range over the rounds of each tree's median (ms) per policy: python3 summary.py runs.txt"""
import sys
from collections import defaultdict

d = defaultdict(list)
for line in open(sys.argv[1]):
    t, p, *kv = line.split()
    for x in kv:
        k, v = x.split("=")
        d[(t, p, k)].append(float(v))
for p in ("lrc", "lerc", "mrd", "crd"):
    for t in ("old", "new"):
        print(f"{p:5s} {t:4s}", "  ".join(f"{k[:-3]} {min(d[(t, p, k)]):.1f}-{max(d[(t, p, k)]):.1f}"
                                     for k in ("decode_ms", "add_job_ms", "publish_ms",
                                               "planning_ms", "step_ms", "next_job_ms")))
