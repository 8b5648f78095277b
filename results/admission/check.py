"""Admission in the simulator: every cell with and without it (results/admission/*.json).

    python results/admission/check.py > results/admission/report.md
"""
import json
from pathlib import Path

HERE = Path(__file__).parent
POLICIES = ("lru", "lrc", "lerc", "mrd", "crd")
BASE = ("lru", "lrc", "lerc", "mrd")
SOURCES = [("synthetic", "synthetic")] + [
    (f"live {n}", f"live-{n}") for n in ("pagerank", "cc", "zip", "tpch", "mllib", "graphx_svdpp")]


def load(stem):
    rows = json.loads((HERE / f"{stem}.json").read_text())["results"]
    return {(r["workload"], r["cache_fraction"], r["policy"]): r for r in rows}


def main():
    print("# Admission in the simulator: a store never evicts a block ranked above the one it "
          "stores\n")
    print("Produced by (`python -m lrc simulate ... --admit` and without; online refs; synthetic "
          "workloads with 4 executors x 2 cores, the live calibration traces with the benchmark's "
          "2 executors x 1 core):\n\n```")
    print("python -m lrc simulate --workload all --policies lru,lrc,lerc,mrd,crd --refs online "
          "--cache-fraction 0.3,0.5,0.7 --executors 4 [--admit] --json "
          "results/admission/synthetic[-admit].json")
    print("python -m lrc simulate --trace TRACE --policies lru,lrc,lerc,mrd,crd --refs online "
          "--cache-fraction 0.3,0.5,0.7 --executors 2 --cores 1 [--admit] --json "
          "results/admission/live-NAME[-admit].json")
    print("python results/admission/check.py > results/admission/report.md\n```\n")
    print("Each cell: hit ratio, then est. s (the cost model's job time, misses included) "
          "without -> with admission; lru never changes (its ranks are all equal).\n")
    tally = {p: [0, 0, 0] for p in POLICIES}  # better, same, worse (est. time, 1%)
    crd_ok = {False: [0, 0], True: [0, 0]}  # admit -> [cells within the goal, cells]
    print("| source | workload | F | " + " | ".join(POLICIES) + " | crd vs best of the rest, "
          "without / with (pts, time ratio) |")
    print("|---" * (4 + len(POLICIES)) + "|")
    for label, stem in SOURCES:
        off, on = load(stem), load(f"{stem}-admit")
        for w, f in sorted({(k[0], k[1]) for k in off}):
            cells = []
            for p in POLICIES:
                a, b = off[(w, f, p)], on[(w, f, p)]
                q = b["est_runtime"] / a["est_runtime"]
                tally[p][0 if q < 0.99 else 1 if q <= 1.01 else 2] += 1
                cells.append(f"{a['hit_ratio']:.3f} -> {b['hit_ratio']:.3f}, "
                             f"{a['est_runtime']:.1f} -> {b['est_runtime']:.1f}")
            vs = []
            for admit, runs in ((False, off), (True, on)):
                c = runs[(w, f, "crd")]
                best_h = max(runs[(w, f, p)]["hit_ratio"] for p in BASE)
                best_t = min(runs[(w, f, p)]["est_runtime"] for p in BASE)
                d, r = 100 * (c["hit_ratio"] - best_h), c["est_runtime"] / best_t
                crd_ok[admit][0] += d >= -1 and r <= 1.05
                crd_ok[admit][1] += 1
                vs.append(f"{d:+.1f}, {r:.2f}")
            print(f"| {label} | {w} | {f} | " + " | ".join(cells) + f" | {' / '.join(vs)} |")
    print("\nEstimated time with admission against without, cells per policy (1% either way is "
          "'same'):\n")
    print("| policy | faster | same | slower |\n|---|---|---|---|")
    for p, (better, same, worse) in tally.items():
        print(f"| {p} | {better} | {same} | {worse} |")
    for admit in (False, True):
        ok, n = crd_ok[admit]
        print(f"\ncrd within 1 point of the best of lru/lrc/lerc/mrd (same admission) and 5% of "
              f"their best estimated time, {'with' if admit else 'without'} admission: {ok} of "
              f"{n} cells.")


if __name__ == "__main__":
    main()
