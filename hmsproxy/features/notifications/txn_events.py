"""Transaction (ACID) events in the merged log, with the transaction ids clients hold.

A client's transaction through the proxy has the primary's id; when it works on another metastore the
transactions feature opens one there and binds the two (docs/transactions.md), and commits the
primary's, which did nothing (its *twin*). So, decided when a page is merged:

- a member's events name that member's real ids: each becomes the client's id (the binding's, or the
  encoded id merged views show for transactions not opened through the proxy), kept in the store
  beside the event so that it reads the same for ever (bindings are swept an hour after their end);
- a member's OPEN_TXN of a transaction the proxy opened for a binding is passed over: the client's
  transaction was opened on the primary, whose OPEN_TXN the log has;
- the primary's COMMIT_TXN of a twin is passed over: the client's transaction commits on its member.

Write ids belong to one table and pass unchanged, as in the transactions feature. Without that
feature (no bindings to read), members' transaction events are passed over as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hmsproxy.features.notifications.messages import TXN_ID_KEYS, TXN_ID_LIST_KEYS, decoded_body

#: Hive 3.1's event types of transactions (`ALLOC_WRITE_ID_EVENT` is 3.1's name; ACID_WRITE is 4's).
TXN_EVENTS = frozenset({"OPEN_TXN", "COMMIT_TXN", "ABORT_TXN", "ALLOC_WRITE_ID_EVENT", "ALLOC_WRITE_ID", "ACID_WRITE"})
#: Those of no database: Hive 3.1's listener writes their dbName as the string "null".
DATABASELESS = frozenset({"OPEN_TXN", "COMMIT_TXN", "ABORT_TXN"})


@dataclass
class TxnPage:
    """What merging decides for a page's transaction events, by the metastore's event id."""

    #: Events passed over (a bound transaction's OPEN_TXN on a member, a twin's COMMIT_TXN on the primary).
    passed_over: set[int] = field(default_factory=set)
    #: real id -> client id, for each member event shown.
    client_ids: dict[int, dict[int, int]] = field(default_factory=dict)


def txn_ids_named(event) -> list[int]:
    """The transaction ids an event's message names (a range by its two ends)."""
    body = decoded_body(event.message, event.messageFormat) or {}
    found = [body[k] for k in TXN_ID_KEYS if isinstance(body.get(k), int)]
    for key in TXN_ID_LIST_KEYS:
        found += [v for v in body.get(key) or () if isinstance(v, int)]
    return found


def decide(transactions, metastore: str, primary: str, events: Iterable) -> TxnPage | None:
    """TxnPage of `metastore`'s transaction events among `events`; None when they can't be shown
    (no transactions feature: only the primary's, as they are)."""
    page = TxnPage()
    named = {e.eventId: (e.eventType, txn_ids_named(e)) for e in events if e.eventType in TXN_EVENTS}
    if transactions is None:
        return None if metastore != primary else page
    if metastore == primary:
        commits = {e: ids[0] for e, (kind, ids) in named.items() if kind == "COMMIT_TXN" and ids}
        twins = transactions.bound_elsewhere(commits.values(), primary)
        page.passed_over = {e for e, txn in commits.items() if txn in twins}
        return page
    reals = {t for _, ids in named.values() for t in ids}
    client, bound = transactions.event_txn_ids(metastore, reals, primary)
    for event_id, (kind, ids) in named.items():
        if kind == "OPEN_TXN" and len(set(ids)) == 1 and ids[0] in bound:
            page.passed_over.add(event_id)
        else:
            page.client_ids[event_id] = {t: client[t] for t in ids}
    return page
