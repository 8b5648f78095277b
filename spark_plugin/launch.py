"""Runs an unmodified PySpark application with the spark-lrc brain attached.

`spark-lrc-submit` hands this file to spark-submit as the primary resource, with the real
application and its arguments after it. We install the SparkContext hook and run the
application as `__main__`, exactly as spark-submit would have. The root logger stays the
application's: spark-lrc's own loggers go to Spark's log (`spark_plugin.logs`), because
spark-submit merges a Python driver's stderr into its stdout.
"""
from __future__ import annotations

import logging
import runpy
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: launch.py APP.py [APP ARGS...]")
    app = Path(argv[0]).resolve()
    try:  # our records to Spark's log (stderr by default), never to the application's stdout
        from spark_plugin.logs import to_spark_log

        to_spark_log()
    except Exception:  # noqa: BLE001 - logging stays Python's default (stderr)
        pass
    try:
        from spark_plugin.session import install_context_hook

        install_context_hook()
    except Exception as e:  # never keep the application from running
        logging.getLogger("spark_lrc").warning("spark-lrc: not attached (%s); Spark's LRU stays in effect", e)
    sys.argv = [str(app), *argv[1:]]
    sys.path.insert(0, str(app.parent))
    runpy.run_path(str(app), run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
