"""The GPU placement benchmark's schedule, statistics and report, from hand-made rows: the
interleaved rotation, median [min-max] per cell, ratios to `lru, placement off` taken per repeat,
and the checksum verdict. No Spark."""
from __future__ import annotations

import json

import pytest

from workloads.gpu_bench_report import (cells_in_order, checksum_text, ratios, report, rotations,
                                        spread)
from workloads.gpu_placement_bench import _child_argv, _earlier


def _row(run, policy, on, later, first=10.0, checksum=(7,), evictions=None, misses=None):
    return {"run": run, "policy": policy, "placement": on, "later_gpu_stage_median_s": later,
            "first_gpu_stage_s": first, "later_process_local": 12, "gpu_stage_remote_reads": 4,
            "gpu_stage_remote_bytes": 2**21, "moved": 0, "evictions": evictions,
            "gpu_input_evictions": evictions,
            "cpu_input_evictions": None if evictions is None else 0, "later_tasks": 12,
            "gpu_stage_misses": misses, "checksum": list(checksum)}


def test_rotations_interleave_and_rotate():
    order = rotations(["a", "b", "c"], 3)
    assert order == [(0, "a"), (0, "b"), (0, "c"), (1, "b"), (1, "c"), (1, "a"),
                     (2, "c"), (2, "a"), (2, "b")]
    assert rotations(["a"], 2) == [(0, "a"), (1, "a")]
    assert rotations(["a", "b"], 0) == []


def test_spread_skips_missing_values():
    assert spread([3.0, None, 1.0, 2.0]) == (2.0, 1.0, 3.0)
    assert spread([None]) is None
    assert spread([]) is None


def test_ratios_are_taken_within_each_repeat():
    rows = [_row(0, "lru", False, 4.0), _row(0, "crd", True, 1.0),
            _row(1, "lru", False, 2.0), _row(1, "crd", True, 1.0),
            _row(2, "crd", True, 1.0)]  # repeat 2 has no baseline: no ratio
    got = ratios(rows)
    assert got[("crd", True)] == [0.25, 0.5]
    assert got[("lru", False)] == [1.0, 1.0]


def test_checksum_text_is_short():
    assert checksum_text([90950]) == "90950"
    assert checksum_text([3, 1, 2]) == checksum_text([1, 2, 3])
    assert checksum_text([1, 2, 3]).startswith("crc ")
    assert checksum_text([1, 2, 3]) != checksum_text([1, 2, 4])


def test_cells_plain_first_then_policies_off_before_on():
    rows = [_row(0, "crd", True, 1), _row(0, "lru", True, 1), _row(0, "plain", False, 1),
            _row(0, "lru", False, 1), _row(0, "crd", False, 1)]
    assert cells_in_order(rows) == [("plain", False), ("crd", False), ("crd", True),
                                    ("lru", False), ("lru", True)]


def test_report_table_medians_ranges_and_checksum_verdict():
    rows = [_row(0, "plain", False, 4.0), _row(1, "plain", False, 4.2),
            _row(0, "lru", False, 4.0, evictions=8, misses=4),
            _row(1, "lru", False, 3.0, evictions=6, misses=4),
            _row(0, "crd", False, 2.0, evictions=8, misses=0),
            _row(1, "crd", False, 3.0, evictions=8, misses=0)]
    text = report(rows, "python -m workloads.gpu_placement_bench --pressure", pressure=True)
    lines = {ln.split(" | ")[0].lstrip("| ") + " " + ln.split(" | ")[1]: ln
             for ln in text.splitlines() if ln.startswith("| ") and "---" not in ln}
    assert "memory pressure" in text
    assert lines["lru off"].startswith("| lru | off | 2 | 3.50 [3.00-4.00] | 10.00 | 12/12 |")
    assert "| 7 [6-8] | 7 [6-8] | 0 | 4 | - | 1.00 | 7 |" in lines["lru off"]
    assert "| - | 0.75 [0.50-1.00] | 7 |" in lines["crd off"]  # 2/4 and 3/3, per repeat
    assert "| 0 | - | - | - | - | - | 1.20 [1.00-1.40] | 7 |" in lines["plain off"]
    assert "every run equals plain Spark's" in text
    rows[-1]["checksum"] = [8]
    assert "DIFFER" in report(rows, "cmd")


def test_child_gets_the_parents_arguments_but_runs_out_and_merge():
    argv = ["--runs", "3", "--pressure", "--out=/tmp/x", "--merge", "--policies", "lru", "--runs=2",
            "--out", "/tmp/y", "--repeats", "2"]
    assert _child_argv(argv) == ["--pressure", "--policies", "lru", "--repeats", "2"]


def test_merge_reads_earlier_runs_of_the_same_scenario_only(tmp_path):
    path = tmp_path / "results.json"
    assert _earlier(path, pressure=True) == []
    path.write_text(json.dumps([{"run": 0, "pressure": True}]))
    assert _earlier(path, pressure=True) == [{"run": 0, "pressure": True}]
    with pytest.raises(SystemExit, match="other scenario"):
        _earlier(path, pressure=False)
