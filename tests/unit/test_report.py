"""`python -m spark_plugin report`: the text shows the stats' numbers, `--plot` writes a PNG, the
stats come from a stats JSON or from the last spark-lrc summary event of a Spark event log (plain,
zstd, lz4, rolling), bad input is one line on stderr and exit 2, and stats missing or mangling any
field still print (no JVM: stats are dicts written here)."""
from __future__ import annotations

import copy
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_plugin.report import SUMMARY_EVENT, ReportError, load_stats, main, per_rdd, plot, render

ROOT = Path(__file__).resolve().parents[2]

# The shape brain.stats() writes (a two-executor zip run, trimmed).
STATS = {
    "policy": "lrc", "peer_mode": "task", "profile": None, "table_version": 136,
    "tasks": 144, "tasks_with_reads": 120, "hits": 84, "remote_hits": 0, "misses": 124,
    "effective_hits": 32, "hit_ratio": 84 / 208, "effective_hit_ratio": 32 / 120, "evictions": 189,
    "evictions_per_executor": {"0": 94, "1": 95},
    "evictions_per_rdd": {"1": 47, "12": 16, "2": 42, "3": 30, "4": 38, "8": 16},
    "eviction_reasons": {"order": {"priority": 189},
                         "for_rdd": {"1": 53, "12": 11, "2": 39, "3": 37, "4": 42, "8": 7}},
    "recent_evictions": [
        {"executor": "1", "stage": 1, "partition": 2, "block": "rdd_2_1", "order": "priority",
         "priority": 0.0, "for": "rdd_3_2"},
        {"executor": "0", "stage": 1, "partition": 3, "block": "rdd_2_0", "order": "priority",
         "priority": 0.0, "for": "rdd_3_3"},
        {"executor": "0", "stage": 2, "partition": 0, "block": "rdd_12_0", "order": "lru",
         "priority": None, "for": None}],
    "executors": {
        "0": {"installed": True, "error": "", "tasks": 72, "hits": 42, "remote_hits": 0, "misses": 62,
              "effective_hits": 16, "tasks_with_reads": 60, "evictions": 94},
        "1": {"installed": True, "error": "", "tasks": 72, "hits": 42, "remote_hits": 0, "misses": 62,
              "effective_hits": 16, "tasks_with_reads": 60, "evictions": 95}},
    "plan_latency_ms": {"count": 16, "median": 14.772, "p99": 25.863, "max": 26.056},
    "executor_wait_ms": {"count": 36, "median": 0.0, "p99": 0.0, "max": 0.0},
    "push_lag_ms": {"count": 272, "median": 6.222, "p99": 70.39, "max": 105.273},
    "degraded": None, "dropped_events": 0, "brain_cpu_s": 0.647, "gpus": {},
    "plugin_cpu_s": {"brain": 0.647, "brain_calls": 0.3, "task_hooks": 0.1, "total": 1.047},
}


def stats(**changes):
    s = copy.deepcopy(STATS)
    s.update(changes)
    return s


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True))
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def spark_events(summaries=()) -> list[dict]:
    """A small Spark event log's lines, with spark-lrc summary events before the application end."""
    return [{"Event": "SparkListenerLogStart", "Spark Version": "4.0.1"},
            {"Event": "SparkListenerApplicationStart", "App Name": "t", "App ID": "app-1", "Timestamp": 1,
             "User": "u"},
            {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 2, "Stage Infos": [],
             "Stage IDs": [], "Properties": {}},
            *({"Event": SUMMARY_EVENT, "stats": s} for s in summaries),
            {"Event": "SparkListenerApplicationEnd", "Timestamp": 3}]


def table(out: str, section: str) -> dict[str, list[str]]:
    """The rows of one section of the text, split into cells, by their first cell."""
    block = out[out.index("\n" + section):].split("\n\n")[0]
    return {line.split()[0]: line.split() for line in block.splitlines() if line.startswith("  ")}


def log_bytes(events) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


# ---- the text -------------------------------------------------------------------------------
def test_text_shows_the_numbers(tmp_path, capsys):
    code, out, err = run(capsys, write_json(tmp_path / "stats.json", STATS))
    assert code == 0 and err == ""
    assert "policy lrc (peer mode task, profile none), table version 136" in out
    assert "208 planned: 84 hits (40.4%; 0 from another executor), 124 misses" in out
    assert "144, 120 with cached reads: 32 effective hits (26.7%)" in out
    assert "evictions  189 (picked by: priority 189)" in out
    rows = table(out, "executors")
    assert rows["0"] == ["0", "yes", "72", "42", "62", "16", "94"]
    assert rows["1"][6] == "95"
    # per RDD: evicted, made room, what picked its evicted blocks among the recent ones
    rows = table(out, "RDDs")
    assert rows["2"][1:] == ["42", "39", "priority", "2"]
    assert rows["12"][1:] == ["16", "11", "lru", "1"]
    assert rows["8"][1:] == ["16", "7", "-"]
    assert out.index("\n  1 ") < out.index("\n  2 ") < out.index("\n  12 ")  # numeric order
    assert "per-RDD hits and misses are not in these stats" in out
    assert "plan latency   16 plans, median 14.8 ms, p99 25.9 ms, max 26.1 ms" in out
    assert "push lag       272 pushes, median 6.2 ms, p99 70.4 ms" in out
    assert "brain CPU      0.65 s" in out
    assert "plugin CPU     1.05 s (all parts" in out
    assert "fallbacks and losses (dropped events: 0): none" in out


def test_fallbacks_and_losses_are_spelled_out():
    s = stats(degraded="planner failed: KeyError(3)", dropped_events=12)
    s["executors"]["2"] = {"installed": False, "error": "JEP 500: cannot write final field entries",
                           "tasks": 3, "hits": 0, "misses": 2, "effective_hits": 0, "evictions": 0}
    s["eviction_reasons"]["order"]["lru"] = 5
    s["eviction_reasons"]["for_rdd"]["none"] = 3
    out = render(s)
    assert "DEGRADED: the brain fell back to Spark's LRU: planner failed: KeyError(3)" in out
    assert "executor 2: ordered map not installed, LRU there: JEP 500: cannot write final field" in out
    assert "  2          NO      3" in out
    assert "5 evictions in Spark's LRU order" in out
    assert "12 events dropped" in out and "(dropped events: 12):" in out
    assert "3 evictions with no store after them" in out
    assert "\n  none " not in out  # "none" (no store followed) is not an RDD row


def test_per_rdd_hits_and_misses_when_the_stats_have_them():
    s = stats(hits_per_rdd={"1": 30, "2": 20}, misses_per_rdd={"1": 5, "3": 9})
    rows = per_rdd(s)
    assert rows["1"]["hits"] == 30 and rows["1"]["misses"] == 5 and rows["1"]["evicted"] == 47
    assert "misses" not in rows["2"] and rows["3"]["misses"] == 9
    out = render(s)
    assert "rdd  hits  misses  evicted  made room  picked by" in out
    assert "  1      30       5       47         53" in out
    assert "not in these stats" not in out


def test_the_part_of_the_plans_in_force_before_their_jobs_is_spelled_out():
    out = render(stats(foreseen={"jobs": 14, "predicted_jobs": 12, "reads": 84, "foreseen": 63}))
    assert ("foreseen       12 of 14 jobs started with predictions: 63 of their 84 cached reads "
            "ranked before the job (75%)") in out
    for bad in ({}, {"jobs": 0}, {"jobs": 3, "predicted_jobs": "x", "reads": 1, "foreseen": 1}):
        assert "foreseen       -" in render(stats(foreseen=bad))


def test_missing_fields_print_as_dashes():
    out = render({"policy": "lerc", "evictions_per_executor": {"0": 3}})
    assert "policy lerc" in out
    assert "reads      - planned: - hits (-; - from another executor), - misses" in out
    assert table(out, "executors")["0"] == ["0", "-", "-", "-", "-", "-", "3"]
    assert "RDDs: -" in out and "plan latency   -" in out and "brain CPU      - s" in out
    assert "plugin CPU     - s" in out
    # ratios are derived when the stats carry counts but not the ratio
    assert "(50.0%" in render({"hits": 1, "misses": 1})


# ---- the plot -------------------------------------------------------------------------------
def test_plot_writes_a_png(tmp_path, capsys):
    src = write_json(tmp_path / "stats.json", stats(hits_per_rdd={"1": 3}))
    png = tmp_path / "sub" / "out.png"
    code, out, _ = run(capsys, src, "--plot", png)
    assert code == 0 and f"plot: {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_plot_with_many_rdds_or_none(tmp_path):
    many = stats(evictions_per_rdd={str(i): i for i in range(120)})
    for name, s in (("many.png", many), ("empty.png", {"policy": "lru"})):
        assert plot(s, tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_plot_into_an_unwritable_place_is_an_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ReportError, match="cannot write the plot"):
        plot(STATS, tmp_path / "file" / "out.png")


# ---- event logs -----------------------------------------------------------------------------
@pytest.mark.parametrize("as_string", [True, False])
def test_event_log_summary_event_last_one_counts(tmp_path, capsys, as_string):
    first, last = stats(policy="lru"), stats(policy="lerc")
    enc = (lambda s: json.dumps(s)) if as_string else (lambda s: s)
    path = tmp_path / "app-1"
    path.write_bytes(log_bytes(spark_events([enc(first), enc(last)])))
    assert load_stats(path)["policy"] == "lerc"
    code, out, _ = run(capsys, path)
    assert code == 0 and "policy lerc" in out and "40.4%" in out


def test_inprogress_log_with_a_cut_last_line(tmp_path):
    path = tmp_path / "app-1.inprogress"
    cut = json.dumps({"Event": SUMMARY_EVENT, "stats": json.dumps(stats(policy="mrd"))})[:50]
    path.write_bytes(log_bytes(spark_events([json.dumps(STATS)])) + cut.encode())
    assert load_stats(path)["policy"] == "lrc"


def _lz4_block(data: bytes) -> bytes:
    """lz4-java's LZ4BlockOutputStream framing, as Spark writes .lz4 event logs."""
    import pyarrow as pa

    comp = pa.Codec("lz4_raw").compress(data).to_pybytes()
    return (b"LZ4Block" + bytes([0x20 | 4]) + struct.pack("<iii", len(comp), len(data), 0) + comp
            + b"LZ4Block" + bytes([0x10]) + struct.pack("<iii", 0, 0, 0))


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_compressed_event_logs(tmp_path, codec):
    import pyarrow as pa

    if not pa.Codec.is_available("lz4_raw" if codec == "lz4" else codec):
        pytest.skip(f"pyarrow without {codec}")
    raw = log_bytes(spark_events([json.dumps(stats(policy="crd"))]))
    path = tmp_path / f"app-1.{codec}"
    if codec == "zstd":
        with pa.CompressedOutputStream(str(path), "zstd") as out:
            out.write(raw)
    else:
        path.write_bytes(_lz4_block(raw))
    assert load_stats(path)["policy"] == "crd"


def test_rolling_event_log_directory(tmp_path):
    d = tmp_path / "eventlog_v2_app-1"
    d.mkdir()
    events = spark_events([json.dumps(stats(policy="lerc"))])
    (d / "events_1_app-1").write_bytes(log_bytes(events[:3]))
    (d / "events_2_app-1").write_bytes(log_bytes(events[3:]))
    (d / "appstatus_app-1").write_text("")
    assert load_stats(d)["policy"] == "lerc"
    assert load_stats(tmp_path)["policy"] == "lerc"  # spark.eventLog.dir holding one log


# ---- bad input ------------------------------------------------------------------------------
def _bad_inputs(tmp: Path) -> dict[str, tuple[Path, str]]:
    (tmp / "empty_dir").mkdir()
    (tmp / "png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    (tmp / "list.json").write_text("[1, 2]")
    (tmp / "other.json").write_text('{"name": "not stats"}')
    (tmp / "cut.json").write_text('{"policy": "lrc", "hits":')
    (tmp / "notes.txt").write_text("hello\nworld\n")
    (tmp / "no_summary").write_bytes(log_bytes(spark_events()))
    (tmp / "bad_summary").write_bytes(log_bytes(spark_events(["{not json"])))
    return {"missing": (tmp / "nope.json", "no such file"),
            "empty_dir": (tmp / "empty_dir", "no event log in it"),
            "png": (tmp / "png", "cannot read it as text"),
            "list": (tmp / "list.json", "JSON list"),
            "other": (tmp / "other.json", "a JSON object with no stats field"),
            "cut": (tmp / "cut.json", "not valid JSON"),
            "text": (tmp / "notes.txt", "neither JSON nor an event log"),
            "no_summary": (tmp / "no_summary", f"without spark-lrc's {SUMMARY_EVENT}"),
            "bad_summary": (tmp / "bad_summary", "stats are not valid JSON")}


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    for name, (path, why) in _bad_inputs(tmp_path).items():
        code, out, err = run(capsys, path)
        assert code == 2, name
        assert out == "" and err.count("\n") == 1, (name, err)
        assert err.startswith(f"spark-lrc report: {path}") and why in err, (name, err)


def test_command_line_entry_point(tmp_path):
    src = write_json(tmp_path / "stats.json", STATS)
    ok = subprocess.run([sys.executable, "-m", "spark_plugin", "report", str(src)], cwd=ROOT,
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "effective hits (26.7%)" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "spark_plugin", "report", str(tmp_path / "x.json")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().startswith("spark-lrc report:") and len(bad.stderr.splitlines()) == 1


# ---- any stats missing or mangling fields still print ----------------------------------------
def _paths(obj, prefix=()):
    """Every key path in nested dicts."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))


PATHS = list(_paths(STATS))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                    max_leaves=6)


def mangled(drop, mangle) -> dict:
    """STATS without the key paths in `drop`, with the values in `mangle` put in."""
    s = copy.deepcopy(STATS)
    for path, value in [*((p, KeyError) for p in sorted(drop, key=len, reverse=True)), *mangle.items()]:
        d = s
        for k in path[:-1]:
            d = d.get(k) if isinstance(d, dict) else None
        if isinstance(d, dict):
            if value is KeyError:
                d.pop(path[-1], None)
            else:
                d[path[-1]] = value
    return s


FIELDS = dict(drop=st.sets(st.sampled_from(PATHS)),
              mangle=st.dictionaries(st.sampled_from(PATHS), JSON, max_size=4))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**FIELDS)
def test_stats_missing_or_mangling_any_field_still_print(tmp_path, drop, mangle):
    src = write_json(tmp_path / "s.json", mangled(drop, mangle))
    try:
        loaded = load_stats(src)
    except ReportError as e:  # only when nothing that looks like stats is left
        assert "no stats field" in str(e)
        return
    assert loaded == json.loads(src.read_text())
    out = render(loaded)
    assert out.startswith("spark-lrc report") and "fallbacks and losses" in out


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**FIELDS)
def test_plot_of_any_mangled_stats(tmp_path, drop, mangle):
    assert plot(mangled(drop, mangle), tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
