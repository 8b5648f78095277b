import json, os, sys, time, importlib
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from workloads.cluster import private_spark_home
os.environ["SPARK_HOME"] = str(private_spark_home())
from jvm_shim.testing import restart_jvm_if_needed
from pyspark.sql import SparkSession
from spark_plugin.session import configure, active_brain
from spark_plugin import brain as bm
import threading
from py4j import clientserver as _cs
CMDS = {"brain": 0}
_send = _cs.ClientServerConnection.send_command
def _counted(self, command):
    if threading.current_thread().name == "spark-lrc-brain":
        CMDS["brain"] += 1
    return _send(self, command)
_cs.ClientServerConnection.send_command = _counted
ST = {"publishes": 0, "changed": 0, "whole": 0, "rdds": 0}
orig = bm.Brain._encode
def enc(self, parts):
    text, sizes = orig(self, parts)
    ST["publishes"] += 1
    for r, ps in parts.items():
        ST["rdds"] += 1; ST["changed"] += len(ps); ST["whole"] += sizes.get(r, 0)
    return text, sizes
bm.Brain._encode = enc
wl, scale, frac, pol = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
restart_jvm_if_needed()
b = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("parts")
     .config("spark.executor.memory", os.environ.get("EXMEM", "896m")).config("spark.memory.fraction", frac)
     .config("spark.memory.storageFraction", "0.1").config("spark.storage.unrollMemoryThreshold", "65536"))
b = configure(b, policy=pol)
spark = b.getOrCreate()
mod = importlib.import_module(f"workloads.{wl}")
kw = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
t0 = time.time(); mod.run(spark, scale=scale, **kw); wall = time.time() - t0
br = active_brain(); br.sync(); s = br.stats()
ex = s.get("executors") or {}
print(json.dumps({"wl": wl, "wall": round(wall, 1), **ST, "version": s.get("table_version"),
      "hits": s.get("hits"), "misses": s.get("misses"), "cpu": s.get("plugin_cpu_s"), "py4j_brain_thread": CMDS["brain"], "batches": s.get("event_batches"), "events": s.get("events"), "plan_latency": s.get("plan_latency_ms"), "in_force": s.get("in_force_ms"), "push_lag": s.get("push_lag_ms"), "tree": os.environ.get("TREE")}))
spark.stop()
