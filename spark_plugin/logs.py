"""spark-lrc's Python log records into Spark's log, never into the application's stdout.

spark-submit runs a Python driver with its stderr merged into its stdout (Spark's PythonRunner:
``redirectErrorStream(true)``, both copied to the JVM's ``System.out``), so a Python warning
written to stderr lands in the application's output. `SparkLogHandler` sends each record to the
driver JVM's slf4j logger of the same name instead: Spark's log4j2 configuration decides where it
goes (stderr with Spark's defaults, or wherever the user's ``log4j2.properties`` says) and at
which level. While no JVM is reachable (before the SparkContext starts, after the gateway is
gone) warnings and errors go to the stderr of spark-submit's JVM (our parent process) when we are
its Python driver, else to our own stderr.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any, TextIO

LOGGERS = ("spark_lrc", "lrc")
_FMT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _driver_jvm() -> Any:
    """The py4j view of the driver JVM once a SparkContext has started in this process."""
    pyspark = sys.modules.get("pyspark")
    sc_class = getattr(pyspark, "SparkContext", None) if pyspark is not None else None
    return getattr(sc_class, "_jvm", None)


def _fallback_stream() -> TextIO:
    """spark-submit's own stderr when we are its Python driver (PythonRunner's child: its
    gateway variables are set), else ours."""
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        try:
            return open(f"/proc/{os.getppid()}/fd/2", "w", buffering=1)
        except OSError:
            pass
    return sys.stderr


class SparkLogHandler(logging.Handler):
    """Forwards records to the driver JVM's logger ``record.name`` (see module docstring)."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self._plain = logging.Formatter("%(message)s")
        self._stamped = logging.Formatter(_FMT)
        self._stream: TextIO | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._to_jvm(record):
                return
            if record.levelno >= logging.WARNING:
                if self._stream is None:
                    self._stream = _fallback_stream()
                self._stream.write(self._stamped.format(record) + "\n")
                self._stream.flush()
        except Exception:  # logging never fails the caller
            self.handleError(record)

    def _to_jvm(self, record: logging.LogRecord) -> bool:
        jvm = _driver_jvm()
        if jvm is None:
            return False
        try:
            logger = jvm.org.slf4j.LoggerFactory.getLogger(record.name)
            msg = self._plain.format(record)
            if record.levelno >= logging.ERROR:
                logger.error(msg)
            elif record.levelno >= logging.WARNING:
                logger.warn(msg)
            elif record.levelno >= logging.INFO:
                logger.info(msg)
            else:
                logger.debug(msg)
            return True
        except Exception:  # the gateway is gone or closing: the fallback stream
            return False


def to_spark_log(level: int = logging.INFO, loggers: tuple[str, ...] = LOGGERS) -> None:
    """Route spark-lrc's loggers to `SparkLogHandler` only (not to the root logger, whose
    handlers belong to the application). Idempotent."""
    for name in loggers:
        lg = logging.getLogger(name)
        if not any(isinstance(h, SparkLogHandler) for h in lg.handlers):
            lg.addHandler(SparkLogHandler())
        lg.setLevel(level)
        lg.propagate = False
