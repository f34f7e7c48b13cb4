"""Hadoop's `hadoop.security.auth_to_local` rules: a Kerberos principal → the short name it acts as.

`server.sasl.auth-to-local` takes them in Hadoop's own syntax, one rule a list entry:

* `RULE:[N:FORMAT](REGEX)s/PATTERN/REPLACEMENT/g` -- for a principal of N components, FORMAT
  builds a string ($0 the realm, $1, $2, ... the components); if REGEX matches all of it, the sed
  substitution (optional; `g`: every match) turns it into the short name. A trailing `/L`
  lower-cases the result.
* `DEFAULT` -- the first component, for a principal of the proxy's own realm.

The first rule that applies wins; a principal no rule applies to is refused (Hadoop does the
same). Without rules the short name is the first component, whatever the realm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RULE = re.compile(r"^RULE:\[(\d+):([^\]]*)\](?:\(([^)]*)\))?(?:s/([^/]*)/([^/]*)/(g)?)?(/L)?$")


class RuleError(ValueError):
    """A rule that does not parse; the message says which part."""


@dataclass(frozen=True)
class Rule:
    text: str
    components: int = 0  # 0: DEFAULT
    format: str = ""
    match: re.Pattern | None = None
    pattern: re.Pattern | None = None
    replacement: str = ""
    every: bool = False
    lower: bool = False

    def apply(self, principal: str, own_realm: str | None) -> str | None:
        """The short name, or None when this rule does not apply to `principal`."""
        names, _, realm = principal.partition("@")
        parts = names.split("/")
        if self.components == 0:  # DEFAULT
            return parts[0] if own_realm is None or realm == own_realm else None
        if len(parts) != self.components:
            return None
        values = [realm, *parts]
        built = re.sub(r"\$(\d+)", lambda m: values[int(m.group(1))] if int(m.group(1)) < len(values) else m.group(0), self.format)
        if self.match is not None and not self.match.fullmatch(built):
            return None
        if self.pattern is not None:
            built = self.pattern.sub(self.replacement, built, count=0 if self.every else 1)
        return built.lower() if self.lower else built


def parse_rule(text: str) -> Rule:
    text = text.strip()
    if text == "DEFAULT":
        return Rule(text)
    found = _RULE.match(text)
    if found is None:
        raise RuleError("not DEFAULT nor RULE:[N:FORMAT](REGEX)s/PATTERN/REPLACEMENT/[g][/L]")
    count, fmt, match, pattern, replacement, every, lower = found.groups()
    try:
        compiled_match = re.compile(match) if match is not None else None
        compiled_pattern = re.compile(pattern) if pattern is not None else None
    except re.error as e:
        raise RuleError(f"bad regular expression: {e}") from e
    if int(count) < 1:
        raise RuleError("N must be 1 or more (the principal's components)")
    replacement = re.sub(r"\$(\d)", r"\\\1", replacement or "")  # Java's $1 is Python's \1
    return Rule(text, int(count), fmt, compiled_match, compiled_pattern, replacement, every is not None, lower is not None)


def short_name(principal: str, rules: tuple[Rule, ...], own_realm: str | None) -> str | None:
    """What `principal` acts as: the first rule that applies (None: none does); no rules: its first component."""
    if not rules:
        return principal.split("@", 1)[0].split("/", 1)[0]
    for rule in rules:
        name = rule.apply(principal, own_realm)
        if name is not None:
            return name
    return None


def user_short_name(name: str, rules: tuple[Rule, ...], own_realm: str | None) -> str | None:
    """Hadoop's UserGroupInformation.createRemoteUser(name).getShortUserName(): a name without a
    realm is a user name already, kept whole (`alice`, even `svc/host`); a principal goes through
    the rules as a client's does (`alice@EXAMPLE.COM` -> `alice`). None: no rule applies."""
    if "@" not in name:
        return name
    return short_name(name, rules, own_realm)
