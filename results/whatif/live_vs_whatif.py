"""The what-if estimate next to the live benchmark at the same cache sizes, as a markdown table.

    python results/whatif/live_vs_whatif.py BENCH_DIR WHATIF_DIR [--workload W]

BENCH_DIR holds a `workloads.bench` results.json, WHATIF_DIR a `python -m lrc whatif` results.json
run with `--cache-sizes` naming the live cells' fractions (rows matched by fraction and policy)
and, optionally, the storage bytes per executor the live runs had (`<n>b`; matched to the live
cell whose median storage cap is nearest). Prints the table; nothing is written.
"""
from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from workloads.bench.stats import ok_runs, select, unlimited_times


def live_cells(bench: dict, workload: str) -> dict:
    """(fraction, policy) -> the live runs' hit ratios, job times, storage bytes per executor:
    the runs the benchmark report counts (`stats.ok_runs`: reference checksum), plugin on."""
    cells: dict = defaultdict(lambda: {"hit": [], "jct": [], "bytes": []})
    for r in ok_runs(select(bench.get("runs", []), workload)):
        if r.get("cache_fraction") is None or r["policy"] == "plain":
            continue
        c = cells[(float(r["cache_fraction"]), r["policy"])]
        c["hit"].append(r.get("hit_ratio"))
        c["jct"].append(r["jct_s"])
        c["bytes"].append(r.get("storage_bytes_per_executor"))
    return cells


def _is_fraction(size) -> bool:
    try:
        float(size)
        return True
    except (TypeError, ValueError):
        return False


def table(bench: dict, whatif: dict, workload: str) -> str:
    cells = live_cells(bench, workload)
    by_frac: dict = {}
    by_bytes: dict = {}
    for row in whatif["rows"]:
        # a live policy with admission (crd+admit) is the what-if row replayed with it
        policy = row["policy"] + ("+admit" if row.get("admit") else "")
        key = (round(float(row["cache_fraction"]), 6), policy)
        if not _is_fraction(row.get("size")):  # asked in bytes ("3.0 MiB")
            by_bytes[(int(row["per_executor_bytes"]), policy)] = row
        else:
            by_frac[key] = row
    lines = ["| F | policy | live hit ratio (runs) | what-if hit ratio (fraction / live bytes) "
             "| live JCT median s [range] | what-if est. time s | est. / live |",
             "|---|---|---|---|---|---|---|"]
    for (f, policy) in sorted(cells):
        c = cells[(f, policy)]
        frac_row = by_frac.get((round(f, 6), policy))
        live_b = statistics.median(b for b in c["bytes"] if b) if any(c["bytes"]) else None
        byte_row = None
        if live_b and by_bytes:
            near = min((k for k in by_bytes if k[1] == policy), default=None,
                       key=lambda k: abs(k[0] - live_b))
            if near and abs(near[0] - live_b) <= 0.02 * live_b:
                byte_row = by_bytes[near]
        med = statistics.median(c["jct"])
        est = (byte_row or frac_row or {}).get("est_runtime")
        hits = ", ".join(f"{h:.3f}" for h in c["hit"] if h is not None)
        wh = " / ".join(f"{r['hit_ratio']:.3f}" if r else "-" for r in (frac_row, byte_row))
        lines.append(f"| {f:g} | {policy} | {hits} | {wh} | {med:.1f} [{min(c['jct']):.1f}-"
                     f"{max(c['jct']):.1f}] | {est:.1f} | {est / med:.2f} |" if est else
                     f"| {f:g} | {policy} | {hits} | {wh} | {med:.1f} | - | - |")
    unl, how = unlimited_times(bench.get("runs", []), bench.get("calibration", {}).get(workload), workload)
    lines.append("")
    lines.append(f"Unlimited memory: live median {statistics.median(unl):.1f} s ({len(unl)} "
                 f"{'runs' if how == 'runs' else 'calibration run'}), what-if "
                 f"{whatif.get('unlimited_est_runtime', float('nan')):.1f} s." if unl else
                 f"Unlimited memory: what-if {whatif.get('unlimited_est_runtime', float('nan')):.1f} s "
                 "(no live unlimited-memory run in BENCH_DIR).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench_dir")
    ap.add_argument("whatif_dir")
    ap.add_argument("--workload")
    a = ap.parse_args(argv)
    bench = json.loads((Path(a.bench_dir) / "results.json").read_text())
    whatif = json.loads((Path(a.whatif_dir) / "results.json").read_text())
    workloads = bench.get("settings", {}).get("workloads", [])
    if not a.workload and len(workloads) != 1:
        ap.error(f"BENCH_DIR has workloads {workloads}: name one with --workload")
    print(table(bench, whatif, a.workload or workloads[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
