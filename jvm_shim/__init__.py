"""spark-lrc JVM shim: Java sources (org.sparklrc) plus the helper that builds them into a jar
against the installed pyspark's jars. See docs/DESIGN.md section 3 for the bridge contract."""
from __future__ import annotations

from .build import JAVAC_MISSING, ShimBuildError, build, jar_path

PLUGIN_CLASS = "org.sparklrc.LrcPlugin"
LISTENER_CLASS = "org.sparklrc.LrcListener"
BRIDGE_CLASS = "org.sparklrc.LrcBridge"

__all__ = ["BRIDGE_CLASS", "JAVAC_MISSING", "LISTENER_CLASS", "PLUGIN_CLASS", "ShimBuildError",
           "build", "jar_path"]
