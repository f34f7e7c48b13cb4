"""The `dependent` config section and the lineage events' shape and sinks."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from hmsproxy.features.dependent.config import DependentConfig, LineageConfig
from hmsproxy.features.dependent.lineage import Dataset, LineageSink, run_event
from tests.unit.test_config import assert_error, own, own_error

PRIMARY = "primary-meta-store: {name: p, remote-meta-store-uris: 'thrift://h:9083'}\n"


def test_the_section_is_read_and_checked(tmp_path):
    assert own(tmp_path, PRIMARY).sections.get("dependent", DependentConfig()) == DependentConfig()
    config = own(tmp_path, PRIMARY + "dependent: {lineage: {file: /tmp/l.jsonl, timeout-s: 0.5}}\n")
    assert config.sections["dependent"].lineage == LineageConfig(file="/tmp/l.jsonl", timeout_s=0.5)
    error = own_error(tmp_path, PRIMARY + "dependent: {lineage: {http: 'ftp://x'}}\n")
    assert_error(error, "hmsproxy.yml", "dependent.lineage.http", "must be an http:// or https:// URL")


def test_an_event_names_inputs_outputs_and_what_broke():
    event = run_event(
        "DROP TABLE t",
        "drop-table",
        "bob",
        [Dataset("hive://p", "shop.events", "ds=1/hr=2", "file:/w/ds=1/hr=2")],
        [Dataset("hive://p", "shop.daily", "ds=1")],
        "gone",
    )
    assert event["eventType"] == "COMPLETE" and event["job"] == {"namespace": "hmsproxy", "name": "DROP TABLE t"}
    assert event["run"]["facets"]["hmsproxy"] == {"_producer": event["producer"], "action": "drop-table", "user": "bob", "problem": "gone"}
    assert event["inputs"][0]["facets"]["storage"]["location"] == "file:/w/ds=1/hr=2"
    assert event["outputs"][0] == {
        "namespace": "hive://p",
        "name": "shop.daily",
        "facets": {"partition": {"_producer": event["producer"], "spec": "ds=1"}},
    }


def test_the_sinks_write_lines_and_post_events(tmp_path):
    received = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(201)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    sink = LineageSink()
    try:
        config = LineageConfig(file=str(tmp_path / "l.jsonl"), http=f"http://127.0.0.1:{server.server_port}/api/v1/lineage")
        events = [run_event("job", "publish", None, [], []) for _ in range(2)]
        for e in events:
            sink.emit(config, e)
        assert [json.loads(line) for line in (tmp_path / "l.jsonl").read_text().splitlines()] == events == received
        sink.emit(LineageConfig(http="http://127.0.0.1:1/nothing", timeout_s=0.5), events[0])  # an unreachable sink is logged only
    finally:
        sink.close()
        server.shutdown()
        server.server_close()
