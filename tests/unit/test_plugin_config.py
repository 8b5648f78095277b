"""spark.lrc.* settings and spark-lrc-submit argument handling (no JVM needed)."""
import re
from pathlib import Path

import pytest

from spark_plugin.config import KEYS, LrcConfigError, LrcSettings, markdown_table
from spark_plugin.submit import split_args

README = Path(__file__).resolve().parents[2] / "README.md"


def documented_table(readme: str) -> dict[str, tuple[str, str]]:
    """README's configuration table: key -> (default, meaning)."""
    section = readme.split("### Configuration", 1)[1]
    rows = re.findall(r"^\| `(spark\.lrc\.[^`]+)` \| `([^`]*)` \| (.*) \|$", section, re.M)
    return {key: (default, meaning) for key, default, meaning in rows}


def registry_table() -> dict[str, tuple[str, str]]:
    return {k.name: (str(k.default), k.doc) for k in KEYS if not k.internal}


def test_defaults_match_the_documented_table():
    assert documented_table(README.read_text()) == registry_table()


def test_the_readme_comparison_sees_a_changed_default_a_missing_key_and_a_changed_meaning():
    readme = README.read_text()
    assert documented_table(readme.replace("| `1000` |", "| `2000` |")) != registry_table()
    no_policy = "\n".join(line for line in readme.splitlines() if "`spark.lrc.policy`" not in line)
    assert documented_table(no_policy) != registry_table()
    assert documented_table(readme.replace("LERC peer groups", "Peer groups")) != registry_table()


def test_the_printed_table_is_the_readme_table_and_hides_test_hooks():
    assert markdown_table() in README.read_text()
    hooks = [k for k in KEYS if k.internal]
    assert [k.name for k in hooks] == ["spark.lrc.stateRead", "spark.lrc.predictKinds",
                                       "spark.lrc.predictRecurring", "spark.lrc.predictReuse",
                                       "spark.lrc.priceShares", "spark.lrc.replanMissing",
                                       "spark.lrc.storeRank",
                                       "spark.lrc.forceInstallFailure"]
    assert all(k.name.split(".")[-1] not in markdown_table() for k in hooks)
    assert LrcSettings.from_conf({"spark.lrc.forceInstallFailure": "true"}).force_install_failure


def test_resolved_settings_carry_every_default_as_a_spark_conf():
    """What configure()/spark-lrc-submit set, and the driver plugin forwards to executors."""
    conf = LrcSettings.from_conf({}).as_spark_conf()
    assert conf == {k.name: k.default for k in KEYS if k.default is not None}


def test_keywords_override_spark_conf_and_are_validated():
    s = LrcSettings.from_conf({"spark.lrc.policy": "lru"}, policy="LERC", table_wait_ms=50)
    assert (s.policy, s.table_wait_ms) == ("lerc", 50)
    assert s.as_spark_conf()["spark.lrc.tableWaitMs"] == "50"


@pytest.mark.parametrize("conf, words", [
    ({"spark.lrc.policy": "fifo"}, ["spark.lrc.policy", "lru, lrc, lerc, mrd", "fifo"]),
    ({"spark.lrc.policy": "min"}, ["spark.lrc.policy"]),  # the offline bound cannot run live
    ({"spark.lrc.bufferSize": "0"}, ["spark.lrc.bufferSize", ">= 1"]),
    ({"spark.lrc.tableWaitMs": "soon"}, ["whole number"]),
    ({"spark.lrc.polcy": "lrc"}, ["unknown configuration key", "spark.lrc.polcy"]),
    ({"spark.lrc.gpu.costWeight": "-1"}, ["spark.lrc.gpu.costWeight", ">= 0", "-1"]),
    ({"spark.lrc.gpu.costWeight": "inf"}, ["spark.lrc.gpu.costWeight", "finite"]),
    ({"spark.lrc.gpu.costWeight": "lots"}, ["spark.lrc.gpu.costWeight", "a number", "lots"]),
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
    assert LrcSettings.from_conf({"spark.executor.memory": "1g"}).policy == "crd"


def test_admission_is_on_for_crd_by_default_and_never_under_lru():
    """spark.lrc.admit=auto (the default): crd, the policy measured with admission, admits by
    rank; lrc, lerc and mrd stay as their papers define them; an explicit value wins; under lru
    every block ranks the same, so nothing is ever refused."""
    from spark_plugin.config import admits

    assert LrcSettings.from_conf({}).admit == "auto"
    assert admits("crd") and admits("crd", "AUTO ") and not admits("crd", "false")
    assert [p for p in ("lrc", "lerc", "mrd", "lru") if admits(p)] == []
    assert admits("lrc", "true") and not admits("lru", "true")
    with pytest.raises(LrcConfigError, match="spark.lrc.admit"):
        LrcSettings.from_conf({"spark.lrc.admit": "sometimes"})


def test_submit_args_split_options_policy_app_and_app_args():
    argv = ["--master", "local[2]", "--verbose", "--conf", "spark.ui.enabled=false",
            "--policy", "lerc", "--conf", "spark.lrc.publishMs=100", "--lrc-conf", "tracePath=/tmp/t.parquet",
            "app.py", "--scale", "2", "--policy", "x"]
    opts, lrc, primary, app_args = split_args(argv)
    assert opts == ["--master", "local[2]", "--verbose", "--conf", "spark.ui.enabled=false"]
    assert lrc == {"spark.lrc.policy": "lerc", "spark.lrc.publishMs": "100",
                   "spark.lrc.tracePath": "/tmp/t.parquet"}
    assert primary == "app.py"
    assert app_args == ["--scale", "2", "--policy", "x"]  # the application's own args stay its own


def test_submit_without_application_has_no_primary():
    assert split_args(["--master", "local"])[2] is None


def test_the_gpu_cost_weight_reaches_the_planner_as_a_number():
    assert LrcSettings.from_conf({"spark.lrc.gpu.costWeight": "2.5"}).gpu_cost_weight == 2.5
    assert LrcSettings.from_conf({}).gpu_cost_weight == 8.0
    assert LrcSettings.from_conf(gpu_cost_weight=0).as_spark_conf()["spark.lrc.gpu.costWeight"] == "0"
