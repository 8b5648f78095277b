"""Results table (text/markdown) and the hit-ratio plot for simulator runs."""
from __future__ import annotations

from pathlib import Path

COLUMNS = ("workload", "policy", "cache_fraction", "hit_ratio", "effective_hit_ratio", "evictions",
           "recomputed_bytes", "est_runtime", "bound_hit_ratio")


def _cell(v) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def table(rows: list[dict], markdown: bool = False) -> str:
    cells = [[_cell(r[c]) if c in r else "" for c in COLUMNS] for r in rows]
    if markdown:
        head = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"
        return head + "\n".join("| " + " | ".join(c) + " |" for c in cells) + "\n"
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(COLUMNS)]
    line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths))  # noqa: E731
    return "\n".join([line(COLUMNS)] + [line(c) for c in cells]) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    """Hit ratio vs cache fraction, one line per policy, one panel per workload."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    fig, axes = plt.subplots(1, len(workloads), figsize=(4 * len(workloads), 3.4), squeeze=False)
    for ax, w in zip(axes[0], workloads):
        for pol in dict.fromkeys(r["policy"] for r in rows):
            pts = sorted((r["cache_fraction"], r["hit_ratio"]) for r in rows
                         if r["workload"] == w and r["policy"] == pol)
            ax.plot(*zip(*pts), marker="o", label=pol)
        bound = sorted({(r["cache_fraction"], r["bound_hit_ratio"]) for r in rows
                        if r["workload"] == w and "bound_hit_ratio" in r})
        if bound:
            ax.plot(*zip(*bound), "k--", label="bound")
        ax.set_title(w)
        ax.set_xlabel("cache fraction")
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("hit ratio")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(rows: list[dict], directory: Path, command: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    plot(rows, directory / "hit_ratio.png")
    text = ("# Simulator results\n\nProduced by:\n\n```\n" + command + "\n```\n\n"
            "Hit ratio = hits / reads; effective hit ratio = tasks whose cached reads all hit / tasks "
            "with reads; est_runtime in seconds from the recompute-cost model (lrc/sim.py); "
            "bound_hit_ratio = an offline upper bound on any policy's hit ratio for that workload and "
            "cache fraction (lrc/bound.py).\n\n"
            + table(rows, markdown=True) + "\n![hit ratio vs cache fraction](hit_ratio.png)\n")
    out = directory / "report.md"
    out.write_text(text)
    return out
