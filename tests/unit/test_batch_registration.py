"""Planning registers a stage's tasks in one call (`RefState.add_tasks`) and pauses the collector
meanwhile (`gcpause`): the batch must leave exactly the state the one-by-one path leaves, and the
collector as it was."""
from __future__ import annotations

import gc

from hypothesis import given, settings, strategies as st

from lrc.refcount import RefState
from spark_plugin.gcpause import gc_paused

reads = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=4)
tasks = st.lists(st.tuples(st.integers(0, 5), reads), max_size=8)  # partitions may repeat
steps = st.lists(st.tuples(st.integers(0, 2), tasks, st.lists(st.integers(0, 5), max_size=3)),
                 max_size=5)


def _state(r: RefState) -> tuple:
    eff = None if r.peers is None else {b: n for b, n in r.peers.effective.items() if n}
    return ({b: n for b, n in r.count.items() if n}, r.pending, r.stage_seq, r.next_seqs,
            r.next_ref, eff)


@settings(max_examples=200, deadline=None)
@given(steps=steps, peer_mode=st.sampled_from([None, "task", "stage"]),
       order=st.booleans(), cached=st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3))))
def test_a_stage_registered_at_once_equals_its_tasks_one_by_one(steps, peer_mode, order, cached):
    one, batch = (RefState(peer_mode, track_order=order) for _ in range(2))
    for r in (one, batch):
        for b in cached:
            if r.peers is not None:
                r.peers.set_cached(b, True)
    for seq, (stage, stage_tasks, finished) in enumerate(steps, 1):
        added = sum(one.add_task(stage, p, rs, seq) for p, rs in stage_tasks)
        assert batch.add_tasks(stage, stage_tasks, seq) == added
        for p in finished:
            one.finish_task(stage, p)
            batch.finish_task(stage, p)
        assert _state(one) == _state(batch)
        assert batch.changed <= one.changed  # (one by one may report blocks that moved back)


def test_distinct_reads_are_taken_as_given():
    r = RefState(track_order=True)
    assert r.add_tasks(0, [(0, [(1, 0), (2, 0)]), (1, ((1, 1),))], 1, distinct=True) == 2
    assert r.pending[0] == {0: ((1, 0), (2, 0)), 1: ((1, 1),)}
    assert dict(r.count) == {(1, 0): 1, (2, 0): 1, (1, 1): 1}
    assert r.add_tasks(0, [(0, [(9, 9)])], 1, distinct=True) == 0  # already registered


def test_the_collector_is_paused_and_restored_as_it_was():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # an application that turned it off keeps it off
    finally:
        gc.enable()
    try:
        with gc_paused():
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.isenabled()
