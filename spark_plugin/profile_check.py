"""`spark.lrc.profile` checked before Spark starts: a profile the user names but that cannot be
read fails like a bad policy name (`spark-lrc-submit` exits 2, `configure` raises), instead of
the brain finding out later and leaving the application on Spark's LRU.

The check is what the brain does with the profile when it starts (`lrc.trace.load_trace`, then
`lrc.planner.Planner(profile=...)`), so a profile that passes here loads there too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .config import LrcConfigError, LrcSettings


def check_profile(settings: LrcSettings, submit_opts: Sequence[str] = ()) -> None:
    """Raise LrcConfigError naming the file and the problem if ``settings.profile`` (a trace or
    a Spark event log) cannot be loaded; nothing to do without a profile. ``submit_opts``:
    spark-submit's options: in cluster deploy mode the driver (and the file system the path
    refers to) is elsewhere, so the profile is not checked here."""
    profile = settings.profile
    if not profile or _cluster_mode(submit_opts):
        return
    from lrc.planner import Planner
    from lrc.trace import load_trace

    path = Path(profile)  # as the brain will open it (no ~ expansion there either)
    try:
        trace = load_trace(path)
    except ValueError as e:  # the loaders' documented error: the message names the problem
        msg = str(e).removeprefix(f"{path}: ")  # the path once is enough
        raise LrcConfigError(f"spark.lrc.profile: cannot load {path}: {msg}") from None
    except Exception as e:  # anything else (a loader bug, a file system error) is still the profile's
        raise LrcConfigError(f"spark.lrc.profile: cannot load {path}: "
                             f"{type(e).__name__}: {e}") from None
    try:
        Planner(settings.policy, profile=trace, peer_mode=settings.peer_mode)
    except Exception as e:
        raise LrcConfigError(f"spark.lrc.profile: {path} loads but cannot be used as a profile: "
                             f"{type(e).__name__}: {e}") from None


def _cluster_mode(opts: Sequence[str]) -> bool:
    opts = list(opts)
    for i, a in enumerate(opts):
        nxt = opts[i + 1] if i + 1 < len(opts) else ""
        if (a == "--deploy-mode" and nxt == "cluster") or a == "--deploy-mode=cluster":
            return True
        if a == "--conf" and nxt.replace(" ", "") == "spark.submit.deployMode=cluster":
            return True
    return False
