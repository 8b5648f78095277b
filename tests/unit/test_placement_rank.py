"""Ranking of placement hints without Spark: inputs built directly, as the brain keeps them."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from spark_plugin.config import LrcConfigError
from spark_plugin.placement import (gpu_executors, gpus_of, hints_from, placement_hints,
                                    rank_executors)

EXECUTORS = {
    "1": {"host": "a", "cores": 4, "resources": {}},
    "2": {"host": "b", "cores": 4, "resources": {"gpu": ["0"]}},
    "3": {"host": "c", "cores": 4, "resources": {"gpu": ["0", "1"], "fpga": ["x"]}},
    "10": {"host": "d", "cores": 4, "resources": {"gpu": []}},
}


def test_holders_first_then_more_gpus_then_id():
    assert rank_executors([], EXECUTORS) == ["3", "2", "1", "10"]
    assert rank_executors(["1"], EXECUTORS) == ["1", "3", "2", "10"]
    # among holders, GPUs still decide; numeric ids sort as numbers
    assert rank_executors(["10", "1", "2"], EXECUTORS) == ["2", "1", "10", "3"]
    assert rank_executors(["3", "2"], EXECUTORS) == ["3", "2", "1", "10"]


def test_removed_executors_never_appear():
    live = {k: v for k, v in EXECUTORS.items() if k != "3"}
    # "3" still holds the block per the last block events, but it was removed
    assert rank_executors(["3"], live) == ["2", "1", "10"]
    assert rank_executors(["3", "1"], live) == ["1", "2", "10"]
    assert rank_executors(["1"], {}) == []


def test_gpus_of_lists_only_executors_with_gpu_addresses():
    assert gpus_of(EXECUTORS) == {"2": ["0"], "3": ["0", "1"]}
    assert gpus_of({"driver": {"resources": None}, "x": {}}) == {}


def test_hints_per_partition_including_uncached_partitions():
    locations = {(7, 0): {"1"}, (7, 1): {"2", "10"}, (8, 2): {"1"}}
    hints = hints_from(3, locations, 7, EXECUTORS)
    assert hints == {0: ["1", "3", "2", "10"], 1: ["2", "10", "3", "1"], 2: ["3", "2", "1", "10"]}


def fake_brain(partitions=None):
    dag = SimpleNamespace(rdds={} if partitions is None else
                          {5: SimpleNamespace(num_partitions=partitions, cached=True)})
    planner = SimpleNamespace(dag=dag, locations={(5, 0): {"3"}, (5, 1): {"1", "4"}, (6, 0): {"2"}})
    return SimpleNamespace(executors=EXECUTORS, planner=planner, _lock=threading.RLock())


def test_placement_hints_reads_the_brain():
    brain = fake_brain(partitions=3)
    rdd = SimpleNamespace(id=lambda: 5)  # a pyspark RDD works as well as its id
    # "4" holds (5, 1) per a block event but is not a live executor
    expected = {0: ["3", "2", "1", "10"], 1: ["1", "3", "2", "10"], 2: ["3", "2", "1", "10"]}
    assert placement_hints(5, brain) == placement_hints(rdd, brain) == expected
    # an RDD the brain never saw in a job: the partitions that have a block somewhere
    assert placement_hints(5, fake_brain()) == {p: expected[p] for p in (0, 1)}
    assert placement_hints(99, brain) == {}
    assert gpu_executors(brain) == {"2": ["0"], "3": ["0", "1"]}


def test_without_a_brain_it_says_so(monkeypatch):
    import spark_plugin.session as session

    monkeypatch.setattr(session, "_brains", {})
    with pytest.raises(LrcConfigError):
        placement_hints(1)
    with pytest.raises(LrcConfigError):
        gpu_executors()
