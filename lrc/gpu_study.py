"""``python -m lrc gpu-study``: GPU stages on mixed executors in the simulator (issue 13).

Replays workloads whose GPU stages read cached data on CPU + GPU executors (``lrc.mixed``) at
several cache fractions, under lru, lrc, crd without and with the GPU weight, and crd with the
placement step; writes ``report.md`` (the command first), ``results.json`` and ``gpu.png``.
"""
from __future__ import annotations

import json
from pathlib import Path

from lrc.cost import GPU_COST_WEIGHT
from lrc.mixed import MixedCluster
from lrc.sim import CompiledTrace, simulate
from lrc.synth import make
from lrc.trace import Trace

# (name, policy, GPU cost weight, placement)
VARIANTS = (("lru", "lru", GPU_COST_WEIGHT, False), ("lrc", "lrc", GPU_COST_WEIGHT, False),
            ("crd-unweighted", "crd", 0.0, False), ("crd", "crd", GPU_COST_WEIGHT, False),
            ("crd+placement", "crd", GPU_COST_WEIGHT, True))
FRACTIONS = (0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
MB = 1 << 20


def ml_gpu_stages(trace: Trace) -> frozenset:
    """Synthetic ml (KMeans-like) with its iterations on GPUs: the stages whose tasks read the
    cached training copy ``zipped`` (a trace without resource profiles: the override)."""
    zipped = {r.id for r in trace.dag.rdds.values() if r.name == "zipped"}
    return frozenset(e.stage_id for e in trace.events
                     if e.kind == "task" and any(b[0] in zipped for b in e.reads))


def workloads(seed: int = 0) -> list[tuple[str, Trace, frozenset | None]]:
    """(label, trace, GPU stage override) of the study."""
    ml = make("ml", seed=seed)
    return [("gpu_train", make("gpu_train", seed=seed), None),
            ("ml-gpu", ml, ml_gpu_stages(ml))]


def run_study(fractions=FRACTIONS, executors: int = 4, gpu_executors: int = 2, cores: int = 2,
              refs: str = "profile", seed: int = 0, net_bytes_per_s: float = 100e6) -> list[dict]:
    rows = []
    for label, trace, override in workloads(seed):
        ct = CompiledTrace(trace)
        for f in fractions:
            for name, policy, weight, place in VARIANTS:
                cluster = MixedCluster(gpu_executors, place, net_bytes_per_s, override)
                r = simulate(ct, policy, f, executors=executors, cores=cores, refs=refs,
                             cluster=cluster, gpu_cost_weight=weight)
                row = r.to_dict()
                row.update(workload=label, variant=name, gpu_cost_weight=weight,
                           cpu_reads=r.reads - r.mixed.gpu_reads,
                           cpu_misses=r.reads - r.hits - r.mixed.gpu_misses)
                rows.append(row)
    return rows


def _get(rows, workload, variant, fraction, key):
    for r in rows:
        if (r["workload"], r["variant"], r["cache_fraction"]) == (workload, variant, fraction):
            return r[key]
    return None


def plot(rows: list[dict], path: Path) -> None:
    """GPU-stage misses, estimated GPU idle time and GPU-stage remote MB vs cache fraction."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wls = list(dict.fromkeys(r["workload"] for r in rows))
    panels = (("gpu_misses", "GPU-stage misses", 1), ("gpu_idle_s", "est. GPU idle (s)", 1),
              ("gpu_remote_bytes", "GPU-stage remote MB", MB))
    fig, axes = plt.subplots(len(panels), len(wls), figsize=(4.6 * len(wls), 9), squeeze=False)
    for j, w in enumerate(wls):
        for i, (key, label, scale) in enumerate(panels):
            ax = axes[i][j]
            for v, *_ in VARIANTS:
                pts = sorted((r["cache_fraction"], r[key] / scale) for r in rows
                             if r["workload"] == w and r["variant"] == v)
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=v)
            ax.set_ylabel(label)
            if i == 0:
                ax.set_title(w)
            if i == len(panels) - 1:
                ax.set_xlabel("cache fraction")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _table(rows: list[dict], workload: str) -> str:
    cols = ("cache_fraction", "variant", "gpu_misses", "gpu_reads", "gpu_idle_s",
            "gpu_remote_bytes", "placed_bytes", "cpu_misses", "cpu_reads", "hit_ratio",
            "est_runtime")
    head = ("| F | variant | GPU misses | GPU reads | GPU idle s | GPU remote MB | placed MB "
            "| CPU misses | CPU reads | hit ratio | est. runtime s |\n|" + "---|" * len(cols))
    out = [head]
    for r in rows:
        if r["workload"] != workload:
            continue
        cells = []
        for c in cols:
            v = r[c]
            if c.endswith("_bytes"):
                v = f"{v / MB:.0f}"
            elif isinstance(v, float):
                v = f"{v:.2f}" if c != "hit_ratio" else f"{v:.3f}"
            cells.append(str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def findings(rows: list[dict]) -> str:
    """What the numbers say, computed from them (so a re-run cannot contradict the text)."""
    out = []
    for w in dict.fromkeys(r["workload"] for r in rows):
        fs = sorted({r["cache_fraction"] for r in rows if r["workload"] == w})
        g = lambda v, f, k: _get(rows, w, v, f, k)  # noqa: E731
        better, worse, same = [], [], []
        for f in fs:
            a, b = g("crd", f, "gpu_idle_s"), g("crd+placement", f, "gpu_idle_s")
            (better if b < a - 1e-9 else worse if b > a + 1e-9 else same).append(f)
        moved = sum(g("crd+placement", f, "placed_bytes") for f in fs) / MB
        line = (f"- **{w}**, placement (crd+placement vs crd): GPU idle lower at F = "
                f"{', '.join(map(str, better)) or 'none'}; higher at "
                f"{', '.join(map(str, worse)) or 'none'}; equal at "
                f"{', '.join(map(str, same)) or 'none'}"
                f" ({moved:.0f} MB moved over all fractions). GPU-stage remote MB with / without "
                "placement: " + ", ".join(
                    f"F={f}: {g('crd+placement', f, 'gpu_remote_bytes') / MB:.0f} / "
                    f"{g('crd', f, 'gpu_remote_bytes') / MB:.0f}" for f in fs) + ".")
        out.append(line)
        parts = []
        for f in fs:
            dm = g("crd", f, "gpu_misses") - g("crd-unweighted", f, "gpu_misses")
            dc = g("crd", f, "cpu_misses") - g("crd-unweighted", f, "cpu_misses")
            dr = g("crd", f, "gpu_remote_bytes") - g("crd-unweighted", f, "gpu_remote_bytes")
            if dm or dc or dr:
                parts.append(f"F={f}: GPU misses {dm:+d}, CPU misses {dc:+d}, "
                             f"GPU remote {dr / MB:+.0f} MB")
        out.append(f"- **{w}**, GPU weight (crd vs crd-unweighted): "
                   + ("; ".join(parts) if parts else "no difference at any fraction") + ".")
        best = []
        for f in fs:
            low = min(g(v, f, "gpu_idle_s") for v, *_ in VARIANTS)
            tied = [v for v, *_ in VARIANTS if g(v, f, "gpu_idle_s") <= low + 1e-9]
            best.append(f"F={f}: {' = '.join(tied)} ({low:.1f} s; lru "
                        f"{g('lru', f, 'gpu_idle_s'):.1f} s)")
        out.append(f"- **{w}**, lowest estimated GPU idle time: " + ", ".join(best) + ".")
    return "\n".join(out) + "\n"


NOTES = """\
## Model (lrc/mixed.py, docs/DESIGN.md)

- {n} executors, the last {g} with GPUs; each executor has cache = F x working set / {n}
  (the working set: the most bytes cached at once with unlimited memory). A GPU stage's task runs
  on GPU executor `partition % {g}`, every other task on a CPU executor (stage-level scheduling).
- A read that hits in another executor's memory is remote: size / {net:.0f} MB/s. A miss rebuilds
  the block from its lineage (the trace's compute costs) on the task's executor and caches it there.
- Estimated GPU idle time = miss cost + remote-read time inside GPU-stage tasks (the GPU waits).
- crd weights a reference from a GPU stage by 1 + {w:g} x GPUs per task; crd-unweighted is crd
  with weight 0 (lru and lrc ignore the weight).
- Placement: ahead of each GPU stage its planned inputs on CPU executors move into the GPU executor
  that will run the task, if they fit in free storage plus blocks of lower priority, less the room
  the stage's uncached inputs will need there; the CPU copy is dropped.
- Workloads: `gpu_train` (lrc/synth.py: CPU ETL caches `features` and an equally large, equally
  expensive `lookup` table; 8 epochs of a GPU stage reading `features`, each followed by CPU jobs
  that cache a new batch and read it with `lookup`), and `ml-gpu`: synthetic `ml` (KMeans-like)
  with the stages that read its cached training copy bound to GPUs through the override
  (`MixedCluster(gpu_stages=...)`).
- References: `{refs}` ({refs_note}).
"""


def write_report(rows: list[dict], out: Path, command: str, executors: int, gpu_executors: int,
                 refs: str, net_bytes_per_s: float) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"command": command, "results": rows}, indent=1))
    plot(rows, out / "gpu.png")
    refs_note = {"profile": "the whole trace preloaded, a recurring application",
                 "online": "job by job with predicted references, as live",
                 "blind": "job by job only"}[refs]
    text = ["# GPU stages on mixed executors (simulator, issue 13)\n", "Produced by:\n",
            f"```\n{command}\n```\n",
            NOTES.format(n=executors, g=gpu_executors, net=net_bytes_per_s / 1e6,
                         w=GPU_COST_WEIGHT, refs=refs, refs_note=refs_note),
            "## What the numbers show (computed from results.json)\n", findings(rows),
            "![GPU-stage misses, idle time, remote MB](gpu.png)\n"]
    if (out / "analysis.md").exists():
        text.insert(3, "What this means, and where it does not help: [analysis.md](analysis.md).\n")
    for w in dict.fromkeys(r["workload"] for r in rows):
        text += [f"## {w}\n", _table(rows, w)]
    path = out / "report.md"
    path.write_text("\n".join(text))
    return path
