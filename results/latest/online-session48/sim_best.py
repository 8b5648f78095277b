"""How much of LRU's distance to unlimited memory any policy closes in the simulator's cost model,
on the calibration traces of the live cells: crd as it runs live (online, with admission)
against the best of lrc, lerc, mrd and crd, online or from a profile, with or without admission
(16 variants). Unlimited = the same trace replayed with 3x its working set.

    PYTHONPATH=. python results/latest/online-session48/sim_best.py /tmp/s48/live/{pagerank,cc,ml,zip}/traces/*-calib-lru.parquet
"""
import sys

from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes

print("| trace | F | est. s: unlimited / lru / crd | crd closes | best variant | its est. s | it closes |")
print("|---|---|---|---|---|---|---|")
for path in sys.argv[1:]:
    name = path.split("/")[-1].split("-calib")[0]
    ct = working_set_bytes(path)[2]
    unlimited = simulate(ct, "lru", 3.0, executors=2, cores=1).est_runtime
    for f in (0.3, 0.5, 0.7):
        lru = simulate(ct, "lru", f, executors=2, cores=1).est_runtime
        if lru - unlimited < 0.05 * unlimited:
            continue  # nothing to close
        crd = simulate(ct, "crd", f, executors=2, cores=1, refs="online", admit=True).est_runtime
        best = min((simulate(ct, p, f, executors=2, cores=1, refs=refs, admit=a).est_runtime,
                    f"{p} {refs}{' +admit' if a else ''}")
                   for p in ("lrc", "lerc", "mrd", "crd") for refs in ("online", "profile")
                   for a in (False, True))
        print(f"| {name} | {f} | {unlimited:.1f} / {lru:.1f} / {crd:.1f} | "
              f"{(lru - crd) / (lru - unlimited):.2f} | {best[1]} | {best[0]:.1f} | "
              f"{(lru - best[0]) / (lru - unlimited):.2f} |", flush=True)
