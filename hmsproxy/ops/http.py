"""The operations HTTP port: /metrics, /healthz and /readyz.

/healthz answers 200 as long as the process serves HTTP at all; /readyz runs
the handler's readiness checks and answers 200 only if all pass (503 otherwise),
with a JSON body listing each check.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hmsproxy.ops.readiness import readiness_of

log = logging.getLogger(__name__)


class OpsHttpServer:
    def __init__(self, handler, host: str, port: int):
        self.handler = handler
        self._http = ThreadingHTTPServer((host, port), _make_request_handler(handler))
        self._http.daemon_threads = True
        self.host = host
        self.port = self._http.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> OpsHttpServer:
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True, name="ops-http")
        self._thread.start()
        log.info("operations endpoint on %s (/metrics, /healthz, /readyz)", self.url)
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def _make_request_handler(handler):
    readiness = readiness_of(handler)
    metrics = handler.features.get("metrics")

    class RequestHandler(BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                if metrics is None:
                    return self._send(404, b"metrics are not enabled\n", "text/plain")
                body, content_type = metrics.render()
                return self._send(200, body, content_type)
            if path == "/healthz":
                return self._json(200, {"status": "ok"})
            if path == "/readyz":
                ready, results = readiness.run()
                checks = [{"name": r.name, "ok": r.ok, "detail": r.detail} for r in results]
                return self._json(200 if ready else 503, {"ready": ready, "checks": checks})
            self._send(404, b"not found: try /metrics, /healthz or /readyz\n", "text/plain")

        def _json(self, status: int, payload) -> None:
            self._send(status, (json.dumps(payload) + "\n").encode(), "application/json")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):  # scrapes every few seconds would flood the log
            log.debug("%s %s", self.address_string(), format % args)

    return RequestHandler
