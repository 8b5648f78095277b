"""Per run and per (tree, variant): job time over the mean of the two plugin-off runs of the
same invocation, table versions, event batches, the plugin's own CPU (s) and the pressure stats.
Usage: python summary.py [DIR] (default: this folder, subfolders old-N / new-N)."""
import glob, json, os, statistics as st, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
print("tree round | variant | jct s | ratio to mean(off,off-b) | versions | batches | plugin cpu total | brain | watch | pressure")
agg = {}
for d in sorted(glob.glob(f"{root}/*-[0-9]")):
    name = d.split("/")[-1]
    r = json.load(open(f"{d}/results.json"))
    offs = [x["jct_s"] for x in r["runs"] if x["plugin"] in ("off", "off-b")]
    off = st.mean(offs)
    for x in r["runs"]:
        s = x["stats"]
        if not s:
            continue
        pc = s.get("plugin_cpu_s", {})
        tree = name.split("-")[0]
        agg.setdefault((tree, x["plugin"]), []).append((x["jct_s"] / off, pc.get("total"), s["table_version"]))
        print(name, x["plugin"], round(x["jct_s"], 1), round(x["jct_s"] / off, 3), s["table_version"], s["event_batches"],
              pc.get("total"), pc.get("brain"), pc.get("table_watch"), s.get("memory_pressure"), x["checksum"] == r["runs"][0]["checksum"])
for k, v in sorted(agg.items()):
    print(k, "ratio median", round(st.median(a for a, _, _ in v), 3), [round(a, 3) for a, _, _ in v],
          "cpu", [b for _, b, _ in v], "versions", [c for _, _, c in v])
