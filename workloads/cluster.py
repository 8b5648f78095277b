"""A local Spark standalone mini-cluster (a Master and N Workers as processes) and its CLI.

    with MiniCluster(workers=2, worker_memory="1g") as mc:
        spark = SparkSession.builder.master(mc.master_url).config(**mc.spark_conf()).getOrCreate()

    python -m workloads.cluster up --workers 2 --worker-memory 1g   # until Ctrl-C
    python -m workloads.cluster master --host 0.0.0.0 --port 7077   # docker entry points
    python -m workloads.cluster worker spark://master:7077 --memory 2g --cores 1

Each daemon runs `$SPARK_HOME/bin/spark-class org.apache.spark.deploy.{master.Master,worker.Worker}`
in its own process group (so teardown kills the JVM and anything it started, e.g. executors),
with its own log file and, for workers, its own work directory and memory limit.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


def private_spark_home(home: str | os.PathLike | None = None) -> Path:
    """A SPARK_HOME of our own (symlinks to pyspark's bin/jars/python/sbin) so that workers write
    their work directories there, never into site-packages. Default: `<repo>/.spark-home`."""
    import pyspark

    src = Path(pyspark.__file__).parent
    home = Path(home) if home else ROOT / ".spark-home"
    home.mkdir(parents=True, exist_ok=True)
    for name in ("bin", "jars", "python", "sbin"):
        link = home / name
        if not link.exists() and (src / name).exists():
            link.symlink_to(src / name)
    return home


def spark_env(spark_home: Path | None = None) -> dict[str, str]:
    """Environment for Spark daemons and drivers: private SPARK_HOME, this Python everywhere."""
    env = dict(os.environ)
    env["SPARK_HOME"] = str(spark_home or private_spark_home())
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return env


def local_cluster_master(workers: int = 2, cores: int = 1, memory_mb: int = 1024) -> str:
    """`local-cluster[N,C,M]`: separate executor JVMs without daemons (needs a SPARK_HOME with
    bin/ and jars/: call `private_spark_home()` and export it first). Fallback for tests."""
    return f"local-cluster[{workers},{cores},{memory_mb}]"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def parse_memory_mb(mem: str) -> int:
    """'1g' -> 1024, '512m' -> 512 (Spark's own notation)."""
    m = mem.strip().lower()
    units = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}
    if m[-1:] in units:
        return int(float(m[:-1]) * units[m[-1]])
    if m.endswith("b") and m[-2:-1] in units:
        return int(float(m[:-2]) * units[m[-2]])
    return int(m) // (1024 * 1024)  # plain bytes


def daemon_command(cls: str, args: list[str], spark_home: Path) -> list[str]:
    return [str(spark_home / "bin" / "spark-class"), cls, *args]


def master_args(host: str, port: int, webui_port: int) -> list[str]:
    return ["--host", host, "--port", str(port), "--webui-port", str(webui_port)]


def worker_args(master_url: str, memory: str, cores: int, work_dir: str | os.PathLike,
                webui_port: int, host: str | None = None) -> list[str]:
    args = [master_url, "--memory", memory, "--cores", str(cores), "--work-dir", str(work_dir),
            "--webui-port", str(webui_port)]
    return args + (["--host", host] if host else [])


class ClusterError(RuntimeError):
    pass


class MiniCluster:
    """A Spark standalone master plus `workers` workers on loopback, torn down on exit."""

    def __init__(self, workers: int = 2, worker_memory: str = "1g", worker_cores: int = 1,
                 host: str = "127.0.0.1", base_dir: str | os.PathLike | None = None,
                 spark_home: str | os.PathLike | None = None, timeout: float = 90.0,
                 daemon_memory: str = "256m",
                 worker_opts: "list[dict[str, str] | None] | None" = None):
        """`worker_opts[i]`: Spark confs of worker i alone (its own resources, e.g.
        `spark.worker.resource.gpu.amount` and a discovery script), as SPARK_WORKER_OPTS."""
        self.workers, self.worker_memory, self.worker_cores = workers, worker_memory, worker_cores
        self.worker_opts = list(worker_opts or [])
        self.host, self.timeout = host, timeout
        self.spark_home = private_spark_home(spark_home)
        self._own_dir = base_dir is None
        self.base_dir = Path(base_dir) if base_dir else Path(tempfile.mkdtemp(prefix="spark-lrc-mc-"))
        self.daemon_memory = daemon_memory  # heap of the daemons themselves, not of executors
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.port = self.webui_port = 0
        self._old_handlers: dict[int, object] = {}

    # ------------------------------------------------------------------ lifecycle
    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{self.host}:{self.webui_port}"

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def spark_conf(self, executor_memory: str | None = None) -> dict[str, str]:
        """Conf for a driver: one executor per worker, memory fitting the worker."""
        mem = executor_memory or f"{max(256, parse_memory_mb(self.worker_memory) - 128)}m"
        return {"spark.executor.memory": mem, "spark.executor.cores": str(self.worker_cores),
                "spark.cores.max": str(self.workers * self.worker_cores)}

    def _spawn(self, name: str, cls: str, args: list[str],
               opts: "dict[str, str] | None" = None) -> subprocess.Popen:
        log = self.base_dir / f"{name}.log"
        self.logs.append(log)
        env = spark_env(self.spark_home)
        if opts:
            env["SPARK_WORKER_OPTS"] = " ".join(f"-D{k}={v}" for k, v in opts.items())
        env["SPARK_DAEMON_MEMORY"] = self.daemon_memory
        env.setdefault("SPARK_LOCAL_IP", self.host)
        with open(log, "wb") as fh:
            proc = subprocess.Popen(daemon_command(cls, args, self.spark_home), stdout=fh,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                    cwd=self.base_dir, start_new_session=True)
        self.procs.append(proc)
        return proc

    def start(self) -> "MiniCluster":
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self._install_signal_handlers()
        try:
            self.port, self.webui_port = free_port(self.host), free_port(self.host)
            self._spawn("master", MASTER_CLASS, master_args(self.host, self.port, self.webui_port))
            self._wait(lambda st: True, "the master's web UI")
            for i in range(self.workers):
                work = self.base_dir / f"worker-{i}"
                work.mkdir(exist_ok=True)
                self._spawn(f"worker-{i}", WORKER_CLASS, worker_args(
                    self.master_url, self.worker_memory, self.worker_cores, work,
                    free_port(self.host), host=self.host),
                    self.worker_opts[i] if i < len(self.worker_opts) else None)
            self._wait(lambda st: self._alive_workers(st) >= self.workers,
                       f"{self.workers} workers to register")
        except BaseException:
            self.stop()
            raise
        return self

    def status(self) -> dict:
        with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=2) as r:
            return json.load(r)

    @staticmethod
    def _alive_workers(status: dict) -> int:
        return sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        last = None
        while time.monotonic() < deadline:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise ClusterError(f"a Spark daemon exited (code {dead[0].returncode}) while "
                                   f"waiting for {what}\n{self.log_tail()}")
            try:
                if ready(self.status()):
                    return
            except (OSError, ValueError) as e:
                # not listening yet, or Jetty answers before the JSON servlet is up
                # (an empty 200 body: seen once in CI as a JSONDecodeError)
                last = e
            time.sleep(0.3)
        raise ClusterError(f"timed out after {self.timeout:.0f}s waiting for {what} "
                           f"(last error: {last})\n{self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        out = []
        for log in self.logs:
            try:
                tail = log.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                tail = ["<no log>"]
            out.append(f"--- {log} ---\n" + "\n".join(tail))
        return "\n".join(out)

    def stop(self) -> None:
        """Kill every daemon's process group (SIGTERM, then SIGKILL) and wait for them."""
        for p in reversed(self.procs):
            _signal_group(p, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for p in self.procs:  # the group may hold executors even if the leader is gone
            _signal_group(p, signal.SIGKILL)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._restore_signal_handlers()
        if self._own_dir and not os.environ.get("SPARK_LRC_KEEP_CLUSTER_DIR"):
            shutil.rmtree(self.base_dir, ignore_errors=True)

    def __enter__(self) -> "MiniCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ signals
    def _install_signal_handlers(self) -> None:
        """SIGTERM/SIGHUP raise SystemExit so `with` blocks unwind and stop the daemons
        (Ctrl-C already raises KeyboardInterrupt). Only from the main thread."""
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                self._old_handlers[sig] = signal.signal(sig, _raise_exit)
            except (ValueError, OSError):
                pass

    def _restore_signal_handlers(self) -> None:
        for sig, old in self._old_handlers.items():
            try:
                signal.signal(sig, old)
            except (ValueError, OSError, TypeError):
                pass
        self._old_handlers.clear()


def _raise_exit(signum, _frame):
    raise SystemExit(128 + signum)


def _signal_group(p: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(p.pid, sig)  # start_new_session=True: pgid == pid
    except (ProcessLookupError, PermissionError):
        pass


# ---------------------------------------------------------------------- CLI

def _exec_daemon(cls: str, args: list[str]) -> None:
    """Replace this process by the daemon (containers: PID 1 gets the signals)."""
    home = Path(os.environ["SPARK_HOME"]) if os.environ.get("SPARK_HOME") else private_spark_home()
    env = spark_env(home)
    cmd = daemon_command(cls, args, home)
    print(" ".join(cmd), flush=True)
    os.execvpe(cmd[0], cmd, env)


def parser() -> argparse.ArgumentParser:
    """The CLI (also used by the docker files; tests parse their commands with it)."""
    ap = argparse.ArgumentParser(prog="python -m workloads.cluster", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a master and N workers here; Ctrl-C stops them")
    up.add_argument("--workers", type=int, default=2)
    up.add_argument("--worker-memory", default="1g")
    up.add_argument("--worker-cores", type=int, default=1)
    up.add_argument("--host", default="127.0.0.1")
    m = sub.add_parser("master", help="run a standalone master in the foreground")
    m.add_argument("--host", default="0.0.0.0")
    m.add_argument("--port", type=int, default=7077)
    m.add_argument("--webui-port", type=int, default=8080)
    w = sub.add_parser("worker", help="run a standalone worker in the foreground")
    w.add_argument("master_url", help="spark://HOST:PORT")
    w.add_argument("--memory", default="1g")
    w.add_argument("--cores", type=int, default=1)
    w.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "spark-worker"))
    w.add_argument("--webui-port", type=int, default=8081)
    w.add_argument("--host", default=None)
    return ap


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)

    if a.cmd == "master":
        _exec_daemon(MASTER_CLASS, master_args(a.host, a.port, a.webui_port))
    elif a.cmd == "worker":
        Path(a.work_dir).mkdir(parents=True, exist_ok=True)
        _exec_daemon(WORKER_CLASS, worker_args(a.master_url, a.memory, a.cores, a.work_dir,
                                               a.webui_port, a.host))
    else:
        try:
            with MiniCluster(a.workers, a.worker_memory, a.worker_cores, host=a.host) as mc:
                print(f"master: {mc.master_url}  web UI: {mc.webui_url}  logs: {mc.base_dir}",
                      flush=True)
                print("Ctrl-C to stop", flush=True)
                while all(p.poll() is None for p in mc.procs):
                    time.sleep(1)
                print("a daemon exited:\n" + mc.log_tail(), file=sys.stderr)
                return 1
        except KeyboardInterrupt:
            print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
