"""The cached working set that cache fractions are relative to: the most bytes cached at once.

An application that unpersists (GraphX-style loops, cc) holds far less at any moment than the sum
of every block it ever cached; sizing the cache from that sum left cc with no pressure at all."""
from lrc import synth
from lrc.sim import CompiledTrace, simulate
from lrc.synth import App, o2o


def _block_bytes(ct: CompiledTrace, rdd_id: int) -> int:
    return sum(s for b, s in zip(ct.blocks, ct.sizes) if b[0] == rdd_id)


def test_without_unpersist_the_working_set_is_every_cached_byte():
    ct = CompiledTrace(synth.pagerank(seed=1, parts=4, iters=3))
    assert ct.working_set_bytes == ct.total_bytes > 0


def test_unpersist_frees_bytes_before_the_next_rdd_is_cached():
    a = App("chain", seed=3, parts=4)
    base = a.rdd(mb=2, name="base")
    a.action(base)
    prev = base
    rdds = [base]
    for i in range(3):  # each step caches a new RDD from the last, then drops the last
        nxt = a.rdd([o2o(prev)], mb=1, name=f"step{i}")
        a.action(nxt)
        if prev != base:
            a.unpersist(prev)
        rdds.append(nxt)
        prev = nxt
    ct = CompiledTrace(a.trace())
    sizes = {r: _block_bytes(ct, r) for r in rdds}
    # at most base + two consecutive steps are cached at once
    expect = sizes[base] + max(sizes[rdds[i]] + sizes[rdds[i + 1]] for i in range(1, 3))
    assert ct.working_set_bytes == expect < ct.total_bytes


def test_simulated_cache_is_the_fraction_of_the_working_set():
    ct = CompiledTrace(synth.cc(seed=0))
    assert ct.working_set_bytes < ct.total_bytes  # cc unpersists its messages
    r = simulate(ct, "lru", 0.5, executors=2)
    assert abs(r.cache_bytes - 0.5 * ct.working_set_bytes) <= 2
