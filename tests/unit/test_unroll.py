"""The unroll memory a store reserves first (lrc.unroll), as Spark's MemoryStore asks for it."""
import pytest
from hypothesis import given, settings, strategies as st

from lrc.dag import AppDAG, Job, RDD, Stage
from lrc.evict import EvictionIndex
from lrc.sim import CompiledTrace
from lrc.trace import Event, Trace, load_trace, save_trace
from lrc.unroll import SPARK_UNROLL_THRESHOLD, reserve_bytes, reserve_steps, threshold_of


def test_a_block_below_the_threshold_still_reserves_the_threshold():
    assert reserve_bytes(100, 65536) == 65536


def test_a_block_at_or_above_the_threshold_reserves_half_again_at_its_first_check():
    """One large element (a GraphX partition, a cached DataFrame batch): Spark checks the
    estimate after the first element and asks for 1.5x it."""
    assert reserve_steps(65536, 65536) == (65536, 98304)
    assert reserve_steps(1_000_000, 65536) == (65536, 1_500_000)
    assert reserve_steps(65535, 65536) == (65536,)
    assert reserve_bytes(1_000_000, 65536) == 1_500_000


@given(st.integers(1, 1 << 34), st.integers(1, 1 << 24))
def test_a_block_asks_at_least_its_size_and_less_than_half_again(size, threshold):
    r = reserve_bytes(size, threshold)
    assert r >= size and r >= threshold
    assert size <= threshold or r <= 1.5 * size + 1


def test_the_threshold_is_a_whole_number_of_bytes_as_spark_reads_it():
    assert threshold_of(None) == SPARK_UNROLL_THRESHOLD == 1 << 20
    assert threshold_of({"spark.storage.unrollMemoryThreshold": "65536"}) == 65536
    for bad in ("", "-1", "0", "1x", "1.5", "64k"):  # Spark rejects 64k too (a long conf)
        with pytest.raises(ValueError, match="unrollMemoryThreshold"):
            threshold_of({"spark.storage.unrollMemoryThreshold": bad})


@pytest.mark.parametrize("level", ["MEMORY_ONLY", "MEMORY_AND_DISK_SER"])
def test_every_storage_level_reserves_the_same_way(level):
    """Spark 4's MemoryStore.putIterator reserves 1.5x the estimate for serialized levels as for
    deserialized ones (Spark 2 reserved only a serialized buffer's size): one value of 1 MB asks
    1.5 MB at either (without a count a serialized block is taken as many small values)."""
    d = AppDAG()
    d.add_rdd(RDD(0, 1, cached=True, storage_level=level, block_bytes=[1_000_000],
                  block_elements=[1]))
    d.add_stage(Stage(0, 0, 1, job_id=0))
    d.add_job(Job(0, (0,)))
    reads, creates = d.task_reads(0, 0, set())
    trace = Trace(d, [Event.job_start(0), Event.stage_submitted(0),
                      Event.task(0, 0, reads, creates), Event.stage_completed(0), Event.job_end(0)])
    assert CompiledTrace(trace).reserves(65536) == [1_500_000]


def test_a_store_that_does_not_fit_keeps_what_its_first_step_evicted():
    """Spark reserves the threshold (evicting for it) before it finds that 1.5x the block cannot
    be freed: the block is not stored, and the first step's victim stays evicted."""
    sizes, rdd_of = [4, 4, 5], [0, 1, 2]
    idx = EvictionIndex(9, sizes, rdd_of, [4, 4, 8], [(4,), (4,), (2, 8)])
    idx.insert(0, 0.0, 0)
    idx.insert(1, 0.0, 1)
    # block 2 needs 8 free (7 to evict) while block 1 is pinned: only block 0 (4) could go
    assert list(idx.insert(2, 0.0, 2, pinned={1})) == [0]  # the threshold's 2 needed 1 freed
    assert 2 not in idx and 0 not in idx and idx.used == 4
    # without steps (no unroll model) the failed store evicts nothing
    idx = EvictionIndex(9, sizes, rdd_of, [4, 4, 8])
    idx.insert(0, 0.0, 0)
    idx.insert(1, 0.0, 1)
    assert list(idx.insert(2, 0.0, 2, pinned={1})) == [] and 0 in idx


def test_a_store_keeps_what_every_step_it_met_evicted():
    """Three steps (threshold, a growth, the block): the second can be met by evicting two
    blocks, the third cannot; the two stay evicted."""
    sizes, rdd_of = [2, 2, 2, 5], [0, 1, 2, 3]
    idx = EvictionIndex(7, sizes, rdd_of, [2, 2, 2, 8], [(2,), (2,), (2,), (1, 5, 8)])
    for b in range(3):
        idx.insert(b, 0.0, b)
    assert list(idx.insert(3, 0.0, 3, pinned={2})) == [0, 1]
    assert 3 not in idx and idx.used == 2


def _spark_steps(size, threshold, n):
    """MemoryStore.putIterator's reservations, literally: one value at a time, equal values."""
    per, held, steps = size / n, threshold, [threshold]
    for unrolled in range(n):  # elementsUnrolled before the value is counted
        est = (unrolled + 1) * per  # SizeTracker's estimate of the values so far
        if unrolled % 16 == 0 and est >= held:
            held = int(1.5 * est)
            steps.append(held)
    return tuple(steps + [size] if size > held else steps)


@settings(max_examples=300)
@given(st.integers(1, 1 << 30), st.integers(1, 1 << 22), st.integers(1, 3000))
def test_the_steps_follow_spark_checks_for_many_elements(size, threshold, n):
    assert reserve_steps(size, threshold, n) == _spark_steps(size, threshold, n)


def test_many_small_elements_reserve_less_than_one_large_one():
    """1 MB in 1,000 values grows in steps and ends below 1.5 MB; in 10 values the check after
    the first asks for 150 KB and the end for the size."""
    assert reserve_steps(1_000_000, 65536, 1000) == (65536, 121500, 193500, 313500, 481500,
                                                     745500, 1129500)
    assert reserve_steps(1_000_000, 65536, 10) == (65536, 150000, 1_000_000)
    assert reserve_steps(1_000_000, 65536, None) == reserve_steps(1_000_000, 65536, 1)


def test_a_serialized_block_without_a_count_is_taken_as_values_of_64_kib():
    """PySpark's pickled batches (and a DataFrame's cached batches): near 1x the block, where
    the one-element rule of a deserialized block asks 1.5x."""
    steps = reserve_steps(1_000_000, 65536, None, serialized=True)
    assert steps == reserve_steps(1_000_000, 65536, 16)  # ceil(1,000,000 / 65,536) values
    assert steps[-1] == 1_000_000 < reserve_bytes(1_000_000, 65536)  # 1.5 MB as one value
    assert reserve_steps(1_000_000, 65536, 3, serialized=True) == \
        reserve_steps(1_000_000, 65536, 3)  # a count, where known, wins
    assert reserve_steps(1000, 65536, None, serialized=True) == (65536,)


def test_a_trace_carries_element_counts_to_the_replay(tmp_path):
    d = AppDAG()
    d.add_rdd(RDD(0, 2, cached=True, block_bytes=[1_000_000, 1_000_000],
                  block_elements=[10, 1]))
    d.add_stage(Stage(0, 0, 2, job_id=0))
    d.add_job(Job(0, (0,)))
    ev = [Event.job_start(0), Event.stage_submitted(0)]
    for p in range(2):
        reads, creates = d.task_reads(0, p, set())
        ev.append(Event.task(0, p, reads, creates))
    trace = Trace(d, ev + [Event.stage_completed(0), Event.job_end(0)])
    for path in (tmp_path / "t.parquet", tmp_path / "t.json"):
        save_trace(trace, path)
        assert CompiledTrace(load_trace(path)).reserves(65536) == [1_000_000, 1_500_000]
