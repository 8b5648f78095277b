import json, glob, statistics
rows = {}
for t in ("old", "new"):
    for d in sorted(glob.glob(f"/tmp/ab39/{t}-*/results.json")):
        res = json.load(open(d))
        for r in res["runs"]:
            if r["policy"] == "crd":
                rows.setdefault(t, []).append((d.split("/")[3], r["jct_s"], r.get("hit_ratio"), r.get("misses"), r.get("evictions"), r.get("status")))
for t, rs in rows.items():
    for x in rs:
        print(t, x)
    print(t, "median jct", statistics.median(x[1] for x in rs), "median hit", statistics.median(x[2] for x in rs), "median misses", statistics.median(x[3] for x in rs))
pairs = [n[1] / o[1] for o, n in zip(rows["old"], rows["new"])]
print("new/old per repeat", [round(p, 3) for p in pairs])
