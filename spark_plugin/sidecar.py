"""The brain of a driver that is not a PySpark process, run as that driver JVM's child.

The driver plugin (jvm_shim Sidecar.java) starts `python -m spark_plugin.sidecar` with the port
and secret of a py4j gateway it opened on loopback; its entry point is an `LrcBridge`, so the
brain is the same one a PySpark driver runs in-process, with the application's own settings.
Stdin is the lifeline: it reaches EOF when the application stops (or the driver dies), and the
brain then drains the last events, writes its stats and trace files, posts the stats to Spark's
event log and exits.
"""
from __future__ import annotations

import logging
import os
import sys

PORT_ENV = "SPARK_LRC_GATEWAY_PORT"  # Sidecar.PORT_ENV
SECRET_ENV = "SPARK_LRC_GATEWAY_SECRET"  # Sidecar.SECRET_ENV

log = logging.getLogger("spark_lrc")


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s (sidecar): %(message)s")
    try:
        port, secret = int(os.environ[PORT_ENV]), os.environ[SECRET_ENV]
    except (KeyError, ValueError):
        log.error("spark-lrc: the sidecar brain is started by the driver plugin, which sets %s "
                  "and %s; it is not meant to be run by hand", PORT_ENV, SECRET_ENV)
        return 2
    from py4j.java_gateway import GatewayParameters, JavaGateway

    from .bridge import JvmBridge
    from .brain import Brain
    from .config import LrcSettings

    gateway = JavaGateway(gateway_parameters=GatewayParameters(
        address="127.0.0.1", port=port, auth_token=secret, auto_field=False))
    try:
        bridge = JvmBridge(gateway.entry_point, gateway.java_gateway_server)
        brain = Brain(bridge, LrcSettings.from_conf(bridge.spark_conf())).start()
        sys.stdin.buffer.read()  # blocks until the driver closes the lifeline (or dies)
        brain.close()
        brain.post_summary()  # the driver's listener bus still runs: Spark stops it after us
        return 0
    except Exception as e:
        log.warning("spark-lrc: sidecar brain stopped, Spark's LRU stays in effect: %s", e)
        return 1
    finally:
        gateway.close()


if __name__ == "__main__":
    sys.exit(main())
