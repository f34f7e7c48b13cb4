"""Statements answered from the proxy's store work while the primary metastore is down, and the
dependent-table listings agree on a partition published with ALLOW EMPTY."""

from __future__ import annotations

import pytest

from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, partition, table, unwrap
from hmsproxy.testing import args as call_args
from hmsproxy.upstream.session import Session

hive = idl.hive


@pytest.fixture
def primary():
    fake = FakeMetastore("primary")
    fake.create_database(database("shop"))
    fake.create_table(table("shop", "ev", columns=(("key", "string"),), partition_keys=(("ds", "string"), ("hr", "string"))))
    fake.add_partitions([partition("shop", "ev", ["1", "1"])])
    return fake


def connect(handler, user: str = "alice") -> Session:
    """A client's connection as `hmsproxy sql` opens it: set_ugi first."""
    session = Session(handler.backends, "test")
    assert unwrap(handler.dispatch(session, "set_ugi", call_args("set_ugi", user_name=user, group_names=[])))
    return session


def execute(handler, session: Session, statements: str) -> list[dict]:
    answer = unwrap(
        handler.dispatch(session, "hmsproxy_execute", call_args("hmsproxy_execute", statements=statements, current_database="shop"))
    )
    return [dict(zip(answer.columns, row)) for row in answer.rows]


def test_allow_empty_partitions_are_empty_in_both_listings(handler):
    session = connect(handler)
    try:
        execute(handler, session, "CREATE DEPENDENT TABLE daily PARTITIONED BY (ds) DEPENDS ON TABLE ev")
        execute(handler, session, "ALTER TABLE daily ADD PARTITION (ds='1') PARTITION (ds='9') ALLOW EMPTY")
        dependencies = execute(handler, session, "SHOW DEPENDENCIES OF daily")
        assert [(r["partition"], r["covers"], r["state"]) for r in dependencies[1:]] == [("ds=1", "ds=1/hr=1", "ok"), ("ds=9", "", "empty")]
        dependents = execute(handler, session, "SHOW DEPENDENTS OF ev")
        assert [(r["partition"], r["covers"], r["state"]) for r in dependents[1:]] == [("ds=1", "ds=1", "ok"), ("ds=9", "", "empty")]
    finally:
        session.close()


def test_store_statements_answer_while_the_primary_is_down(handler, primary):
    session = connect(handler)
    try:
        execute(handler, session, "CREATE DEPENDENT TABLE daily PARTITIONED BY (ds) DEPENDS ON TABLE ev")
        execute(handler, session, "ALTER TABLE daily ADD PARTITION (ds='1')")
    finally:
        session.close()
    primary.go_down()
    session = connect(handler)  # set_ugi: the primary is left out, the caller recorded
    try:
        assert execute(handler, session, "SHOW REMOTE DATABASES") == []
        assert execute(handler, session, "SHOW REMOTE TABLES") == []
        (new, published) = execute(handler, session, "SHOW DEPENDENTS OF ev")
        assert (new["partition"], published["partition"]) == ("(new partitions)", "ds=1")
        assert published["state"].startswith("unchecked: metastore 'primary'") and "is unavailable" in published["state"]
        # SHOW DEPENDENCIES lists the partitions each one covers: that is the metastore's to say.
        with pytest.raises(hive.MetaException, match="metastore 'primary' .* is unavailable"):
            execute(handler, session, "SHOW DEPENDENCIES OF daily")
    finally:
        session.close()
