"""Helpers for the operations tests: reading Prometheus text, HTTP gets, test certificates."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str | bytes) -> list:
    if isinstance(text, bytes):
        text = text.decode()
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def metric_sum(text: str | bytes, name: str, **labels) -> float:
    """Sum of the samples called `name` whose labels include `labels`."""
    return sum(s.value for s in samples(text) if s.name == name and labels.items() <= s.labels.items())


def handler_metric(handler, name: str, **labels) -> float:
    return metric_sum(handler.features.get("metrics").render()[0], name, **labels)


def http_get(url: str, timeout_s: float = 10) -> tuple[int, str, str]:
    """(status, content type, body); HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read().decode()


def http_json(url: str) -> tuple[int, dict]:
    status, _, body = http_get(url)
    return status, json.loads(body)


@dataclass(frozen=True)
class CertFiles:
    ca: Path  # signs the client certificate
    cert: Path  # the server's self-signed certificate (for 127.0.0.1)
    key: Path
    client_cert: Path
    client_key: Path
    truststore: Path  # Java truststore holding `cert`
    truststore_password: str = "changeit"


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def make_test_certs(root: Path) -> CertFiles:
    """A self-signed server certificate, a CA with one client certificate, and a Java truststore."""
    root.mkdir(parents=True, exist_ok=True)
    certs = CertFiles(
        ca=root / "ca.pem",
        cert=root / "server.pem",
        key=root / "server.key",
        client_cert=root / "client.pem",
        client_key=root / "client.key",
        truststore=root / "truststore.jks",
    )
    ca_key = root / "ca.key"
    _run(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=hmsproxy-test-ca",
        "-keyout",
        str(ca_key),
        "-out",
        str(certs.ca),
    )
    _run(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        str(certs.key),
        "-out",
        str(certs.cert),
    )
    csr = root / "client.csr"
    _run(
        "openssl",
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=hmsproxy-test-client",
        "-keyout",
        str(certs.client_key),
        "-out",
        str(csr),
    )
    _run(
        "openssl",
        "x509",
        "-req",
        "-days",
        "2",
        "-in",
        str(csr),
        "-CA",
        str(certs.ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-out",
        str(certs.client_cert),
    )
    _run(
        "keytool",
        "-importcert",
        "-noprompt",
        "-alias",
        "hmsproxy",
        "-file",
        str(certs.cert),
        "-keystore",
        str(certs.truststore),
        "-storepass",
        certs.truststore_password,
        "-storetype",
        "JKS",
    )
    return certs
