"""What-if: replay every run as if the executors had not counted its serialized blocks' values
(spark.lrc.countValues off: a serialized block taken as values of 64 KiB, lrc.unroll's rule
before session 31); then runs ../spark-order/replay_runs.py on BENCH_DIRs.
`python without_counts.py BENCH_DIR... > without.jsonl`."""
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import lrc.compiled  # noqa: E402
import lrc.unroll  # noqa: E402

_counted = lrc.unroll.reserve_steps


def uncounted(size, threshold, elements=None, serialized=False):
    return _counted(size, threshold, None if serialized else elements, serialized)


lrc.unroll.reserve_steps = lrc.compiled.reserve_steps = uncounted
runpy.run_path(str(Path(__file__).resolve().parents[1] / "spark-order" / "replay_runs.py"),
               run_name="__main__")
