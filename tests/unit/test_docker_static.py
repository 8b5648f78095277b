"""Static checks of docker/: the compose file parses and is consistent with the repo and with
itself; the Dockerfile's COPY sources exist and it follows basic hadolint rules. No Docker."""
from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DOCKER / "docker-compose.yml").read_text())


def _cmd(service: dict) -> list[str]:
    c = service["command"]
    return shlex.split(c) if isinstance(c, str) else [str(x) for x in c]


def _opt(cmd: list[str], flag: str) -> str:
    assert flag in cmd, f"{flag} missing in {cmd}"
    return cmd[cmd.index(flag) + 1]


def _mem_mb(v) -> int:
    from workloads.cluster import parse_memory_mb
    return parse_memory_mb(str(v))


def test_services_present(compose):
    assert {"master", "worker1", "worker2", "submitter"} <= set(compose["services"])


def test_workers_use_the_masters_port_and_host(compose):
    svcs = compose["services"]
    m = _cmd(svcs["master"])
    url = f"spark://{_opt(m, '--host')}:{_opt(m, '--port')}"
    workers = [s for n, s in svcs.items() if n.startswith("worker")]
    assert len(workers) == 2
    for w in workers:
        cmd = _cmd(w)
        assert cmd[:4] == ["python", "-m", "workloads.cluster", "worker"]
        assert cmd[4] == url
        assert "master" in w.get("depends_on", [])
    sub = _cmd(svcs["submitter"])
    assert _opt(sub, "--master") == url


def test_commands_parse_with_the_launcher_cli(compose):
    from workloads.cluster import parser

    for name in ("master", "worker1", "worker2"):
        cmd = _cmd(compose["services"][name])
        assert cmd[:3] == ["python", "-m", "workloads.cluster"]
        args = parser().parse_args(cmd[3:])
        assert args.cmd in ("master", "worker")


def test_entry_modules_exist(compose):
    modules = {_cmd(s)[2] for s in compose["services"].values() if _cmd(s)[:2] == ["python", "-m"]}
    assert "workloads.cluster" in modules
    assert "workloads.bench" in modules
    for mod in modules:
        assert importlib.util.find_spec(mod) is not None, mod


def test_submitter_command_parses_with_the_bench_cli(compose):
    from workloads.bench import parser

    cmd = _cmd(compose["services"]["submitter"])
    assert cmd[:3] == ["python", "-m", "workloads.bench"]
    args = parser().parse_args(cmd[3:])
    assert args.master == "spark://master:7077" and args.repeat == 3 and args.render is None


def test_worker_memory_fits_container_limits(compose):
    for name, s in compose["services"].items():
        assert "mem_limit" in s, f"{name} has no mem_limit"
        if name.startswith("worker"):
            spark_mem = _mem_mb(_opt(_cmd(s), "--memory"))
            assert spark_mem + 512 <= _mem_mb(s["mem_limit"]), name


def test_submitter_writes_results_to_a_bind_mount(compose):
    sub = compose["services"]["submitter"]
    cmd = _cmd(sub)
    out = _opt(cmd, "--out")
    mounts = [v.split(":") for v in sub["volumes"]]
    hits = [(src, dst) for src, dst, *_ in mounts if out.startswith(dst)]
    assert hits, f"--out {out} is not on a mounted volume"
    src = (DOCKER / hits[0][0]).resolve()
    assert src == ROOT / "results"
    for flag, want in (("--workloads", "pagerank,cc,zip,sql"), ("--policies", "lru,lrc,lerc,crd"),
                       ("--cache-fraction", "0.3,0.5,0.7"), ("--repeat", "3")):
        assert _opt(cmd, flag) == want
    import workloads
    assert set(_opt(cmd, "--workloads").split(",")) <= set(workloads.WORKLOADS)


def test_build_context_and_dockerfile(compose):
    for s in compose["services"].values():
        ctx = (DOCKER / s["build"]["context"]).resolve()
        assert ctx == ROOT and (ctx / s["build"]["dockerfile"]).is_file()
    text = (DOCKER / "Dockerfile").read_text()
    lines = [l.strip() for l in re.sub(r"\\\n", " ", text).splitlines()
             if l.strip() and not l.strip().startswith("#")]
    assert lines[0].startswith("FROM python:3.11-slim")
    copies = [l.split()[1:-1] for l in lines if l.startswith("COPY ")]
    assert copies
    for srcs in copies:
        for src in srcs:
            assert (ROOT / src).exists(), f"COPY source {src} missing"
    for l in (l for l in lines if l.startswith("RUN ") and "apt-get install" in l):
        # hadolint DL3009 / DL3015 / DL3014
        assert "--no-install-recommends" in l and "-y" in l
        assert "rm -rf /var/lib/apt/lists" in l
        assert "openjdk-17-jdk-headless" in l
    assert not any(l.startswith("FROM") and ":latest" in l for l in lines)  # DL3007
    assert "workloads.cluster" in text
