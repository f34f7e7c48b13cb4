"""A Waggle-Dance-shaped pair of files whose Kerberos is Waggle Dance's own `configuration-properties`
(HowToKerberize.md's keys), served by `hmsproxy serve --server-config --federation-config` in front of
a Kerberized Hive 2.3 metastore (the real KDC; test_kerberos_inbound.py's metastore, one for this module).

The server file's properties Kerberize the proxy's port (hive.server2.authentication.kerberos.*) and
every metastore client (hive.metastore.sasl.enabled, hive.metastore.kerberos.principal); a metastore's
own properties override them for that metastore: `waggle` names the metastore's principal without
`_HOST`, `wrong` a principal the realm lacks and is reported down with it. A Kerberos client gets
answers through both SASL layers; a plain Thrift client gets none.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TClient
from thriftpy2.transport import TSocket, TTransportException

from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.integration.test_cli import HMSPROXY, own_pid_file, stop, wait_for_line
from tests.integration.test_kerberos_inbound import HIVE, PROXY, kerberized, own_client, realm  # noqa: F401 - fixtures

hive = idl.hive


def _files(tmp_path, realm, metastore_uri: str, port: int):  # noqa: F811
    server = tmp_path / "waggle-dance-server.yml"
    server.write_text(
        f"port: {port}\n"
        "database-resolution: PREFIXED\n"
        "yaml-storage:\n"
        "  overwrite-config-on-shutdown: false\n"
        "configuration-properties:\n"
        "  hadoop.security.authentication: KERBEROS\n"
        "  hive.metastore.sasl.enabled: true\n"
        f"  hive.metastore.kerberos.principal: hive/_HOST@{realm.realm}\n"
        "  hive.server2.authentication: KERBEROS\n"
        f"  hive.server2.authentication.kerberos.principal: {realm.principal(PROXY)}\n"
        f"  hive.server2.authentication.kerberos.keytab: {realm.principals[PROXY]}\n"
        "  hadoop.kerberos.keytab.login.autorenewal.enabled: true\n"
    )
    federation = tmp_path / "waggle-dance-federation.yml"
    federation.write_text(
        "primary-meta-store:\n"
        "  name: primary\n"
        "  database-prefix: ''\n"
        f"  remote-meta-store-uris: {metastore_uri}\n"
        "  access-control-type: READ_AND_WRITE_AND_CREATE\n"
        "federated-meta-stores:\n"
        "- name: waggle\n"
        f"  remote-meta-store-uris: {metastore_uri}\n"
        "  configuration-properties:\n"
        f"    hive.metastore.kerberos.principal: {realm.principal(HIVE)}\n"
        "- name: wrong\n"
        f"  remote-meta-store-uris: {metastore_uri}\n"
        "  configuration-properties:\n"
        f"    hive.metastore.kerberos.principal: nosuch/_HOST@{realm.realm}\n"
    )
    return server, federation


def test_waggle_dances_kerberos_properties_serve_a_kerberized_federation(realm, kerberized, tmp_path):  # noqa: F811
    port = free_port()
    server, federation = _files(tmp_path, realm, kerberized.uri, port)
    args = ["--server-config", str(server), "--federation-config", str(federation)]
    env = {**os.environ, **realm.env()}
    checked = subprocess.run([*HMSPROXY, "check-config", *args], capture_output=True, text=True, timeout=60, env=env)
    assert checked.returncode == 0, checked.stderr
    assert "hadoop.kerberos.keytab.login.autorenewal.enabled: no meaning here" in checked.stderr, checked.stderr

    serving = [*HMSPROXY, "serve", *args, "--host", "127.0.0.1", *own_pid_file(server)]
    proc = subprocess.Popen(serving, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert "(Kerberos)" in wait_for_line(proc, "serving thrift://", 60)[-1]
        conn = own_client(port, realm, "carol", str(realm.principals["carol"]))
        try:
            listed = conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args()).success
            assert {"default", "waggle_default"} <= set(listed), listed  # both through the proxy's keytab login
            assert not any(name.startswith("wrong_") for name in listed), listed
            answer = conn.call("get_database", idl.HmsProxy.get_database_args(name="wrong_default"))
            error = answer.o1 or answer.o2
            assert error is not None and f"nosuch/localhost@{realm.realm}" in error.message, answer
        finally:
            conn.close()
        with pytest.raises((TTransportException, OSError, EOFError)):  # plain Thrift: the port answers nothing
            sock = TSocket("127.0.0.1", port, socket_timeout=10000)
            sock.open()
            try:
                TClient(idl.HmsProxy, TBinaryProtocol(sock)).get_all_databases()
            finally:
                sock.close()
    finally:
        assert stop(proc) == 0
