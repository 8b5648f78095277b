"""Session 49's prototypes of the uses rule (`PredictedRefs._note_use`), as a replacement of
`PredictedRefs._predict` chosen by MODE["v"]; the others copy 44dfa49's `_predict`. "base": the
installed code (session 48's rule when they were run, at 44dfa49; the landed rule since). "now": session 48's rule without its nothing-predicted condition;
"mem": every cached dataset a job that caches nothing new has read keeps one far read; "memfresh":
and those never read since cached; "memfresh_nf": that, only while nothing is predicted; "winN":
used in the last N jobs, where what only fed a newly cached RDD is not a use ("win": no window).
"win8" is what landed (2221a37).
"""
from collections import Counter
import lrc.predicted as PR
from lrc.predict import shape_of

MODE = {"v": "base"}
ORIG = PR.PredictedRefs._predict

def _predict(self, job, before, known):
    v = MODE["v"]
    if v == "base":
        return ORIG(self, job, before, known)
    back = {rid: (site, len(ids) - 1 - i) for site, ids in before.items() for i, rid in enumerate(ids)}
    def key(b):
        rdd, p = self._block(b)
        g = back.get(rdd)
        return None if g is None else (g[0], g[1], p)
    seq = self.refs.stage_seq
    ran = sorted((s for s in job.stage_ids if s in self.refs.pending), key=seq.__getitem__)
    tasks = [self._stored_reads(s) for s in ran]
    weights = [self.refs.seq_weight.get(seq[s], 1.0) for s in ran]
    last = max((s for s in job.stage_ids if s in self.dag.stages), default=None)
    result = self._created_at(self.dag.stages[last].rdd_id if last is not None else -1)
    for r in self.dag.rdds:
        if r not in known:
            self._origin[r] = result
    map_job = last is not None and self.dag.stages[last].shuffle >= 0
    signature = f"{result} (map stage)" if map_job else result
    new = Counter(self._site(r) for r in self.dag.rdds if r not in known and self.dag.rdds[r].cached)
    read = {self._block(b)[0] for stage in tasks for reads in stage for b in reads}
    read = {r for r in known & read if r in self.dag.rdds and self.dag.rdds[r].cached}
    if not hasattr(self, "_reused"):
        self._reused, self._ingredient = set(), set()
    (self._ingredient if new else self._reused).update(read)
    self.predictor.observe(shape_of(signature, tasks, key, new, weights))
    now = self._generations()
    self._recurring.update(new)
    shift = Counter()
    foreseen = set()
    for shape in self.predictor.cycle():
        for k, tt in enumerate(shape.stages):
            order = self._next_seq()
            sid = -order
            for part, reads in enumerate(tt):
                blocks = []
                for site, gen, p in reads:
                    ids, back_n = now.get(site, ()), gen - shift[site]
                    if 0 <= back_n < len(ids):
                        rid = ids[-1 - back_n]
                        if p < self.dag.rdds[rid].num_partitions:
                            blocks.append((rid, p)); foreseen.add(rid)
                if blocks:
                    self.refs.add_task(sid, part, self._keys(blocks), order)
            w = shape.weights[k] if k < len(shape.weights) else 1.0
            if w != 1.0 and sid in self.refs.stage_seq:
                self.refs.seq_weight[order] = w
            self.predicted.append(sid)
        shift.update(dict(shape.new_generations))
    newest = {ids[-1] for site, ids in now.items()
              if self.state_read and self._recurring[site] > 1 and ids[-1] not in foreseen}
    live = {r for r in self.dag.rdds if self.dag.rdds[r].cached and r in known
            and self._recurring[self._site(r)] <= 1 and r not in foreseen}
    if v == "now":  # session 48's rule without the foreseen condition
        newest |= live & read if not new else set()
    elif v == "mem":  # V1: every dataset a non-caching job read
        newest |= live & self._reused
    elif v == "memfresh":  # V2: and those never read since cached
        newest |= {r for r in live if r in self._reused or r not in self._ingredient}
    elif v.startswith("win"):  # windowed: used (read by a non-caching job, or cached and not an ingredient) in the last W jobs
        W = int(v[3:]) if v[3:] else 10**9
        if not hasattr(self, "_last_use"):
            self._last_use, self._reused_ever, self._njobs = {}, set(), 0
        self._njobs += 1
        n = self._njobs
        newc = [r for r in self.dag.rdds if r not in known and self.dag.rdds[r].cached]
        for r in newc:
            self._last_use[r] = n
        for r in newc:  # nearest cached ancestors are ingredients
            seen, todo = set(), [d.parent for d in self.dag.rdds[r].deps]
            while todo:
                q = todo.pop()
                if q in seen or q not in self.dag.rdds:
                    continue
                seen.add(q)
                if self.dag.rdds[q].cached:
                    if q not in self._reused_ever:
                        self._last_use.pop(q, None)
                    continue
                todo.extend(d.parent for d in self.dag.rdds[q].deps)
        if not new:
            for r in read:
                self._last_use[r] = n
                self._reused_ever.add(r)
        newest |= {r for r in live if n - self._last_use.get(r, -10**9) < W}
    elif v == "memfresh_nf":  # V2 only while nothing is foreseen
        if not foreseen:
            newest |= {r for r in live if r in self._reused or r not in self._ingredient}
    order = None
    for rid in sorted({r for r in self.dag.rdds if r not in known and self.dag.rdds[r].cached} | newest):
        keys = self._keys([(rid, p) for p in range(self.dag.rdds[rid].num_partitions)])
        if rid not in newest and any(self.refs.count.get(k) for k in keys):
            continue
        if order is None:
            order = self._next_seq()
            self.predicted.append(-order)
        for p, k in enumerate(keys):
            self.refs.add_task(-order, rid * 0x10000 + p, (k,), order)

PR.PredictedRefs._predict = _predict
