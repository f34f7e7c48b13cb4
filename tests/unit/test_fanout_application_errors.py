"""An application error a metastore answers a fan-out with (pipeline/fanout.py): the primary's is the
client's answer, as the metastore gave it; another metastore's leaves that one out.

Before, the primary's was reported as the primary being unavailable: for a method that declares no
exception (show_compact without its request on Hive 4.0, found by the method fuzz) that reached the
client as an application error of unknown type where the metastore said "Internal error processing".
"""

from __future__ import annotations

import pytest
from thriftpy2.thrift import TApplicationException

from hmsproxy.testing import FakeMetastore, database
from tests.support.fake_handlers import call, fake_federation


class FailsListing(FakeMetastore):
    """A metastore whose get_all_databases fails as Hive's processor answers an unexpected exception."""

    def get_all_databases(self):
        raise TApplicationException(TApplicationException.INTERNAL_ERROR, "Internal error processing get_all_databases")


def federation(tmp_path, primary: FakeMetastore, waggle: FakeMetastore):
    primary.create_database(database("shop"))
    waggle.create_database(database("sales"))
    return fake_federation(tmp_path, primary, waggle)


def test_the_primarys_application_error_is_the_clients_answer(tmp_path):
    handler = federation(tmp_path, FailsListing("primary"), FakeMetastore("waggle"))
    try:
        with pytest.raises(TApplicationException) as raised:
            call(handler, "get_all_databases")
        assert raised.value.type == TApplicationException.INTERNAL_ERROR
        assert str(raised.value) == "Internal error processing get_all_databases"
    finally:
        handler.close()


def test_another_metastores_application_error_leaves_it_out(tmp_path):
    handler = federation(tmp_path, FakeMetastore("primary"), FailsListing("waggle"))
    try:
        shown = call(handler, "get_all_databases")
        assert "shop" in shown and not any(name.endswith("sales") for name in shown)
    finally:
        handler.close()
