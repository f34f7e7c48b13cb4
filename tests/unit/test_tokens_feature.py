"""The tokens feature (features/tokens/) in a real handler over fake metastores: with server.sasl it
answers the delegation token calls itself, only for Kerberos-authenticated sessions; without, the
calls go to the primary; no other call meets its hook."""

from __future__ import annotations

import dataclasses
from functools import partial

import pytest
from thriftpy2.thrift import TApplicationException

from hmsproxy.config.auth_to_local import parse_rule, user_short_name
from hmsproxy.config.model import ServerSaslConfig
from hmsproxy.protocol.delegation_token import Token, TokenIdentifier
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import FakeMetastore, args, unwrap
from hmsproxy.upstream.session import Session
from tests.support.fake_handlers import fake_federation, shop_metastore
from tests.support.federation import prefixed_config

SASL = ServerSaslConfig(enabled=True, principal="hive/localhost@HMSPROXY.TEST", keytab="/nonexistent.keytab")
TOKEN_CALLS = ("get_delegation_token", "renew_delegation_token", "cancel_delegation_token")


@pytest.fixture
def primary() -> FakeMetastore:
    return shop_metastore()


def _with_sasl(tmp_path, primary, sasl):
    base = prefixed_config("thrift://primary:1", "thrift://waggle:1").server
    return fake_federation(tmp_path, primary, server=dataclasses.replace(base, sasl=sasl))


@pytest.fixture
def kerberized(tmp_path, primary):
    handler = _with_sasl(tmp_path, primary, SASL)
    yield handler
    handler.close()


def _session(handler, user: str | None, *, via_token: bool = False) -> Session:
    session = Session(handler.backends, "test")
    if user is not None:
        session.authenticate(user, f"{user}@HMSPROXY.TEST")
        session.via_token = via_token
    return session


def _call(handler, session, method, **fields):
    return unwrap(handler.dispatch(session, method, args(method, **fields)))


def test_a_kerberos_session_gets_renews_and_cancels_tokens_answered_by_the_proxy(kerberized, primary):
    alice = _session(kerberized, "alice")
    token_str = _call(kerberized, alice, "get_delegation_token", token_owner="alice", renewer_kerberos_principal_name="alice")
    ident = TokenIdentifier.from_bytes(Token.decode(token_str).identifier)
    assert (ident.owner, ident.renewer) == ("alice", "alice")
    assert _call(kerberized, alice, "renew_delegation_token", token_str_form=token_str) > ident.issue_date_ms
    _call(kerberized, alice, "cancel_delegation_token", token_str_form=token_str)
    with pytest.raises(Exception, match="unknown or cancelled"):
        _call(kerberized, alice, "renew_delegation_token", token_str_form=token_str)
    assert not [m for m in primary.methods_called if m in TOKEN_CALLS]  # never routed
    alice.close()


def test_only_kerberos_sessions_get_tokens(kerberized, primary):
    anonymous, by_token = _session(kerberized, None), _session(kerberized, "alice", via_token=True)
    with pytest.raises(Exception, match="needs a Kerberos-authenticated connection"):
        _call(kerberized, anonymous, "get_delegation_token", token_owner="alice", renewer_kerberos_principal_name="alice")
    with pytest.raises(Exception, match="may not get new tokens"):
        _call(kerberized, by_token, "get_delegation_token", token_owner="alice", renewer_kerberos_principal_name="alice")
    with pytest.raises(Exception, match="alice@HMSPROXY.TEST may not get a token for bob"):
        _call(kerberized, _session(kerberized, "alice"), "get_delegation_token", token_owner="bob", renewer_kerberos_principal_name="bob")
    assert not [m for m in primary.methods_called if m in TOKEN_CALLS]


def _ident(token_str) -> TokenIdentifier:
    return TokenIdentifier.from_bytes(Token.decode(token_str).identifier)


def test_owners_compared_on_short_names_and_recorded_as_asked(kerberized):
    """HiveDelegationTokenManager: owner alice@REALM or alice is alice's own token (no real user); the
    renewer is kept as its short name."""
    alice = _session(kerberized, "alice")
    for owner in ("alice@HMSPROXY.TEST", "alice"):
        token_str = _call(
            kerberized, alice, "get_delegation_token", token_owner=owner, renewer_kerberos_principal_name="hive/_HOST@HMSPROXY.TEST"
        )
        ident = _ident(token_str)
        assert (ident.owner, ident.renewer, ident.real_user) == (owner, "hive", ""), owner
    own = _ident(_call(kerberized, alice, "get_delegation_token", token_owner="", renewer_kerberos_principal_name=""))
    assert (own.owner, own.renewer) == ("alice@HMSPROXY.TEST", "alice")  # hmsproxy's defaults: the caller
    with pytest.raises(Exception, match="bob is not alice"):
        _call(kerberized, alice, "get_delegation_token", token_owner="bob@HMSPROXY.TEST", renewer_kerberos_principal_name="alice")
    alice.close()


def test_renew_and_cancel_by_hives_rules_for_full_and_short_owners(kerberized):
    alice, hive = _session(kerberized, "alice"), _session(kerberized, "hive")
    full = _call(
        kerberized, alice, "get_delegation_token", token_owner="alice@HMSPROXY.TEST", renewer_kerberos_principal_name="hive/x@HMSPROXY.TEST"
    )
    short = _call(kerberized, alice, "get_delegation_token", token_owner="alice", renewer_kerberos_principal_name="hive/x@HMSPROXY.TEST")
    with pytest.raises(Exception, match="without being its renewer"):
        _call(kerberized, alice, "renew_delegation_token", token_str_form=full)
    assert _call(kerberized, hive, "renew_delegation_token", token_str_form=short) > 0  # hive@REALM renews as hive
    mallory = _session(kerberized, "mallory")
    with pytest.raises(Exception, match="mallory is not allowed to cancel"):
        _call(kerberized, mallory, "cancel_delegation_token", token_str_form=short)
    _call(kerberized, alice, "cancel_delegation_token", token_str_form=full)  # the owner, full or short
    _call(kerberized, alice, "cancel_delegation_token", token_str_form=short)
    mallory.close()
    alice.close()
    hive.close()


def test_the_owner_and_renewer_go_through_the_sessions_auth_to_local_rules(tmp_path, primary):
    rules = tuple(parse_rule(r) for r in ("RULE:[1:$1@$0](alice@HMSPROXY[.]TEST)s/@.*/_k/", "RULE:[2:$1](hive)s/.*/metastore/"))
    handler = _with_sasl(tmp_path, primary, dataclasses.replace(SASL, auth_to_local=rules))
    alice = Session(handler.backends, "test")  # as downstream/server.py authenticates her: alice_k by the rules
    alice.authenticate("alice_k", "alice@HMSPROXY.TEST", short_name=partial(user_short_name, rules=rules, own_realm="HMSPROXY.TEST"))
    ident = _ident(
        _call(
            handler,
            alice,
            "get_delegation_token",
            token_owner="alice@HMSPROXY.TEST",
            renewer_kerberos_principal_name="hive/h@HMSPROXY.TEST",
        )
    )
    assert (ident.owner, ident.renewer) == ("alice@HMSPROXY.TEST", "metastore")
    with pytest.raises(Exception, match="alice is not alice_k"):  # a bare name is a user name already
        _call(handler, alice, "get_delegation_token", token_owner="alice", renewer_kerberos_principal_name="alice_k")
    with pytest.raises(Exception, match="no auth-to-local rule gives the token's owner carol@HMSPROXY.TEST"):
        _call(handler, alice, "get_delegation_token", token_owner="carol@HMSPROXY.TEST", renewer_kerberos_principal_name="alice_k")
    alice.close()
    handler.close()


def test_a_proxy_user_gets_tokens_for_others_with_its_principal_as_real_user(tmp_path, primary):
    handler = _with_sasl(tmp_path, primary, dataclasses.replace(SASL, impersonation=("svc",)))
    svc = Session(handler.backends, "127.0.0.1:1")
    svc.authenticate("svc", "svc/host@HMSPROXY.TEST", impersonates=True)
    ident = _ident(_call(handler, svc, "get_delegation_token", token_owner="bob@HMSPROXY.TEST", renewer_kerberos_principal_name="svc"))
    assert (ident.owner, ident.renewer, ident.real_user) == ("bob@HMSPROXY.TEST", "svc", "svc/host@HMSPROXY.TEST")
    own = _ident(_call(handler, svc, "get_delegation_token", token_owner="svc/host@HMSPROXY.TEST", renewer_kerberos_principal_name="svc"))
    assert own.real_user == ""  # its own token on short names
    svc.close()
    handler.close()


def test_no_other_call_meets_the_tokens_hook(kerberized):
    tokens = kerberized.features.get("tokens")
    for name, spec in METHOD_SPECS.items():
        hooks = [h for hook in ("on_arrival", "on_request", "on_routed", "on_response") for h in kerberized.features.hooks(hook, spec)]
        assert any(getattr(h, "__self__", None) is tokens for h in hooks) == (name in TOKEN_CALLS), name


def test_without_sasl_the_calls_go_to_the_primary(handler, primary):
    session = _session(handler, None)
    with pytest.raises(TApplicationException, match="Invalid method name"):  # the fake has no tokens: the primary answered
        _call(handler, session, "get_delegation_token", token_owner="alice", renewer_kerberos_principal_name="alice")
    assert primary.methods_called[-1] == "get_delegation_token"
    assert handler.features.get("tokens").tokens is None
    for name in TOKEN_CALLS:  # idle: not even the token calls meet its hook
        assert all(h.__self__.name != "tokens" for h in handler.features.hooks("on_request", METHOD_SPECS[name]))
    session.close()
