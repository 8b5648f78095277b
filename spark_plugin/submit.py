"""`spark-lrc-submit`: spark-submit with spark-lrc turned on, for unmodified applications.

    spark-lrc-submit [spark-submit options] [--policy NAME] [--lrc-conf KEY=VALUE ...] app.py [args]
    spark-lrc-submit [spark-submit options] [--policy NAME] --class MAIN app.jar [args]
    spark-lrc-submit [spark-submit options] [--policy NAME] --sql [spark-sql options]
    spark-lrc-submit [--policy NAME] --print-confs      # the --conf lines for any Spark launcher

Adds the shim jar and `spark.plugins` and validates every `spark.lrc.*` setting before anything
starts. A Python application runs through `spark_plugin/launch.py`, so the brain attaches in-process
when it creates its SparkContext; any other driver (a jar, `--sql`, spark-shell or the Thrift
server with `--print-confs`) gets the brain as a sidecar process the driver plugin starts with
this interpreter (`spark.lrc.python`).
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from .config import LrcConfigError, LrcSettings
from .profile_check import check_profile

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


SQL_CLI = "org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver"


def lrc_conf_args(lrc: dict[str, str]) -> list[str]:
    """`--conf` arguments for every `spark.lrc.*` value (validated: unknown keys or values fail
    here, before Spark starts), with this interpreter as the sidecar's."""
    confs = LrcSettings.from_conf(lrc).as_spark_conf()
    confs.setdefault("spark.lrc.python", sys.executable)
    return [a for k, v in confs.items() for a in ("--conf", f"{k}={v}")]


def print_confs(lrc: dict[str, str]) -> str:
    """Everything a Spark launcher (spark-shell, start-thriftserver.sh) needs, as `--conf`s."""
    from jvm_shim import jar_path
    from .config import PLUGIN_CLASS

    return " ".join(["--conf", f"spark.jars={jar_path(build=True)}", "--conf",
                     f"spark.plugins={PLUGIN_CLASS}", *lrc_conf_args(lrc)])


def build_command(argv: list[str]) -> list[str]:
    from jvm_shim import jar_path
    from .config import PLUGIN_CLASS

    sql = "--sql" in argv
    argv = [a for a in argv if a != "--sql"]
    opts, lrc, primary, app_args = split_args(argv)
    if sql:  # spark-sql's own options (-e, -f, ...) pass through to its driver
        opts, primary, app_args = opts + ([primary] if primary else []) + app_args, None, []
    elif primary is None:
        raise LrcConfigError("no application given: spark-lrc-submit [options] [--policy NAME] "
                             "app.py|app.jar [args], or --sql")
    check_profile(LrcSettings.from_conf(lrc), opts)  # a named profile that cannot load fails here
    opts = _merge_option(opts, "--jars", str(jar_path(build=True)))
    opts = _plugins_option(opts, PLUGIN_CLASS) + lrc_conf_args(lrc)
    if sql:
        return [spark_submit(), "--class", SQL_CLI, "--name", "Spark SQL CLI Driver", *opts]
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
        if "--print-confs" in argv:
            _, lrc, _, _ = split_args([a for a in argv if a != "--print-confs"])
            print(print_confs(lrc))
            return
        cmd = build_command(argv)
    except LrcConfigError as e:
        print(f"spark-lrc-submit: {e}", file=sys.stderr)
        sys.exit(2)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    root = str(Path(__file__).resolve().parents[1])  # spark_plugin and lrc, for the sidecar
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]])
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
