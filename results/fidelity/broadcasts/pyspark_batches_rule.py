"""What-if: replay every run with a serialized block of unknown count taken as PySpark's batches
(AutoBatchedSerializer: SMALL doubling values summing 64 KiB, then values of BIG bytes) instead
of lrc.unroll's equal 64 KiB values; then runs ../spark-order/replay_runs.py on BENCH_DIRs.
`[SMALL=8] [BIG=65536] python pyspark_batches_rule.py BENCH_DIR... > rule.jsonl` (the defaults
are the rule measured in README.md; session 29 tried BIG=98304)."""
import os
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import lrc.compiled  # noqa: E402
import lrc.unroll  # noqa: E402

SMALL = int(os.environ.get("SMALL", "8"))
BIG = int(os.environ.get("BIG", str(64 << 10)))
_equal_values = lrc.unroll.reserve_steps


def _steps(size: int, threshold: int, values: list[float]) -> tuple[int, ...]:
    """Spark's reservation steps for these values (checks after values 1, 17, 33, ...)."""
    steps, held, total = [threshold], threshold, 0.0
    for i, v in enumerate(values):
        total += v
        if i % lrc.unroll.CHECK_PERIOD == 0 and total >= held:
            held = int(lrc.unroll.GROWTH * total)
            steps.append(held)
    if size > held:
        steps.append(size)
    return tuple(steps)


def pyspark_batches(size, threshold, elements=None, serialized=False):
    if elements is not None or not serialized:
        return _equal_values(size, threshold, elements, serialized)
    head = min(size, 64 << 10)
    weights = [2 ** i for i in range(SMALL)]
    values = [head * w / sum(weights) for w in weights]
    left = size - head
    while left > 0:
        values.append(min(BIG, left))
        left -= BIG
    return _steps(size, threshold, values)


lrc.unroll.reserve_steps = lrc.compiled.reserve_steps = pyspark_batches
runpy.run_path(str(Path(__file__).resolve().parents[1] / "spark-order" / "replay_runs.py"),
               run_name="__main__")
