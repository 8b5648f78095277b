"""Per RDD, the storage memory its stores reserved, as a multiple of the block: for a store that
evicted, the reservation lies in (free before its last victim, free after it] (one task per
executor; Spark's printed free counts unroll memory as free). Usage: bounds.py ex0.txt ex1.txt
(maxmem.py's output)."""
import sys, re, collections
out = collections.defaultdict(list)
for f in sys.argv[1:]:
    prev_free = None; drops = []
    for l in open(f):
        p = l.split()
        free = int(p[p.index("free") + 1])
        if p[1] == "drop":
            drops.append((free - int(p[3]), free))  # free before this drop, after
        else:
            blk, size = p[2], int(p[4])
            if drops and blk.startswith("rdd"):
                lo, hi = drops[-1]
                rdd = blk.split("_")[1]
                out[rdd].append((lo / size, hi / size))
            drops = []
for rdd, bs in sorted(out.items(), key=lambda x: int(x[0])):
    lo = max(b[0] for b in bs); hi = min(b[1] for b in bs)
    print(f"rdd {rdd}: {len(bs)} stores; reservation/size in ({lo:.3f}, {hi:.3f}]", "consistent" if lo < hi else "INCONSISTENT", sorted(bs)[:3])
