"""Delegation tokens (issue #29): with server.sasl the proxy answers get/renew/cancel_delegation_token
itself, keeps its tokens in its store so every proxy and worker on that store accepts them, and lets
their holders log in over DIGEST-MD5 (downstream/kerberos.py asks this feature for the password).

Rooms (docs/architecture.md, "A feature package"): feature.py (the on_request hook answering the
three calls, who may have a token), store.py (the `delegation_tokens` component: master keys and live
tokens; issue, renew, cancel, the DIGEST-MD5 password). Without server.sasl the hook is idle and the
calls go to the primary metastore as any other.
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.tokens.feature:Tokens"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS: tuple[str, ...] = ()
CLIENTS: tuple[str, ...] = ()
