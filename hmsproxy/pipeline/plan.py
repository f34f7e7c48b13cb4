"""Decided once: what the proxy does with a routed or primary call, kept for as long as it holds.

- `MethodPlan`: one per method, made for every method when the config or the features change
  (FastPath.method_plans). Whether a relayed call's decision may be remembered, which checks a call
  of it needs, and the shape of its answer (table lists mapped-tables may hide, catalogs to fill).
  A call asks these as attributes: nothing is worked out again per call.
- `Plan`: one per call, made by FastPath.plan once the call is routed and the features let it
  through. The metastore, relay (how) or decode (why not), and what the hit loop in C needs to
  serve the call again. A relayed read's Plan is remembered (shortcuts.py, `Shortcut.plan`) and
  executed again as it is, by Python (FastPath.shortcut) and by C (_hits.c reads `Plan.hit` by
  position: PLAN_HIT, checked by tests/contract/test_c_boundary.py).
"""

from __future__ import annotations

from typing import NamedTuple

from hmsproxy.config.model import MetastoreConfig
from hmsproxy.protocol.framing import exchange
from hmsproxy.protocol.relay import CatalogFill, RelayPlan
from hmsproxy.routing.default_catalog import catalog_fill
from hmsproxy.routing.methods import MethodSpec
from hmsproxy.routing.visibility import has_table_lists
from hmsproxy.upstream.session import conn_key


class MethodPlan(NamedTuple):
    """What every call of one method needs decided, under one config and one set of features."""

    spec: MethodSpec
    #: A relayed call's Plan may be remembered (pipeline/fastpath.py, step 1): a read whose hooks'
    #: verdicts are all memoizable.
    rememberable: bool
    #: The call names more databases, which must be on its metastore (exchange_partition, lock).
    several_databases: bool
    #: The call names a table that must exist for it (it does not create it): mapped-tables may hide it.
    checks_table: bool
    #: The answer lists tables that mapped-tables may hide.
    lists_tables: bool
    #: Where the answer holds Databases, Tables and Partitions (routing/default_catalog.py); None: nowhere.
    catalog_fill: CatalogFill | None


def method_plan(spec: MethodSpec, rememberable: bool) -> MethodPlan:
    return MethodPlan(
        spec,
        rememberable,
        several_databases=spec.second_db is not None or spec.db_list is not None,
        checks_table=spec.table is not None and not spec.creates_table,
        lists_tables=has_table_lists(spec),
        catalog_fill=catalog_fill(spec.success_type),
    )


class Plan(NamedTuple):
    """One call's way to its metastore (a tuple: the hit loop in C reads `hit` by position)."""

    metastore: MetastoreConfig
    #: How the answer is relayed; None: it is decoded (the full path), and `declined` says why.
    relay: RelayPlan | None
    declined: str | None
    #: Kept for the next call like it (shortcuts.py): a relay whose request may go as the client sent it.
    remembered: bool = False
    #: What the hit loop in C needs to serve the call again (metastore name, the session's key of
    #: its connection, the exchange's fill kind, field and field id); None when only Python may:
    #: a call not remembered, a catalog nested deeper than the C exchange fills, a build without it.
    hit: tuple | None = None


def decoded(metastore: MetastoreConfig, why: str) -> Plan:
    return Plan(metastore, None, why)


def relayed(metastore: MetastoreConfig, relay: RelayPlan, remembered: bool) -> Plan:
    """A relay Plan; with what the hit loop needs when it is `remembered`."""
    fill = relay.catalog_field
    if not remembered or exchange is None or (fill is not None and not fill.in_c):
        return Plan(metastore, relay, None, remembered)
    kind, (field, fid) = (0, (b"", 0)) if fill is None else (fill.in_c, fill.c_field)
    connection = conn_key(metastore, read_only=True)  # a read's
    return Plan(metastore, relay, None, True, (metastore.name, connection, kind, field, fid))
