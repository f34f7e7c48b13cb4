"""Aliases side by side with Waggle Dance 3.13.3: the same two YAML files (a federated metastore with
the prefix `dw_`, `database-name-mapping: {sales: booking}` and `mapped-tables`) served by Waggle Dance
and by hmsproxy over the same real metastores; a client asking by either name (`dw_sales`, the
metastore's own, or `dw_booking`, the alias) gets the same answers from both: database and table
objects, and the error for a table `mapped-tables` leaves out."""

from __future__ import annotations

import uuid

import pytest
from thriftpy2.thrift import TException

from hmsproxy.config.waggle_dance import load_waggle_dance
from hmsproxy.dev import maven, waggle_dance
from hmsproxy.dev.metastore import metastore_client
from hmsproxy.dev.ports import free_port
from hmsproxy.testing import table
from tests.support.federation import stored_in
from tests.support.required import unavailable
from tests.support.served import served


def _jar():
    try:
        return waggle_dance.fetch()
    except maven.FetchError as exc:
        unavailable(f"cannot fetch Waggle Dance {waggle_dance.VERSION} with Maven: {exc}")


def answer(fn):
    """What a client gets: the value, or the exception's type and message."""
    try:
        return fn()
    except TException as e:
        return (type(e).__name__, getattr(e, "message", str(e)))


def answers(client, mapped: str, hidden: str) -> dict:
    return (
        {
            "listed": sorted(n for n in client.get_all_databases() if n in ("dw_sales", "dw_booking", "sales", "booking")),
            "get_database(sales)": answer(lambda: client.get_database("sales").name),
        }
        | {f"get_database({db}).name": answer(lambda db=db: client.get_database(db).name) for db in ("dw_sales", "dw_booking")}
        | {
            f"get_table({db}, {t}).dbName": answer(lambda db=db, t=t: client.get_table(db, t).dbName)
            for db in ("dw_sales", "dw_booking")
            for t in (mapped,)
        }
        | {
            f"get_table({db}, {t})": answer(lambda db=db, t=t: client.get_table(db, t).tableName)
            for db in ("dw_sales", "dw_booking")
            for t in (hidden,)
        }
    )


@pytest.fixture
def two_files(tmp_path, metastores, federated_dbs):
    tag = uuid.uuid4().hex[:8]
    mapped, hidden = f"orders_{tag}", f"hidden_{tag}"
    fed = metastores[1].client()
    try:
        for name in (mapped, hidden):
            fed.create_table(table("sales", name))
    finally:
        fed.close()
    port = free_port()
    server_yml, federation_yml = tmp_path / "waggle-dance-server.yml", tmp_path / "waggle-dance-federation.yml"
    server_yml.write_text(f"port: {port}\ndatabase-resolution: PREFIXED\nyaml-storage:\n  overwrite-config-on-shutdown: false\n")
    federation_yml.write_text(
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {metastores[0].uri}\n"
        "  access-control-type: READ_ONLY\n"
        "federated-meta-stores:\n"
        "- name: dw\n"
        "  database-prefix: dw_\n"
        f"  remote-meta-store-uris: {metastores[1].uri}\n"
        "  database-name-mapping:\n"
        "    sales: booking\n"
        "  mapped-tables:\n"
        "  - database: sales\n"
        f"    mapped-tables: [{mapped}]\n"
    )
    yield server_yml, federation_yml, port, mapped, hidden
    fed = metastores[1].client()
    try:
        for name in (mapped, hidden):
            fed.drop_table("sales", name, True)
    finally:
        fed.close()


def test_either_name_gets_the_same_answers_as_from_waggle_dance(two_files, tmp_path):
    server_yml, federation_yml, port, mapped, hidden = two_files
    jar = _jar()
    wd = waggle_dance.WaggleDance(jar, server_yml, federation_yml, tmp_path / "waggle-dance.log", port=port, audit=False)
    try:
        wd.start()
        client = metastore_client("127.0.0.1", port, timeout_s=60)
        try:
            from_waggle_dance = answers(client, mapped, hidden)
        finally:
            client.close()
    finally:
        wd.stop()

    config = stored_in(load_waggle_dance(server_yml, federation_yml), tmp_path / "store")
    with served(config) as proxy:
        client = metastore_client("127.0.0.1", proxy.port, timeout_s=60)
        try:
            from_hmsproxy = answers(client, mapped, hidden)
        finally:
            client.close()
    wd, hp = from_waggle_dance, from_hmsproxy
    # Both list the alias and the metastore's own name, and the bare backend name is no database.
    assert hp["listed"] == wd["listed"] == ["dw_booking", "dw_sales"]
    assert hp["get_database(sales)"][0] == wd["get_database(sales)"][0] == "NoSuchObjectException"
    # A table mapped-tables leaves out: the same exception and Waggle Dance's words, naming the
    # database as the client named it, whichever name it used.
    for db in ("dw_sales", "dw_booking"):
        key = f"get_table({db}, {hidden})"
        assert wd[key] == ("NoSuchObjectException", f"{db}.{hidden} table not found in any mappings")
        assert hp[key] == ("NoSuchObjectException", f"hmsproxy: {db}.{hidden} table not found in any mappings (mapped-tables)")
    # Objects asked for by the metastore's own name: the same name back from both.
    assert hp[f"get_table(dw_sales, {mapped}).dbName"] == wd[f"get_table(dw_sales, {mapped}).dbName"] == "dw_sales"
    # Where Waggle Dance answers a name the client did not use (the table's under the alias comes back
    # as dw_sales; get_database gives the bare backend name, which is no database through it, as
    # asserted above), hmsproxy gives back the name the client used.
    assert wd[f"get_table(dw_booking, {mapped}).dbName"] == "dw_sales"
    assert hp[f"get_table(dw_booking, {mapped}).dbName"] == "dw_booking"
    assert wd["get_database(dw_sales).name"] == wd["get_database(dw_booking).name"] == "sales"
    assert (hp["get_database(dw_sales).name"], hp["get_database(dw_booking).name"]) == ("dw_sales", "dw_booking")
