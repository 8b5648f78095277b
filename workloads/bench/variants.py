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
            "nocount": {"spark.lrc.countValues": "false"},
            # +nostate: no read kept for a recurring dataset's newest generation (the rule before)
            "nostate": {"spark.lrc.stateRead": "false"},
            # +nokind: predictions match jobs by call site alone (the rule before kinds)
            "nokind": {"spark.lrc.predictKinds": "false"},
            # +norecur: no recurring tail after the predicted cycle (the rule before)
            "norecur": {"spark.lrc.predictRecurring": "false"},
            # +noreuse: no read kept for a job's cached inputs while nothing is predicted
            "noreuse": {"spark.lrc.predictReuse": "false"},
            # +noreplan: a missing block planned through its inputs (the rule before)
            "noreplan": {"spark.lrc.replanMissing": "false"},
            # +wholecost: a rebuild priced at the running mean of whole task durations (the rule
            # before session 51; lrc.cost)
            "wholecost": {"spark.lrc.priceShares": "false"},
            # +nostorerank: crd ranks a store by the read it serves (the rule before session 53)
            "nostorerank": {"spark.lrc.storeRank": "false"}}
# suffixes only the overhead runner measures (where the brain runs, or none; a trace path)
OVERHEAD_ONLY = ("sidecar", "shim", "trace")
# the others change a live policy's conf: the benchmark runs them beside it
BENCH_SUFFIXES = tuple(s for s in SUFFIXES if s not in OVERHEAD_ONLY)


def described(suffixes) -> str:
    """`+admit (spark.lrc.admit=true), ...`: what each suffix sets, for help and error texts."""
    def one(s: str) -> str:
        conf = ", ".join(f"{k}={v}" for k, v in SUFFIXES[s].items())
        return f"+{s} ({conf})" if conf else f"+{s}"
    return ", ".join(one(s) for s in suffixes if s)


def variant_conf(variant: str) -> tuple[str, dict[str, str]]:
    """`lru+sidecar` -> ("lru", {"spark.lrc.sidecar": "true"}); a bare policy runs the brain
    where a PySpark driver runs it by default (in-process); `+shim` loads the shim without one."""
    policy, _, suffix = variant.partition("+")
    if suffix not in SUFFIXES:
        raise SystemExit(f"unknown variant {variant!r}: POLICY, or POLICY with one of "
                         f"{described(SUFFIXES)}")
    return policy, dict(SUFFIXES[suffix])
