"""Two `replay_grid.py` outputs side by side (OLD NEW): per cell, crd with admission (as it runs
live) against the best of lru/lrc/lerc/mrd of the same tree (issue 9's goal: hit ratio at most 1
point below, estimated time at most 5% above); per policy, NEW's estimated time over OLD's.

    python results/foresight/replan-session41/compare.py OLD.json NEW.json
"""
import json
import math
import sys

BASE = ("lru", "lrc", "lerc", "mrd")


def goal(d: dict, cell: str) -> tuple[float, float, float, float]:
    h, t = d[f"{cell}|crd+admit"]
    best_h = max(d[f"{cell}|{p}"][0] for p in BASE)
    best_t = min(d[f"{cell}|{p}"][1] for p in BASE)
    return h, t, 100 * (h - best_h), t / best_t


def main(old_path: str, new_path: str) -> None:
    old, new = (json.load(open(p)) for p in (old_path, new_path))
    cells = sorted({k.rsplit("|", 1)[0] for k in old}, key=lambda c: (c.split("|")[0], c))
    print("| cell | old: crd+admit hit, est. s (vs best: points, time ratio) "
          "| new: crd+admit hit, est. s (vs best) | new / old est. s |")
    print("|---|---|---|---|")
    misses = {"old": [], "new": []}
    for c in cells:
        row = []
        for tag, d in (("old", old), ("new", new)):
            h, t, dh, q = goal(d, c)
            miss = dh < -1 or q > 1.05
            if miss:
                misses[tag].append(c)
            row.append(f"{h:.3f}, {t:.1f} ({dh:+.1f}, {q:.3f}){' **miss**' if miss else ''}")
        ratio = new[f"{c}|crd+admit"][1] / old[f"{c}|crd+admit"][1]
        print(f"| {c.replace('|', ' F=')} | {row[0]} | {row[1]} | {ratio:.3f} |")
    print(f"\nCells missing the goal: old {len(misses['old'])} of {len(cells)} "
          f"({', '.join(misses['old']) or '-'}); new {len(misses['new'])} "
          f"({', '.join(misses['new']) or '-'}).\n")
    print("| policy | new / old est. time: geometric mean | largest | smallest | hit ratio change, "
          "mean (points) |")
    print("|---|---|---|---|---|")
    for v in sorted({k.rsplit("|", 1)[1] for k in old}):
        keys = [k for k in old if k.endswith(f"|{v}")]
        r = {k: new[k][1] / old[k][1] for k in keys}
        gm = math.exp(sum(math.log(x) for x in r.values()) / len(r))
        hi, lo = max(r, key=r.get), min(r, key=r.get)
        dh = 100 * sum(new[k][0] - old[k][0] for k in keys) / len(keys)
        print(f"| {v} | {gm:.4f} | {r[hi]:.3f} ({hi.rsplit('|', 1)[0].replace('|', ' F=')}) "
              f"| {r[lo]:.3f} ({lo.rsplit('|', 1)[0].replace('|', ' F=')}) | {dh:+.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
