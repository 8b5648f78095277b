import re, sys
rows = {}; vs = []
for f in sys.argv[1].split(","):
    for line in open(f):
        p = line.split()
        if len(p) < 5: continue
        v, name, F = p[0], p[1], p[2]
        if v not in vs: vs.append(v)
        m = re.search(r"crd\+a ([\d.]+)/\s*([\d.]+)", line); c = re.search(r" crd ([\d.]+)/\s*([\d.]+)", line)
        rows.setdefault((name, F), {})[v] = (m.group(1), m.group(2), c.group(1), c.group(2))
vs = [v for v in vs if v in sys.argv[2].split(",")]
print("cell (crd+a hit/time crd hit/time)".ljust(22), "  ".join(v.rjust(22) for v in vs))
for k, d in rows.items():
    print(f"{k[0]:14s} {k[1]:5s}  ", "  ".join(f"{d[v][0]}/{d[v][1]:>5s} {d[v][2]}/{d[v][3]:>5s}".rjust(22) if v in d else "" for v in vs))
