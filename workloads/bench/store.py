"""results.json, the one record of a benchmark: the runner writes it after every run, merge folds
re-runs into it, and the report is rendered from it alone."""
from __future__ import annotations

import json
from pathlib import Path


def read_results(out_dir: str | Path) -> dict:
    return json.loads((Path(out_dir) / "results.json").read_text())


def write_results(out_dir: str | Path, results: dict) -> None:
    """Replace results.json atomically (a reader never sees half a file)."""
    path = Path(out_dir) / "results.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, default=str))
    tmp.replace(path)
