"""A run's variant: a policy, optionally with a suffix naming what else the run changes
(`crd+admit`: spark.lrc.admit on). The benchmark and the overhead runner read it the same way, so a
variant measured by one is the same runs' conf in the other."""
from __future__ import annotations

# what a variant's suffix changes: where the brain runs, or no brain at all (the JVM shim alone)
SUFFIXES = {"": {}, "sidecar": {"spark.lrc.sidecar": "true"}, "shim": {"spark.lrc.brain": "false"},
            "trace": {},  # +trace: the spec names a trace path (the overhead runner)
            "admit": {"spark.lrc.admit": "true"},
            # +noadmit: admission off where the default (auto) would turn it on (what it costs)
            "noadmit": {"spark.lrc.admit": "false"},
            # +throttle: count changes published at most every 100 ms (what a table per task costs)
            "throttle": {"spark.lrc.publishMs": "100"},
            # +nocount: serialized blocks' values not counted (what counting costs a traced run)
            "nocount": {"spark.lrc.countValues": "false"}}


def variant_conf(variant: str) -> tuple[str, dict[str, str]]:
    """`lru+sidecar` -> ("lru", {"spark.lrc.sidecar": "true"}); a bare policy runs the brain
    where a PySpark driver runs it by default (in-process); `+shim` loads the shim without one."""
    policy, _, suffix = variant.partition("+")
    if suffix not in SUFFIXES:
        raise SystemExit(f"unknown variant {variant!r} (POLICY, POLICY+sidecar, POLICY+shim, "
                         f"POLICY+trace, POLICY+admit, POLICY+noadmit, POLICY+throttle or POLICY+nocount)")
    return policy, dict(SUFFIXES[suffix])
