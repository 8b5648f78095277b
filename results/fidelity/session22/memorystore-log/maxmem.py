"""One executor's MemoryStore, store by store, from its log (log4j2.properties here: MemoryStore at
DEBUG): each store and drop with the free memory Spark printed, the bytes cached and their sum
(Spark's storage maximum at that moment). Usage: maxmem.py EXECUTOR_STDERR > ex.txt"""
import re, sys
U = {"B": 1, "KiB": 1024, "MiB": 1 << 20}
def b(v, u): return float(v) * U[u]
st = re.compile(r"^(\S+) .*MemoryStore: Block (\S+) stored as (bytes|values) in memory \(estimated size ([\d.]+) (\w+), free ([\d.]+) (\w+)\)")
dr = re.compile(r"^(\S+) .*MemoryStore: Block (\S+) of size (\d+) dropped from memory \(free (\d+)\)")
rm = re.compile(r"BlockManager: Removing (?:RDD|block) (\S+)")
cached = {}
for line in open(sys.argv[1], errors="replace"):
    m = st.search(line)
    if m:
        t, blk, kind, sv, su, fv, fu = m.groups()
        cached[blk] = b(sv, su)
        used = sum(cached.values())
        print(t, "store", blk, kind, int(b(sv, su)), "free", int(b(fv, fu)), "used", int(used), "max", int(used + b(fv, fu)), "n", len(cached))
        continue
    m = dr.search(line)
    if m:
        t, blk, sz, fr = m.groups()
        cached.pop(blk, None)
        used = sum(cached.values())
        print(t, "drop ", blk, sz, "free", fr, "used", int(used), "max", int(used + int(fr)), "n", len(cached))
