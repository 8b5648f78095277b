"""spark-lrc's driver-side plugin: the only Python code that touches pyspark/py4j.

    from spark_plugin import configure, enable, stats
    spark = configure(SparkSession.builder, policy="lerc").getOrCreate()   # before start
    enable(spark)                                                           # or on a session
    stats()                                                                 # hits, evictions ...
    placement_hints(rdd.id())       # {partition: [executor, ...]}: in memory, then GPU hosts
"""
from .config import LrcConfigError, LrcSettings
from .placement import gpu_executors, placement_hints
from .session import attach, configure, enable, stats

__all__ = ["LrcConfigError", "LrcSettings", "attach", "configure", "enable", "gpu_executors",
           "placement_hints", "stats"]
