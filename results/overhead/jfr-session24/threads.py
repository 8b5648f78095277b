"""Per-thread CPU (jdk.ThreadCPULoad, summed over its samples) and execution samples per thread,
from JFR recordings (session 24). python threads.py FILE.jfr ..."""
import collections
import re
import sys

from stacks import load

for f in sys.argv[1:]:
    cpu, samples = collections.Counter(), collections.Counter()
    for e in load(f, "jdk.ThreadCPULoad"):
        v = e["values"]
        t = v["eventThread"] or {}
        cpu[re.sub(r"\d+", "#", t.get("javaName") or t.get("osName") or "?")] += \
            v["user"] + v["system"]
    for e in load(f, "jdk.ExecutionSample"):
        t = e["values"]["sampledThread"]
        samples[re.sub(r"\d+", "#", t.get("javaName") or "?")] += 1
    print(f"== {f}")
    for n, c in cpu.most_common(12):
        print(f"  cpu-load sum {c:6.2f}  {n}")
    for n, c in samples.most_common(12):
        print(f"  samples {c:5d}  {n}")
