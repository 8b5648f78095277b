"""cProfile of the brain thread on mllib scale 2 (local-cluster, policy from argv)."""
import cProfile, pstats, sys, io
from spark_plugin import brain as B
policy = sys.argv[1]
prof = cProfile.Profile()
orig = B.Brain._run
def run(self):
    prof.enable()
    try:
        orig(self)
    finally:
        prof.disable()
B.Brain._run = run
from spark_plugin.doctor import start_session
from spark_plugin.session import active_brain
from workloads import WORKLOADS
spark = start_session("local-cluster[2,1,1024]", policy)
out = WORKLOADS["mllib"].run(spark, scale=2, seed=7)
st = active_brain().stats()
print("plugin_cpu", st["plugin_cpu_s"], "events", st["events"], "batches", st["event_batches"])
spark.stop()
s = io.StringIO()
pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
print(s.getvalue())
s = io.StringIO()
pstats.Stats(prof, stream=s).sort_stats("cumtime").print_stats(40)
print(s.getvalue())
