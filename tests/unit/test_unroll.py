"""The unroll memory a store reserves first (lrc.unroll), as Spark's MemoryStore asks for it."""
import pytest
from hypothesis import given, strategies as st

from lrc.unroll import SPARK_UNROLL_THRESHOLD, reserve_bytes, threshold_of


def test_a_block_below_the_threshold_still_reserves_the_threshold():
    assert reserve_bytes(100, 65536) == 65536


def test_the_reservation_grows_by_half_from_the_threshold():
    assert reserve_bytes(65537, 65536) == 98304  # one step: 1.5 x 64 KiB
    assert reserve_bytes(98304, 65536) == 98304  # exactly at a step
    assert reserve_bytes(1_000_000, 65536) == int(65536 * 1.5 ** 7)


@given(st.integers(1, 1 << 34), st.integers(1, 1 << 24))
def test_a_deserialized_block_asks_at_least_its_size_and_less_than_half_again(size, threshold):
    r = reserve_bytes(size, threshold)
    assert r >= size and r >= threshold
    assert size <= threshold or r <= 1.5 * size + 1


def test_a_serialized_block_asks_its_size():
    assert reserve_bytes(1_000_000, 65536, serialized=True) == 1_000_000


def test_the_threshold_is_a_whole_number_of_bytes_as_spark_reads_it():
    assert threshold_of(None) == SPARK_UNROLL_THRESHOLD == 1 << 20
    assert threshold_of({"spark.storage.unrollMemoryThreshold": "65536"}) == 65536
    for bad in ("", "-1", "0", "1x", "1.5", "64k"):  # Spark rejects 64k too (a long conf)
        with pytest.raises(ValueError, match="unrollMemoryThreshold"):
            threshold_of({"spark.storage.unrollMemoryThreshold": bad})
