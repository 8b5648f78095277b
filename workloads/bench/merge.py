"""Fold a re-run of some workloads into a full benchmark (`--merge DIR SRC`), so one workload can
be re-measured without re-running the others."""
from __future__ import annotations

import shlex
from pathlib import Path

from workloads.bench.cli import parse_list, parser
from workloads.bench.report import render
from workloads.bench.store import read_results, write_results


def workloads_of(command: str) -> list[str]:
    """The --workloads of a recorded bench command (its default when absent)."""
    args = shlex.split(command.split("#")[0])
    args = args[args.index("workloads.bench") + 1:] if "workloads.bench" in args else args
    return parse_list(parser().parse_known_args(args)[0].workloads)


def merge(dst_dir: str | Path, src_dir: str | Path) -> Path:
    """SRC's runs, calibrations and simulator rows replace DIR's for SRC's workloads; `command`
    lists DIR's commands that still contribute, then SRC's, one per line. Re-renders DIR."""
    dst, src = read_results(dst_dir), read_results(src_dir)
    ws = set(src["settings"]["workloads"])
    for key in ("runs", "sim"):
        dst[key] = [r for r in dst.get(key, []) if r["workload"] not in ws] + src.get(key, [])
    dst["calibration"].update(src.get("calibration", {}))
    st, sst = dst["settings"], src["settings"]
    for w in sst["workloads"]:
        if w not in st["workloads"]:
            st["workloads"].append(w)
        for k in ("scales", "kwargs"):
            st.setdefault(k, {})[w] = sst.get(k, {}).get(w)
    if st.get("working_set") != sst.get("working_set"):
        st["working_set"] = f"{st.get('working_set')}; for {', '.join(sorted(ws))}: " \
                            f"{sst.get('working_set')}"
    cmds = [c for c in dst.get("command", "?").splitlines()
            if not set(workloads_of(c)) <= ws]  # drop the wholly superseded
    cmds.append(src.get("command", "?") + f"   # re-run of {', '.join(sorted(ws))}, merged with --merge")
    dst["command"] = "\n".join(cmds)
    dst["finished"] = src.get("finished", dst.get("finished"))
    write_results(dst_dir, dst)
    return render(dst_dir)
