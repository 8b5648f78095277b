"""crd vs lru/lrc/lerc/mrd per cell:  python crd_cells.py W1,W2,... CALIB_DIR (CALIB_DIR/cal-W/traces/W-calib-lru.parquet)."""
import sys
from lrc.sim import simulate
from workloads.bench.replay import working_set_bytes
for w in sys.argv[1].split(","):
    ws, _, ct = working_set_bytes(f"{sys.argv[2]}/cal-{w}/traces/{w}-calib-lru.parquet")
    for f in (0.3, 0.5, 0.7):
        r = {p: simulate(ct, p, f, executors=2, cores=1, refs="online") for p in ("lru", "lrc", "lerc", "mrd", "crd")}
        ra = simulate(ct, "crd", f, executors=2, cores=1, refs="online", admit=True)
        best = max(v.hit_ratio for k, v in r.items() if k != "crd")
        rc = min(v.recomputed_bytes for k, v in r.items() if k != "crd")
        print(w, f, " ".join(f"{k} {v.hit_ratio:.3f}" for k, v in r.items()), f"crd+a {ra.hit_ratio:.3f}",
              "MISS" if r["crd"].hit_ratio < best - 0.01 else "ok", flush=True)
