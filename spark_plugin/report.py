"""`python -m spark_plugin report STATS [--plot OUT.png]`: one application's spark-lrc stats, readable.

Why: `stats()` and the `spark.lrc.statsPath` file are made for programs - nested dicts, ratios as
long floats, evictions counted once by the RDD that lost the block and once by the RDD that needed
the room. Someone asking "did the policy help, which RDDs paid, what did the brain cost, did
anything fall back to Spark's LRU" needs those numbers side by side; this prints them (and with
`--plot` draws per-RDD and per-executor bars, matplotlib's Agg backend, no display needed).

Input: the stats JSON, or a Spark event log holding spark-lrc's summary event (the driver plugin
writes `{"Event": "org.sparklrc.SummaryEvent", "stats": ...}` with the stats as a JSON string or
object; the last one counts). Event logs are read by `lrc.eventlog_files`: plain or zstd/lz4/
snappy, one file or a rolling `eventlog_v2_*` directory. Fields the stats lack print as `-`; input
that is neither raises `ReportError` (one line naming the file and what was expected; exit 2).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from lrc.eventlog_files import eventlog_files, is_eventlog, lines

from .metrics import _rdd_of  # "rdd_17_3" -> "17", "broadcast_3_piece0" -> "broadcast"

SUMMARY_EVENT = "org.sparklrc.SummaryEvent"
MAX_PLOTTED = 40  # RDDs in the plot (the busiest); the text lists all
SERIES = [("hits", "tab:green"), ("misses", "tab:red"), ("evicted", "tab:orange"), ("made_room", "tab:blue")]
KNOWN_KEYS = {"policy", "hits", "misses", "hit_ratio", "effective_hits", "evictions", "executors",
              "evictions_per_rdd", "eviction_reasons", "plan_latency_ms", "push_lag_ms",
              "brain_cpu_s", "degraded", "dropped_events", "recent_evictions"}
EXPECTED = ("expected spark-lrc stats JSON (spark.lrc.statsPath) or a Spark event log with an "
            f"{SUMMARY_EVENT} event")


class ReportError(ValueError):
    """Input that is not spark-lrc stats; the message is the one line the CLI prints."""


# ---- reading --------------------------------------------------------------------------------
def load_stats(path: str | Path) -> dict[str, Any]:
    """The stats dict from a stats JSON file or from the last summary event of an event log."""
    path = Path(path)
    if not path.exists():
        raise ReportError(f"{path}: no such file ({EXPECTED})")
    if path.is_dir() or is_eventlog(path):
        return _from_eventlog(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: cannot read it as text ({e.__class__.__name__}); {EXPECTED}") from None
    try:
        doc = json.loads(text)
    except ValueError as e:
        if SUMMARY_EVENT in text:  # an event log whose first line is not a Spark listener event
            return _from_eventlog(path)
        what = f"not valid JSON ({e})" if text.lstrip()[:1] in ("{", "[") else "neither JSON nor an event log"
        raise ReportError(f"{path}: {what}; {EXPECTED}") from None
    return _stats_of(doc, path)


def _stats_of(doc: Any, path: Path) -> dict[str, Any]:
    """`doc` itself, or the stats of a summary event (a JSON string or an object)."""
    if isinstance(doc, dict) and doc.get("Event") == SUMMARY_EVENT:
        doc = doc.get("stats")
        if isinstance(doc, str):
            try:
                doc = json.loads(doc)
            except ValueError:
                raise ReportError(f"{path}: the {SUMMARY_EVENT} event's stats are not valid JSON") from None
    if not isinstance(doc, dict) or not KNOWN_KEYS & doc.keys():
        kind = "a JSON object with no stats field" if isinstance(doc, dict) else f"JSON {type(doc).__name__}"
        raise ReportError(f"{path}: {kind}; {EXPECTED}")
    return doc


def _from_eventlog(path: Path) -> dict[str, Any]:
    warn = lambda msg: print(f"warning: {msg}", file=sys.stderr)  # noqa: E731
    last = None
    try:
        for _, _, line, _ in lines(eventlog_files(path, warn), warn):
            if SUMMARY_EVENT.encode() in line:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # a truncated last line of an .inprogress log
                last = event if isinstance(event, dict) and event.get("Event") == SUMMARY_EVENT else last
    except ValueError as e:  # eventlog_files' errors name the file already
        raise ReportError(f"{e}; {EXPECTED}") from None
    if last is None:
        raise ReportError(f"{path}: a Spark event log without spark-lrc's {SUMMARY_EVENT} (did the "
                          "application run with the spark-lrc plugin, and did it end?)")
    return _stats_of(last, path)


# ---- the numbers ----------------------------------------------------------------------------
def _d(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _num(x: Any) -> float | None:
    """A count or a time; None for anything else (missing, text, NaN, absurdly large)."""
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x) < 1e18
    return x if ok else None


def _fmt(x: Any, digits: int = 1) -> str:
    return "-" if (v := _num(x)) is None else str(v) if isinstance(v, int) else f"{v:.{digits}f}"


def _ratio(stats: dict, key: str, part: str, whole: float | None) -> str:
    """stats[key] as a percentage, else stats[part] / whole, else "-"."""
    r, p = _num(stats.get(key)), _num(stats.get(part))
    r = r if r is not None else (p / whole if p is not None and whole else None)
    return "-" if r is None else f"{100 * r:.1f}%"


def _id_order(kv: Any) -> tuple:
    """Sort key of an id or an (id, value) pair: numeric ids in numeric order, then the others."""
    name = str(kv[0] if isinstance(kv, tuple) else kv)
    return (0, int(name), "") if name.isascii() and name.isdigit() else (1, 0, name)


def per_rdd(stats: dict) -> dict[str, dict[str, Any]]:
    """Per RDD id: hits and misses (if the stats have `hits_per_rdd`/`misses_per_rdd`), evicted
    (its blocks evicted), made_room (evictions to store its blocks), and `orders`: what picked its
    evicted blocks, counted over `recent_evictions`."""
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: {"orders": Counter()})
    reasons = _d(stats.get("eviction_reasons"))
    for col, counts in (("hits", stats.get("hits_per_rdd")), ("misses", stats.get("misses_per_rdd")),
                        ("evicted", stats.get("evictions_per_rdd")), ("made_room", reasons.get("for_rdd"))):
        for rid, n in _d(counts).items():
            if _num(n) is not None and str(rid) != "none":
                rows[str(rid)][col] = n
    recent = stats.get("recent_evictions")
    for ev in recent if isinstance(recent, list) else ():
        if isinstance(ev, dict):
            rows[_rdd_of(ev.get("block"))]["orders"][str(ev.get("order", "?"))] += 1
    return dict(sorted(rows.items(), key=_id_order))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell; numbers right-aligned, first and last column left."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [("  " + "  ".join(c.ljust(w) if i in (0, len(r) - 1) else c.rjust(w)
                              for i, (c, w) in enumerate(zip(r, widths)))).rstrip() for r in [header, *rows]]


def _summary_line(name: str, s: Any, what: str) -> str:
    if not (s := _d(s)) or _num(s.get("count")) == 0:
        return f"  {name:<15}" + ("none measured" if s else "-")
    return (f"  {name:<15}{_fmt(s.get('count'))} {what}, median {_fmt(s.get('median'))} ms, "
            f"p99 {_fmt(s.get('p99'))} ms, max {_fmt(s.get('max'))} ms")


def _overview(st: dict) -> list[str]:
    hits, misses, with_reads = _num(st.get("hits")), _num(st.get("misses")), _num(st.get("tasks_with_reads"))
    reads = hits + misses if hits is not None and misses is not None else None
    how = ", ".join(f"{k} {_fmt(v)}" for k, v in _d(_d(st.get("eviction_reasons")).get("order")).items())
    return [
        f"policy {st.get('policy', '-')} (peer mode {st.get('peer_mode', '-')}, profile "
        f"{st.get('profile') or 'none'}), table version {_fmt(st.get('table_version'))}",
        f"reads      {_fmt(reads)} planned: {_fmt(hits)} hits ({_ratio(st, 'hit_ratio', 'hits', reads)}; "
        f"{_fmt(st.get('remote_hits'))} from another executor), {_fmt(misses)} misses",
        f"tasks      {_fmt(st.get('tasks'))}, {_fmt(with_reads)} with cached reads: "
        f"{_fmt(st.get('effective_hits'))} effective hits "
        f"({_ratio(st, 'effective_hit_ratio', 'effective_hits', with_reads)})",
        f"evictions  {_fmt(st.get('evictions'))}" + (f" (picked by: {how})" if how else ""),
    ]


def _executors(st: dict) -> list[str]:
    per = _d(st.get("evictions_per_executor"))
    if not (execs := _d(st.get("executors")) or {k: {"evictions": v} for k, v in per.items()}):
        return ["executors: -"]
    rows = [[str(k), {"True": "yes", "False": "NO"}.get(str(_d(e).get("installed")), "-"),
             *(_fmt(_d(e).get(c)) for c in ("tasks", "hits", "misses", "effective_hits", "evictions")),
             str(_d(e).get("error") or "")[:60]] for k, e in sorted(execs.items(), key=_id_order)]
    return ["executors (installed: the priority-ordered map replaced Spark's)",
            *_table(["id", "installed", "tasks", "hits", "misses", "eff.hits", "evictions", "error"], rows)]


def _rdds(st: dict) -> list[str]:
    if not (rdds := per_rdd(st)):
        return ["RDDs: -"]
    n_recent = len(st["recent_evictions"]) if isinstance(st.get("recent_evictions"), list) else 0
    cols = [c for c in ("hits", "misses") if any(c in r for r in rdds.values())] + ["evicted", "made_room"]
    rows = [[k, *(_fmt(r.get(c)) for c in cols),
             ", ".join(f"{o} {n}" for o, n in r["orders"].most_common()) or "-"] for k, r in rdds.items()]
    lines = ["RDDs (evicted: its blocks evicted; made room: evictions to store its blocks;",
             f"      picked by: what chose its evicted blocks, in the last {n_recent} evictions)",
             *_table(["rdd", *(c.replace("_", " ") for c in cols), "picked by"], rows)]
    if "hits" not in cols:
        lines.append("  (per-RDD hits and misses are not in these stats)")
    if none := _num(_d(_d(st.get("eviction_reasons")).get("for_rdd")).get("none")):
        lines.append(f"  {none} evictions with no store after them (execution memory took the room)")
    return lines


def _foreseen_line(f: dict) -> str:
    """The part of the plans in force before their jobs started (`Planner.foreseen`)."""
    jobs, predicted, reads, seen = (_num(f.get(k)) for k in
                                    ("jobs", "predicted_jobs", "reads", "foreseen"))
    if not jobs or None in (predicted, reads, seen):
        return f"  {'foreseen':<15}-"
    share = f" ({seen / reads:.0%})" if reads else ""
    return (f"  {'foreseen':<15}{predicted} of {jobs} jobs started with predictions: "
            f"{seen} of their {reads} cached reads ranked before the job{share}")


def _costs(st: dict) -> list[str]:
    return ["brain costs", _summary_line("plan latency", st.get("plan_latency_ms"), "plans"),
            _summary_line("push lag", st.get("push_lag_ms"), "pushes"),
            _summary_line("in force", st.get("in_force_ms"), "jobs"),
            _foreseen_line(_d(st.get("foreseen"))),
            _summary_line("executor wait", st.get("executor_wait_ms"), "waits"),
            f"  {'brain CPU':<15}{_fmt(st.get('brain_cpu_s'), 2)} s",
            f"  {'plugin CPU':<15}{_fmt(_d(st.get('plugin_cpu_s')).get('total'), 2)} s (all parts,"
            " driver and executors: plugin_cpu_s)"]


def _health(st: dict) -> list[str]:
    out = [f"  DEGRADED: the brain fell back to Spark's LRU: {st['degraded']}"] if st.get("degraded") else []
    for k, e in sorted(_d(st.get("executors")).items(), key=_id_order):
        if _d(e).get("installed") is False:
            out.append(f"  executor {k}: ordered map not installed, LRU there: {_d(e).get('error') or '?'}")
    if lru := _num(_d(_d(st.get("eviction_reasons")).get("order")).get("lru")):
        out.append(f"  {lru} evictions in Spark's LRU order (no table in force for that stage yet)")
    if dropped := _num(st.get("dropped_events")):
        out.append(f"  {dropped} events dropped (JVM buffer full; raise spark.lrc.bufferSize)")
    head = f"fallbacks and losses (dropped events: {_fmt(st.get('dropped_events'))})"
    return [head + (":" if out else ": none"), *out]


def render(stats: dict[str, Any], source: str = "") -> str:
    """The text report of one stats dict."""
    parts = [[f"spark-lrc report{': ' + source if source else ''}"], _overview(stats), _executors(stats),
             _rdds(stats), _costs(stats), _health(stats)]
    return "\n\n".join("\n".join(p) for p in parts) + "\n"


# ---- the plot -------------------------------------------------------------------------------
def plot(stats: dict[str, Any], out: str | Path) -> Path:
    """Grouped bars per RDD (hits, misses, evicted, made room) and per executor, as a PNG."""
    try:
        import matplotlib
    except ImportError:
        raise ReportError("--plot needs matplotlib (pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rdds = per_rdd(stats)
    if len(rdds) > MAX_PLOTTED:  # the busiest, in id order
        activity = {k: sum(_num(r.get(c)) or 0 for c, _ in SERIES) for k, r in rdds.items()}
        rdds = {k: rdds[k] for k in sorted(sorted(rdds, key=activity.get)[-MAX_PLOTTED:], key=_id_order)}
    execs = {str(k): _d(e) for k, e in sorted(_d(stats.get("executors")).items(), key=_id_order)}
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 0.5 * len(rdds) + 6), 4.2),
                             gridspec_kw={"width_ratios": [max(3, len(rdds)), max(2, len(execs))]})
    _bars(axes[0], {f"rdd {k}" if k.isdigit() else k: r for k, r in rdds.items()}, SERIES, "per RDD")
    _bars(axes[1], {f"exec {k}": {**e, "evicted": e.get("evictions")} for k, e in execs.items()},
          SERIES[:3], "per executor")
    fig.suptitle(f"spark-lrc: policy {stats.get('policy', '?')}, hit ratio "
                 f"{_ratio(stats, 'hit_ratio', 'hits', None)}")
    fig.tight_layout()
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=110, format="png")
    except (OSError, ValueError) as e:
        raise ReportError(f"{out}: cannot write the plot: {e}") from None
    finally:
        plt.close(fig)
    return out


def _bars(ax, groups: dict[str, dict], series: list[tuple[str, str]], title: str) -> None:
    present = [(k, c) for k, c in series if any(_num(g.get(k)) is not None for g in groups.values())]
    ax.set_title(title)
    if not present:
        ax.text(0.5, 0.5, "no data in these stats", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        return
    width = 0.8 / len(present)
    for i, (key, color) in enumerate(present):
        xs = [j + (i - (len(present) - 1) / 2) * width for j in range(len(groups))]
        ys = [_num(g.get(key)) or 0 for g in groups.values()]
        ax.bar(xs, ys, width, label=key.replace("_", " "), color=color)
    many = len(groups) > 8
    ax.set_xticks(range(len(groups)), list(groups), rotation=45 * many, ha="right" if many else "center")
    ax.set_ylabel("count")
    top = max((_num(g.get(k)) or 0 for g in groups.values() for k, _ in present), default=0)
    ax.set_ylim(0, max(1, top) * 1.25)  # headroom for the legend
    ax.legend(fontsize="small", loc="upper center", ncol=len(present), frameon=False)


# ---- command line ---------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m spark_plugin report",
                                 description="Summarise one application's spark-lrc stats.")
    ap.add_argument("stats", help="stats JSON (spark.lrc.statsPath) or a Spark event log (file or "
                    "rolling directory) with spark-lrc's summary event")
    ap.add_argument("--plot", metavar="OUT.png", help="also draw per-RDD and per-executor bars here")
    args = ap.parse_args(argv)
    try:
        stats = load_stats(args.stats)
        print(render(stats, args.stats), end="")
        if args.plot:
            print(f"plot: {plot(stats, args.plot)}")
    except ReportError as e:
        print(f"spark-lrc report: {e}", file=sys.stderr)
        return 2
    return 0
