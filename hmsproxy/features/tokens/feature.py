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
    # memoizable_verdict stays False: its verdict depends on how the connection authenticated
    # (Kerberos, a token), which the remembered decisions' caller key does not hold.

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
    """get/renew/cancel_delegation_token for `session`, which must have authenticated with Kerberos,
    by Hive's rules (HiveDelegationTokenManager, Hadoop's AbstractDelegationTokenSecretManager):
    owners and renewers are compared on short names, made by the rules that named the session
    (session.short_name: server.sasl.auth-to-local)."""
    if session.principal is None:
        raise TokenRefused(f"hmsproxy: {method} needs a Kerberos-authenticated connection")
    if method == "get_delegation_token":
        if session.via_token:  # as in Hadoop: a token cannot be turned into new, longer-lived tokens
            raise TokenRefused("hmsproxy: a connection authenticated with a delegation token may not get new tokens (log in with Kerberos)")
        # "": the caller, recorded by its full name as Hadoop's own token fetchers record it (hmsproxy's; Hive refuses it)
        owner = args.token_owner or session.principal
        real_user = _real_user(session, owner)
        renewer = args.renewer_kerberos_principal_name or session.principal_user  # "": the caller (hmsproxy's; Hive: no renewer)
        renewer_short = _short(session, renewer, "renewer")
        # Recorded as Hive does: the owner as asked, the renewer's short name, the real user's full name.
        return tokens.issue(owner, renewer_short, real_user)
    if method == "renew_delegation_token":
        return tokens.renew(args.token_str_form, session.principal_user)
    tokens.cancel(args.token_str_form, session.principal_user, session.short_name)
    return None


def _real_user(session, owner: str) -> str:
    """ "" when `owner` is the caller on short names (alice@REALM and alice alike); else the caller's
    principal, as a proxy user asking for another, allowed only by server.sasl.impersonation."""
    owner_short = _short(session, owner, "owner")
    if owner_short == session.principal_user:
        return ""
    if not session.impersonates:
        raise TokenRefused(
            f"hmsproxy: {session.principal} may not get a token for {owner} ({owner_short} is not {session.principal_user},"
            f" and {session.principal_user} is not in server.sasl.impersonation)"
        )
    refused = session.impersonation_refusal(owner_short)
    if refused:  # a proxy user's hosts/users/groups limit its tokens as its set_ugi
        raise TokenRefused(f"hmsproxy: {refused}")
    return session.principal


def _short(session, name: str, role: str) -> str:
    found = session.short_name(name)
    if found is None:  # Hadoop: "Illegal principal name"
        raise TokenRefused(f"hmsproxy: no auth-to-local rule gives the token's {role} {name} a user name")
    return found
