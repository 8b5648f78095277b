"""The GPU placement benchmark's schedule and report, without Spark (unit-tested on their own).

A cell is one (policy, placement) configuration; each is run `runs` times, interleaved: one pass
over all cells per repeat, the order rotated each pass, so that drift of a shared machine (another
load, a warming disk cache) falls on every cell alike rather than on the cells run last. The
report gives, per cell, the median and [min-max] over repeats of each per-run number, and the
ratio of its later GPU stages' time to `lru, placement off` in the same repeat (the median of
those per-repeat ratios: the baseline ran in the same pass, under the same load).
"""
from __future__ import annotations

import json
import statistics
import zlib
from typing import Any, Hashable, Iterable, Sequence

BASELINE = ("lru", False)


def cell_of(row: dict) -> tuple[str, bool]:
    return row["policy"], bool(row["placement"])


def rotations(cells: Sequence[Hashable], runs: int) -> list[tuple[int, Hashable]]:
    """(repeat, cell) in run order: every cell once per repeat, repeat r starting at cell r."""
    n = len(cells)
    return [(r, cells[(r + i) % n]) for r in range(runs) for i in range(n)]


def spread(values: Iterable[Any]) -> tuple[float, float, float] | None:
    """(median, min, max) of the values that are not None; None if there are none."""
    v = [x for x in values if x is not None]
    return (statistics.median(v), min(v), max(v)) if v else None


def ratios(rows: Sequence[dict], key: str = "later_gpu_stage_median_s",
           baseline: tuple[str, bool] = BASELINE) -> dict[tuple[str, bool], list[float]]:
    """Per cell, its `key` over the baseline's in the same repeat (repeats without either: none)."""
    base = {r["run"]: r[key] for r in rows if cell_of(r) == baseline and r.get(key)}
    out: dict[tuple[str, bool], list[float]] = {}
    for r in rows:
        b = base.get(r["run"])
        if b and r.get(key) is not None:
            out.setdefault(cell_of(r), []).append(r[key] / b)
    return out


def checksum_text(checksum: Sequence[int]) -> str:
    """A short stand-in for a run's checksums: the value itself, or a CRC of the sorted list."""
    values = sorted(checksum)
    if len(values) == 1:
        return str(values[0])
    return f"crc {zlib.crc32(json.dumps(values).encode()):08x}"


def _fmt(s: tuple[float, float, float] | None, fmt: str = "{:.2f}", scale: float = 1.0) -> str:
    if s is None:
        return "-"
    med, lo, hi = (x * scale for x in s)
    if lo == hi:
        return fmt.format(med)
    return f"{fmt.format(med)} [{fmt.format(lo)}-{fmt.format(hi)}]"


COLUMNS = [  # header, row key, format, scale
    ("later GPU stages s", "later_gpu_stage_median_s", "{:.2f}", 1.0),
    ("first GPU stage s", "first_gpu_stage_s", "{:.2f}", 1.0),
    ("later PROCESS_LOCAL", "later_process_local", "{:.0f}", 1.0),
    ("GPU-stage remote reads", "gpu_stage_remote_reads", "{:.0f}", 1.0),
    ("remote MB", "gpu_stage_remote_bytes", "{:.1f}", 1 / 2**20),
    ("moved", "moved", "{:.0f}", 1.0),
    ("evictions", "evictions", "{:.0f}", 1.0),
    ("GPU-input evictions", "gpu_input_evictions", "{:.0f}", 1.0),
    ("CPU-input evictions", "cpu_input_evictions", "{:.0f}", 1.0),
    ("GPU-stage misses", "gpu_stage_misses", "{:.0f}", 1.0),
    ("workload s", "total_s", "{:.1f}", 1.0),  # all stages: a CPU input rebuilt costs here
]


def cells_in_order(rows: Sequence[dict]) -> list[tuple[str, bool]]:
    """Plain Spark first, then the policies in the order first run, placement off before on."""
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    order = {p: i for i, p in enumerate(sorted(policies, key=lambda p: (p != "plain",
                                                                       policies.index(p))))}
    return sorted({cell_of(r) for r in rows}, key=lambda c: (order[c[0]], c[1]))


LATER_PRESSURE = ("the GPU stages that re-read a round's input after the competing insert, "
                  "rounds 2 on (the first round has no predicted references yet)")
NOTES = ("; `x lru/off`: that time over `lru, placement off`'s in the same repeat. "
         "PROCESS_LOCAL counts tasks with no preferred location too (a block cached nowhere, "
         "rebuilt in the task). Evictions and GPU-stage misses (reads neither local nor remote: "
         "rebuilt) are the brain's counts over the whole run (`-`: plain Spark has no brain); "
         "GPU-input evictions count every copy (with placement on, the CPU executor's copies of "
         "moved blocks go first). `workload s`: the whole workload, CPU stages too.")


def report(rows: Sequence[dict], command: str, pressure: bool = False) -> str:
    runs = len({r["run"] for r in rows})
    title = "memory pressure" if pressure else "ample storage"
    out = [f"# GPU placement, live: {title} (standalone mini-cluster, one CPU and one fake-GPU "
           "executor)", "", f"Command: `{command}`", "",
           f"Each cell run {runs} time(s), interleaved (the order rotated each repeat); per cell "
           "the median [min-max] over repeats. `later GPU stages s`: per run the median of "
           + (LATER_PRESSURE if pressure else "the GPU stages after the first") + NOTES, ""]
    head = ["policy", "placement", "runs"] + [c[0] for c in COLUMNS] + ["x lru/off", "checksum"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rat = ratios(rows)
    plain = {checksum_text(r["checksum"]) for r in rows if r["policy"] == "plain"}
    for cell in cells_in_order(rows):
        mine = [r for r in rows if cell_of(r) == cell]
        cols = [cell[0], "on" if cell[1] else "off", str(len(mine))]
        cols += [_fmt(spread(r.get(k) for r in mine), f, s) for _, k, f, s in COLUMNS]
        tasks = {r.get("later_tasks") for r in mine}
        if len(tasks) == 1 and None not in tasks:  # "12/12": of how many tasks
            i = 3 + [c[1] for c in COLUMNS].index("later_process_local")
            cols[i] += f"/{tasks.pop()}"
        cols.append(_fmt(spread(rat.get(cell, ())), "{:.2f}"))
        cols.append(", ".join(sorted({checksum_text(r["checksum"]) for r in mine})))
        out.append("| " + " | ".join(cols) + " |")
    sums = {checksum_text(r["checksum"]) for r in rows}
    out += ["", "Checksums: " + ("every run equals plain Spark's" if plain and sums == plain else
                                 f"DIFFER: {sorted(sums)}" if len(sums) > 1 else
                                 "all equal (no plain Spark run to compare)")]
    return "\n".join(out) + "\n"
