"""Per run: live hit ratio, replay of its own trace with the broadcast bytes it recorded, and
without them (a stripped copy in a temporary folder). Needs broadcasts.patch applied (the
`other_bytes` field); usage: cmp.py BENCH_DIR... > cmp.jsonl"""
import json, sys, statistics, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from lrc.trace import load_trace, save_trace
from workloads.bench.replay import admit_of, own_run, storage_fraction
from workloads.bench.variants import variant_conf

STRIP = Path(tempfile.mkdtemp(prefix="lrc-strip-"))

for d in sys.argv[1:]:
    res = json.loads((Path(d) / "results.json").read_text())
    conf, settings = res.get("cluster", {}).get("conf"), res["settings"]
    for r in res["runs"]:
        if r.get("cache_fraction") is None or r["policy"] in ("plain", "unlimited") \
                or not r.get("stages_file") or r.get("hit_ratio") is None:
            continue
        path = r["stages_file"].replace(".stages.json", ".parquet")
        tr = load_trace(path)
        other = [e.other_bytes for e in tr.events if e.kind == "task" and e.other_bytes]
        for e in tr.events:
            e.other_bytes = None
        stripped = save_trace(tr, STRIP / Path(path).name)
        kw = dict(admit=admit_of(conf, r["policy"], settings.get("admit_default")))
        args = (variant_conf(r["policy"])[0], r["storage_bytes_per_executor"], 2, 1,
                settings["refs"], storage_fraction(conf))
        with_ = own_run(path, *args, **kw)
        without = own_run(str(stripped), *args, **kw)
        print(json.dumps({"w": r["workload"], "p": r["policy"], "f": r["cache_fraction"],
                          "live": r["hit_ratio"], "replay": with_.get("replay_hit_ratio"),
                          "replay_no_bcast": without.get("replay_hit_ratio"),
                          "storage": r["storage_bytes_per_executor"],
                          "other_median": statistics.median(other) if other else 0,
                          "other_max": max(other, default=0), "tasks_with_other": len(other)}),
              flush=True)
