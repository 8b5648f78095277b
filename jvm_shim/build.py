"""Build the spark-lrc JVM shim jar with ``javac`` against the jars of the installed pyspark.

The jar is cached under ``$SPARK_LRC_CACHE`` (default ``~/.cache/spark-lrc``) by a hash of the
Java sources, the settings' defaults and the Spark version, and written by atomic rename so
concurrent builds are safe. The defaults of ``spark.lrc.*`` come from their one registry,
``spark_plugin/config.py``, and go into the jar as a resource (the JVM side keeps no copy).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

JAVA_ROOT = Path(__file__).resolve().parent / "java"
DEFAULTS_RESOURCE = "org/sparklrc/lrc-defaults.properties"  # read by Settings.java
JAVAC_MISSING = (
    "javac not found: install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless) "
    "or put its bin/ on PATH (or set JAVA_HOME); the spark-lrc shim is compiled from source "
    "against the jars of the installed pyspark."
)


class ShimBuildError(RuntimeError):
    """The shim jar could not be built (missing JDK, compilation error, no pyspark)."""


def pyspark_jars_dir() -> Path:
    try:
        import pyspark
    except ImportError as e:  # pragma: no cover - pyspark is a dependency
        raise ShimBuildError("pyspark is not installed: pip install pyspark") from e
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not jars.is_dir():
        raise ShimBuildError(f"pyspark has no jars directory at {jars}")
    return jars


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def sources() -> list[Path]:
    return sorted(JAVA_ROOT.rglob("*.java"))


def defaults_properties() -> str:
    """`spark.lrc.*` defaults from the Python registry, as a Java properties file."""
    from spark_plugin.config import KEYS

    return "".join(f"{k.name}={k.default}\n" for k in KEYS if k.default is not None)


def source_hash() -> str:
    h = hashlib.sha256()
    for src in sources():
        h.update(str(src.relative_to(JAVA_ROOT)).encode())
        h.update(b"\0")
        h.update(src.read_bytes())
        h.update(b"\0")
    h.update(defaults_properties().encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    env = os.environ.get("SPARK_LRC_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "spark-lrc"


def jar_target() -> Path:
    return cache_dir() / f"spark-lrc-shim-{spark_version()}-{source_hash()}.jar"


def find_tool(name: str) -> str | None:
    """`name` from PATH, else from $JAVA_HOME/bin."""
    found = shutil.which(name)
    if found:
        return found
    home = os.environ.get("JAVA_HOME")
    if home:
        cand = Path(home) / "bin" / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def _pack(classes: Path, out: Path) -> None:
    """Jar everything under `classes` (class files and resources)."""
    jar_tool = find_tool("jar")
    if jar_tool:
        res = subprocess.run([jar_tool, "cf", str(out), "-C", str(classes), "."],
                             capture_output=True, text=True)
        if res.returncode == 0:
            return
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: spark-lrc\r\n\r\n")
        for f in sorted(p for p in classes.rglob("*") if p.is_file()):
            zf.write(f, f.relative_to(classes).as_posix())


def compile_jar(srcs: list[Path], target: Path, resources: dict[str, str] | None = None,
                what: str = "the spark-lrc shim") -> Path:
    """javac `srcs` against the installed pyspark's jars (plus `resources`: jar path -> text) into
    the jar `target`, written by atomic rename. Raises ShimBuildError."""
    javac = find_tool("javac")
    if javac is None:
        raise ShimBuildError(JAVAC_MISSING)
    jars = pyspark_jars_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="spark-lrc-build-", dir=target.parent) as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        cmd = [javac, "--release", "17", "-nowarn", "-encoding", "UTF-8", "-d", str(classes),
               "-cp", str(jars / "*"), *map(str, srcs)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise ShimBuildError(f"javac failed to compile {what}:\n" + res.stdout + res.stderr)
        for name, text in (resources or {}).items():
            (classes / name).parent.mkdir(parents=True, exist_ok=True)
            (classes / name).write_text(text, encoding="ISO-8859-1")
        part = Path(tmp) / "out.jar"
        _pack(classes, part)
        os.replace(part, target)  # atomic: concurrent builders each rename a complete jar
    return target


def build(force: bool = False) -> Path:
    """Compile and pack the shim jar (cached); returns its path. Raises ShimBuildError."""
    target = jar_target()
    if target.is_file() and not force:
        return target
    return compile_jar(sources(), target, {DEFAULTS_RESOURCE: defaults_properties()})


def app_jar(java_dir: Path, name: str) -> Path:
    """A Java application (every .java under `java_dir`) compiled against pyspark's jars, cached
    by a hash of its sources: the benchmark's and the tests' JVM applications."""
    srcs = sorted(Path(java_dir).rglob("*.java"))
    h = hashlib.sha256(spark_version().encode())
    for src in srcs:
        h.update(src.read_bytes())
    target = cache_dir() / f"{name}-{spark_version()}-{h.hexdigest()[:16]}.jar"
    return target if target.is_file() else compile_jar(srcs, target, what=name)


def jar_path(build: bool = True) -> Path:
    """Path of the shim jar for the installed pyspark; builds it if needed (unless build=False,
    which raises FileNotFoundError when it is not built yet)."""
    target = jar_target()
    if target.is_file():
        return target
    if not build:
        raise FileNotFoundError(f"spark-lrc shim jar not built yet: {target} "
                                "(run `python -m jvm_shim build`)")
    return globals()["build"]()


def classpath(jar: Path | None = None) -> str:
    """Shim jar plus pyspark's jars, for running the shim's own Java mains (the benchmark)."""
    jar = jar or jar_path()
    return os.pathsep.join([str(jar), str(pyspark_jars_dir() / "*")])


def run_bench(sizes: list[int] | None = None, bench: str = "EvictionBench") -> str:
    """Runs org.sparklrc.bench.<bench> (EvictionBench: cached block counts; ReplyBench: the
    changed RDD's partition counts); returns its Markdown table."""
    java = find_tool("java")
    if java is None:
        raise ShimBuildError("java not found: install a JDK 17 (e.g. apt-get install "
                             "openjdk-17-jdk-headless)")
    cmd = [java, "-Xmx1g", "-cp", classpath(), f"org.sparklrc.bench.{bench}",
           *[str(s) for s in (sizes or [])]]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise ShimBuildError(f"{bench} failed:\n" + res.stdout + res.stderr)
    return res.stdout
