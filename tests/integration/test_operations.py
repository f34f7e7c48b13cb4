"""Operations: metrics, the HTTP ops port, audit, reload, TLS and workers, against real metastores."""

from __future__ import annotations

import json
import os
import re
import signal
import ssl
import subprocess
import time
from contextlib import ExitStack
from dataclasses import replace

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

from hmsproxy.config.model import AuditConfig, TlsConfig
from hmsproxy.dev.ports import free_port
from hmsproxy.ops.http import OpsHttpServer
from hmsproxy.protocol import idl
from tests.integration.test_cli import HMSPROXY, stop, wait_for_line
from tests.integration.test_proxy_calls import make_table
from tests.support.federation import federation_yaml, leave_out_after, prefixed_config
from tests.support.ops import handler_metric, http_get, http_json, make_test_certs, metric_sum
from tests.support.served import served
from tests.support.stopped import sigstop

hive = idl.hive


def client_for(port: int, **kwargs):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000, **kwargs)


@pytest.fixture
def own_proxy():
    """`own_proxy(config)`: an in-process proxy (and its handler) only this test uses."""
    with ExitStack() as stack:
        yield lambda config, **server_kwargs: stack.enter_context(served(config, **server_kwargs))


def poll(fn, timeout_s: float = 30, interval_s: float = 0.2):
    """fn()'s first truthy answer within timeout_s, else its last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = fn()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(interval_s)


# --------------------------------------------------------------------------- metrics


def test_metrics_count_calls_by_method_backend_and_outcome(proxy, proxy_client, federated_dbs):
    h = proxy.handler
    ok = dict(method="get_database", backend="waggle", outcome="ok")
    missing = dict(method="get_database", backend="primary", outcome="NoSuchObjectException")
    before = {k: handler_metric(h, "hmsproxy_requests_total", **v) for k, v in {"ok": ok, "missing": missing}.items()}
    hist_before = handler_metric(h, "hmsproxy_request_duration_seconds_count", method="get_database", backend="waggle")

    assert proxy_client.get_database("waggle_sales").name == "waggle_sales"
    assert proxy_client.get_database("waggle_sales").name == "waggle_sales"
    with pytest.raises(hive.NoSuchObjectException):
        proxy_client.get_database("no_such_db_for_metrics")
    assert "default" in proxy_client.get_all_databases()

    assert handler_metric(h, "hmsproxy_requests_total", **ok) == before["ok"] + 2
    assert handler_metric(h, "hmsproxy_requests_total", **missing) == before["missing"] + 1
    assert handler_metric(h, "hmsproxy_requests_total", method="get_all_databases", backend="*", outcome="ok") >= 1
    assert handler_metric(h, "hmsproxy_request_duration_seconds_count", method="get_database", backend="waggle") == hist_before + 2
    # Backend state comes from the registry; this client's connection is open right now.
    assert handler_metric(h, "hmsproxy_backend_up", backend="primary") == 1
    assert handler_metric(h, "hmsproxy_backend_up", backend="waggle") == 1
    assert handler_metric(h, "hmsproxy_client_connections") >= 1
    assert "hmsproxy_store_errors_total 0.0" in h.features.get("metrics").render()[0].decode()

    # A write access control refuses counts as `denied` (docs/operations.md lists it).
    denied = dict(method="create_table", backend="waggle", outcome="denied")
    denied_before = handler_metric(h, "hmsproxy_requests_total", **denied)
    with pytest.raises(hive.MetaException, match="not allowed"):
        proxy_client.create_table(make_table("waggle_hr", "denied_for_metrics"))
    assert handler_metric(h, "hmsproxy_requests_total", **denied) == denied_before + 1


def test_client_connections_gauge_follows_connects_and_disconnects(own_proxy, metastores):
    server = own_proxy(prefixed_config(metastores[0].uri, metastores[1].uri))
    clients = [client_for(server.port) for _ in range(3)]
    for c in clients:
        c.getName()
    assert handler_metric(server.handler, "hmsproxy_client_connections") == 3
    for c in clients:
        c.close()
    assert poll(lambda: handler_metric(server.handler, "hmsproxy_client_connections") == 0, 10)


# --------------------------------------------------------------------------- ops HTTP


def test_ops_http_follows_a_frozen_and_a_stopped_primary(own_proxy, private_metastore, metastores):
    """/healthz stays 200; /readyz and the fan-out timeout counter follow the real primary."""
    ms = private_metastore
    config = prefixed_config(ms.uri, metastores[1].uri)
    # The stopped primary is left out after 500 ms; waggle keeps a far deadline, however busy the machine.
    config = leave_out_after(config, config.primary, deadline_ms=500)
    server = own_proxy(config)
    ops = OpsHttpServer(server.handler, "127.0.0.1", 0).start()
    try:
        status, body = http_json(f"{ops.url}/readyz")
        assert status == 200 and body["ready"] is True
        checks = {c["name"]: c["ok"] for c in body["checks"]}
        assert checks["config"] is True and checks["primary"] is True
        status, ctype, text = http_get(f"{ops.url}/metrics")
        assert status == 200 and ctype.startswith("text/plain")
        assert "# TYPE hmsproxy_requests_total counter" in text and "hmsproxy_client_connections 0.0" in text

        client = client_for(server.port)
        try:
            assert "default" in client.get_all_databases()
            # A hung primary: connections open, no answers. sigstop returns once every thread has
            # stopped: kill() alone returns before, and a thread still running answered once.
            sigstop(ms.pid)
            try:
                with pytest.raises(hive.MetaException, match="primary metastore 'primary' failed: no answer within 500 ms"):
                    client.get_all_databases()
                text = http_get(f"{ops.url}/metrics")[2]
                assert metric_sum(text, "hmsproxy_fanout_timeouts_total", backend="primary") == 1
                assert metric_sum(text, "hmsproxy_fanout_timeouts_total", backend="waggle") == 0
                assert metric_sum(text, "hmsproxy_requests_total", method="get_all_databases", outcome="unavailable") == 1
                # Readiness answers from a short cache: wait (bounded) until it has seen the hung primary.
                assert poll(lambda: http_json(f"{ops.url}/readyz")[0] == 503, 30)
                status, body = http_json(f"{ops.url}/readyz")
                assert status == 503 and body["ready"] is False
                primary = next(c for c in body["checks"] if c["name"] == "primary")
                assert primary["ok"] is False and "primary" in primary["detail"]
                assert http_get(f"{ops.url}/healthz")[0] == 200
            finally:
                os.kill(ms.pid, signal.SIGCONT)
            assert poll(lambda: http_json(f"{ops.url}/readyz")[0] == 200, 30)
            assert "default" in client.get_all_databases()
        finally:
            client.close()

        ms.stop()
        assert poll(lambda: http_json(f"{ops.url}/readyz")[0] == 503, 10)
        body = http_json(f"{ops.url}/readyz")[1]
        assert "unavailable" in next(c for c in body["checks"] if c["name"] == "primary")["detail"]
        assert http_get(f"{ops.url}/healthz")[0] == 200
        assert http_get(f"{ops.url}/nope")[0] == 404
        text = http_get(f"{ops.url}/metrics")[2]
        assert metric_sum(text, "hmsproxy_fanout_timeouts_total", backend="primary") == 1
    finally:
        ops.stop()


def test_features_add_readiness_checks(own_proxy, metastores):
    from hmsproxy.ops.readiness import CheckResult
    from hmsproxy.pipeline.platform import Feature

    class NeedsSomething(Feature):
        name = "needs_something"

        def readiness_checks(self):
            return [lambda: CheckResult("extra", False, "something it needs is unreachable")]

    server = own_proxy(prefixed_config(metastores[0].uri, metastores[1].uri))
    server.handler.install(NeedsSomething)
    ops = OpsHttpServer(server.handler, "127.0.0.1", 0).start()
    try:
        status, body = http_json(f"{ops.url}/readyz")
        assert status == 503
        assert [c["name"] for c in body["checks"]][:3] == ["draining", "config", "primary"]  # draining first: ops/drain.py
        assert body["checks"][-1] == {"name": "extra", "ok": False, "detail": "something it needs is unreachable"}
        assert all(c["ok"] for c in body["checks"][:-1])
    finally:
        ops.stop()


# --------------------------------------------------------------------------- audit


def test_audit_writes_one_json_line_per_call_and_follows_its_level(own_proxy, metastores, tmp_path):
    log_file = tmp_path / "audit.log"
    base = prefixed_config(metastores[0].uri, metastores[1].uri)
    config = replace(base, audit=AuditConfig(enabled=True, file=str(log_file), level="all", max_arg_chars=40))
    server = own_proxy(config)
    client = client_for(server.port)
    db = f"audit_{os.getpid()}"
    try:
        client.set_ugi("alice", ["analysts"])
        client.get_database("default")
        with pytest.raises(hive.NoSuchObjectException):
            client.get_database("no_such_db_for_audit")
        lines = [json.loads(line) for line in log_file.read_text().splitlines()]
        assert [r["method"] for r in lines] == ["set_ugi", "get_database", "get_database"]
        ok, missing = lines[1], lines[2]
        assert set(ok) == {"ts", "client", "user", "method", "db", "table", "backend", "ms", "outcome", "error", "args"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", ok["ts"])
        assert ok["client"].startswith("127.0.0.1:") and ok["user"] == "alice"
        assert (ok["db"], ok["backend"], ok["outcome"], ok["error"]) == ("default", "primary", "ok", None)
        assert ok["args"] == "get_database_args(name='default')" and ok["ms"] >= 0
        assert missing["outcome"] == "NoSuchObjectException" and "no_such_db_for_audit" in missing["error"]

        server.handler.apply_config(replace(config, audit=replace(config.audit, level="writes")))
        client.get_all_databases()  # a read: not logged at level "writes"
        client.create_database(hive.Database(name=db, description="x" * 100, locationUri=None, parameters={}))
        client.alter_database(db, client.get_database(db))
        writes = [json.loads(line) for line in log_file.read_text().splitlines()[3:]]
        assert [(r["method"], r["db"], r["outcome"]) for r in writes] == [("create_database", db, "ok"), ("alter_database", db, "ok")]
        assert writes[0]["args"].endswith("...") and len(writes[0]["args"]) == 43  # cut at max-arg-chars

        server.handler.apply_config(replace(config, audit=replace(config.audit, level="errors")))
        client.get_database("default")
        with pytest.raises(hive.NoSuchObjectException):
            client.get_database("no_such_db_for_audit")
        errors = [json.loads(line) for line in log_file.read_text().splitlines()[5:]]
        assert [(r["method"], r["outcome"]) for r in errors] == [("get_database", "NoSuchObjectException")]

        server.handler.apply_config(replace(config, audit=replace(config.audit, enabled=False)))
        with pytest.raises(hive.NoSuchObjectException):
            client.get_database("no_such_db_for_audit")
        assert len(log_file.read_text().splitlines()) == 6
    finally:
        client.close()
        backend = metastores[0].client()
        try:
            if db in backend.get_all_databases():
                backend.drop_database(db, True, True)
        finally:
            backend.close()


# --------------------------------------------------------------------------- serve: HTTP port, reload


def test_serve_reloads_on_hmsproxy_reload_and_keeps_old_config_when_bad(tmp_path, metastores, federated_dbs):
    port, pid_file, cfg = free_port(), tmp_path / "hmsproxy.pid", tmp_path / "hmsproxy.yml"
    values = dict(port=port, primary_uri=metastores[0].uri, federated_uri=metastores[1].uri, state_dir=tmp_path)
    cfg.write_text(federation_yaml(prefix="waggle_", **values))
    proc = subprocess.Popen(
        [*HMSPROXY, "serve", "--config", str(cfg), "--pid-file", str(pid_file), "--http-port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 60)
        ops_url = re.search(r"operations endpoint (http://\S+)", "".join(lines)).group(1)
        assert http_get(f"{ops_url}/healthz")[0] == 200
        assert http_json(f"{ops_url}/readyz")[0] == 200
        assert pid_file.read_text().strip() == str(proc.pid)

        client = client_for(port)  # stays open through both reloads
        try:
            assert "waggle_sales" in client.get_all_databases()
            cfg.write_text(federation_yaml(prefix="dw_", **values))
            out = subprocess.run([*HMSPROXY, "reload", "--pid-file", str(pid_file)], capture_output=True, text=True, timeout=60)
            assert out.returncode == 0 and str(proc.pid) in out.stdout
            wait_for_line(proc, "configuration reloaded", 30)
            names = client.get_all_databases()
            assert "dw_sales" in names and "waggle_sales" not in names

            cfg.write_text(federation_yaml(prefix="dw_", **values).replace("thrift://", "http://", 1))
            subprocess.run([*HMSPROXY, "reload", "--pid-file", str(pid_file)], check=True, capture_output=True, timeout=60)
            rejected = wait_for_line(proc, "reload rejected", 30)[-1]
            assert str(cfg) in rejected and "remote-meta-store-uris" in rejected and "thrift://host:port" in rejected
            assert "dw_sales" in client.get_all_databases()  # the old config still serves
            assert f"(pid {proc.pid})" in client.getStatusDetails()  # the same process all along
        finally:
            client.close()
        # Metrics of the running server saw those calls.
        text = http_get(f"{ops_url}/metrics")[2]
        assert metric_sum(text, "hmsproxy_requests_total", method="get_all_databases", backend="*") == 3
    finally:
        assert stop(proc) == 0
    assert not pid_file.exists()


def test_reload_without_a_server_says_why(tmp_path):
    out = subprocess.run([*HMSPROXY, "reload", "--pid-file", str(tmp_path / "none.pid")], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "none.pid" in out.stderr


# --------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_test_certs(tmp_path_factory.mktemp("certs"))


def test_tls_port_serves_tls_clients_and_survives_plain_ones(own_proxy, metastores, certs):
    config = prefixed_config(metastores[0].uri, metastores[1].uri)
    server = own_proxy(config, tls=TlsConfig(str(certs.cert), str(certs.key)))

    plain = client_for(server.port)
    with pytest.raises((TTransportException, TApplicationException, ConnectionError, OSError)):
        plain.get_all_databases()
    plain.close()

    client = client_for(server.port, cafile=str(certs.cert))  # verifies the certificate and 127.0.0.1
    try:
        assert "waggle_default" in client.get_all_databases()
        assert client.get_database("default").name == "default"
    finally:
        client.close()


def test_tls_with_client_ca_requires_a_client_certificate(own_proxy, metastores, certs):
    config = prefixed_config(metastores[0].uri, metastores[1].uri)
    server = own_proxy(config, tls=TlsConfig(str(certs.cert), str(certs.key), client_ca_file=str(certs.ca)))

    anonymous = client_for(server.port, cafile=str(certs.cert))
    with pytest.raises((TTransportException, ssl.SSLError, ConnectionError, OSError)):
        anonymous.get_all_databases()
    anonymous.close()

    ctx = ssl.create_default_context(cafile=str(certs.cert))
    ctx.load_cert_chain(str(certs.client_cert), str(certs.client_key))
    client = client_for(server.port, ssl_context=ctx)
    try:
        assert "default" in client.get_all_databases()
    finally:
        client.close()


# --------------------------------------------------------------------------- workers


def test_two_workers_share_the_port_reload_and_a_dead_one_is_replaced(tmp_path, metastores, federated_dbs):
    port, cfg, pid_file = free_port(), tmp_path / "hmsproxy.yml", tmp_path / "pid"
    values = dict(port=port, primary_uri=metastores[0].uri, federated_uri=metastores[1].uri, state_dir=tmp_path)
    cfg.write_text(federation_yaml(prefix="waggle_", **values))
    proc = subprocess.Popen(
        [*HMSPROXY, "serve", "--config", str(cfg), "--workers", "2", "--pid-file", str(pid_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    worker_pids = set()
    try:
        for _ in range(2):
            line = wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 60)[-1]
            worker_pids.add(int(re.search(r"\(pid (\d+)\)", line).group(1)))
        assert len(worker_pids) == 2 and proc.pid not in worker_pids

        def answering_pids(connections: int, expect_db: str) -> set[int]:
            pids = set()
            for _ in range(connections):  # each new connection lands on one worker
                c = client_for(port)
                try:
                    pids.add(int(re.search(r"\(pid (\d+)\)", c.getStatusDetails()).group(1)))
                    assert expect_db in c.get_all_databases()
                finally:
                    c.close()
            return pids

        assert answering_pids(40, "waggle_sales") == worker_pids

        # The parent passes SIGHUP on: every worker reloads.
        cfg.write_text(federation_yaml(prefix="dw_", **values))
        subprocess.run([*HMSPROXY, "reload", "--pid-file", str(pid_file)], check=True, capture_output=True, timeout=60)
        wait_for_line(proc, "configuration reloaded", 30)
        wait_for_line(proc, "configuration reloaded", 30)
        assert answering_pids(40, "dw_sales") == worker_pids

        victim = min(worker_pids)
        os.kill(victim, signal.SIGKILL)
        line = wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 60)[-1]
        replacement = int(re.search(r"\(pid (\d+)\)", line).group(1))
        worker_pids = (worker_pids - {victim}) | {replacement}
        assert answering_pids(40, "dw_sales") == worker_pids
    finally:
        assert stop(proc) == 0
    for pid in worker_pids:  # the parent stopped (and reaped) its workers before it exited
        assert not os.path.exists(f"/proc/{pid}")
