"""A JVM's JIT work from a JFR file: deoptimizations (by method and reason) and the last
jdk.CompilerStatistics (compile count, total compile time):  python jit.py FILE.jfr [...]"""
import json, subprocess, sys, collections
def events(path, kind):
    out = subprocess.run(["jfr", "print", "--json", "--events", kind, path], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["recording"]["events"]
for path in sys.argv[1:]:
    de = events(path, "jdk.Deoptimization")
    by = collections.Counter()
    for e in de:
        v = e["values"]; m = v.get("method") or {}
        by[(m.get("type", {}).get("name", "?") + "." + m.get("name", "?"), v.get("reason"))] += 1
    comp = events(path, "jdk.Compilation")
    cm = collections.Counter()
    for e in comp:
        m = e["values"].get("method") or {}
        cm[m.get("type", {}).get("name", "?").rsplit("/", 2)[0]] += 1
    stats = events(path, "jdk.CompilerStatistics")
    last = stats[-1]["values"] if stats else {}
    print(f"== {path[:40]} deopts {len(de)}; compiler stats: " + ", ".join(f"{k}={last.get(k)}" for k in ("compileCount", "bailoutCount", "invalidatedCount", "osrCompileCount", "standardCompileCount", "totalTimeSpent", "nmethodsSize")))
    for k, v in by.most_common(8):
        print(f"   {v:5d} {k}")
