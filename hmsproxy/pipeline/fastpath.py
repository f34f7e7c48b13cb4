"""Whether a call's answer may be relayed as bytes (`relay_plan`): nothing on the full path but a
feature would change it. The copying itself is protocol/relay.py; reused decisions are shortcuts.py."""

from __future__ import annotations

from hmsproxy.protocol.framing import WALKER_IN_C
from hmsproxy.protocol.relay import AS_BYTES, RelayPlan, typed_element
from hmsproxy.routing.default_catalog import encoded_catalog_field, holds_catalog_structs
from hmsproxy.routing.visibility import has_table_lists
from hmsproxy.upstream.translations import TRANSLATIONS

#: What Handler.dispatch returns for a relayed call: the answer has been sent already.
RELAYED = object()


def relay_plan(call, backends, config, *, routed_by_feature: bool) -> RelayPlan | None:
    """How to relay this call's answer when nothing on the full path but a feature would change it
    (see the module doc), else None; the handler then asks the features (`needs_result`), the
    dearer question, last."""
    spec, route = call.spec, call.route
    if not WALKER_IN_C or not config.server.relay or config.server.transport != "buffered" or call.session.reply_sink is None:
        return None
    if spec.oneway or routed_by_feature or route is None or not route.naming.identity or route.catalog is not None:
        return None
    if call.client_db and has_table_lists(spec):
        return None
    name = route.metastore.name
    if name in backends.caches:
        return None  # a cached metastore's reads belong to the cache, its writes must invalidate it
    if spec.name in TRANSLATIONS and spec.name not in backends.state(name).present_methods:
        return None  # the backend may lack the call: the full path translates it (and learns whether it has it)
    if not holds_catalog_structs(spec.success_type) or call.session.knows_catalogs(route.metastore):
        return AS_BYTES
    element = typed_element(spec.success_type)
    field = encoded_catalog_field(element) if element is not None else None
    return RelayPlan(catalog_field=field) if field is not None else None
