"""An offline upper bound on the simulator's hit count that no policy can beat (``min`` is only
Belady under Spark's rules, not a bound): PFOO-U's space-time relaxation (Berger, Beckmann,
Harchol-Balter, SIGMETRICS 2018) applied to exactly what ``lrc.sim`` counts as a hit.

Time is the position in ``CompiledTrace.access`` (every task read and create, in replay order);
C = per-executor capacity x executors, as ``_Replay`` sizes its caches. A block enters a cache only
at an *opportunity*: its create, a read of it (a miss reloads it), or a read of any block x whose
transitive ``ct.inputs`` closure holds it (a miss recomputes x, loading uncached inputs
recursively); an unpersist of its RDD drops it. So a counted hit (a read finding the block cached
on any executor: remote hits included) of block b at position t, with last opportunity s < t
(none since its RDD's last unpersist: a compulsory miss), needs b cached at the end of every
position s..t-1: size(b) x (t - s) byte-positions, disjoint between b's reads. Occupancy at the end
of each position is <= C (an insert that does not fit evicts or fails; a block sits on one
executor). PFOO-U keeps one budget C x (T-1) and takes the cheapest intervals; that is far too
loose here (1.0 on most synthetic cells), for two reasons fixed in an LP whose dual values bound
the hits for *any* multipliers (so an approximate search stays sound): (1) a virtual opportunity
from read k of x only exists if k misses, and one miss of k feeds at most m_k (its closure's read
blocks) such hits: hits + sum over virtual hits of 1/m_k <= non-compulsory reads; (2) capacity per
position (a multiplier per position, refined by subgradient steps from PFOO-U's constant one).
Hits are integers: the floor of the best dual value (plus a 1e-6 rounding margin) is the bound.
Blocks larger than one executor's cache never hit. Everything else in the replay only restricts a
policy: pinned reads, the same-RDD rule, failed inserts, execution memory's claims (they only
evict, ``lrc.execmem``); a MEMORY_AND_DISK re-read from disk is a
miss that reloads the block at a read, an opportunity already. Extra opportunities only loosen.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from lrc.compiled import CompiledTrace

__all__ = ["BoundResult", "hit_bound"]


@dataclass
class BoundResult:
    cache_fraction: float
    executors: int
    cache_bytes: int
    reads: int
    compulsory: int  # reads with no opportunity before them: misses under any policy
    bound_hits: int

    @property
    def hit_ratio(self) -> float:
        return self.bound_hits / self.reads if self.reads else 1.0


def _closures(inputs: list[tuple[int, ...]], want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR (offsets, members) of each block's transitive input closure, restricted to ``want``."""
    memo: list[frozenset | None] = [None] * len(inputs)
    for root in range(len(inputs)):
        stack = [root]
        while stack:  # post-order without recursion (lineage can be deep)
            b = stack[-1]
            if memo[b] is not None:
                stack.pop()
                continue
            todo = [i for i in inputs[b] if memo[i] is None]
            if todo:
                stack.extend(todo)
                continue
            acc = set(inputs[b])
            for i in inputs[b]:
                acc |= memo[i]
            memo[b] = frozenset(acc)
            stack.pop()
    lists = [sorted(i for i in m if want[i]) for m in memo]
    offsets = np.zeros(len(inputs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x) for x in lists])
    members = np.fromiter((i for x in lists for i in x), dtype=np.int64, count=int(offsets[-1]))
    return offsets, members


def _accesses(ct: CompiledTrace) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """(is-read per position, positions count, [(position before which, rdd)] for unpersists)."""
    is_read, unpersists, pos = [], [], 0
    for ev in ct.events:
        if ev[0] == 2:
            if ev[8] is None:  # reads, then creates; else Spark's order (CompiledTrace)
                is_read.extend([True] * len(ev[4]))
                is_read.extend([False] * len(ev[5]))
            else:
                is_read.extend(not c for c in ev[8])
            pos += len(ev[4]) + len(ev[5])
        elif ev[0] == 5:
            unpersists.append((pos, ev[1]))
    return np.asarray(is_read, dtype=bool), pos, unpersists


@dataclass
class _Options:
    """What the bound needs of a trace, whatever the cache size: every read's options before the
    size filter (an option is only open to a block that fits in one executor's cache)."""

    T: int  # positions
    reads: int
    d_read: np.ndarray  # direct options: read index, start, end (positions), block size
    d_s: np.ndarray
    d_t: np.ndarray
    d_z: np.ndarray
    v_read: np.ndarray  # virtual options, the same, plus the read whose miss would create it
    v_s: np.ndarray
    v_t: np.ndarray
    v_z: np.ndarray
    v_src: np.ndarray


_OPTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _options(ct: CompiledTrace) -> _Options:
    """The trace's options, worked out once per trace (a CompiledTrace never changes) and kept
    while the trace lives: the bound at each cache size shares them."""
    opts = _OPTIONS.get(ct)
    if opts is None:
        opts = _OPTIONS[ct] = _find_options(ct)
    return opts


def _find_options(ct: CompiledTrace) -> _Options:
    acc = ct.access
    is_read, T, unpersists = _accesses(ct)
    assert T == len(acc)
    nb = len(ct.blocks)
    sizes = np.asarray(ct.sizes, dtype=np.int64)
    read_pos = np.flatnonzero(is_read)
    reads = len(read_pos)
    if not reads:
        none = np.zeros(0, dtype=np.int64)
        return _Options(T, 0, none, none, none, none, none, none, none, none, none)
    read_block = np.zeros(nb, dtype=bool)
    read_block[acc[read_pos]] = True  # only blocks read somewhere need opportunities

    # records (block, time key, kind): key 2*pos+1 for accesses, 2*pos for an unpersist before pos
    blk = [acc]
    key = [2 * np.arange(T, dtype=np.int64) + 1]
    kind = [np.where(is_read, 2, 1).astype(np.int8)]  # 2: read, 1: create, 3: virtual, 0: reset
    offsets, members = _closures(ct.inputs, read_block)
    lens = (offsets[1:] - offsets[:-1])[acc[read_pos]]
    if lens.sum():
        starts = np.repeat(offsets[acc[read_pos]] - np.cumsum(lens) + lens, lens)
        blk.append(members[starts + np.arange(lens.sum())])
        key.append(np.repeat(2 * read_pos + 1, lens))
        kind.append(np.full(int(lens.sum()), 3, dtype=np.int8))
    for p, rdd in unpersists:
        gone = [b for b in ct.rdd_blocks(rdd) if read_block[b]]
        blk.append(np.asarray(gone, dtype=np.int64))
        key.append(np.full(len(gone), 2 * p, dtype=np.int64))
        kind.append(np.zeros(len(gone), dtype=np.int8))
    blk, key, kind = np.concatenate(blk), np.concatenate(key), np.concatenate(kind)
    src_read = np.concatenate([np.full(T, -1, dtype=np.int64),
                               np.repeat(np.arange(reads, dtype=np.int64), lens),
                               np.full(len(blk) - T - int(lens.sum()), -1, dtype=np.int64)])
    order = np.lexsort((key, blk))
    blk, key, kind, src_read = blk[order], key[order], kind[order], src_read[order]
    n = len(blk)
    idx = np.arange(n)
    # each record's last direct access or reset (or block start) at or before it, and the next
    # direct access or reset (or block end) at or after it
    stop = kind != 3
    newblk = np.ones(n, dtype=bool)
    newblk[1:] = blk[1:] != blk[:-1]
    last = np.maximum.accumulate(np.where(stop | newblk, idx, 0))
    endblk = np.ones(n, dtype=bool)
    endblk[:-1] = newblk[1:]
    nxt = np.minimum.accumulate(np.where(stop | endblk, idx, n)[::-1])[::-1]
    virtual = kind == 3
    cur = np.flatnonzero(kind == 2)
    rid = np.searchsorted(read_pos, key[cur] // 2)  # read index of each counted read record
    # direct option: the read's previous record (after its last direct access) is that access
    g = last[np.maximum(cur - 1, 0)]
    direct = (cur > 0) & ~newblk[cur] & (kind[g] != 0) & (blk[g] == blk[cur])
    # virtual options: virtual records whose next direct record is a counted read
    v = np.flatnonzero(virtual)
    j = nxt[v]
    vok = (j < n) & (blk[np.minimum(j, n - 1)] == blk[v]) & (kind[np.minimum(j, n - 1)] == 2)
    v, j = v[vok], j[vok]
    return _Options(T, reads, rid[direct], key[g[direct]] // 2, key[cur[direct]] // 2,
                    sizes[blk[cur[direct]]], np.searchsorted(read_pos, key[j] // 2), key[v] // 2,
                    key[j] // 2, sizes[blk[j]], src_read[v])


def hit_bound(ct: CompiledTrace, cache_fraction: float, executors: int = 4, steps: int = 300
              ) -> BoundResult:
    """Upper bound on ``simulate(ct, any policy, cache_fraction, executors).hits``."""
    per_exec = int(cache_fraction * ct.working_set_bytes / executors)
    cap = per_exec * executors
    o = _options(ct)
    reads, T = o.reads, o.T
    res = BoundResult(cache_fraction, executors, cap, reads, reads, 0)
    if not reads:
        return res
    # only a block that fits in one executor's cache can hit
    dk, vk = o.d_z <= per_exec, o.v_z <= per_exec
    has = np.zeros(reads, dtype=bool)
    has[o.d_read[dk]] = True
    vrid = o.v_read[vk]
    has[vrid] = True
    res.compulsory = int(reads - has.sum())  # surely misses: no option, or never fits
    # a virtual option needs its source read to miss; a miss of read k can feed at most m_k of them
    src = o.v_src[vk]
    m = np.bincount(src, minlength=reads)
    q = np.where(has[src], 1.0 / np.maximum(m[src], 1), 0.0)
    opt_read = np.concatenate([o.d_read[dk], vrid])
    opt_s = np.concatenate([o.d_s[dk], o.v_s[vk]])
    opt_t = np.concatenate([o.d_t[dk], o.v_t[vk]])
    opt_z = np.concatenate([o.d_z[dk], o.v_z[vk]])
    opt_cost = opt_z * (opt_t - opt_s)
    opt_q = np.concatenate([np.zeros(int(dk.sum())), q])
    budget = cap * max(T - 1, 0)
    res.bound_hits = min(_pfoo_u(opt_read, opt_cost, budget),
                         _lagrange(opt_read, opt_s, opt_t, opt_z, opt_q, cap, T, int(has.sum()),
                                   steps))
    return res


def _pfoo_u(opt_read: np.ndarray, opt_cost: np.ndarray, budget: int) -> int:
    """PFOO-U: most reads whose cheapest option fits the space-time budget together."""
    if not len(opt_read):
        return 0
    o = np.lexsort((opt_cost, opt_read))
    first = np.ones(len(o), dtype=bool)
    first[1:] = opt_read[o][1:] != opt_read[o][:-1]
    return _most_within(np.sort(opt_cost[o][first]), budget)


# The search for the dual's minimum (any point is a sound bound; these only trade tightness for
# time). A constant lam: golden sections over lam on a log scale (GOLDEN_DECADES below 1 / the
# cheapest option's cost, plus lam = 0), GOLDEN_X steps, nested in GOLDEN_MU steps over mu in
# [0, 1]; then Polyak steps towards a target GAP0 below the best value, the gap shrinking by
# GAP_DECAY every GAP_EVERY steps. Against the earlier search (a linear-scale golden section of
# 40 x 24 steps, GAP0 0.5; issue 12, results/whatif/speed.md), on the built-in workloads at 4
# executors and 0.1-1.0 (30 cells): the same bound in 29, 1 hit tighter in one; on synthetic
# `cc` event logs of 5,000-100,000 tasks: at most 22 hits looser (0.02 hit-ratio points), up to
# 20 tighter; with 636 instead of 1,576 evaluations, each of them cheaper.
GOLDEN_DECADES = 13
GOLDEN_X = 16
GOLDEN_MU = 12
GAP0 = 0.1
GAP_EVERY = 25
GAP_DECAY = 0.6


def _lagrange(opt_read, opt_s, opt_t, opt_z, q, cap: int, T: int, r: int, steps: int) -> int:
    """Weak duality of the LP relaxation "each read takes at most one option (x in [0, 1]); at
    every position p < T-1 the options spanning it hold <= cap bytes; hits + the misses virtual
    options need <= r": for any lam_p >= 0 (per position) and mu >= 0,
        hits <= cap * sum(lam) + mu * r + sum over reads of
                max(0, max over options of 1 - mu * (1 + q) - size * sum(lam over [s, t))).
    A constant lam (PFOO-U's single budget) is searched first (golden sections, lam on a log
    scale), then projected subgradient steps refine lam per position. Every point evaluated is a
    valid bound: the search only has to be good, not exact."""
    if not len(opt_read):
        return 0
    d = _Dual(opt_read, opt_s, opt_t, opt_z, q, cap, T, r)
    pos = d.cost[d.cost > 0]
    hi = 1.0 / pos.min() if len(pos) else 1.0
    span = GOLDEN_DECADES * np.log(10.0)

    def inner(mu: float) -> tuple[float, float]:
        """min over a constant lam (0, or hi * e^u for u in [-span, 0]) at this mu."""
        at0 = (d.const(0.0, mu), 0.0)
        v, u = _golden(lambda u: d.const(hi * np.exp(u), mu), -span, 0.0, GOLDEN_X)
        return min(at0, (v, hi * np.exp(u)))

    best, mu = _golden(lambda m: inner(m)[0], 0.0, 1.0, GOLDEN_MU)
    x = inner(mu)[1]
    lam = np.full(d.L, x)
    gap = GAP0
    for k in range(steps):
        val, g_lam, g_mu = d.grad(lam, mu)
        best = min(best, val)
        g_lam = np.where((lam <= 0) & (g_lam > 0), 0.0, g_lam)  # projected onto lam >= 0
        g_mu = 0.0 if mu <= 0 and g_mu > 0 else g_mu
        norm = float(np.einsum("i,i", g_lam, g_lam)) + g_mu * g_mu  # (no BLAS: its threads)
        if norm == 0:
            break
        step = (val - best * (1 - gap)) / norm  # Polyak's step towards a target below the best
        lam -= step * g_lam
        np.maximum(lam, 0.0, out=lam)
        mu = max(mu - step * g_mu, 0.0)
        if k % GAP_EVERY == GAP_EVERY - 1:
            gap *= GAP_DECAY
    # float rounding in the sums: a margin far below one hit, then the integer part
    return int(np.floor(best + 1e-9 * (r + 1) + 1e-6))


def _golden(fn, a: float, b: float, n: int) -> tuple[float, float]:
    """(smallest value, its argument) of ``fn`` evaluated in ``n`` golden-section steps on
    [a, b] (the ends included)."""
    phi = (5 ** 0.5 - 1) / 2
    c, d = b - phi * (b - a), a + phi * (b - a)
    fc, fd = fn(c), fn(d)
    best = min((fn(a), a), (fn(b), b), (fc, c), (fd, d))
    for _ in range(n):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - phi * (b - a)
            fc = fn(c)
            best = min(best, (fc, c))
        else:
            a, c, fc = c, d, fd
            d = a + phi * (b - a)
            fd = fn(d)
            best = min(best, (fd, d))
    return best


class _Dual:
    """The dual function over the options, grouped by read: reads with k options form one
    contiguous (n_k, k) block (each read's options in their given order: ties go to the first),
    so the best option per read is a row maximum."""

    def __init__(self, opt_read, opt_s, opt_t, opt_z, q, cap: int, T: int, r: int) -> None:
        o = np.argsort(opt_read, kind="stable")
        rd = opt_read[o]
        new = np.r_[True, rd[1:] != rd[:-1]]
        starts = np.flatnonzero(new)
        cnt = np.diff(np.r_[starts, len(rd)])
        go = np.argsort(cnt, kind="stable")
        k_of = cnt[go]
        first = np.cumsum(k_of) - k_of
        perm = o[np.repeat(starts[go] - first, k_of) + np.arange(len(rd))]
        self.s, self.t = opt_s[perm], opt_t[perm]
        self.z = opt_z[perm].astype(np.float64)
        self.oneq = 1.0 + q[perm]
        self.cost = self.z * (self.t - self.s)
        ks, at = np.unique(k_of, return_index=True)
        self.blocks = [(int(k), int(first[i]), int(n))
                       for k, i, n in zip(ks, at, np.diff(np.r_[at, len(k_of)]))]
        self.L = max(T - 1, 1)
        self.capf, self.r = float(cap), r
        self._val = np.empty(len(rd))
        self._tmp = np.empty(len(rd))

    def _pos_sum(self, val: np.ndarray) -> float:
        """Sum over reads of max(0, best option's value)."""
        total = 0.0
        for k, off, n in self.blocks:
            v = val[off:off + n * k]
            if k > 16:
                v = v.reshape(n, k).max(axis=1)
            elif k > 1:  # column by column: far faster than max(axis=1) over short rows
                v = v.reshape(n, k)
                m = v[:, 0].copy()
                for j in range(1, k):
                    np.maximum(m, v[:, j], out=m)
                v = m
            total += float(v[v > 0].sum())
        return total

    def const(self, x: float, mu: float) -> float:
        """The dual value at lam = x everywhere."""
        val, tmp = self._val, self._tmp
        np.multiply(self.cost, -x, out=val)
        np.multiply(self.oneq, mu, out=tmp)
        val -= tmp
        val += 1.0
        return self.capf * self.L * x + mu * self.r + self._pos_sum(val)

    def grad(self, lam: np.ndarray, mu: float) -> tuple[float, np.ndarray, float]:
        """(dual value, subgradient in lam, subgradient in mu) at (lam, mu)."""
        L = self.L
        P = np.empty(L + 1)
        P[0] = 0.0
        np.cumsum(lam, out=P[1:])
        val, tmp = self._val, self._tmp
        np.subtract(P.take(self.t), P.take(self.s), out=val)
        val *= self.z
        np.multiply(self.oneq, mu, out=tmp)
        val += tmp
        np.subtract(1.0, val, out=val)
        total = self.capf * P[-1] + mu * self.r
        chosen = []  # the option each read takes (its best, if positive)
        for k, off, n in self.blocks:
            v = val[off:off + n * k]
            if k == 1:
                idx = np.flatnonzero(v > 0)
                total += float(v[idx].sum())
            else:
                v = v.reshape(n, k)
                am = v.argmax(axis=1)
                row = np.arange(n)
                bv = v[row, am]
                keep = bv > 0
                total += float(bv[keep].sum())
                idx = row[keep] * k + am[keep]
            chosen.append(idx + off)
        c = np.concatenate(chosen)
        zc = self.z[c]
        use = np.bincount(self.s[c], weights=zc, minlength=L + 1)
        use -= np.bincount(self.t[c], weights=zc, minlength=L + 1)
        np.cumsum(use, out=use)
        return total, self.capf - use[:L], self.r - float(self.oneq[c].sum())


def _most_within(sorted_costs: np.ndarray, budget: int) -> int:
    """The largest k with sum(sorted_costs[:k]) <= budget, exactly (a float estimate, then exact
    integer steps: int64 prefix sums could overflow)."""
    n = len(sorted_costs)
    k = int(np.searchsorted(np.cumsum(sorted_costs, dtype=np.float64), budget, side="right"))
    total = sum(sorted_costs[:k].tolist())
    while total > budget:
        k -= 1
        total -= int(sorted_costs[k])
    while k < n and total + int(sorted_costs[k]) <= budget:
        total += int(sorted_costs[k])
        k += 1
    return k
