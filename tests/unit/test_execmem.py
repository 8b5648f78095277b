"""Execution memory's claims on the cache (lrc.execmem) in the replay."""
import json

import pytest

from lrc.dag import AppDAG, Job, RDD, Stage
from lrc.execmem import claim_scale, page_bytes, storage_limit
from lrc.sim import simulate
from lrc.trace import Event, Trace

MiB = 1 << 20


def test_page_size_is_sparks_default():
    # MemoryManager.defaultPageSizeBytes: execution region / cores / 16, next power of 2, 1-64 MiB
    # (the numbers of the tpch runs' event logs: 32 MiB pages with ample memory, 1 MiB at F=0.5)
    assert page_bytes(451 * MiB, 0.1, 1) == 32 * MiB
    assert page_bytes(11784956, 0.1, 1) == MiB
    assert page_bytes(10 << 30, 0.5, 1) == 64 * MiB
    assert page_bytes(451 * MiB, 0.1, 2) == 16 * MiB
    assert claim_scale(451 * MiB, 11784956, 0.1, 1) == 1 / 32
    assert claim_scale(0, 11784956, 0.1, 1) == 1.0  # memory of the claims unknown: as recorded
    assert storage_limit(100, 30, 0.5) == 70 and storage_limit(100, 80, 0.5) == 50


def _trace(claim, executor_memory=0):
    """Two cached blocks of 40 bytes, then a task reading block 0 that claims ``claim``, then a
    task reading both."""
    d = AppDAG()
    d.add_rdd(RDD(1, 2, cached=True, storage_level="MEMORY_ONLY", block_bytes=[40, 40],
                  compute_cost=1.0))
    for s in range(3):
        d.add_stage(Stage(s, 1, 2, job_id=s))
        d.add_job(Job(s, (s,)))
    ev = [Event.job_start(0), Event.stage_submitted(0),
          Event.task(0, 0, creates=[(1, 0)], executor="0"),
          Event.task(0, 1, creates=[(1, 1)], executor="0"),
          Event.stage_completed(0), Event.job_end(0),
          Event.job_start(1), Event.stage_submitted(1),
          Event.task(1, 0, reads=[(1, 0)], executor="0", exec_bytes=claim),
          Event.stage_completed(1), Event.job_end(1),
          Event.job_start(2), Event.stage_submitted(2),
          Event.task(2, 0, reads=[(1, 0)], executor="0"),
          Event.task(2, 1, reads=[(1, 1)], executor="0"),
          Event.stage_completed(2), Event.job_end(2)]
    return Trace(d, ev, "claims", executor_memory=executor_memory)


@pytest.mark.parametrize("policy", ["lru", "lrc", "min"])
def test_a_claim_evicts_unpinned_blocks_down_to_the_protected_share(policy):
    free = simulate(_trace(None), policy, 1.0, executors=1, storage_fraction=0.1)
    assert (free.hits, free.evictions) == (3, 0)
    # 80 bytes of memory, all cached; a 30-byte claim evicts block 1 (block 0 is read: pinned)
    r = simulate(_trace(30), policy, 1.0, executors=1, storage_fraction=0.1, log_evictions=True)
    assert r.evicted == [(1, 1)] and r.exec_evictions == r.evictions == 1
    assert (r.reads, r.hits) == (3, 2)
    # storage keeps at least half of the memory: a claim of everything still leaves 40 bytes
    r = simulate(_trace(10 ** 9), policy, 1.0, executors=1, storage_fraction=0.5)
    assert (r.exec_evictions, r.hits) == (1, 2)
    r = simulate(_trace(10 ** 9), policy, 1.0, executors=1, storage_fraction=0.0)
    assert (r.exec_evictions, r.hits) == (1, 2)  # block 0 stays pinned while its task runs


def test_claims_are_rescaled_to_the_simulated_memory_by_page_size():
    # 120 bytes of memory, 80 cached: a 30-byte claim fits in the free 40, a 960-byte one does not
    unscaled = simulate(_trace(30 * 32), "lru", 1.5, executors=1, storage_fraction=0.1)
    assert unscaled.exec_evictions == 1
    # logged with ample memory (32 MiB pages); at 120 bytes Spark's pages are 1 MiB: 960 / 32
    scaled = simulate(_trace(30 * 32, executor_memory=451 * MiB), "lru", 1.5, executors=1,
                      cores=1,
                      storage_fraction=0.1)
    assert (scaled.exec_evictions, scaled.hits) == (0, 3)


def test_storage_fraction_is_the_traces_unless_given():
    tr = _trace(10 ** 9)
    tr.storage_fraction = 0.5
    assert simulate(tr, "lru", 1.0, executors=1).exec_evictions == 1
    with pytest.raises(ValueError, match="storage_fraction"):
        simulate(tr, "lru", 1.0, executors=1, storage_fraction=1.0)


def test_simulate_cli_takes_the_runs_storage_fraction(tmp_path, capsys):
    from lrc.cli import main
    from lrc.trace import save_trace

    path = save_trace(_trace(10 ** 9), tmp_path / "t.json")
    rows = {}
    for sf in ("0.5", "0.9"):
        out = tmp_path / f"{sf}.json"
        assert main(["simulate", "--trace", str(path), "--policies", "lru", "--cache-fraction",
                     "1.5", "--executors", "1", "--storage-fraction", sf, "--json", str(out)]) == 0
        rows[sf] = json.loads(out.read_text())["results"][0]
    # 120 bytes of memory, 80 cached, a claim of everything: storage keeps 60 or 108 bytes
    assert rows["0.5"]["exec_evictions"] == 1 and rows["0.9"]["exec_evictions"] == 0
    with pytest.raises(SystemExit):
        main(["simulate", "--trace", str(path), "--storage-fraction", "1.5"])
    assert "must be in [0, 1)" in capsys.readouterr().err


def test_whatif_replays_a_size_whose_claims_evict_though_unlimited_memory_never_did():
    from lrc.compiled import CompiledTrace
    from lrc.whatif import replay

    ct = CompiledTrace(_trace(10 ** 9))
    unlimited, at_one = ("unlimited", "lru", 1.01), ("sim", "lru", 1.0)
    for jobs in (1, 2):
        done, cpu = replay(ct, [unlimited, at_one], executors=1, cores=1, refs="online", jobs=jobs)
        assert done[unlimited].evictions == 0  # no claims with unlimited memory
        # the cache holds all 80 bytes, as unlimited memory's did, but a claim takes 40 of them
        assert (done[at_one].exec_evictions, cpu["same"]) == (1, 0)
    done, cpu = replay(CompiledTrace(_trace(None)), [unlimited, at_one], executors=1, cores=1,
                       refs="online", jobs=1)
    assert cpu["same"] == 1 and done[at_one].evictions == 0  # without claims: the same run
