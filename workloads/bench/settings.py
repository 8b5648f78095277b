"""What a benchmark measures: which workloads, policies, cache fractions and repeats, checked when
constructed, so that a Bench never starts on settings it cannot run."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import workloads
from spark_plugin.config import BY_NAME, LIVE_POLICIES as LIVE
from workloads.bench.stats import PLAIN
from workloads.bench.variants import BENCH_SUFFIXES, described

REFS = ("online", "profile")


def _benchable(policy: str) -> bool:
    """A live policy, bare or with a variant that changes its conf (`variants.BENCH_SUFFIXES`);
    the others measure the brain's cost: `workloads.overhead`."""
    base, _, suffix = policy.partition("+")
    return base in LIVE and suffix in BENCH_SUFFIXES


@dataclass(frozen=True)
class Settings:
    """What to measure, checked on construction (the CLI's flags, or a test's)."""
    out: Path
    workloads: list[str]
    policies: list[str]
    fractions: list[float]
    repeat: int = 3
    scales: dict[str, int] = field(default_factory=dict)
    kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    seed: int = 42
    refs: str = "online"  # "profile": the calibration trace is spark.lrc.profile
    verify: bool = False  # the workloads' driver-side self-checks in every run
    run_timeout: float = 900.0
    simulate: bool = True
    unlimited: bool = True  # the repeated, interleaved `unlimited` cell (plugin off, ample memory)

    def __post_init__(self) -> None:
        for w in self.workloads:
            workloads.get(w)
        for w in list(self.scales) + list(self.kwargs):
            if w not in self.workloads:
                raise SystemExit(f"--scale/--kw name {w!r} is not in --workloads")
        bad = [p for p in self.policies if p != PLAIN and not _benchable(p)]
        if bad:
            raise SystemExit(f"unknown live policies {bad}; valid: {', '.join(LIVE)}, each "
                             f"optionally with {described(BENCH_SUFFIXES)}; and {PLAIN} (Spark "
                             f"without spark-lrc at the same cache fraction)")
        if any(not 0 < f for f in self.fractions):
            raise SystemExit("cache fractions must be > 0")
        if self.repeat < 1:
            raise SystemExit("--repeat must be >= 1")
        if self.refs not in REFS:
            raise SystemExit(f"--refs must be one of {', '.join(REFS)}")

    def record(self) -> dict:
        """The settings as results.json keeps them."""
        return {"workloads": self.workloads, "policies": self.policies,
                "cache_fractions": self.fractions, "repeat": self.repeat,
                "scales": {w: self.scales.get(w, 1) for w in self.workloads},
                "kwargs": {w: self.kwargs.get(w, {}) for w in self.workloads},
                "seed": self.seed, "refs": self.refs, "verify": self.verify,
                "unlimited_repeats": self.repeat if self.unlimited else 0,
                "admit_default": BY_NAME["spark.lrc.admit"].default,
                "working_set": "peak bytes cached at once in the calibration trace"}
