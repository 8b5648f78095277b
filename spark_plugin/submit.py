"""`spark-lrc-submit`: spark-submit with spark-lrc turned on, for unmodified applications.

    spark-lrc-submit [spark-submit options] [--policy NAME] [--lrc-conf KEY=VALUE ...] app.py [args]

Adds the shim jar and `spark.plugins`, validates every `spark.lrc.*` setting before anything
starts, and (for a Python application) runs it through `spark_plugin/launch.py` so that the
brain attaches when the application creates its SparkContext. A JVM application (.jar) gets
the shim alone: its executors log that no brain is attached and keep Spark's LRU.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from .config import LrcConfigError, LrcSettings

# spark-submit options that take no value; every other --option takes one.
_FLAGS = {"--verbose", "-v", "--supervise", "--help", "-h", "--version", "--usage-error"}


def split_args(argv: list[str]) -> tuple[list[str], dict[str, str], str | None, list[str]]:
    """-> (spark-submit options, spark.lrc.* confs, primary resource, application args)."""
    opts: list[str] = []
    lrc: dict[str, str] = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--policy":
            lrc["spark.lrc.policy"] = argv[i + 1]
            i += 2
        elif a.startswith("--policy="):
            lrc["spark.lrc.policy"] = a.split("=", 1)[1]
            i += 1
        elif a == "--lrc-conf":
            k, _, v = argv[i + 1].partition("=")
            lrc[k if k.startswith("spark.lrc.") else f"spark.lrc.{k}"] = v
            i += 2
        elif a == "--conf" and argv[i + 1].startswith("spark.lrc."):
            k, _, v = argv[i + 1].partition("=")
            lrc[k] = v
            i += 2
        elif a in _FLAGS or (a.startswith("--") and "=" in a):
            opts.append(a)
            i += 1
        elif a.startswith("-"):
            opts += argv[i:i + 2]
            i += 2
        else:
            return opts, lrc, a, argv[i + 1:]
    return opts, lrc, None, []


def _merge_option(opts: list[str], name: str, value: str) -> list[str]:
    """Append `value` to a comma-separated spark-submit option (--jars), or add the option."""
    out = list(opts)
    for i, a in enumerate(out[:-1]):
        if a == name:
            out[i + 1] = f"{out[i + 1]},{value}"
            return out
    return out + [name, value]


def _plugins_option(opts: list[str], plugin: str) -> list[str]:
    out = list(opts)
    for i, a in enumerate(out[:-1]):
        if a == "--conf" and out[i + 1].startswith("spark.plugins="):
            out[i + 1] = f"{out[i + 1]},{plugin}"
            return out
    return out + ["--conf", f"spark.plugins={plugin}"]


def build_command(argv: list[str]) -> list[str]:
    from jvm_shim import jar_path
    from .config import PLUGIN_CLASS

    opts, lrc, primary, app_args = split_args(argv)
    if primary is None:
        raise LrcConfigError("no application given: spark-lrc-submit [options] [--policy NAME] app.py [args]")
    settings = LrcSettings.from_conf(lrc)  # unknown keys / values fail here, before Spark starts
    opts = _merge_option(opts, "--jars", str(jar_path(build=True)))
    opts = _plugins_option(opts, PLUGIN_CLASS)
    for k, v in settings.as_spark_conf().items():
        opts += ["--conf", f"{k}={v}"]
    if primary.endswith(".py"):
        launcher = str(Path(__file__).with_name("launch.py"))
        return [spark_submit(), *opts, launcher, primary, *app_args]
    return [spark_submit(), *opts, primary, *app_args]


def spark_submit() -> str:
    home = os.environ.get("SPARK_HOME")
    if home and Path(home, "bin", "spark-submit").exists():
        return str(Path(home, "bin", "spark-submit"))
    import pyspark

    local = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    return str(local) if local.exists() else (shutil.which("spark-submit") or "spark-submit")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        cmd = build_command(argv)
    except LrcConfigError as e:
        print(f"spark-lrc-submit: {e}", file=sys.stderr)
        sys.exit(2)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
