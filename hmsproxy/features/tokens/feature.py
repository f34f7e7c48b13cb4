"""The tokens feature: the proxy answers the delegation token calls itself when it authenticates its
clients (server.sasl.enabled), with tokens kept in its store (store.py).

Only a Kerberos-authenticated connection gets, renews or cancels a token; one that logged in with a
token may not get another (as in Hadoop: a token can't be turned into newer ones). Without
server.sasl the hook is idle: the calls go to the primary metastore as before, and no other call
ever pays for this feature (its hook wants only these three methods).
"""

from __future__ import annotations

from hmsproxy.config.model import Config
from hmsproxy.features.tokens.store import DELEGATION_TOKENS_SCHEMA, DelegationTokens, TokenRefused
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature

#: The calls this feature answers.
METHODS = frozenset({"get_delegation_token", "renew_delegation_token", "cancel_delegation_token"})


class Tokens(Feature):
    name = "tokens"
    methods = METHODS
    store_schema = DELEGATION_TOKENS_SCHEMA
    #: Its verdict depends on how the connection authenticated (Kerberos, a token), which the
    #: remembered decisions' caller key does not hold: no token call is relayed from a shortcut.
    verdict_per_call = True

    def __init__(self, platform):
        super().__init__(platform)
        #: The token store while server.sasl is on (DIGEST-MD5 logins ask it too, downstream/server.py); else None.
        self.tokens: DelegationTokens | None = None

    def configure(self, config: Config) -> None:
        sasl, store = config.server.sasl, self.platform.store
        if sasl is None or not sasl.enabled or store is None:
            self.tokens = None
            return
        self.tokens = DelegationTokens(store, sasl.token_renew_interval_ms, sasl.token_max_lifetime_ms)

    def idle(self, hook: str) -> bool:
        return self.tokens is None

    def on_request(self, call: Call):
        tokens = self.tokens
        if tokens is None:  # a reload turned server.sasl off while this call was on its way
            return None
        result = call.spec.result_cls()
        result.success = answer(tokens, call.session, call.spec.name, call.args)
        return result


def answer(tokens: DelegationTokens, session, method: str, args):
    """get/renew/cancel_delegation_token for `session`, which must have authenticated with Kerberos."""
    if session.principal is None:
        raise TokenRefused(f"hmsproxy: {method} needs a Kerberos-authenticated connection")
    if method == "get_delegation_token":
        if session.via_token:  # as in Hadoop: a token cannot be turned into new, longer-lived tokens
            raise TokenRefused("hmsproxy: a connection authenticated with a delegation token may not get new tokens (log in with Kerberos)")
        if args.token_owner and args.token_owner != session.user and not session.impersonates:
            raise TokenRefused(f"hmsproxy: {session.user} may not get a token for {args.token_owner}")
        refused = session.impersonation_refusal(args.token_owner) if args.token_owner else None
        if refused:  # a proxy user's hosts/users/groups limit its tokens as its set_ugi
            raise TokenRefused(f"hmsproxy: {refused}")
        owner = args.token_owner or session.user
        real_user = session.user if owner != session.user else ""
        return tokens.issue(owner, args.renewer_kerberos_principal_name or session.user, real_user)
    if method == "renew_delegation_token":
        return tokens.renew(args.token_str_form, session.user)
    tokens.cancel(args.token_str_form, session.user)
    return None
