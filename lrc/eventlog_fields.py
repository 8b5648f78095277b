"""Typed access to the fields of Spark's JsonProtocol events, with the range checks that keep a
malformed or hostile event log from becoming a wrong trace: each failure is a FieldError (a
ValueError) naming the field."""
from __future__ import annotations

from typing import Any

MAX_ID = 2**31 - 1  # Spark's ids, partitions and task counts are Java ints

# events a trace does not use, known so that they are not reported as unknown
IGNORED_EVENTS = {
    "SparkListenerLogStart", "SparkListenerApplicationStart", "SparkListenerApplicationEnd",
    "SparkListenerExecutorAdded", "SparkListenerExecutorRemoved",
    "SparkListenerBlockManagerRemoved", "SparkListenerTaskStart",
    "SparkListenerTaskGettingResult",
    "SparkListenerExecutorMetricsUpdate", "SparkListenerStageExecutorMetrics",
    "SparkListenerSpeculativeTaskSubmitted", "SparkListenerUnschedulableTaskSetAdded",
    "SparkListenerUnschedulableTaskSetRemoved", "SparkListenerExecutorExcluded",
    "SparkListenerExecutorUnexcluded", "SparkListenerExecutorExcludedForStage",
    "SparkListenerNodeExcluded", "SparkListenerNodeUnexcluded", "SparkListenerNodeExcludedForStage",
    "SparkListenerExecutorBlacklisted", "SparkListenerExecutorUnblacklisted",
    "SparkListenerNodeBlacklisted", "SparkListenerNodeUnblacklisted",
    "SparkListenerExecutorBlacklistedForStage", "SparkListenerNodeBlacklistedForStage",
    "SparkListenerMiscellaneousProcessAdded",
}


class FieldError(ValueError):
    """A field of an event is missing or out of range (message names it)."""


def get_field(obj: Any, key: str) -> Any:
    if not isinstance(obj, dict):
        raise FieldError(f"expected an object holding {key!r}, got {type(obj).__name__}")
    if key not in obj:
        raise FieldError(f"field {key!r} is missing")
    return obj[key]


def int_field(obj: Any, key: str, lo: int = 0, hi: int = MAX_ID) -> int:
    v = get_field(obj, key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise FieldError(f"field {key!r} must be an integer, got {v!r}"[:200])
    if not lo <= v <= hi:
        raise FieldError(f"field {key!r} = {v} is out of range [{lo}, {hi}]")
    return v


def str_field(obj: Any, key: str, default: str | None = None) -> str:
    if default is not None and (not isinstance(obj, dict) or key not in obj):
        return default
    v = get_field(obj, key)
    if v is None and default is not None:
        return default
    if not isinstance(v, str):
        raise FieldError(f"field {key!r} must be a string, got {v!r}"[:200])
    return v


def list_field(obj: Any, key: str) -> list:
    v = get_field(obj, key)
    if not isinstance(v, list):
        raise FieldError(f"field {key!r} must be a list, got {type(v).__name__}")
    return v


def storage_level(obj: Any) -> str:
    """JsonProtocol's storage level object -> the name spark-lrc's shim gives it."""
    if not isinstance(obj, dict):
        raise FieldError("field 'Storage Level' must be an object")
    mem, disk = bool(obj.get("Use Memory")), bool(obj.get("Use Disk"))
    off, deser = bool(obj.get("Use Off Heap")), bool(obj.get("Deserialized"))
    rep = obj.get("Replication", 1)
    if isinstance(rep, bool) or not isinstance(rep, int) or not 0 <= rep <= 40:
        raise FieldError(f"storage level replication {rep!r} is out of range")
    if not (mem or disk) or rep == 0:
        return "NONE"
    if off:
        base = "OFF_HEAP"
    elif mem and disk:
        base = "MEMORY_AND_DISK" if deser else "MEMORY_AND_DISK_SER"
    elif mem:
        base = "MEMORY_ONLY" if deser else "MEMORY_ONLY_SER"
    else:
        base = "DISK_ONLY"
    return f"{base}_{rep}" if rep > 1 else base


def gpus_per_task(e: Any) -> float:
    """A SparkListenerResourceProfileAdded event's GPUs per task (its task request named
    "gpu", as the shim reads a live profile; 0 if none)."""
    req = get_field(e, "Task Resource Requests")
    if not isinstance(req, dict):
        raise FieldError("field 'Task Resource Requests' must be an object")
    gpu = req.get("gpu")
    if gpu is None:
        return 0.0
    amount = get_field(gpu, "Amount")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not 0 <= amount <= 1e6:
        raise FieldError(f"GPU amount {amount!r} must be a number in [0, 1e6]"[:200])
    return float(amount)


def id_list(values: list, what: str) -> list[int]:
    """``values``, checked to be ids (whole numbers in [0, MAX_ID]); FieldError naming ``what``."""
    for p in values:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= MAX_ID:
            raise FieldError(f"{what} {p!r} is not valid"[:200])
    return values
