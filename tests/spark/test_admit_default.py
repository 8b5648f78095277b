"""spark.lrc.admit=auto, the default: executors admit stores by rank under crd, the default policy
(measured live with admission: results/latest/), and not under the papers' lrc, lerc and mrd; an
explicit value wins. Read from the executor's installed map, so the conf takes its real path
(driver plugin init -> executor plugin -> `Settings.admit()`); `session` sets admit=false for
the shim's other tests, so each case names its value (that auto is the built-in default, in the
jar's lrc-defaults.properties too, is tests/unit/test_plugin_config.py's)."""
from __future__ import annotations

import pytest

from conftest import BASE_CONF
from jvm_shim.testing import session, stop_jvm

pytestmark = pytest.mark.spark


TRACE = {"spark.lrc.tracePath": "TRACE"}  # the test's own tmp_path


@pytest.mark.parametrize("conf, on, counts", [
    ({"spark.lrc.admit": "auto", "spark.lrc.countValues": "auto"}, True, False),  # the defaults
    ({"spark.lrc.policy": "lrc", **TRACE}, False, True),
    ({"spark.lrc.admit": "false", **TRACE, "spark.lrc.countValues": "false"}, False, False)],
    ids=["default-crd", "lrc-traced", "crd-admit-false-count-false"])
def test_executors_admit_by_rank_under_crd_unless_told_not_to(conf, on, counts, tmp_path):
    """And spark.lrc.countValues=auto: serialized blocks' values are counted when a trace is
    recorded (ValueCount), not otherwise; an explicit value wins."""
    stop_jvm()  # a JVM launched by an earlier module keeps its spark.lrc.* confs: the default
    conf = {k: str(tmp_path / "t.parquet") if v == "TRACE" else v for k, v in conf.items()}
    spark = session("local[1]", {**BASE_CONF, **conf}, app_name="admit-default")
    try:
        probe = spark.sparkContext._jvm.org.sparklrc.bench.CopyGuardProbe
        assert probe.admitOn() is on
        assert probe.countValuesOn() is counts
    finally:
        stop_jvm()  # the next case's session must not inherit this JVM's spark.lrc.* confs
