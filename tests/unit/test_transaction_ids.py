"""The transactions feature's pure parts: ids that name their metastore, bindings in a real SQLite
store, messages and snapshots in the client's terms, and which calls may go again."""

from __future__ import annotations

import pytest

from hmsproxy.features.transactions import ids
from hmsproxy.features.transactions.bindings import Bindings, Crossing, UnknownId
from hmsproxy.features.transactions.ids import Place
from hmsproxy.features.transactions.store import TRANSACTIONS_SCHEMA, TxnRepository
from hmsproxy.features.transactions.translation import ids_in, rewrite_ids
from hmsproxy.features.transactions.write_ids import NONE_OPEN, snapshot_mark, split_full_name, valid_txn_list
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.store import Store


@pytest.fixture
def store(tmp_path):
    s = Store(f"sqlite:///{tmp_path}/store.db", [TRANSACTIONS_SCHEMA])
    s.migrate()
    yield s
    s.close()


def test_the_primary_keeps_its_ids_others_carry_their_slot():
    assert ids.encode(ids.PRIMARY_SLOT, 42) == 42
    encoded = ids.encode(3, 42)
    assert encoded > 2**44 and ids.decode(encoded) == (3, 42)
    assert ids.decode(42) == (ids.PRIMARY_SLOT, 42)
    with pytest.raises(ValueError):
        ids.encode(1, 2**44)


def test_slots_are_given_once_per_metastore_and_shared_through_the_store(store):
    one, two = Bindings(TxnRepository(store)), Bindings(TxnRepository(store))  # two processes
    assert one.slot("primary", "primary") == 0
    fed = one.slot("fed", "primary")
    assert fed >= 1 and one.slot("other", "primary") not in (0, fed)
    lock = one.encode("fed", 7, "primary")
    assert two.locate_lock(lock, "primary") == Place("fed", 7)  # the other process learns the slot from the store
    assert two.locate_lock(7, "primary") == Place("primary", 7)
    with pytest.raises(UnknownId):
        two.locate_lock(ids.encode(99, 1), "primary")


def test_a_transaction_binds_once_and_other_processes_follow(store):
    one, two = Bindings(TxnRepository(store)), Bindings(TxnRepository(store))
    assert one.locate_txn(10, "primary") == Place("primary", 10)  # unbound: the primary's own
    dropped = []
    place = one.bind(10, "fed", "primary", open_there=lambda: 501, drop=dropped.append)
    assert place == Place("fed", 501) and two.locate_txn(10, "primary") == place
    # A process racing to bind it to the same metastore gives up its own transaction there.
    raced = Bindings(TxnRepository(store))
    assert raced.bind(10, "fed", "primary", open_there=lambda: 502, drop=dropped.append) == place
    assert dropped == [502]
    with pytest.raises(Crossing, match="'fed'.*'primary'"):
        raced.bind(10, "primary", "primary", open_there=lambda: 0, drop=dropped.append)
    assert two.proxy_txn_ids("fed", [501, 777], "primary") == {501: 10, 777: ids.encode(two.slot("fed", "primary"), 777)}
    two.forget([10])
    assert Bindings(TxnRepository(store)).locate_txn(10, "primary") == Place("primary", 10)


def test_messages_name_the_clients_ids():
    message = "Aborting [txnid:8,5] due to a write conflict committed by [txnid:4,5]; lockid:3 gone"
    assert ids_in(message) == ({8, 4}, {3})
    assert (
        rewrite_ids(message, {8: 41, 4: 40}, {3: 99})
        == "Aborting [txnid:41,5] due to a write conflict committed by [txnid:40,5]; lockid:99 gone"
    )
    assert rewrite_ids(None, {1: 2}, {}) is None


def test_a_snapshot_in_hives_string():
    assert valid_txn_list(10, [7, 3, 12], [5]) == "10:3:3,7:5"
    assert valid_txn_list(10, [], []) == f"10:{NONE_OPEN}::"
    assert snapshot_mark("41:9223372036854775807::") == 41 and snapshot_mark(None) is None
    assert split_full_name("fed1_sales.orders") == ("fed1_sales", "orders")
    with pytest.raises(ProxyError, match="not a full table name"):
        split_full_name("orders")


def test_calls_safe_to_repeat_go_again_on_a_new_connection_a_lock_does_not():
    repeatable = {m for m in ("commit_txn", "abort_txn", "heartbeat", "check_lock", "unlock", "get_table") if METHOD_SPECS[m].repeatable}
    assert repeatable == {"commit_txn", "abort_txn", "heartbeat", "check_lock", "unlock", "get_table"}
    assert not METHOD_SPECS["lock"].repeatable and not METHOD_SPECS["open_txns"].repeatable
    assert not METHOD_SPECS["create_table"].repeatable
