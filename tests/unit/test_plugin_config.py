"""spark.lrc.* settings and spark-lrc-submit argument handling (no JVM needed)."""
import pytest

from spark_plugin.config import KEYS, LrcConfigError, LrcSettings, markdown_table
from spark_plugin.submit import split_args


def test_defaults_match_the_documented_table():
    s = LrcSettings.from_conf({})
    assert s.policy == "lrc" and s.peer_mode == "task" and s.table_wait_ms == 1000
    table = markdown_table()
    for k in KEYS:
        assert f"`{k.name}`" in table


def test_keywords_override_spark_conf_and_are_validated():
    s = LrcSettings.from_conf({"spark.lrc.policy": "lru"}, policy="LERC", poll_ms=50)
    assert (s.policy, s.poll_ms) == ("lerc", 50)
    assert s.as_spark_conf()["spark.lrc.pollMs"] == "50"


@pytest.mark.parametrize("conf, words", [
    ({"spark.lrc.policy": "fifo"}, ["spark.lrc.policy", "lru, lrc, lerc, mrd", "fifo"]),
    ({"spark.lrc.policy": "min"}, ["spark.lrc.policy"]),  # the offline bound cannot run live
    ({"spark.lrc.pollMs": "0"}, ["spark.lrc.pollMs", ">= 1"]),
    ({"spark.lrc.tableWaitMs": "soon"}, ["whole number"]),
    ({"spark.lrc.polcy": "lrc"}, ["unknown configuration key", "spark.lrc.polcy"]),
])
def test_bad_settings_fail_with_a_message_naming_the_problem(conf, words):
    with pytest.raises(LrcConfigError) as e:
        LrcSettings.from_conf(conf)
    for w in words:
        assert w in str(e.value)


def test_unknown_keyword_is_an_error():
    with pytest.raises(LrcConfigError, match="unknown option 'polcy'"):
        LrcSettings.from_conf({}, polcy="lrc")


def test_other_spark_keys_are_ignored():
    assert LrcSettings.from_conf({"spark.executor.memory": "1g"}).policy == "lrc"


def test_submit_args_split_options_policy_app_and_app_args():
    argv = ["--master", "local[2]", "--verbose", "--conf", "spark.ui.enabled=false",
            "--policy", "lerc", "--conf", "spark.lrc.pollMs=100", "--lrc-conf", "tracePath=/tmp/t.parquet",
            "app.py", "--scale", "2", "--policy", "x"]
    opts, lrc, primary, app_args = split_args(argv)
    assert opts == ["--master", "local[2]", "--verbose", "--conf", "spark.ui.enabled=false"]
    assert lrc == {"spark.lrc.policy": "lerc", "spark.lrc.pollMs": "100",
                   "spark.lrc.tracePath": "/tmp/t.parquet"}
    assert primary == "app.py"
    assert app_args == ["--scale", "2", "--policy", "x"]  # the application's own args stay its own


def test_submit_without_application_has_no_primary():
    assert split_args(["--master", "local"])[2] is None
