"""The what-if fast path (issue 12): the replays and bounds in worker processes give exactly the
serial numbers; a replay whose caches the unlimited run never filled is that run renamed; the
bound's vectorised dual is the formula it stands for."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrc.bound import _Dual, hit_bound
from lrc.eventlog_write import write_eventlog
from lrc.policies import POLICIES
from lrc.sim import REFS, CompiledTrace, simulate
from lrc.synth import WORKLOADS, make
from lrc.cli import main
from lrc.whatif import CacheSize, replay, run_whatif

SIZES = [CacheSize(fraction=f) for f in (0.1, 0.3, 0.7, 1.0, 2.0)] + [CacheSize(per_executor=900)]


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    return write_eventlog(make("cc", seed=2, parts=6), tmp_path_factory.mktemp("wi") / "app.log")


@pytest.mark.parametrize("executors", [1, 3])
def test_parallel_whatif_equals_serial_and_plain_replays(log, executors):
    serial = run_whatif(log, SIZES, executors=executors, progress=False, jobs=1)
    par = run_whatif(log, SIZES, executors=executors, progress=False, jobs=2)
    assert serial.timings["workers"] == 1 and par.timings["workers"] == 2
    assert par.rows == serial.rows and par.unlimited_time == serial.unlimited_time
    assert par.recommendation == serial.recommendation
    # and both are what simulate / hit_bound say, run by run (the renamed runs included)
    ct = CompiledTrace(par.log.trace)
    for row in par.rows:
        f = row["cache_fraction"]
        want = simulate(ct, row["policy"], f, executors=executors, cores=par.cores,
                        admit=row["admit"], task_order=par.task_order).to_dict()
        want["est_runtime"] += par.outside_s  # the logged run's time outside its tasks
        assert {k: row[k] for k in want} == want
        assert row["admit"] == (row["policy"] == "crd")  # admit=auto: as the live default
        assert row["bound_hit_ratio"] == hit_bound(ct, f, executors).hit_ratio
    # one executor holding twice the working set never evicts; holding it once, storing its
    # last blocks still evicts for their unroll reservation (lrc.unroll); the replay of the run
    # as it ran always runs (in its logged order, where the others take Spark's)
    if executors == 1:
        assert par.timings["runs_same_as_unlimited"] == serial.timings[
            "runs_same_as_unlimited"] == 5


def test_replay_jobs_in_any_number_of_processes():
    ct = CompiledTrace(make("zip", seed=1, parts=5))
    todo = [("sim", "lru", 4.04)] + [("bound", None, f) for f in (0.2, 0.6)] + [
        ("sim", p, f) for f in (0.2, 0.6, 1.0, 3.0) for p in ("lru", "lerc", "crd")]
    one, cpu1 = replay(ct, todo, 4, 2, "profile", jobs=1)
    three, cpu3 = replay(ct, todo, 4, 2, "profile", jobs=3)
    assert cpu1["workers"] == 1 and cpu3["workers"] == 3
    assert set(one) == set(three) == set(todo)
    for job in todo:
        a, b = one[job], three[job]
        assert (a.to_dict(), a.evicted) == (b.to_dict(), b.evicted) if job[0] == "sim" else a == b


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_a_cache_the_unlimited_run_never_filled_replays_as_unlimited(workload):
    """What lets the what-if skip those replays: without evictions no policy moves anything."""
    skip = {"policy", "cache_fraction", "cache_bytes", "refs"}
    for seed, ex in ((0, 1), (1, 2), (2, 3)):
        ct = CompiledTrace(make(workload, seed=seed, parts=5))
        unl = simulate(ct, "lru", ex * 1.01, executors=ex)
        assert unl.evictions == 0 and 0 < unl.peak_cache_bytes <= unl.cache_bytes // ex
        ws = ct.working_set_bytes
        f = unl.peak_cache_bytes * ex / ws
        while int(f * ws / ex) < unl.peak_cache_bytes:
            f = np.nextafter(f, np.inf)
        want = {k: v for k, v in unl.to_dict().items() if k not in skip}
        for p in POLICIES:
            for refs in REFS:
                got = simulate(ct, p, f, executors=ex, refs=refs).to_dict()
                assert {k: v for k, v in got.items() if k not in skip} == want, (p, refs)


@st.composite
def duals(draw):
    """Random options: reads with 1-5 options (ties on purpose), positions, sizes, q; every
    number a small binary fraction, so that sums are exact whatever their order and a value at
    exactly 0 or a tie is the same in the formula and the vectorised code."""
    T = draw(st.integers(2, 12))
    reads = draw(st.integers(1, 8))
    rows = []
    for r in range(reads):
        for _ in range(draw(st.integers(1, 5))):
            s = draw(st.integers(0, T - 2))
            t = draw(st.integers(s + 1, T - 1))
            rows.append((r, s, t, draw(st.sampled_from([1, 2, 5])),
                         draw(st.sampled_from([0.0, 0.25, 0.5, 1.0]))))
    order = draw(st.permutations(range(len(rows))))
    rows = [rows[i] for i in order]
    lam = draw(st.lists(st.sampled_from([0.0, 0.015625, 0.0625, 0.125, 0.25]),
                        min_size=T - 1, max_size=T - 1))
    return rows, T, reads, np.array(lam), draw(st.sampled_from([0.0, 0.25, 0.5, 1.0])), \
        draw(st.integers(0, 12))


@settings(max_examples=200, deadline=None)
@given(duals())
def test_the_vectorised_dual_is_the_formula(case):
    rows, T, reads, lam, mu, cap = case
    a = [np.array([x[i] for x in rows]) for i in range(5)]
    d = _Dual(a[0].astype(np.int64), a[1].astype(np.int64), a[2].astype(np.int64),
              a[3].astype(np.int64), a[4].astype(np.float64), cap, T, reads)
    # the formula, option by option; the chosen option: the read's first best, if positive
    best: dict[int, tuple[float, int]] = {}
    for i, (r, s, t, z, q) in enumerate(rows):
        v = 1 - mu * (1 + q) - z * lam[s:t].sum()
        if r not in best or v > best[r][0]:
            best[r] = (v, i)
    value = cap * lam.sum() + mu * reads + sum(max(0.0, v) for v, _ in best.values())
    use, need = np.zeros(T - 1), 0.0
    for v, i in best.values():
        if v > 0:
            r, s, t, z, q = rows[i]
            use[s:t] += z
            need += 1 + q
    got, g_lam, g_mu = d.grad(lam, mu)
    assert got == value
    assert (g_lam == cap - use).all() and g_mu == reads - need
    x = float(lam[0])
    const = cap * (T - 1) * x + mu * reads + sum(
        max(0.0, max(1 - mu * (1 + q) - z * x * (t - s) for r2, s, t, z, q in rows if r2 == r))
        for r in range(reads))
    assert d.const(x, mu) == const


def test_the_bound_shares_its_options_between_sizes():
    trace = make("svdpp", seed=4, parts=5)
    ct = CompiledTrace(trace)
    first = [hit_bound(ct, f, 2) for f in (0.2, 0.5, 1.0)]
    fresh = [hit_bound(CompiledTrace(trace), f, 2) for f in (0.2, 0.5, 1.0)]
    assert first == fresh


def test_whatif_admits_as_the_live_default_unless_told_otherwise(log, tmp_path, capsys):
    """admit=auto replays crd with admission (what spark-lrc does by default), false replays it
    ranked alone, true every policy but lru; each row says which it was, and the two crd
    replays are the simulator's with and without admission."""
    sizes = [CacheSize(fraction=f) for f in (0.3, 0.5)]
    res = {mode: run_whatif(log, sizes, ["lru", "lrc", "crd"], executors=2, progress=False,
                            jobs=1, admit=mode) for mode in ("auto", "false", "true")}
    on = {mode: sorted({r["policy"] for r in w.rows if r["admit"]}) for mode, w in res.items()}
    assert on == {"auto": ["crd"], "false": [], "true": ["crd", "lrc"]}
    ct = CompiledTrace(res["auto"].log.trace)
    for mode, admit in (("auto", True), ("false", False)):
        for r in (r for r in res[mode].rows if r["policy"] == "crd"):
            want = simulate(ct, "crd", r["cache_fraction"], executors=2, cores=res[mode].cores,
                            admit=admit, task_order="spark").to_dict()
            want["est_runtime"] += res[mode].outside_s
            assert {k: r[k] for k in want} == want
    with pytest.raises(ValueError, match="admission must be one of auto, true, false"):
        run_whatif(log, sizes, admit="sometimes")
    out = tmp_path / "o"
    assert main(["whatif", str(log), "--cache-sizes", "0.3", "--policies", "lru,crd",
                 "--out", str(out)]) == 0
    report = " ".join((out / "report.md").read_text().split())
    assert "| crd + admission |" in report and "| lru |" in report
    assert "admission `auto` as `spark.lrc.admit` sets it live (crd replayed with it" in report
    with pytest.raises(SystemExit):
        main(["whatif", str(log), "--admit", "sometimes", "--out", str(out)])
    assert "--admit" in capsys.readouterr().err
