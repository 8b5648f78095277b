"""Prototype, not kept: predict the position-wise union of the continuations of the last M occurrences
(python merged.py TRACE 1,2,3)."""
import sys, lrc.predict as P
from lrc.predict import JobShape
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes

def merge(shapes):
    if len(shapes) == 1:
        return shapes[0]
    n = max(len(s.stages) for s in shapes)
    stages = tuple(tuple(t for s in shapes if k < len(s.stages) for t in s.stages[k]) for k in range(n))
    gens = {}
    for s in shapes:
        for site, g in s.new_generations:
            gens[site] = max(gens.get(site, 0), g)
    return JobShape(shapes[0].signature, stages, tuple(sorted(gens.items())), (), tuple(sorted({i for s in shapes for i in s.inputs})))

def make_cycle(M):
    def cycle(self):
        self._expected = None
        if not self.shapes:
            return []
        last = self.shapes[-1]; kind = self._kind(last)
        conts = []
        for same in (lambda s: self._kind(s) == kind, lambda s: s.signature == last.signature):
            for i in range(len(self.shapes) - 2, -1, -1):
                if same(self.shapes[i]):
                    out = []
                    for s in self.shapes[i + 1:][:self.max_jobs]:
                        out.append(s)
                        if self._kind(s) == kind: break
                    conts.append(out)
                    if len(conts) >= M: break
            if conts: break
        if not conts:
            return []
        n = max(map(len, conts))
        merged = []
        for pos in range(n):
            group = []
            for c in conts:
                if pos < len(c) and all(c[pos] is not g for g in group):
                    group.append(c[pos])
            merged.append(merge(group))
        self._expected = (kind, self._kind(conts[0][0]))
        return merged if self.fails[kind] < self.max_fails else []
    return cycle

if __name__ == "__main__":
    ws, _, ct = working_set_bytes(sys.argv[1])
    for M in [int(x) for x in sys.argv[2].split(",")]:
        for fails in (2, 99):
            P.Predictor.cycle = make_cycle(M)
            orig = P.Predictor.__init__
            def init(self, *a, _o=orig, _f=fails, **k):
                k["max_fails"] = _f; _o(self, *a, **k)
            P.Predictor.__init__ = init
            for f in (0.3, 0.5, 0.7):
                row = []
                for p in ("mrd", "crd", "crd+a"):
                    r = simulate(ct, p.split("+")[0], f, executors=2, cores=1, refs="online", admit=p.endswith("+a"))
                    row.append(f"{p} {r.hit_ratio:.3f}/{r.est_runtime:.1f}")
                print("M", M, "fails", fails, f, "  ".join(row), flush=True)
            P.Predictor.__init__ = orig
