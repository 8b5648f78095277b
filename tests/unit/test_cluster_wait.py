"""MiniCluster waits through a master web UI that answers before its JSON is ready.

CI once saw Jetty return an empty 200 body to `/json/` while the master was starting; the wait
loop must treat that like "not listening yet", not crash the benchmark."""
import http.server
import json
import threading

import pytest

from workloads.cluster import ClusterError, MiniCluster


class _Flaky(http.server.BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        body = self.bodies.pop(0) if len(self.bodies) > 1 else self.bodies[0]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def flaky_ui(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    mc = MiniCluster(base_dir=tmp_path, timeout=5)
    mc.webui_port = server.server_address[1]
    yield mc
    server.shutdown()


def test_wait_survives_empty_and_partial_bodies(flaky_ui):
    _Flaky.bodies = [b"", b"{\"workers\": [", json.dumps({"workers": [{"state": "ALIVE"}]}).encode()]
    flaky_ui._wait(lambda st: flaky_ui._alive_workers(st) >= 1, "a worker")
    assert _Flaky.bodies == [json.dumps({"workers": [{"state": "ALIVE"}]}).encode()]


def test_wait_times_out_with_the_last_error(flaky_ui):
    _Flaky.bodies = [b""]
    flaky_ui.timeout = 1
    with pytest.raises(ClusterError, match="Expecting value"):
        flaky_ui._wait(lambda st: True, "the master's web UI")
