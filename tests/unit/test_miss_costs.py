"""What the live brain charges a miss of a block it has not measured yet (lrc.cost.MissCosts)."""
import pytest

from lrc.cost import UNKNOWN, MissCosts
from lrc.policies import get_policy
from lrc.refcount import RefState


def test_with_nothing_measured_every_block_costs_the_same():
    costs = MissCosts()
    costs.sized((1, 0), 100)
    assert costs.density((1, 0)) == costs.density((2, 0)) == UNKNOWN


def test_an_unmeasured_block_costs_the_median_of_the_measured_rdds():
    costs = MissCosts()
    for rdd, seconds, sizes in ((1, 1.0, (100, 300)), (2, 4.0, (100,)), (3, 9.0, (100,))):
        for p, nbytes in enumerate(sizes):
            costs.sized((rdd, p), nbytes)
        costs.task_time(rdd, seconds)
    # per RDD: rebuild time over its mean block size: 1/200, 4/100, 9/100
    assert costs.density((1, 0)) == pytest.approx(1.0 / 100)
    assert costs.density((9, 0)) == pytest.approx(4.0 / 100)  # no rebuild time yet
    assert costs.density((1, 5)) == pytest.approx(4.0 / 100)  # no size yet
    costs.task_time(2, 0.0)  # a running mean: rdd 2 now 2 s, the median with it
    assert costs.density((9, 0)) == pytest.approx(2.0 / 100)
    costs.forget(3, [(3, 0)])
    assert costs.density((9, 0)) == pytest.approx((1.0 / 200 + 2.0 / 100) / 2)
    assert 3 not in costs.rebuild_s and (3, 0) not in costs.size


def test_crd_ranks_an_unmeasured_block_by_its_distance_not_over_every_measured_one():
    """Live, a new RDD is ranked from its job's start, before the first task end that gives its
    rebuild time. A block of it read three stages on must not outrank a measured block of the
    same cost read next (a fixed large unknown density kept it over that block)."""
    refs = RefState(track_order=True)
    for rdd, seconds in ((1, 2.0), (2, 2.0), (3, 2.0)):
        refs.costs.sized((rdd, 0), 1000)
        refs.costs.task_time(rdd, seconds)
    refs.next_ref.update({(1, 0): 1, (2, 0): 3, (7, 0): 3})
    refs.costs.sized((7, 0), 1000)  # stored, its rebuild time not in yet
    priority = get_policy("crd").bind(refs)
    assert priority((7, 0)) == pytest.approx(priority((2, 0)))
    assert priority((7, 0)) < priority((1, 0))
