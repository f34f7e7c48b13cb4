"""The ids in a metastore's error message, as the client knows them (features/transactions/translation.py)."""

from __future__ import annotations

from hmsproxy.features.transactions.translation import ids_in, rewrite_ids


def test_hive_2_and_3_wording_and_hive_4_heartbeat_wording_are_both_found():
    message = "No such txn: 12; Transaction txnid:13 already aborted; No such lock lockid:7"
    assert ids_in(message) == ({12, 13}, {7})


def test_known_ids_are_swapped_keeping_each_wording():
    message = "No such txn: 12; Transaction txnid:12 already aborted; No such lock lockid:7; txnid:120"
    assert (
        rewrite_ids(message, {12: 99}, {7: 5}) == "No such txn: 99; Transaction txnid:99 already aborted; No such lock lockid:5; txnid:120"
    )


def test_a_lock_id_is_never_taken_for_a_transaction_id():
    assert rewrite_ids("lockid:12 of txnid:12", {12: 1}, {}) == "lockid:12 of txnid:1"
