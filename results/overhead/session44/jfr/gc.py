"""Executor GC (JFR jdk.GarbageCollection: count and summed duration per collector) and the bytes
allocated under org.sparklrc frames (jdk.ObjectAllocationSample weights), per JFR file:
    python gc.py FILE.jfr [...]"""
import json, subprocess, sys, collections
def events(path, kind, depth=None):
    cmd = ["jfr", "print", "--json", "--events", kind]
    if depth: cmd += ["--stack-depth", str(depth)]
    out = subprocess.run(cmd + [path], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["recording"]["events"]
def dur(s):  # ISO-8601 duration "PT0.012S"
    return float(s[2:-1]) if s.startswith("PT") and s.endswith("S") else 0.0
for path in sys.argv[1:]:
    gcs = events(path, "jdk.GarbageCollection")
    byname = collections.Counter(); t = collections.Counter()
    for e in gcs:
        v = e["values"]; byname[v["name"]] += 1; t[v["name"]] += dur(v["duration"])
    alloc = events(path, "jdk.ObjectAllocationSample", 64)
    w = collections.Counter(); wshim = 0; tot = 0
    for e in alloc:
        v = e["values"]; wt = v.get("weight", 0); tot += wt
        frames = [f["method"]["type"]["name"] for f in (v.get("stackTrace") or {}).get("frames", [])]
        if any(f.startswith("org/sparklrc") or f.startswith("org.sparklrc") for f in frames):
            wshim += wt
            w[v["objectClass"]["name"]] += wt
    print(path[:30], "GC:", {k: (byname[k], round(t[k], 2)) for k in byname}, f"alloc {tot/1e9:.1f} GB, under shim frames {wshim/1e9:.2f} GB", w.most_common(4))
