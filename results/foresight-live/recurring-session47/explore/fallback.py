import sys, lrc.predict as P
sys.path.insert(0, __import__("os").path.dirname(__file__))
from merged import merge
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes
oc = P.Predictor._period  # the cycle alone: the rule before the tail

def recent(self, H, ordered):
    kinds, out = set(), []
    for s in reversed(self.shapes[-H:]):
        if self._kind(s) not in kinds:
            kinds.add(self._kind(s)); out.append(s)
    out.reverse()  # oldest first: round robin
    return out if ordered else [merge(out)]

def make(H, ordered, always):
    def cycle(self):
        out = oc(self)
        if out and not always:
            return out
        fb = recent(self, H, ordered) if self.shapes else []
        return out + fb if always else fb
    return cycle

def run(ct, label):
    for f in (0.3, 0.5, 0.7):
        row = []
        for p in ("mrd", "crd", "crd+a"):
            r = simulate(ct, p.split("+")[0], f, executors=2, cores=1, refs="online", admit=p.endswith("+a"))
            row.append(f"{p} {r.hit_ratio:.3f}/{r.est_runtime:.1f}")
        print(label, f, "  ".join(row), flush=True)

if __name__ == "__main__":
    ws, _, ct = working_set_bytes(sys.argv[1])
    for H in (4, 8):
        for ordered in (False, True):
            for always in (False, True):
                P.Predictor.cycle = make(H, ordered, always)
                run(ct, f"H{H} ord{int(ordered)} always{int(always)}")

from collections import Counter
def recent_recurring(self, H, min_seen):
    seen = Counter(self._kind(s) for s in self.shapes)
    kinds, out = set(), []
    for s in reversed(self.shapes[-H:]):
        k = self._kind(s)
        if k not in kinds and seen[k] >= min_seen:
            kinds.add(k); out.append(s)
    out.reverse()
    return [merge(out)] if out else []

def make2(H, min_seen):
    def cycle(self):
        out = oc(self)
        return out + (recent_recurring(self, H, min_seen) if self.shapes else [])
    return cycle

def make3(H, min_seen, dedupe, need_known):
    def cycle(self):
        out = oc(self)
        if not self.shapes:
            return out
        seen = Counter(self._kind(s) for s in self.shapes)
        if need_known and seen[self._kind(self.shapes[-1])] < 2:
            return out
        have = {self._kind(s) for s in out} if dedupe else set()
        kinds, tail = set(), []
        for s in reversed(self.shapes[-H:]):
            k = self._kind(s)
            if k not in kinds and k not in have and seen[k] >= min_seen:
                kinds.add(k); tail.append(s)
        tail.reverse()
        return out + ([merge(tail)] if tail else [])
    return cycle
