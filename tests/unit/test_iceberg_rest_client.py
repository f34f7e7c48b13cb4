"""The Iceberg REST client against a tiny local HTTP server (http.server in a thread) that issues
short-lived OAuth2 tokens, answers 401 to expired ones and serves a prefixed warehouse: the token
life cycle and the error mapping the real REST server can't be made to show."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from hmsproxy.catalogs.client import CatalogConflict, CatalogNotFound, CatalogRefused, CatalogUnavailable
from hmsproxy.catalogs.iceberg_rest.factory import IcebergRestFactory
from hmsproxy.dev.ports import free_port

TIMEOUTS = (2.0, 5.0)
METADATA = {
    "format-version": 2,
    "table-uuid": "u-1",
    "location": "file:/w/a/b/t",
    "last-updated-ms": 1_700_000_000_000,
    "current-schema-id": 1,
    "schemas": [
        {"schema-id": 0, "type": "struct", "fields": [{"id": 1, "name": "old", "required": False, "type": "int"}]},
        {"schema-id": 1, "type": "struct", "fields": [{"id": 1, "name": "id", "required": True, "type": "long", "doc": "the key"}]},
    ],
    "properties": {"owner": "ann", "write.format.default": "parquet"},
}


class Catalog:
    """What the fake server knows and has seen."""

    def __init__(self):
        self.issued: dict[str, bool] = {}  # token -> still valid
        self.logins: list[dict] = []
        self.requests: list[tuple[str, str | None]] = []  # (path, Authorization)
        self.status: int | None = None  # force an answer to catalog calls
        self.lifetime_s = 3600
        self.refuse_logins = False
        self.commits: list[dict] = []  # bodies POSTed to a table
        self.commit_status = 200
        self.metadata = METADATA  # the table's, as GET answers it
        self.applied_before_failing: dict | None = None  # a commit that lands though its answer is an error


def handler_for(catalog: Catalog):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            if unquote(self.path) == "/v1/cat1/namespaces/a\x1fb/tables/t":
                catalog.commits.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                if catalog.applied_before_failing is not None:
                    catalog.metadata = catalog.applied_before_failing
                if catalog.commit_status != 200:
                    message = "Requirement failed: branch main has changed"
                    return self._send(catalog.commit_status, {"error": {"message": message, "type": "CommitFailedException"}})
                return self._send(200, {"metadata-location": "file:/w/a/b/t/metadata/2.json", "metadata": METADATA})
            form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
            catalog.logins.append({k: v[0] for k, v in form.items()})
            if catalog.refuse_logins or form.get("client_secret") != ["s3cret"]:
                return self._send(401, {"error": "invalid_client", "error_description": "bad secret"})
            token = f"tok{len(catalog.logins)}"
            catalog.issued[token] = True
            self._send(200, {"access_token": token, "token_type": "bearer", "expires_in": catalog.lifetime_s})

        def do_GET(self):
            url = urlparse(self.path)
            auth = self.headers.get("Authorization")
            catalog.requests.append((url.path, auth))
            token = (auth or "").removeprefix("Bearer ")
            if not catalog.issued.get(token):
                return self._send(401, {"error": {"message": "token expired", "type": "NotAuthorizedException", "code": 401}})
            if catalog.status:
                return self._send(catalog.status, {"error": {"message": "forced", "type": "X", "code": catalog.status}})
            query = parse_qs(url.query)
            if url.path == "/v1/config":
                assert query["warehouse"] == ["wh"]
                return self._send(200, {"defaults": {"prefix": "wrong"}, "overrides": {"prefix": "cat1"}})
            path = unquote(url.path)
            if path == "/v1/cat1/namespaces":
                parent = query.get("parent", [None])[0]
                if parent is None and "pageToken" not in query:
                    return self._send(200, {"namespaces": [["a"]], "next-page-token": "p2"})
                if parent is None:
                    return self._send(200, {"namespaces": [["z"]]})
                children = {"a": [["a", "b"]]}.get(parent, [])
                return self._send(200, {"namespaces": children})
            if path == "/v1/cat1/namespaces/a\x1fb":
                return self._send(200, {"namespace": ["a", "b"], "properties": {"location": "file:/w/a/b", "comment": "nested", "k": "v"}})
            if path == "/v1/cat1/namespaces/a\x1fb/tables":
                return self._send(200, {"identifiers": [{"namespace": ["a", "b"], "name": "t"}]})
            if path == "/v1/cat1/namespaces/a\x1fb/tables/t":
                return self._send(200, {"metadata-location": "file:/w/a/b/t/metadata/1.json", "metadata": catalog.metadata})
            self._send(404, {"error": {"message": f"no {path}", "type": "NoSuchNamespaceException", "code": 404}})

    return Handler


@pytest.fixture
def server():
    catalog = Catalog()
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), handler_for(catalog))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    catalog.uri = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield catalog
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def make(catalog: Catalog, **extra):
    properties = {"uri": catalog.uri, "warehouse": "wh", "credential": "app:s3cret", **extra}
    return IcebergRestFactory().maker(properties)


def test_prefix_namespaces_nested_and_paged_and_table_described(server):
    client = make(server)(*TIMEOUTS)
    client.open()
    assert client.databases() == ["a", "a.b", "z"]
    db = client.database("a.b")
    assert (db.name, db.locationUri, db.description, db.parameters) == ("a.b", "file:/w/a/b", "nested", {"k": "v"})
    assert client.tables("a.b") == ["t"]
    t = client.table("a.b", "t")
    assert t.parameters["metadata_location"] == "file:/w/a/b/t/metadata/1.json"
    assert t.parameters["table_type"] == "ICEBERG" and t.parameters["write.format.default"] == "parquet"
    assert [(c.name, c.type, c.comment) for c in t.sd.cols] == [("id", "bigint", "the key")]  # the current schema
    assert (t.owner, t.createTime, t.sd.location) == ("ann", 1_700_000_000, "file:/w/a/b/t")
    client.close()


def test_one_login_per_target_shared_by_its_connections(server):
    maker = make(server, scope="PRINCIPAL_ROLE:ALL")
    for _ in range(3):
        client = maker(*TIMEOUTS)
        client.open()
        client.tables("a.b")
        client.close()
    assert len(server.logins) == 1
    assert server.logins[0] == {
        "grant_type": "client_credentials",
        "client_id": "app",
        "client_secret": "s3cret",
        "scope": "PRINCIPAL_ROLE:ALL",
    }
    assert {auth for _, auth in server.requests} == {"Bearer tok1"}


def test_token_renewed_before_expiry(server):
    server.lifetime_s = 0  # renewed at once: expires_in minus a tenth of it has passed
    client = make(server)(*TIMEOUTS)
    client.open()
    client.tables("a.b")
    assert len(server.logins) == 2
    assert [auth for _, auth in server.requests] == ["Bearer tok1", "Bearer tok2"]


def test_a_401_fetches_one_new_token_and_retries_once(server):
    client = make(server)(*TIMEOUTS)
    client.open()
    server.issued["tok1"] = False  # the catalog revoked it
    assert client.tables("a.b") == ["t"]
    assert [auth for _, auth in server.requests] == ["Bearer tok1", "Bearer tok1", "Bearer tok2"]
    server.issued["tok2"] = False
    server.refuse_logins = True
    with pytest.raises(CatalogRefused) as e:
        client.tables("a.b")
    assert "check properties 'credential' and 'scope'" in e.value.message


def test_a_bad_bearer_token_names_the_token_property(server):
    client = make(server, credential=None, token="nope")(*TIMEOUTS)
    with pytest.raises(CatalogRefused) as e:
        client.open()
    assert "401 Unauthorized" in e.value.message and "check property 'token'" in e.value.message
    assert server.logins == []


def test_a_good_bearer_token_is_sent_as_is(server):
    server.issued["fixed"] = True
    client = make(server, credential=None, token="fixed")(*TIMEOUTS)
    client.open()
    assert client.tables("a.b") == ["t"]
    assert server.logins == []


def test_answers_mapped_to_catalog_errors(server):
    client = make(server)(*TIMEOUTS)
    client.open()
    with pytest.raises(CatalogNotFound) as e:
        client.table("a.b", "nope")
    assert e.value.message == f"Iceberg REST catalog {server.uri} warehouse wh has no table 'a.b.nope'"
    with pytest.raises(CatalogNotFound, match="no namespace 'q'"):
        client.database("q")
    server.status = 403
    with pytest.raises(CatalogRefused, match="403 Forbidden .*check property 'credential'"):
        client.tables("a.b")
    server.status = 503
    with pytest.raises(CatalogUnavailable, match="503"):
        client.tables("a.b")
    server.status = 400
    with pytest.raises(CatalogRefused, match="400: forced"):
        client.tables("a.b")


def test_no_server_is_unavailable():
    client = IcebergRestFactory().maker({"uri": f"http://127.0.0.1:{free_port()}"})(*TIMEOUTS)
    with pytest.raises(CatalogUnavailable, match="didn't answer GET /v1/config"):
        client.open()


@pytest.mark.parametrize(
    "properties, said",
    [
        ({}, "property 'uri' is required"),
        ({"uri": "thrift://h:9083"}, "http:// or https://"),
        ({"uri": "http://h", "credential": "id:"}, "'client-id:secret' or 'secret'"),
        ({"uri": "http://h", "credential": "s", "token": "t"}, "exclude each other"),
        ({"uri": "http://h", "oauth2-server-uri": "h/token"}, "'oauth2-server-uri' must be"),
        ({"uri": "http://h", "ssh.tunnel.route": "me@b"}, "remove ssh.tunnel.route"),
        ({"uri": "http://h", "hmsproxy.iceberg.writes": "yes"}, "'hmsproxy.iceberg.writes' must be 'commit' or 'read-only'"),
    ],
)
def test_bad_properties_name_the_property(properties, said):
    with pytest.raises(ValueError, match=said):
        IcebergRestFactory().validate(properties)


def test_where_never_shows_the_credential():
    where = IcebergRestFactory().where({"uri": "https://c.example/api/", "warehouse": "prod", "credential": "id:s3cret"})
    assert where == "https://c.example/api warehouse prod"


def test_a_catalog_that_never_answers_times_out_as_unavailable():
    import socket

    with socket.socket() as listening:  # accepts connections (the backlog) and never answers
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        uri = f"http://127.0.0.1:{listening.getsockname()[1]}"
        client = IcebergRestFactory().maker({"uri": uri})(1.0, 0.3)
        with pytest.raises(CatalogUnavailable, match="timed out"):
            client.open()
        client.close()


def test_the_metastore_is_read_only_hive_2_3_named_by_key_and_where():
    from hmsproxy.config.model import AccessControlType

    ms = IcebergRestFactory().metastore("remote:iceberg-rest:k", {"uri": "http://h:8181/", "warehouse": "w", "token": "t"})
    assert (ms.name, ms.uris, ms.hive_version) == ("remote:iceberg-rest:k", ("http://h:8181 warehouse w",), "2.3")
    assert ms.access_control_type == AccessControlType.READ_ONLY and ms.connect is not None


# -- commits (link property hmsproxy.iceberg.writes = commit) --------------------------------------

CURRENT = "file:/w/a/b/t/metadata/1.json"


def written(tmp_path, **fields) -> str:
    """A writer's new metadata file (METADATA with `fields`), as the file: URI it names."""
    path = tmp_path / "2-new.metadata.json"
    path.write_text(json.dumps({**METADATA, **fields}))
    return path.as_uri()


def committing(server):
    client = make(server, **{"hmsproxy.iceberg.writes": "commit"})(*TIMEOUTS)
    client.open()
    return client


def test_a_commit_posts_what_the_new_metadata_changes_with_its_requirements(server, tmp_path):
    client = committing(server)
    client.commit("a.b", "t", {"metadata_location": written(tmp_path, properties={"owner": "bob"})}, CURRENT)
    assert server.commits == [
        {
            "identifier": {"namespace": ["a", "b"], "name": "t"},
            "requirements": [{"type": "assert-table-uuid", "uuid": "u-1"}],
            "updates": [
                {"action": "set-properties", "updates": {"owner": "bob"}},
                {"action": "remove-properties", "removals": ["write.format.default"]},
            ],
        }
    ]


def test_a_commit_from_a_version_that_is_not_current_is_refused_unsent(server, tmp_path):
    client = committing(server)
    with pytest.raises(
        CatalogConflict, match=f"The table has been modified. The parameter value for key 'metadata_location' is '{CURRENT}'"
    ):
        client.commit("a.b", "t", {"metadata_location": written(tmp_path)}, "file:/w/a/b/t/metadata/0.json")
    assert server.commits == []


def test_a_commit_the_catalog_refuses_with_409_is_a_conflict(server, tmp_path):
    client = committing(server)
    server.commit_status = 409
    with pytest.raises(CatalogConflict, match="has been modified.*nothing was changed.*branch main has changed"):
        client.commit("a.b", "t", {"metadata_location": written(tmp_path, properties={})}, CURRENT)


@pytest.mark.parametrize(
    "parameters, expected, said",
    [
        (
            {"metadata_location": "ftp://h/t/metadata/2.json"},
            CURRENT,
            "metadata file: ftp://h/t/metadata/2.json: no file system for scheme 'ftp'",
        ),
        ({"metadata_location": "file:/no/such/2.json"}, CURRENT, "can't read the committed metadata file"),
        ({}, CURRENT, "takes only Iceberg commits"),
        ({"metadata_location": CURRENT}, CURRENT, "'metadata_location' is unchanged"),
        ({"metadata_location": "file:/x.json"}, None, "names no 'previous_metadata_location'"),
    ],
)
def test_what_a_commit_cant_be_is_refused_unsent(server, parameters, expected, said):
    with pytest.raises(CatalogRefused, match=said):
        committing(server).commit("a.b", "t", parameters, expected)
    assert server.commits == []


def test_only_a_link_that_opts_in_commits_and_its_databases_are_writable():
    from hmsproxy.config.model import AccessControlType

    factory, base = IcebergRestFactory(), {"uri": "http://h:8181", "token": "t"}
    assert not hasattr(factory.maker(base)(*TIMEOUTS), "commit")
    assert not hasattr(factory.maker({**base, "hmsproxy.iceberg.writes": "read-only"})(*TIMEOUTS), "commit")
    assert hasattr(factory.maker({**base, "hmsproxy.iceberg.writes": "commit"})(*TIMEOUTS), "commit")
    ms = factory.metastore("k", {**base, "hmsproxy.iceberg.writes": "commit"})
    assert ms.access_control_type == AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST
    assert ms.writable_database_white_list == (".*",)


def test_a_commit_answered_with_an_error_is_unknown_unless_it_landed(server, tmp_path):
    client = committing(server)
    server.commit_status = 503
    new = written(tmp_path, properties={"owner": "bob"})
    with pytest.raises(CatalogUnavailable, match="503.*the commit's outcome is unknown: reload the table"):
        client.commit("a.b", "t", {"metadata_location": new}, CURRENT)
    # The same error after the catalog applied it: the commit stands, and the writer hears so.
    server.applied_before_failing = {**METADATA, "properties": {"owner": "bob"}, "last-updated-ms": 2}
    client.commit("a.b", "t", {"metadata_location": new}, CURRENT)
    assert len(server.commits) == 2
