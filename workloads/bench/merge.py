"""Fold a re-run into a full benchmark (`--merge DIR SRC`), so one workload, or one workload at some
cache fractions (e.g. every policy at 0.5, then LRU and LRC at 0.3 and 0.7), can be measured without
re-running the rest."""
from __future__ import annotations

import shlex
from pathlib import Path

from workloads.bench.cli import parse_list, parser
from workloads.bench.report import render
from workloads.bench.stats import fkey
from workloads.bench.store import read_results, write_results


def _args(command: str):
    args = shlex.split(command.split("#")[0])
    args = args[args.index("workloads.bench") + 1:] if "workloads.bench" in args else args
    return parser().parse_known_args(args)[0]


def workloads_of(command: str) -> list[str]:
    """The --workloads of a recorded bench command (its default when absent)."""
    return parse_list(_args(command).workloads)


def fractions_of(command: str) -> set[str]:
    """The --cache-fraction values of a recorded bench command, as `fkey`s."""
    return {fkey(float(x)) for x in parse_list(_args(command).cache_fraction)}


def _union(a: list, b: list) -> list:
    return list(a) + [x for x in b if x not in a]


def merge(dst_dir: str | Path, src_dir: str | Path) -> Path:
    """SRC's runs and simulator rows replace DIR's for SRC's workloads at SRC's cache fractions (the
    unlimited-memory runs too when SRC has them); DIR's other fractions stay. SRC's calibration
    replaces DIR's (its storage settings per fraction are added to DIR's). `command` lists DIR's
    commands that still contribute, then SRC's, one per line. Re-renders DIR."""
    dst, src = read_results(dst_dir), read_results(src_dir)
    st, sst = dst["settings"], src["settings"]
    ws = set(sst["workloads"])
    fracs = {fkey(f) for f in sst.get("cache_fractions", [])}
    unlimited = {r["workload"] for r in src.get("runs", []) if r.get("cache_fraction") is None}

    def superseded(r: dict) -> bool:
        f = r.get("cache_fraction")
        return r["workload"] in ws and (r["workload"] in unlimited if f is None else fkey(f) in fracs)

    for key in ("runs", "sim"):
        dst[key] = [r for r in dst.get(key, []) if not superseded(r)] + src.get(key, [])
    for w, cal in src.get("calibration", {}).items():
        kept = dst["calibration"].get(w, {}).get("memory_fraction", {})
        dst["calibration"][w] = {**cal, "memory_fraction": {**kept, **cal.get("memory_fraction", {})}}
    st["policies"] = _union(st.get("policies", []), sst.get("policies", []))
    st["cache_fractions"] = sorted(set(st.get("cache_fractions", [])) | set(sst.get("cache_fractions", [])))
    for w in sst["workloads"]:
        if w not in st["workloads"]:
            st["workloads"].append(w)
        for k in ("scales", "kwargs"):
            st.setdefault(k, {})[w] = sst.get(k, {}).get(w)
    if st.get("working_set") != sst.get("working_set"):
        st["working_set"] = f"{st.get('working_set')}; for {', '.join(sorted(ws))}: " \
                            f"{sst.get('working_set')}"
    cmds = [c for c in dst.get("command", "?").splitlines()  # drop the wholly superseded
            if not (set(workloads_of(c)) <= ws and fractions_of(c) <= fractions_of(src.get("command", "")))]
    cmds.append(src.get("command", "?") + f"   # re-run of {', '.join(sorted(ws))}, merged with --merge")
    dst["command"] = "\n".join(cmds)
    dst["finished"] = src.get("finished", dst.get("finished"))
    write_results(dst_dir, dst)
    return render(dst_dir)
