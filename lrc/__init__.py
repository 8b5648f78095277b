"""spark-lrc's pure-Python core: DAG model, reference counts, peer groups, policies, traces,
synthetic workloads and the trace-driven simulator. Never imports pyspark."""
from lrc.dag import AppDAG, Dependency, Job, RDD, Stage, block_name, parse_block
from lrc.planner import Planner
from lrc.policies import POLICIES, get_policy
from lrc.trace import Event, Trace, load_trace, save_trace

__all__ = ["AppDAG", "Dependency", "Job", "RDD", "Stage", "block_name", "parse_block", "Planner",
           "POLICIES", "get_policy", "Event", "Trace", "load_trace", "save_trace"]
