"""One tpch run per variant with the driver JVM under Java Flight Recorder (session 24).

PYTHONPATH=<repo> python profile_tpch.py VARIANTS [REPEATS] [OUT]: the overhead benchmark's tpch
cell (scale 4, F = 0.5's confs), a recording OUT/<variant>-<i>.jfr per run (default OUT
/tmp/jfr24); prints each run's job time and process CPU."""
import json
import sys
from pathlib import Path

from workloads.bench.child import run_child
from workloads.cluster import MiniCluster, spark_env
from workloads.overhead import variant_conf

CONF = {"spark.memory.fraction": "0.018857", "spark.memory.storageFraction": "0.1",
        "spark.storage.unrollMemoryThreshold": "65536"}

variants = sys.argv[1].split(",")
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 1
out = Path(sys.argv[3] if len(sys.argv) > 3 else "/tmp/jfr24")
with MiniCluster(workers=2, worker_memory="1g") as cluster:
    env = spark_env()
    for i in range(repeats):
        for name in variants:
            policy, extra = variant_conf(name) if name != "off" else (None, {})
            tag = name.replace("+", "-") + f"-{i}"
            jfr = f"-XX:StartFlightRecording=filename={out}/{tag}.jfr,settings=profile"
            conf = {**cluster.spark_conf(), **CONF, **extra, "spark.driver.extraJavaOptions": jfr}
            spec = {"workload": "tpch", "scale": 4, "kwargs": {}, "master": cluster.master_url,
                    "executors": 2, "conf": conf, "policy": policy,
                    "stats_path": str(out / f"stats-{tag}.json") if policy else None}
            r = run_child(spec, out / "work", timeout=900, env=env)
            print(name, r.get("ok"), r.get("jct_s"), json.dumps(r.get("process_cpu")), flush=True)
