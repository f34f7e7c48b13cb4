"""Hadoop's auth_to_local rules (config/auth_to_local.py), with the examples Hadoop's docs give."""

from __future__ import annotations

import pytest

from hmsproxy.config.auth_to_local import RuleError, parse_rule, short_name

REALM = "EXAMPLE.COM"


def name(principal: str, *rules: str) -> str | None:
    return short_name(principal, tuple(parse_rule(r) for r in rules), REALM)


def test_no_rules_is_the_first_component_whatever_the_realm():
    assert name("alice@OTHER.ORG") == "alice"
    assert name("hive/host.example.com@EXAMPLE.COM") == "hive"


def test_default_takes_the_first_component_of_the_own_realm_only():
    assert name("alice/admin@EXAMPLE.COM", "DEFAULT") == "alice"
    assert name("alice@OTHER.ORG", "DEFAULT") is None


def test_a_rule_with_format_match_and_substitution():
    strip_realm = "RULE:[1:$1@$0](.*@OTHER\\.ORG)s/@.*//"
    assert name("bob@OTHER.ORG", strip_realm, "DEFAULT") == "bob"
    assert name("bob@THIRD.NET", strip_realm, "DEFAULT") is None  # no rule applies: refused
    assert name("carol@EXAMPLE.COM", strip_realm, "DEFAULT") == "carol"  # the first that applies wins


def test_two_component_services_map_to_one_user():
    services = "RULE:[2:$1@$0](hive@EXAMPLE\\.COM)s/.*/hive/"
    assert name("hive/hms-1.example.com@EXAMPLE.COM", services) == "hive"
    assert name("hive@EXAMPLE.COM", services) is None  # one component: the rule is for two


def test_java_style_groups_global_substitution_and_lower_case():
    assert name("ana.maria@EXAMPLE.COM", "RULE:[1:$1](.*)s/\\./_/g") == "ana_maria"
    assert name("ana.maria.b@EXAMPLE.COM", "RULE:[1:$1](.*)s/\\./_/") == "ana_maria.b"
    assert name("x/ALICE@EXAMPLE.COM", "RULE:[2:$2]/L") == "alice"
    # As in Hadoop, the match regex takes no parentheses; the substitution's may have groups.
    assert name("alice@EXAMPLE.COM", "RULE:[1:$1@$0](.*@EXAMPLE\\.COM)s/([a-z]+)@.*/u_$1/") == "u_alice"


@pytest.mark.parametrize("bad", ["RULE:[x:$1]", "RULE:[1:$1](unclosed[)", "MAP alice bob", "RULE:[0:$0]"])
def test_a_bad_rule_is_refused(bad):
    with pytest.raises(RuleError):
        parse_rule(bad)
