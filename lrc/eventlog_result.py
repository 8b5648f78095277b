"""What `lrc.eventlog` returns: a parsed event log's trace, and what the parser used and had to
guess (block sizes' sources, warnings, the application's cores and jobs' span) for reports."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lrc.trace import Trace

# size sources that are estimates (lrc.eventlog); the others: measured, never_stored, unknown
ESTIMATED = ("rdd_info", "input_metrics", "inherited", "shared")


@dataclass
class EventLogTrace:
    """A parsed event log: the trace plus what the parser used and had to guess."""

    trace: Trace
    path: Path
    spark_version: str = ""
    app_id: str = ""
    app_name: str = ""
    complete: bool = True  # the log has SparkListenerApplicationEnd
    files: list[Path] = field(default_factory=list)
    lines: int = 0
    tasks: int = 0
    executors: set[str] = field(default_factory=set)
    cores: int = 0  # cores per executor (median of ExecutorAdded's Total Cores; 0: unknown)
    # seconds from the first job's submission to the last job's end (None: the log has no times)
    jobs_span_s: float | None = None
    # cached rdd -> where its block sizes / value counts came from (lrc.eventlog)
    size_source: dict[int, str] = field(default_factory=dict)
    count_source: dict[int, str] = field(default_factory=dict)
    unknown_events: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    @property
    def sizes_estimated(self) -> bool:
        return any(s not in ("measured", "never_stored") for s in self.size_source.values())

    @property
    def sizes_known(self) -> bool:
        return all(s != "unknown" for s in self.size_source.values())

    def summary(self) -> str:
        by = Counter(self.size_source.values())
        src = ", ".join(f"{n} {k}" for k, n in sorted(by.items())) or "no cached RDD"
        return (f"{self.path}: Spark {self.spark_version or '?'}, app {self.app_id or '?'}, "
                f"{len(self.trace.dag.jobs)} jobs, {len(self.trace.dag.stages)} stages, "
                f"{self.tasks} tasks, {len(self.size_source)} cached RDDs (block sizes: {src})"
                + ("" if self.complete else "; INCOMPLETE (no application end)"))
