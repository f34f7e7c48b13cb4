"""The proxy's own delegation tokens (#29) on a Kerberized proxy in front of a Kerberized Hive 2.3
metastore (a real MIT KDC): alice gets a token with Kerberos; a second process without any ticket
logs in with it over DIGEST-MD5 and is audited as alice; renew, cancel, expiry and a second proxy
on the same store: a SQLite file, and a self-started PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from tests.integration.test_kerberos_inbound import _audit, independent_client, kerberized, realm  # noqa: F401 - fixtures
from tests.integration.test_kerberos_inbound import _serve as serve_kerberized
from tests.support.ha_pair import plain_table

#: A client with no Kerberos ticket: thriftpy2's SASL transport with pure-sasl's DIGEST-MD5, the
#: token's identifier and password as Hadoop's clients give them. Prints what it read as JSON.
TOKEN_CLIENT = r"""
import json, sys
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TClient
from thriftpy2.transport import TSocket
from thriftpy2.transport.sasl import TSaslClientTransport
from hmsproxy.protocol import idl
from hmsproxy.protocol.delegation_token import Token
from tests.support.token_digest import TokenDigest

port, token_str, db, table = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
token = Token.decode(token_str)

transport = TSaslClientTransport(lambda: TokenDigest(token, "hive"), "DIGEST-MD5", TSocket("127.0.0.1", int(port), socket_timeout=60000))
try:
    transport.open()
except Exception as e:
    print(json.dumps({"refused": str(e)}))
    sys.exit(0)
client = TClient(idl.HmsProxy, TBinaryProtocol(transport))
out = {"databases": client.get_all_databases(), "table": client.get_table(db, table).tableName}
try:
    client.get_delegation_token("alice", "alice")
except Exception as e:
    out["new_token"] = str(e)
transport.close()
print(json.dumps(out))
"""


def _serve(realm, kerberized, audit_file, store_url: str, renew_ms: int = 24 * 3600 * 1000):  # noqa: F811
    """A Kerberized proxy on the shared store file whose tokens live `renew_ms` per renewal."""
    limits = dict(token_renew_interval_ms=renew_ms, token_max_lifetime_ms=max(renew_ms, 7 * 24 * 3600 * 1000))
    return serve_kerberized(realm, kerberized, audit_file, store_url=store_url, **limits)


@pytest.fixture(scope="module")
def store_url(tmp_path_factory):
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'tokens.db'}"


@pytest.fixture(scope="module")
def audit_file(tmp_path_factory):
    return tmp_path_factory.mktemp("audit") / "audit.log"


@pytest.fixture(scope="module")
def proxies(realm, kerberized, audit_file, store_url):  # noqa: F811
    with _serve(realm, kerberized, audit_file, store_url) as first, _serve(realm, kerberized, audit_file, store_url) as second:
        yield [first, second]


@pytest.fixture
def alice(proxies, realm, kerberos_env, tmp_path):  # noqa: F811
    """alice's Kerberos client of the first proxy, and a table of hers."""
    realm.kinit("alice", kerberos_env)
    client, transport = independent_client(proxies[0].port)
    db = f"tokens_{uuid.uuid4().hex[:8]}"
    client.create_database(idl.hive.Database(name=db, locationUri=(tmp_path / db).as_uri(), parameters={}))
    client.create_table(plain_table(db, "t"))
    yield client, db
    client.drop_database(db, True, True)
    transport.close()


def _as_second_process(port: int, token_str: str, db: str, tmp_path) -> dict:
    # No ticket at all; the repository on the path for tests.support.token_digest.
    env = dict(os.environ, KRB5CCNAME=f"FILE:{tmp_path / 'no-such-cache'}", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    out = subprocess.run(
        [sys.executable, "-c", TOKEN_CLIENT, str(port), token_str, db, "t"], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_token_from_kerberos_serves_a_process_without_a_ticket_as_its_owner(proxies, alice, audit_file, tmp_path):
    client, db = alice
    token_str = client.get_delegation_token("alice", "alice")
    seen = _as_second_process(proxies[0].port, token_str, db, tmp_path)
    assert db in seen["databases"] and seen["table"] == "t"
    assert "may not get new tokens" in seen["new_token"]
    lines = [line for line in _audit(audit_file) if line["method"] == "get_table" and db in json.dumps(line)]
    assert lines and {line["user"] for line in lines} == {"alice"}, lines


def test_the_other_proxy_on_the_same_store_accepts_it(proxies, alice, tmp_path):
    client, db = alice
    seen = _as_second_process(proxies[1].port, client.get_delegation_token("alice", "alice"), db, tmp_path)
    assert seen["table"] == "t"


def test_renew_by_the_renewer_only_and_cancel_then_refused(proxies, alice, audit_file, tmp_path):
    client, db = alice
    mine = client.get_delegation_token("alice", "alice")
    before = time.time() * 1000
    assert client.renew_delegation_token(mine) >= before + 23 * 3600 * 1000
    theirs = client.get_delegation_token("alice", "hive/localhost@EXAMPLE.COM")
    with pytest.raises(idl.hive.MetaException, match="without being its renewer"):
        client.renew_delegation_token(theirs)
    client.cancel_delegation_token(mine)
    renewals = [line for line in _audit(audit_file) if line["method"] == "renew_delegation_token"]
    assert renewals and mine not in audit_file.read_text()  # a credential: the audit log withholds it
    seen = _as_second_process(proxies[0].port, mine, db, tmp_path)
    assert "unknown or cancelled" in seen["refused"]
    with pytest.raises((idl.hive.MetaException, TApplicationException), match="cancelled"):
        client.renew_delegation_token(mine)


def test_an_expired_token_is_refused_saying_so(realm, kerberized, store_url, tmp_path, kerberos_env):  # noqa: F811
    with _serve(realm, kerberized, tmp_path / "audit.log", store_url, renew_ms=1000) as server:
        realm.kinit("alice", kerberos_env)
        client, transport = independent_client(server.port)
        try:
            token_str = client.get_delegation_token("alice", "alice")
        finally:
            transport.close()
        time.sleep(2.5)  # past the 1 s renew interval (a lower bound: only lateness matters)
        seen = _as_second_process(server.port, token_str, "default", tmp_path)
        assert "expired at" in seen["refused"]


def test_two_proxies_on_one_postgresql_store_share_tokens(realm, kerberized, pg_url, kerberos_env, tmp_path):  # noqa: F811
    """Issued by proxy 1, accepted (DIGEST-MD5) and renewed by proxy 2, cancelled through 1, then refused by 2."""
    with (
        _serve(realm, kerberized, tmp_path / "audit-1.log", pg_url) as first,
        _serve(realm, kerberized, tmp_path / "audit-2.log", pg_url) as second,
    ):
        transports = []
        try:
            realm.kinit("alice", kerberos_env)
            (client_1, t1), (client_2, t2) = independent_client(first.port), independent_client(second.port)
            transports += [t1, t2]
            db = f"pgtokens_{uuid.uuid4().hex[:8]}"
            client_1.create_database(idl.hive.Database(name=db, locationUri=(tmp_path / db).as_uri(), parameters={}))
            client_1.create_table(plain_table(db, "t"))
            token_str = client_1.get_delegation_token("alice", "alice")
            seen = _as_second_process(second.port, token_str, db, tmp_path)
            assert seen["table"] == "t" and db in seen["databases"], seen
            before = time.time() * 1000
            assert client_2.renew_delegation_token(token_str) >= before + 23 * 3600 * 1000
            client_1.cancel_delegation_token(token_str)
            assert "unknown or cancelled" in _as_second_process(second.port, token_str, db, tmp_path)["refused"]
            with pytest.raises((idl.hive.MetaException, TApplicationException), match="cancelled"):
                client_2.renew_delegation_token(token_str)
            client_1.drop_database(db, True, True)
        finally:
            for transport in transports:
                transport.close()
