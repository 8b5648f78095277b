"""`python -m spark_plugin doctor` gives its verdict from a real run on separate executor JVMs."""
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


def test_doctor_confirms_the_ordered_map_is_installed_and_obeyed():
    out = subprocess.run([sys.executable, "-m", "spark_plugin", "doctor"],
                         capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    assert "installed on 2/2 executors" in out.stdout
    assert "verdict: OK" in out.stdout


def test_doctor_fails_clearly_without_javac(tmp_path):
    # A PATH with java but no javac: the doctor must say what is missing and exit non-zero.
    import shutil

    (tmp_path / "java").symlink_to(shutil.which("java"))
    out = subprocess.run([sys.executable, "-m", "spark_plugin", "doctor"], capture_output=True, text=True,
                         timeout=120, env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert out.returncode == 1
    assert "javac not found: install a JDK 17" in out.stdout
    assert "verdict: FAIL" in out.stdout
