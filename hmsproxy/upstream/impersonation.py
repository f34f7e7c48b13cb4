"""Whether an authenticated proxy user may act for another user (server.sasl.impersonation).

As Hadoop's ProxyUsers with hadoop.proxyuser.NAME.hosts/.users/.groups: the client's address must
be in `hosts`, and the user it names in set_ugi (or as a delegation token's owner) in `users`, or
a member of one of `groups`. The groups are looked up here, on the proxy's host, in the OS group
database (the user's primary group and the groups listing it: what `id -Gn` shows, through NSS,
so LDAP/SSSD groups count where the host is set up for them), as Hadoop's default
ShellBasedUnixGroupsMapping does; the groups a client claims in set_ugi are never trusted.
"""

from __future__ import annotations

import grp
import ipaddress
import pwd

from hmsproxy.config.model import ProxyUser


def refusal(rule: ProxyUser, user: str, client_host: str) -> str | None:
    """Why `rule.name`, connected from `client_host`, may not act as `user`; None when it may."""
    if user == rule.name:
        return None  # acting as oneself needs no rule
    if not _host_allowed(rule.hosts, client_host):
        return f"{rule.name} may not act for others from {client_host} (server.sasl.impersonation hosts: {', '.join(rule.hosts)})"
    if "*" in rule.users or user in rule.users:
        return None
    if rule.groups and ("*" in rule.groups or os_groups(user) & set(rule.groups)):
        return None
    allowed = "; ".join(f"{what}: {', '.join(names)}" for what, names in (("users", rule.users), ("groups", rule.groups)) if names)
    return f"{rule.name} may not act as {user} (server.sasl.impersonation allows {rule.name} {allowed})"


def _host_allowed(hosts: tuple[str, ...], client_host: str) -> bool:
    if "*" in hosts:
        return True
    try:
        address = ipaddress.ip_address(client_host)
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(host, strict=False) for host in hosts)


def os_groups(user: str) -> set[str]:
    """`user`'s groups on this host: its primary group and every group that lists it (empty: no such user)."""
    try:
        primary = {grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name}
    except KeyError:
        primary = set()
    return primary | {group.gr_name for group in grp.getgrall() if user in group.gr_mem}
