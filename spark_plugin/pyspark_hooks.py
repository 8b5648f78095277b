"""The PySpark internals spark-lrc relies on, in one place.

PySpark has no public hook for "a SparkContext started" or "it is about to stop", and a
`SparkSession.Builder` does not expose the options set on it. These three functions are the only
code that touches `Builder._options`, `SparkContext._do_init` and a context's `stop`: if a PySpark
release renames them, this module is what changes.
"""
from __future__ import annotations

import functools
from typing import Any, Callable


def is_builder(x: Any) -> bool:
    """A `SparkSession.Builder` (not yet a session)."""
    return hasattr(x, "_options") and hasattr(x, "getOrCreate")


def builder_options(builder: Any) -> dict[str, str]:
    """The confs set on a builder so far (a copy)."""
    return dict(builder._options)


_after_init: list[Callable[[Any], None]] = []


def after_context_init(callback: Callable[[Any], None]) -> None:
    """Call `callback(sc)` after every SparkContext of this process has started (once per callback).

    The callback runs inside the SparkContext constructor; an exception from it propagates, so
    callbacks catch their own.
    """
    if callback in _after_init:
        return
    _after_init.append(callback)
    if len(_after_init) > 1:
        return
    from pyspark import SparkContext

    original = SparkContext._do_init

    @functools.wraps(original)
    def do_init_then_callbacks(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        for cb in list(_after_init):
            cb(self)
        return result

    SparkContext._do_init = do_init_then_callbacks


def around_context_stop(sc: Any, before: Callable[[], None], after: Callable[[], None]) -> None:
    """Call `before()` as `sc.stop()` (also through `SparkSession.stop()`) begins, while the
    context still runs, and `after()` right after it, even if the stop raised: Spark's listeners
    see the application end in between. `before` must not raise."""
    stop = sc.stop

    @functools.wraps(stop)
    def stop_around(*args: Any, **kwargs: Any) -> Any:
        before()
        try:
            return stop(*args, **kwargs)
        finally:
            after()

    sc.stop = stop_around
