"""Where the benchmark's runs go: an existing cluster (`--master`, e.g. docker-compose) or a local
mini-cluster that lives exactly as long as the benchmark (torn down also on Ctrl-C)."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from workloads.cluster import ROOT, MiniCluster, private_spark_home, spark_env

# Spark reserves spark.storage.unrollMemoryThreshold (1 MB by default) of storage memory before it
# unrolls a block; with storage regions of a few MB that reservation alone evicts most of the
# cache on every put, whatever the policy. A small initial reservation (grown as the block is
# unrolled) keeps eviction driven by the blocks themselves.
#
# The cache fraction shrinks Spark's unified memory (spark.memory.fraction), which execution shares:
# SQL's hash aggregates then failed with UNABLE_TO_ACQUIRE_MEMORY at F=0.3 while cached blocks sat
# in the protected half of the region. spark.memory.storageFraction=0.1 lets execution take
# memory back from the cache (evicting, in the policy's order) down to 10%.
DEFAULT_CONF = {"spark.storage.unrollMemoryThreshold": "65536", "spark.memory.storageFraction": "0.1"}
CORES = 1  # per executor (the simulator replays the calibration trace with the same)


@dataclass(frozen=True)
class Target:
    """A running cluster: its master URL, executors (`cores` each), the Spark conf every run
    gets, the environment of the driver processes, and its description for results.json."""
    master: str
    executors: int
    conf: dict[str, str]
    env: dict[str, str]
    info: dict
    cores: int = CORES


@contextmanager
def open_target(master: str | None, workers: int, worker_memory: str,
                executor_memory: str | None, extra_conf: dict[str, str]) -> Iterator[Target]:
    """`master` or, when None, a mini-cluster of `workers` workers; `extra_conf` wins."""
    env = spark_env(private_spark_home())
    env.setdefault("PYTHONPATH", str(ROOT))
    cluster = None
    try:
        if master:
            conf = {"spark.executor.memory": executor_memory or "1g",
                    "spark.executor.cores": str(CORES), "spark.cores.max": str(workers * CORES)}
            info = {"master": master, "executors": workers}
        else:
            cluster = MiniCluster(workers=workers, worker_memory=worker_memory,
                                  worker_cores=CORES).start()
            master, conf = cluster.master_url, cluster.spark_conf(executor_memory)
            info = {"master": "mini-cluster", "executors": workers, "worker_memory": worker_memory}
        conf = {**conf, **DEFAULT_CONF, **extra_conf}
        yield Target(master, workers, conf, env, {**info, "cores": CORES, "conf": conf})
    finally:
        if cluster is not None:
            cluster.stop()
