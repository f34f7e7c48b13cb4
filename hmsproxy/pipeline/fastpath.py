"""The fast-path decision: which of the proxy's quicker ways a call takes, and why not the others.

A routed or primary call (downstream: a client's; upstream: one metastore's answer) takes the first
of these four ways that applies, in this order; the code below reads in the same order.

1. **Shortcut** (`FastPath.shortcut`; the remembered decisions are shortcuts.py): a read that was
   relayed moments ago is relayed again as the client sent it, before routing and before any
   feature's on_request/on_routed hook. Declined when
   - the call did not come off the wire as bytes, or its client cannot take an answer as bytes
     (no reply sink: framed transport, a one-way call, the internal client);
   - it is not a read naming one database at most, or the primary's (`shortcuts.is_read`);
   - a feature whose on_request/on_routed hooks want the method has not declared its verdict
     memoizable (`Feature.memoizable_verdict`, False unless declared: a rate limit, a rule on the
     time or the client's address must see every call): such calls are never remembered;
   - its arguments are longer than `shortcuts.MAX_KEY_BYTES`;
   - nothing is remembered for this method, these argument bytes *and this caller*
     (`Session.caller`: the set_ugi user and groups) under this config snapshot, or it expired,
     or a write or a statement dropped it (shortcuts.py says when);
   - the connection the first relay used is gone (the full path opens one: set_ugi, version).
2. **Relay** (`FastPath.relay`; the copying is protocol/relay.py): after routing, the checks and
   the features' verdicts, the metastore's answer is copied to the client undecoded. Declined
   (`FastPath.plan` makes the call's Plan, pipeline/plan.py: decoded, with the reason, the reasons
   below in the order asked) when
   - the build has no C walker, `server.relay` is off, the transport is framed, or there is no
     reply sink;
   - the call is one-way, a feature routed it, or the route renames the database (a Hive 3
     client's "@hive#db" is relayed: to a metastore older than Hive 3 as "db", as the full path
     sends it, and then not remembered for step 1, which sends the client's bytes);
   - the answer is a table list to filter (`mapped-tables` names the database);
   - the metastore has a metadata cache: its reads belong to the cache (step 3), its writes must
     invalidate it;
   - the call is a read the metastore hedges (upstream/hedging.py: two instances may answer, and
     the loser must not have written to the client);
   - the call may need translating for the metastore's Hive version (relayed once it has answered);
   - a feature's on_response needs the decoded answer (`Feature.needs_result`; asked last: dearest).
   A relayed read is remembered for step 1 when step 1 was only declined for want of a decision.
3. **Metadata cache** (upstream/cache/): the full path's backend call (`Session.call`) is
   answered from the metastore's cache when it has one and the call is a read it keeps. It sits
   upstream, in the session, because fan-outs, the database directory and the internal client
   call metastores that way too.
4. **Full path**: the metastore's answer is decoded, names rewritten, tables filtered and the
   features' on_response hooks run (handler.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hmsproxy.pipeline.plan import MethodPlan, Plan, decoded, method_plan, relayed
from hmsproxy.pipeline.shortcuts import Shortcuts, is_read, shortcut_key
from hmsproxy.protocol.framing import WALKER_IN_C
from hmsproxy.protocol.relay import AS_BYTES, RelayPlan, outcome
from hmsproxy.routing.default_catalog import without_default_catalog
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.routing.rewrite import rewrite_struct
from hmsproxy.upstream.translations import TRANSLATIONS

if TYPE_CHECKING:
    from hmsproxy.pipeline.call import Call
    from hmsproxy.pipeline.platform import FeatureRegistry
    from hmsproxy.routing.methods import MethodSpec
    from hmsproxy.upstream.backends import Backends

#: What Handler.dispatch returns for a relayed call: the answer has been sent already.
RELAYED = object()

# Why step 2 declines a call (a decoded Plan's `declined`), in the order asked.
NO_WALKER = "no C walker in this build"
RELAY_OFF = "server.relay is off"
FRAMED = "the framed transport"
NO_SINK = "the client can't take an answer as bytes"
ONE_WAY = "a one-way call"
ROUTED_BY_FEATURE = "a feature routed it"
RENAMED = "the route renames the database"
TABLES_TO_FILTER = "a table list to filter"
CACHED = "the metastore has a metadata cache"
HEDGED = "a read the metastore hedges"
MAY_TRANSLATE = "the call may need translating"
NEEDS_RESULT = "a feature needs the decoded answer"


class FastPath:
    """One handler's fast-path decision (see the module doc): steps 1 and 2, and the shortcuts they keep."""

    def __init__(self, backends: Backends, features: FeatureRegistry):
        self.backends = backends
        self.features = features
        #: Relay decisions reused for repeated reads.
        self.shortcuts = Shortcuts()
        #: method -> its MethodPlan (plan.py) under the current config and features, made for every
        #: method at once (features_changed), so that no call works one out.
        self.method_plans: dict[str, MethodPlan] = {}
        self.features_changed()

    def features_changed(self) -> None:
        """Features or the config changed: every method's plan is made again."""
        self.method_plans = {name: method_plan(spec, self._may_remember(spec)) for name, spec in METHOD_SPECS.items()}

    # -- 1. shortcut ---------------------------------------------------------------------------

    def shortcut(self, call: Call):
        """Step 1: RELAYED when the call was relayed as an earlier one was; else what step 2 needs
        to remember its decision, (key, generation), or None when it must not. Every repeated read
        takes this path: it is kept short."""
        if call.replay is not None:  # the hit loop sent it already (downstream/hits.py)
            return RELAYED if self._again(call, *call.replay) else None
        if call.message is None or call.reply_sink is None or not self.method_plans[call.spec.name].rememberable:
            return None
        shortcuts = self.shortcuts
        key = shortcut_key(call.message, call.session.caller)
        if key is None:
            return None
        shortcut = shortcuts.find(key, call.router)
        if shortcut is not None and self._again(call, shortcut):
            return RELAYED
        return key, shortcuts.generation

    @staticmethod
    def _again(call: Call, shortcut, exchanged=None) -> bool:
        """The remembered Plan executed again: relayed as the client sent it, unless its connection is
        gone (then the full path goes on). `exchanged`: the hit loop's round trip of it, to finish
        (Call.replay)."""
        plan = shortcut.plan
        call.client_db, call.table, call.backend = shortcut.client_db, shortcut.table, plan.metastore.name
        relayed = call.session.relay_again(
            plan.metastore, call.spec.name, call.message.data, call.reply_sink, plan.relay.catalog_field, exchanged
        )
        if relayed is None:
            return False
        call.relayed_outcome = outcome(call.spec.result_cls, *relayed)
        return True

    def _may_remember(self, spec: MethodSpec) -> bool:
        if not is_read(spec.name):
            return False
        hooks = self.features.hooks("on_request", spec) + self.features.hooks("on_routed", spec)
        return all(hook.__self__.memoizable_verdict for hook in hooks)

    # -- 2. relay --------------------------------------------------------------------------------

    def relay(self, call: Call, plan: Plan, remember) -> None:
        """Step 2: execute a relay `plan` (plan.relay is set). `remember`: what step 1 returned (the
        plan is kept for the next call like it)."""
        spec, how = call.spec, plan.relay
        if how.drops_catalog:  # "@hive#db" is plain "db" to a Hive 2.3 metastore, as on the full path
            rewrite_struct(call.args, without_default_catalog)
        relayed = call.session.relay(plan.metastore, spec.name, call.args, call.reply_sink, how.catalog_field)
        call.relayed_outcome = outcome(spec.result_cls, *relayed)
        if plan.remembered:
            key, generation = remember
            self.shortcuts.remember(key, call, plan, generation)

    def plan(self, call: Call, method: MethodPlan, remember, *, routed_by_feature: bool) -> Plan:
        """The call's Plan, once it is routed and the features have let it through: relayed (how), or
        decoded (why not: the module doc's step 2, the reasons in the order asked)."""
        route = call.route
        metastore = route.metastore
        declined = self._declined(call, method, routed_by_feature)
        if declined is not None:
            return decoded(metastore, declined)
        fill = method.catalog_fill
        if (fill is None and route.catalog is None) or call.session.knows_catalogs(metastore):
            how = AS_BYTES
        else:  # the catalog inserted into each Database, Table and Partition for a metastore older than Hive 3
            how = RelayPlan(catalog_field=fill, drops_catalog=route.catalog is not None)
        if any(hook.__self__.needs_result(call) for hook in self.features.hooks("on_response", method.spec)):
            return decoded(metastore, NEEDS_RESULT)
        # A shortcut sends the client's bytes: never one that names a catalog the metastore lacks.
        return relayed(metastore, how, remembered=remember is not None and not how.drops_catalog)

    def _declined(self, call: Call, method: MethodPlan, routed_by_feature: bool) -> str | None:
        spec, route, server = method.spec, call.route, call.router.config.server
        if not WALKER_IN_C:
            return NO_WALKER
        if not server.relay:
            return RELAY_OFF
        if server.transport != "buffered":
            return FRAMED
        if call.reply_sink is None:
            return NO_SINK
        if spec.oneway:
            return ONE_WAY
        if routed_by_feature:
            return ROUTED_BY_FEATURE
        if not route.naming.identity:
            return RENAMED
        if call.client_db and method.lists_tables and route.naming.hides_tables(route.backend_db):
            return TABLES_TO_FILTER
        metastore = route.metastore
        if metastore.name in self.backends.caches:
            return CACHED
        if metastore.hedge is not None and self.backends.hedging.applies(metastore, spec.name, spec.reads):
            return HEDGED
        if spec.name in TRANSLATIONS and spec.name not in self.backends.state(metastore.name).present_methods:
            return MAY_TRANSLATE  # the full path translates it (and learns whether the metastore has it)
        return None
