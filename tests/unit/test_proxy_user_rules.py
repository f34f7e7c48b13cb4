"""server.sasl.impersonation's limits (upstream/impersonation.py), Hadoop's proxy-user rules: hosts,
users, and groups looked up in this host's real OS group database (root is in group root; nobody
is not)."""

from __future__ import annotations

from hmsproxy.config.model import ProxyUser, proxy_users
from hmsproxy.upstream.impersonation import os_groups, refusal
from hmsproxy.upstream.session import Session


def test_a_bare_name_may_act_for_anyone_from_anywhere():
    rule = proxy_users(["hive"])["hive"]
    assert refusal(rule, "alice", "10.1.2.3") is None
    assert refusal(rule, "anyone", "::1") is None


def test_users_and_hosts():
    rule = ProxyUser("spark", hosts=("10.0.0.0/8", "127.0.0.1"), users=("alice",))
    assert refusal(rule, "alice", "10.20.30.40") is None
    assert refusal(rule, "alice", "127.0.0.1") is None
    assert refusal(rule, "spark", "192.168.0.9") is None  # acting as oneself needs no rule
    assert refusal(rule, "bob", "127.0.0.1") == "spark may not act as bob (server.sasl.impersonation allows spark users: alice)"
    assert refusal(rule, "alice", "192.168.0.9") == (
        "spark may not act for others from 192.168.0.9 (server.sasl.impersonation hosts: 10.0.0.0/8, 127.0.0.1)"
    )


def test_groups_come_from_the_os_not_from_the_client():
    assert "root" in os_groups("root")
    assert "root" not in os_groups("nobody")
    assert os_groups("no-such-user-here") == set()
    rule = ProxyUser("etl", groups=("root",), users=())
    assert refusal(rule, "root", "127.0.0.1") is None
    assert "etl may not act as nobody" in refusal(rule, "nobody", "127.0.0.1")


def test_a_session_checks_its_own_address():
    session = Session(None, "10.0.0.7:41234")
    session.authenticate(
        "spark", "spark/host@R", impersonates=True, proxy_user=ProxyUser("spark", hosts=("10.0.0.0/24",), users=("alice",))
    )
    assert session.impersonation_refusal("alice") is None
    assert "may not act as bob" in session.impersonation_refusal("bob")
    plain = Session(None, "10.9.9.9:1")
    plain.authenticate("hive", "hive/host@R", impersonates=True)
    assert plain.impersonation_refusal("bob") is None  # no limits: the bare form
