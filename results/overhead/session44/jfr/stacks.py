"""Stacks (leaf first, up to the outermost frame containing NEEDLE, 8 frames) of the execution
samples that pass through NEEDLE, counted:  python stacks.py NEEDLE FILE.jfr [...]"""
import json, subprocess, sys, collections
needle = sys.argv[1]
c = collections.Counter()
for path in sys.argv[2:]:
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", path], capture_output=True, text=True, check=True).stdout
    for e in json.loads(out)["recording"]["events"]:
        fr = [f["method"]["type"]["name"].split("/")[-1] + "." + f["method"]["name"] + ":" + str(f.get("lineNumber")) for f in (e["values"].get("stackTrace") or {}).get("frames", [])]
        idx = [i for i, f in enumerate(fr) if needle in f]
        if idx:
            c[" < ".join(fr[:idx[-1] + 1][:8])] += 1
for k, v in c.most_common(40):
    print(v, k)
